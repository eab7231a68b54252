//! An API key sent over plain HTTP can be read by anyone on the way. To a server on this
//! machine or on the local network (Ollama, a box on the LAN) that is how it is meant;
//! elsewhere it is a mistake worth a word, said once per backend and address in a process
//! (a server that opens a chat per call would say it at every call otherwise).

use std::collections::BTreeSet;
use std::sync::Mutex;

use crate::config::{shown_url, HttpDef};
use crate::tools::web::address::private_kind;

/// The backends (name and address) already judged in this process.
static JUDGED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// The warning for `def`'s first request, when it sends a key (its API key, or a password in
/// the URL) over plain HTTP to a host off this machine and network; `None` once said.
pub async fn warning(def: &HttpDef) -> Option<String> {
    let url = reqwest::Url::parse(&def.base_url).ok()?;
    let what = match (&def.api_key_env, url.password()) {
        (Some(var), _) => format!("its API key ({var})"),
        (None, Some(_)) => "the password in its base_url".to_string(),
        (None, None) => return None,
    };
    if url.scheme() != "http" {
        return None;
    }
    let first = JUDGED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(format!("{}\n{}", def.name, def.base_url));
    if !first || local(&url).await {
        return None;
    }
    Some(format!(
        "warning: backend {} sends {what} in clear text to {} (plain http://), where anyone on \
         the way can read it; use https:// ({})",
        def.name,
        shown_url(&def.base_url),
        def.defined_at
    ))
}

/// Whether `url`'s host is this machine or the local network: a loopback or private
/// address, a name of one label (`gpu-box`) or of a local domain, or a name that resolves to
/// such addresses only.
async fn local(url: &reqwest::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => private_kind(ip.into()).is_some(),
        Some(url::Host::Ipv6(ip)) => private_kind(ip.into()).is_some(),
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            const LOCAL: [&str; 6] = [
                ".localhost",
                ".local",
                ".lan",
                ".home",
                ".internal",
                ".home.arpa",
            ];
            if name == "localhost" || !name.contains('.') || LOCAL.iter().any(|s| name.ends_with(s))
            {
                return true;
            }
            let port = url.port_or_known_default().unwrap_or(80);
            match tokio::net::lookup_host((name.clone(), port)).await {
                Ok(addrs) => {
                    let addrs: Vec<_> = addrs.collect();
                    !addrs.is_empty() && addrs.iter().all(|a| private_kind(a.ip()).is_some())
                }
                // Unknown: the request will fail anyway, and say why.
                Err(_) => true,
            }
        }
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(name: &str, base_url: &str, key: Option<&str>) -> HttpDef {
        let text = format!(
            "[backends.{name}]\ntype = \"openai\"\nbase_url = \"{base_url}\"\nmodel = \"m\"\n{}",
            key.map(|k| format!("api_key_env = \"{k}\"\n"))
                .unwrap_or_default()
        );
        let source = crate::config::Source {
            name: "t.toml".into(),
            text,
        };
        let config = crate::config::Config::from_sources(&[source]).unwrap();
        match config.backend(name).unwrap() {
            crate::config::Definition::Http(d) => d.clone(),
            _ => unreachable!(),
        }
    }

    #[tokio::test]
    async fn a_key_in_clear_off_the_local_network_is_warned_of_once() {
        let public = def("pl", "http://93.184.215.14/v1", Some("PL_KEY"));
        let said = warning(&public).await.unwrap();
        assert!(said.starts_with("warning: backend pl sends its API key (PL_KEY) in clear text to http://93.184.215.14/v1"), "{said}");
        assert_eq!(warning(&public).await, None, "once");
        let userinfo = def("ui", "http://user:pass@93.184.215.14:11434", None);
        let said = warning(&userinfo).await.unwrap();
        assert!(
            said.contains("the password in its base_url")
                && said.contains("http://***@93.184.215.14:11434")
                && !said.contains("pass@"),
            "{said}"
        );
        for (name, url, key) in [
            ("tls", "https://93.184.215.14/v1", Some("K")),
            ("nokey", "http://93.184.215.14/v1", None),
            ("loop", "http://127.0.0.1:11434", Some("K")),
            ("lan", "http://192.168.1.20:8080/v1", Some("K")),
            ("six", "http://[::1]:8080/v1", Some("K")),
            ("host", "http://localhost:11434", Some("K")),
            ("box", "http://gpu-box:11434", Some("K")),
            ("mdns", "http://gpu.local:11434", Some("K")),
        ] {
            assert_eq!(warning(&def(name, url, key)).await, None, "{url}");
        }
    }
}
