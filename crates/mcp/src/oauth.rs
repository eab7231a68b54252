//! OAuth for URL servers that answer 401 with a challenge: `agent-loop mcp login NAME` runs
//! the authorization code flow with PKCE (rmcp's `auth`: metadata discovery, dynamic client
//! registration, the code exchange, refresh), with a one-shot callback listener on 127.0.0.1
//! and the authorization URL printed, since a phone or a remote shell opens no browser. The
//! tokens are kept in `$XDG_DATA_HOME/agent-loop/mcp-tokens/NAME.json` (0600, its folder
//! 0700); a server with a token file is reached through rmcp's `AuthClient`, which sends the
//! token and refreshes it once it has expired. Every OAuth request goes through agent-loop's
//! own reqwest client, with the MCP client's redirect and address rules; for a public server
//! the host of every URL is checked before its request, since an address written in the URL
//! never meets the resolver that checks names.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession, CredentialStore,
    OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRedirectPolicy, OAuthHttpRequest,
    StoredCredentials,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::caps;
use super::http;
use crate::config::mcp::{ServerDef, Transport};
use crate::failure::{BadUrl, LoginError, RequestError, TokenFileError};
use crate::McpError;

/// The cap on one response of an authorization server (metadata, registration, tokens).
const BODY: usize = 256 * 1024;
/// The cap on the request the browser sends to the callback.
const CALLBACK_REQUEST: usize = 16 * 1024;
/// How long a connection to the callback may take to send its request: a browser's
/// speculative connection that sends nothing must not hold up the real one.
const CALLBACK_READ: Duration = Duration::from_secs(5);
/// How long `mcp login` waits for the browser to come back.
const LOGIN_WAIT: Duration = Duration::from_secs(600);

/// The token file of the server called `name`.
pub fn token_path(name: &str) -> Option<PathBuf> {
    crate::dirs::xdg_home("XDG_DATA_HOME", ".local/share").map(|d| {
        d.join("agent-loop")
            .join("mcp-tokens")
            .join(format!("{name}.json"))
    })
}

/// A server's tokens in their file, the store rmcp's authorization manager reads and updates.
pub struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    pub fn new(path: PathBuf) -> Self {
        TokenFile { path }
    }

    /// The stored tokens, if any.
    pub fn read(&self) -> Result<Option<StoredCredentials>, TokenFileError> {
        let path = || self.path.clone();
        match std::fs::read(&self.path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|source| TokenFileError::Parse {
                        path: path(),
                        source,
                    })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(TokenFileError::Read {
                path: path(),
                source,
            }),
        }
    }

    /// Writes the tokens whole (a new file renamed over the old), readable by the user only.
    pub fn write(&self, credentials: &StoredCredentials) -> Result<(), TokenFileError> {
        // A token refreshed mid-session is masked from now on, wherever it is echoed.
        crate::redact::learn(tokens_of(credentials));
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let fail = |source: std::io::Error| TokenFileError::Write {
            path: self.path.clone(),
            source,
        };
        private_dir(dir).map_err(fail)?;
        let json = serde_json::to_vec_pretty(credentials).map_err(TokenFileError::Serialize)?;
        // tempfile makes its files 0600.
        let mut file = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
        file.write_all(&json).map_err(fail)?;
        file.as_file().sync_all().map_err(fail)?;
        file.persist(&self.path).map_err(|e| fail(e.error))?;
        Ok(())
    }

    /// Forgets the tokens; whether there were any.
    pub fn remove(&self) -> Result<bool, TokenFileError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(TokenFileError::Remove {
                path: self.path.clone(),
                source,
            }),
        }
    }
}

/// Makes `dir` (and its parents) and leaves it to the user alone.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

fn store_error(why: TokenFileError) -> AuthError {
    AuthError::CredentialStoreError(why.to_string())
}

#[async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read().map_err(store_error)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(&credentials).map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.remove().map(drop).map_err(store_error)
    }
}

/// rmcp's OAuth requests, made by agent-loop's reqwest client: one that follows redirects
/// within an origin, one that follows none (as each request asks), both with the address
/// rule of the MCP server they are for, and each reply within [`BODY`].
struct OAuthHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    /// The MCP server is on the public internet: so must every OAuth endpoint be.
    public: bool,
}

impl OAuthHttp {
    fn new(public: bool) -> Result<Self, RequestError> {
        let build = |b: reqwest::ClientBuilder| b.build().map_err(RequestError::Client);
        Ok(OAuthHttp {
            follow: build(http::builder(public))?,
            stop: build(http::builder(public).redirect(reqwest::redirect::Policy::none()))?,
            public,
        })
    }

