//! Which addresses read_url refuses by default: anything that is not the public internet
//! (loopback, private, link-local with the cloud metadata address, unique-local, shared and
//! unspecified ranges), so a model cannot make agent-loop reach into the user's machine or
//! network. The check runs on every address a name resolves to, and the connection then goes
//! to a checked address (see `fetch.rs`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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
        ] {
            let ip: IpAddr = public.parse().unwrap();
            assert_eq!(private_kind(ip), None, "{public}");
        }
        assert_eq!(
            private_kind("169.254.169.254".parse().unwrap()),
            Some("link-local (cloud metadata lives here)")
        );
    }
}
