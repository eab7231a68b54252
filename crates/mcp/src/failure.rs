//! Why an MCP server could not be reached or logged in to, step by step: its credentials, a
//! body over its cap, the token file, the OAuth flow, the start and handshake, its tool list.
//! A server's failure reaches the user redacted (its credentials masked) and with the end of
//! its stderr ([`Failed`]).

use std::net::IpAddr;
use std::path::PathBuf;

use crate::redact::Redactor;
use agent_loop_protocol::error::root_cause;

/// A body that could not be read whole.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("its reply passed {}, the cap on one body", crate::process::capped::size(*cap))]
    TooLong { cap: usize },
    #[error("{0}")]
    Broke(Box<dyn std::error::Error + Send + Sync>),
}

/// A server's credentials that cannot be made into headers.
#[derive(Debug, thiserror::Error)]
pub enum HeaderError {
    /// `key` (`env_http_headers`, `bearer_token_env_var`) names a variable that is not set.
    #[error("`{key}` names the variable {var}, which is not set")]
    Unset { key: &'static str, var: String },
    #[error("the value of {var} cannot be sent in a header")]
    SecretValue { var: String },
    #[error("the value of header `{name}`: {source}")]
    Value {
        name: String,
        source: reqwest::header::InvalidHeaderValue,
    },
    #[error("`{name}` is not a header name")]
    Name { name: String },
}

/// A server's URL that is not one.
#[derive(Debug, thiserror::Error)]
#[error("{url}: {source}")]
pub struct BadUrl {
    pub url: String,
    pub source: url::ParseError,
}

impl BadUrl {
    pub fn parse(url: &str) -> Result<reqwest::Url, BadUrl> {
        reqwest::Url::parse(url).map_err(|source| BadUrl {
            url: url.to_string(),
            source,
        })
    }
}

/// A URL whose host is an address off the public internet, for a server whose own address
/// is public; `kind` is the range.
#[derive(Debug, thiserror::Error)]
#[error("refused: {url} is at {ip}, a {kind} address, and this MCP server's own address is public")]
pub struct NotPublic {
    pub url: String,
    pub ip: IpAddr,
    pub kind: &'static str,
}

/// A request of the MCP client (or of its OAuth flow) that failed.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error("{0}")]
    NotPublic(#[from] NotPublic),
    /// The HTTP client could not be set up.
    #[error("{}", root_cause(.0))]
    Client(reqwest::Error),
    #[error("{url}: {}", root_cause(source))]
    Send { url: String, source: reqwest::Error },
    #[error("{url}: {source}")]
    Body { url: String, source: BodyError },
    #[error("{0}")]
    Response(#[from] ::http::Error),
}

/// A token file that cannot be read, written or removed.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Serialize(serde_json::Error),
    #[error("cannot remove {}: {source}", path.display())]
    Remove {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("neither XDG_DATA_HOME nor HOME is set")]
    NoHome,
}

/// A step of `mcp login` (or of reading a stored login) that failed.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// The caller's message names the server: this says only why.
    #[error("it is a command, not a URL: there is nothing to log in to")]
    NotUrl { name: String },
    #[error("{0}")]
    Url(#[from] BadUrl),
    #[error("{0}")]
    Headers(#[from] HeaderError),
    #[error("{0}")]
    Request(#[from] RequestError),
    #[error("{0}")]
    Tokens(#[from] TokenFileError),
    /// rmcp's authorization manager could not be made.
    #[error("{0}")]
    Manager(rmcp::transport::auth::AuthError),
    #[error("reading its login failed: {0}")]
    Stored(rmcp::transport::auth::AuthError),
    #[error("cannot listen on 127.0.0.1 for the login's callback: {0}")]
    Listen(std::io::Error),
    /// No authorization server found; `challenged`: the server asked for a login.
    #[error(
        "{}finding {}authorization server failed: {source}",
        if *challenged { "" } else { "it did not ask for a login (no 401 with a challenge), and " },
        if *challenged { "its " } else { "an " }
    )]
    Discovery {
        challenged: bool,
        source: rmcp::transport::auth::AuthError,
    },
    #[error("starting the authorization failed: {0}")]
    Start(rmcp::transport::auth::AuthError),
    #[error("no browser came back to {redirect} within {minutes} minutes")]
    NoCallback { redirect: String, minutes: u64 },
    #[error("the login's callback listener failed: {0}")]
    Callback(std::io::Error),
    #[error("the login failed: {0}")]
    Exchange(rmcp::transport::auth::AuthError),
}

/// Why a server's tool list could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// rmcp's error, as its innermost cause.
    #[error("{0}")]
    Failed(String),
    #[error("its tool list passed {}, the cap on one server's tools", crate::process::capped::size(*cap))]
    TooBig { cap: usize },
    #[error("it offers more than {cap} tools, the cap on one server's tools")]
    TooMany { cap: usize },
}

/// A step of starting a server and its handshake that failed.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("command `{command}` is not on PATH")]
    NotOnPath { command: String },
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Url(#[from] BadUrl),
    #[error("{0}")]
    Headers(#[from] HeaderError),
    #[error("{}", root_cause(.0))]
    Client(reqwest::Error),
    #[error("{0}")]
    Login(#[from] LoginError),
    /// It answered 401 with a challenge.
    #[error("needs a login: run `agent-loop mcp login {server}`")]
    LoginNeeded { server: String },
    /// The handshake failed: why (the cap a server broke, or rmcp's error), after the URL of
    /// an HTTP server.
    #[error("{}{why}", url.as_ref().map(|u| format!("{u}: ")).unwrap_or_default())]
    Handshake { url: Option<String>, why: String },
    #[error("listing its tools failed: {0}")]
    List(ListError),
    /// No answer in time; `stray`: the start of the first line it wrote on stdout that is not
    /// a JSON-RPC message (a banner, a log line, JSON or not), shown, which rmcp passes over.
    #[error(
        "no answer within {secs}s (its startup_timeout_s){}",
        stray.as_deref().map(stray_note).unwrap_or_default()
    )]
    Timeout { secs: u64, stray: Option<String> },
}

/// What is said of the first line a server wrote on stdout that is not JSON-RPC (`line`, as
/// shown), after why it did not start: rmcp passes over a line that is not JSON, and refuses
/// one that is JSON but no message (`Invalid request`), naming neither.
pub fn stray_note(line: &str) -> String {
    format!(
        "; on stdout it wrote {line}, which is not JSON-RPC (a server writes its logs on stderr)"
    )
}

/// A server that could not be started, as the user reads it: what failed, then the end of
/// its stderr, with the server's credentials masked.
#[derive(Debug)]
pub struct Failed {
    pub why: StartError,
    /// The last lines of its stderr; empty for none.
    pub stderr: String,
    redactor: Redactor,
}

impl Failed {
    pub fn new(why: StartError, stderr: String, redactor: Redactor) -> Self {
        Failed {
            why,
            stderr,
            redactor,
        }
    }
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let message = self.why.to_string();
        let text = if self.stderr.is_empty() {
            message
        } else {
            format!("{message}; its stderr ended with:\n{}", self.stderr)
        };
        f.write_str(&self.redactor.redact(&text))
    }
}

impl std::error::Error for Failed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.why)
    }
}

/// A changed tool list that could not be read again (the one before is kept), its server's
/// credentials masked.
#[derive(Debug)]
pub struct RefreshFailed {
    pub why: ListError,
    redactor: Redactor,
}

impl RefreshFailed {
    pub fn new(why: ListError, redactor: Redactor) -> Self {
        RefreshFailed { why, redactor }
    }
}

impl std::fmt::Display for RefreshFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = format!("reading its changed tool list failed: {}", self.why);
        f.write_str(&self.redactor.redact(&text))
    }
}

impl std::error::Error for RefreshFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.why)
    }
}