    /// One request, its host checked first (a resolver never sees an address written in
    /// the URL), its reply within [`BODY`].
    async fn send(
        &self,
        request: reqwest::Request,
        follow: bool,
    ) -> Result<::http::Response<Vec<u8>>, RequestError> {
        let url = request.url().clone();
        if self.public {
            http::public_literal(&url)?;
        }
        let client = if follow { &self.follow } else { &self.stop };
        let response = match client.execute(request).await {
            Ok(response) => response,
            Err(source) => {
                let url = url.to_string();
                return Err(RequestError::Send { url, source });
            }
        };
        let mut reply = ::http::Response::builder().status(response.status());
        for (name, value) in response.headers() {
            reply = reply.header(name, value);
        }
        let length = response.content_length();
        let body = caps::read_body(response.bytes_stream(), length, BODY)
            .await
            .map_err(|source| RequestError::Body {
                url: url.to_string(),
                source,
            })?;
        Ok(reply.body(body)?)
    }
}

impl OAuthHttpClient for OAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let follow = request.redirect_policy == OAuthHttpRedirectPolicy::Follow;
            let timeout = request.timeout;
            let mut request = reqwest::Request::try_from(request.request)?;
            *request.timeout_mut() = timeout;
            Ok(self.send(request, follow).await?)
        })
    }
}

/// An authorization manager for the server `name` at `url`, its tokens in their file.
async fn manager(name: &str, url: &str) -> Result<AuthorizationManager, LoginError> {
    let parsed = BadUrl::parse(url)?;
    let client = OAuthHttp::new(http::is_public(&parsed).await)?;
    let mut manager = AuthorizationManager::new_with_oauth_http_client(url, Arc::new(client))
        .await
        .map_err(LoginError::Manager)?;
    let path = token_path(name).ok_or(TokenFileError::NoHome)?;
    manager.set_credential_store(TokenFile::new(path));
    Ok(manager)
}

/// The manager for a server that has been logged in to (a token file), ready to give its
/// access token (refreshed when expired); `None` without a token file.
pub async fn stored(name: &str, url: &str) -> Result<Option<AuthorizationManager>, LoginError> {
    let Some(path) = token_path(name) else {
        return Ok(None);
    };
    if TokenFile::new(path).read()?.is_none() {
        return Ok(None);
    }
    let mut manager = manager(name, url).await?;
    let found = manager
        .initialize_from_store()
        .await
        .map_err(LoginError::Stored)?;
    Ok(found.then_some(manager))
}

/// The tokens' values, to be kept out of logs, sessions and messages.
pub fn secrets(name: &str) -> Vec<String> {
    let Some(Ok(Some(stored))) = token_path(name).map(|p| TokenFile::new(p).read()) else {
        return Vec::new();
    };
    tokens_of(&stored)
}

/// The access and refresh tokens of stored credentials.
fn tokens_of(stored: &StoredCredentials) -> Vec<String> {
    let tokens = serde_json::to_value(&stored.token_response).unwrap_or_default();
    ["access_token", "refresh_token"]
        .iter()
        .filter_map(|key| tokens.get(key)?.as_str().map(str::to_string))
        .collect()
}

/// `agent-loop mcp logout`: forgets the tokens of the server `name`; whether there were any.
pub fn logout(name: &str) -> Result<bool, McpError> {
    let removed = match token_path(name) {
        Some(path) => TokenFile::new(path).remove(),
        None => Err(TokenFileError::NoHome),
    };
    removed.map_err(|source| McpError::Logout {
        name: name.to_string(),
        source,
    })
}

/// `agent-loop mcp login`: finds the server's authorization server from its challenge,
/// registers agent-loop with it, shows the authorization URL (and opens it where a browser
/// opener is installed), waits for the browser's redirect to 127.0.0.1 and exchanges the
/// code for tokens, which are saved. `show` prints a line for the user.
pub async fn login(def: &ServerDef, show: &mut dyn FnMut(&str)) -> Result<(), McpError> {
    flow(def, show).await.map_err(|source| McpError::Login {
        name: def.name.clone(),
        source: Box::new(source),
    })
}

/// The steps of `login`; what failed, as the user should read it.
async fn flow(def: &ServerDef, show: &mut dyn FnMut(&str)) -> Result<(), LoginError> {
    let name = def.name.as_str();
    let Transport::Http { url, credentials } = &def.transport else {
        let name = name.to_string();
        return Err(LoginError::NotUrl { name });
    };
    let challenge = challenge(url, http::headers(credentials)?).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(LoginError::Listen)?;
    let port = listener.local_addr().map_err(LoginError::Listen)?.port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let mut manager = manager(name, url).await?;
    let found = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(|source| LoginError::Discovery {
            challenged: challenge.is_some(),
            source,
        })?;
    manager.set_metadata(found.metadata);
    let request = AuthorizationRequest::new(&redirect).with_client_name("agent-loop");
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| LoginError::Start(e))?;
    let auth_url = session.get_authorization_url().to_string();
    show(&format!(
        "Open this URL in a browser to log in to MCP server `{name}` (the browser must run on \
         this machine: it comes back to {redirect}):\n{auth_url}"
    ));
    open_browser(&auth_url);
    let state = reqwest::Url::parse(&auth_url)
        .ok()
        .and_then(|u| state_of(&u))
        .unwrap_or_default();
    let waited = tokio::time::timeout(
        LOGIN_WAIT,
        callback(&listener, &session, name, port, &state),
    );
    waited.await.map_err(|_| LoginError::NoCallback {
        redirect,
        minutes: LOGIN_WAIT.as_secs() / 60,
    })?
}

