//! Which addresses read_url refuses by default: anything that is not the public internet
//! (loopback, private, link-local with the cloud metadata address, unique-local, shared and
//! unspecified ranges, the documentation and benchmarking ranges that test networks use), and
//! none of this machine's own interface addresses, whatever range they are in (a service bound
//! to 0.0.0.0 answers on a public one too), so a model cannot make agent-loop reach into the
//! user's machine or network. The check runs on every address a name resolves to, and the
//! connection then goes to a checked address (see `fetch.rs`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What this machine's own addresses are called in a refusal.
pub const OWN: &str = "local (this machine's own)";

/// Why `ip` is refused: not a public address, or one of `own` (this machine's interface
/// addresses, from [`own_addresses`]); `None` when it may be fetched.
pub fn refused_kind(ip: IpAddr, own: &[IpAddr]) -> Option<&'static str> {
    let plain = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    private_kind(ip).or_else(|| own.contains(&plain).then_some(OWN))
}

/// The addresses of this machine's network interfaces (getifaddrs, through the if-addrs crate;
/// in Android's libc since API 24, the oldest Termux supports); empty when that fails, and then
/// only the ranges are refused. IPv6 link-local addresses are not listed, but their range is
/// refused anyway.
pub fn own_addresses() -> Vec<IpAddr> {
    match if_addrs::get_if_addrs() {
        Ok(interfaces) => interfaces.iter().map(if_addrs::Interface::ip).collect(),
        Err(e) => {
            log::debug!("interface addresses unknown: {e}");
            Vec::new()
        }
    }
}

/// Why `ip` is not a public address, or `None` when it is one.
pub fn private_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_kind(v4),
        IpAddr::V6(v6) => {
            // An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) is that IPv4 address.
            if let Some(v4) = v6.to_ipv4_mapped() {
                return v4_kind(v4);
            }
            v6_kind(v6)
        }
    }
}

fn v4_kind(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local (cloud metadata lives here)")
    } else if a == 0 {
        Some("unspecified")
    } else if a == 100 && (64..128).contains(&b) {
        Some("shared (carrier-grade NAT)")
    } else if (a, b) == (192, 0) && ip.octets()[2] == 2
        || (a, b) == (198, 51) && ip.octets()[2] == 100
        || (a, b) == (203, 0) && ip.octets()[2] == 113
    {
        Some("documentation (TEST-NET)")
    } else if a == 198 && (18..20).contains(&b) {
        Some("benchmarking")
    } else if ip.is_broadcast() || ip.is_multicast() || a >= 240 {
        Some("broadcast, multicast or reserved")
    } else {
        None
    }
}

fn v6_kind(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() {
        Some("unspecified")
    } else if first & 0xfe00 == 0xfc00 {
        Some("unique-local")
    } else if first & 0xffc0 == 0xfe80 {
        Some("link-local")
    } else if ip.is_multicast() {
        Some("broadcast, multicast or reserved")
    } else if first == 0x2001 && ip.segments()[1] == 0x0db8 {
        Some("documentation (TEST-NET)")
    } else if first == 0x2001 && ip.segments()[1] == 0x0002 && ip.segments()[2] == 0 {
        Some("benchmarking")
    } else {
        // `::a.b.c.d`, the deprecated IPv4-compatible form, still reaches a.b.c.d.
        match ip.octets() {
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, a, b, c, d] => v4_kind(Ipv4Addr::new(a, b, c, d)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00::1",
            "fc12::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::10.0.0.1",
            "192.0.2.2",
            "198.51.100.7",
            "203.0.113.200",
            "198.18.0.1",
            "198.19.255.255",
            "2001:db8::1",
            "2001:2::1",
            "::ffff:203.0.113.1",
        ] {
            let ip: IpAddr = private.parse().unwrap();
            assert!(private_kind(ip).is_some(), "{private} passed as public");
        }
        for public in [
            "93.184.215.14",
            "172.32.0.1",
            "100.128.0.1",
            "1.1.1.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "192.0.3.1",
            "198.20.0.1",
            "203.0.114.1",
            "2001:db9::1",
        ] {
            let ip: IpAddr = public.parse().unwrap();
            assert_eq!(private_kind(ip), None, "{public}");
        }
        assert_eq!(
            private_kind("169.254.169.254".parse().unwrap()),
            Some("link-local (cloud metadata lives here)")
        );
    }

    #[test]
    fn own_addresses_are_refused_whatever_their_range() {
        let public: IpAddr = "93.184.215.14".parse().unwrap();
        let own = [public];
        assert_eq!(refused_kind(public, &own), Some(OWN));
        let mapped: IpAddr = "::ffff:93.184.215.14".parse().unwrap();
        assert_eq!(refused_kind(mapped, &own), Some(OWN));
        assert_eq!(refused_kind("1.1.1.1".parse().unwrap(), &own), None);
        // The loopback interface is always among them.
        let found = own_addresses();
        assert!(found.contains(&"127.0.0.1".parse().unwrap()), "{found:?}");
    }
}
