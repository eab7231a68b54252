//! The one TLS setup of every HTTP client agent-loop builds (backends, read_url, web_search,
//! MCP servers and their OAuth, the Telegram bot): rustls on ring with the bundled webpki
//! roots. Not reqwest's default (aws-lc-rs, which needs cmake and nasm to build on Termux) and
//! not the OS's verifier (on Android it needs the JVM, which a Termux process does not have):
//! the same certificates are trusted on every platform.

use std::sync::{Arc, OnceLock};

/// A client builder with agent-loop's TLS; each caller adds its own timeouts and rules.
pub fn client() -> reqwest::ClientBuilder {
    reqwest::Client::builder().tls_backend_preconfigured(config().clone())
}

fn config() -> &'static rustls::ClientConfig {
    static CONFIG: OnceLock<rustls::ClientConfig> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        // HTTP/1.1 only, as reqwest's own rustls setup offers without its http2 feature.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        config
    })
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    /// Without a process-wide crypto provider (none is installed), a client still speaks
    /// TLS: its first bytes to a server are a TLS handshake offering HTTP/1.1.
    #[tokio::test(flavor = "current_thread")]
    async fn clients_speak_tls_on_ring_without_a_default_provider() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!(
            "https://127.0.0.1:{}/",
            listener.local_addr().unwrap().port()
        );
        let client = super::client().build().unwrap();
        let request = tokio::spawn(async move { client.get(url).send().await });
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut hello = vec![0u8; 512];
        let n = stream.read(&mut hello).await.unwrap();
        hello.truncate(n);
        // A handshake record (22), then the ClientHello (1).
        assert_eq!((hello[0], hello[5]), (22, 1), "{hello:?}");
        assert!(hello.windows(8).any(|w| w == b"http/1.1"), "{hello:?}");
        drop(stream);
        assert!(request.await.unwrap().is_err());
    }
}