/// The `state` parameter of a URL.
fn state_of(url: &reqwest::Url) -> Option<String> {
    url.query_pairs()
        .find(|(key, _)| key == "state")
        .map(|(_, value)| value.into_owned())
}

/// Waits for the browser's redirect with the code, exchanges it and answers the browser. A
/// callback without this login's `state` (forged by another page or program) is answered
/// 400 and passed over: it must not end the login the user is doing.
async fn callback(
    listener: &tokio::net::TcpListener,
    session: &AuthorizationSession,
    name: &str,
    port: u16,
    state: &str,
) -> Result<(), LoginError> {
    loop {
        let (mut stream, _) = listener.accept().await.map_err(LoginError::Callback)?;
        let read = tokio::time::timeout(CALLBACK_READ, request_target(&mut stream));
        let Ok(Some(target)) = read.await else {
            continue;
        };
        if !target.starts_with("/callback?") {
            let _ = reply(&mut stream, "404 Not Found", "Not the login callback.").await;
            continue;
        }
        let url = format!("http://127.0.0.1:{port}{target}");
        let ours = reqwest::Url::parse(&url)
            .ok()
            .and_then(|u| state_of(&u))
            .is_some_and(|got| !state.is_empty() && got == state);
        if !ours {
            let _ = reply(&mut stream, "400 Bad Request", "Not this login's callback.").await;
            continue;
        }
        let result = session.handle_callback_url(&url).await;
        return match result {
            Ok(_) => {
                let page = format!("agent-loop is logged in to {name}. You can close this tab.");
                let _ = reply(&mut stream, "200 OK", &page).await;
                Ok(())
            }
            Err(e) => {
                let _ = reply(&mut stream, "400 Bad Request", "The login failed.").await;
                Err(LoginError::Exchange(e))
            }
        };
    }
}

/// The server's `WWW-Authenticate` challenge to an unauthenticated `initialize`, if it sends
/// one (otherwise discovery starts from its well-known metadata).
async fn challenge(
    url: &str,
    headers: reqwest::header::HeaderMap,
) -> Result<Option<String>, LoginError> {
    let parsed = BadUrl::parse(url)?;
    let client = http::builder(http::is_public(&parsed).await)
        .default_headers(headers)
        .build()
        .map_err(RequestError::Client)?;
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "agent-loop", "version": env!("CARGO_PKG_VERSION")}}
    });
    let response = client
        .post(url)
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(initialize.to_string())
        .send()
        .await
        .map_err(|source| RequestError::Send {
            url: url.to_string(),
            source,
        })?;
    Ok(response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .filter(|_| response.status() == reqwest::StatusCode::UNAUTHORIZED)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()))
}

/// The target of the request line a browser sent to the callback (`/callback?code=…`).
async fn request_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < CALLBACK_REQUEST {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    let mut words = head.lines().next()?.split_whitespace();
    (words.next()? == "GET").then_some(())?;
    words.next().map(str::to_string)
}

async fn reply(
    stream: &mut tokio::net::TcpStream,
    status: &str,
    text: &str,
) -> std::io::Result<()> {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{text}",
        text.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

/// Opens `url` in a browser where an opener is installed (Termux's, then the desktop's); the
/// URL is printed either way.
fn open_browser(url: &str) {
    for opener in ["termux-open-url", "xdg-open"] {
        if let Ok(program) = which::which(opener) {
            let spawned = std::process::Command::new(program)
                .arg(url)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn();
            if spawned.is_ok() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server on 127.0.0.1 that answers every request `{}` and counts the connections.
    async fn counting() -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = count.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                let reply = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}";
                let _ = stream.write_all(reply.as_bytes()).await;
            }
        });
        (port, count)
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_public_servers_oauth_requests_never_reach_a_private_address_literal() {
        let (port, count) = counting().await;
        let client = OAuthHttp::new(true).unwrap();
        for host in [
            "127.0.0.1",
            "[::ffff:127.0.0.1]",
            "2130706433",
            "0x7f000001",
            "0177.0.0.1",
            "127.1",
            "[::1]",
            "10.0.0.1",
            "169.254.169.254",
        ] {
            let url = format!("http://{host}:{port}/register");
            let request = reqwest::Request::new(reqwest::Method::POST, url.parse().unwrap());
            let why = client.send(request, true).await.unwrap_err();
            assert!(matches!(why, RequestError::NotPublic(_)), "{host}: {why}");
            let why = why.to_string();
            assert!(why.starts_with("refused: "), "{host}: {why}");
            assert!(why.contains("address, and this MCP server's own"), "{why}");
        }
        assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 0);
        // A server that is itself on this machine reaches its endpoints there.
        let client = OAuthHttp::new(false).unwrap();
        let url = format!("http://2130706433:{port}/register");
        let request = reqwest::Request::new(reqwest::Method::POST, url.parse().unwrap());
        let reply = client.send(request, true).await.unwrap();
        assert_eq!(reply.body(), b"{}");
        assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
