//! The `[mcp.servers.NAME]` tables of `backends.toml`: their schema as written (every key
//! optional, so a later file can override single keys) and the checked definition a
//! connection is made from. Mistakes name the file, the line, the server and the key.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::source::{Lines, Located, Overlay};
use super::ConfigError;
use toml::Spanned;

/// Seconds allowed for start-up (spawn, handshake, tool list) and for each tool call.
const DEFAULT_TIMEOUT_S: u64 = 60;

/// The `[mcp]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMcp {
    /// Each name keeps where it is first written, for messages.
    #[serde(default)]
    pub servers: BTreeMap<Spanned<String>, RawServer>,
}

/// One `[mcp.servers.NAME]` table as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawServer {
    pub command: Option<Located>,
    pub args: Option<Vec<String>>,
    pub env: Option<BTreeMap<String, String>>,
    pub url: Option<Located>,
    pub enabled: Option<bool>,
    pub timeout_s: Option<u64>,
    /// Start-up's own limit; by default the larger of `timeout_s` and a minute.
    pub startup_timeout_s: Option<u64>,
    pub trust: Option<bool>,
    /// A `url` server's bearer token: the variable that holds it (codex's key names).
    pub bearer_token_env_var: Option<String>,
    /// Headers sent to a `url` server as written.
    pub http_headers: Option<BTreeMap<String, String>>,
    /// Headers sent to a `url` server, each from the variable named.
    pub env_http_headers: Option<BTreeMap<String, String>>,
}

impl Overlay for RawServer {
    fn overlay(&mut self, other: RawServer) {
        macro_rules! take {
            ($($field:ident),*) => { $( if other.$field.is_some() { self.$field = other.$field; } )* };
        }
        take!(
            command,
            args,
            env,
            url,
            enabled,
            timeout_s,
            startup_timeout_s,
            trust,
            bearer_token_env_var,
            http_headers,
            env_http_headers
        );
    }
}

impl RawServer {
    /// Gives the located values their file and line.
    pub fn locate(&mut self, lines: &Lines) {
        for located in [&mut self.command, &mut self.url].into_iter().flatten() {
            located.locate(lines);
        }
    }
}

/// How agent-loop reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        url: String,
        credentials: Credentials,
    },
}

/// What a `url` server is sent with every request to let agent-loop in. The secrets stay in
/// their variables until a connection is made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    /// The variable holding a token sent as `Authorization: Bearer TOKEN`.
    pub bearer_token_env_var: Option<String>,
    /// Header names and their values as written.
    pub http_headers: BTreeMap<String, String>,
    /// Header names and the variables holding their values.
    pub env_http_headers: BTreeMap<String, String>,
}

impl Credentials {
    /// The variables that hold secrets: kept out of the tools' environment, and their values
    /// out of logs, sessions and messages.
    pub fn env_names(&self) -> Vec<String> {
        let headers = self.env_http_headers.values().cloned();
        self.bearer_token_env_var
            .iter()
            .cloned()
            .chain(headers)
            .collect()
    }
}

/// A checked `[mcp.servers.NAME]` entry.
#[derive(Debug, Clone)]
pub struct ServerDef {
    pub name: String,
    /// Where it was (last) defined, for messages: `file:line`.
    pub defined_at: String,
    pub transport: Transport,
    pub enabled: bool,
    /// Each tool call must finish within this.
    pub timeout: Duration,
    /// Starting, the handshake and listing the tools must finish within this: a server
    /// (node, npx) can take much longer to start on a busy machine or a phone than a call
    /// takes to answer.
    pub startup_timeout: Duration,
    /// Its tools run without asking for approval.
    pub trust: bool,
}

/// Checks one merged server table.
pub fn resolve(name: &str, raw: RawServer, defined_at: String) -> Result<ServerDef, ConfigError> {
    let bad = |at: String, why: String| ConfigError::BadServer {
        at,
        server: name.to_string(),
        why,
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(bad(
            defined_at,
            format!(
                "the name may only hold letters, digits, `_` and `-` (its tools are called \
                 `mcp.{name}.TOOL`)"
            ),
        ));
    }
    let credentials = [
        ("bearer_token_env_var", raw.bearer_token_env_var.is_some()),
        ("http_headers", raw.http_headers.is_some()),
        ("env_http_headers", raw.env_http_headers.is_some()),
    ];
    let transport = match (raw.command, raw.url) {
        (Some(command), None) if credentials.iter().any(|(_, set)| *set) => {
            let (key, _) = credentials
                .iter()
                .find(|(_, set)| *set)
                .expect("one is set");
            return Err(bad(
                command.at(),
                format!(
                    "key `{key}` is for `url` servers, not `command` ones (give a stdio server \
                     its secrets in `env`)"
                ),
            ));
        }
        (Some(command), None) => Transport::Stdio {
            command: command.value,
            args: raw.args.unwrap_or_default(),
            env: raw.env.unwrap_or_default(),
        },
        (None, Some(url)) => {
            let credentials = Credentials {
                bearer_token_env_var: raw.bearer_token_env_var,
                http_headers: raw.http_headers.unwrap_or_default(),
                env_http_headers: raw.env_http_headers.unwrap_or_default(),
            };
            let names = credentials
                .http_headers
                .keys()
                .chain(credentials.env_http_headers.keys());
            for header in names {
                if http::HeaderName::from_bytes(header.as_bytes()).is_err() {
                    return Err(bad(
                        url.at(),
                        format!("`{header}` is not an HTTP header name"),
                    ));
                }
            }
            for (header, value) in &credentials.http_headers {
                if http::HeaderValue::from_str(value).is_err() {
                    return Err(bad(
                        url.at(),
                        format!(
                            "key `http_headers`: the value of `{header}` cannot be sent in a \
                             header (a control character?)"
                        ),
                    ));
                }
            }
            if raw.args.is_some() || raw.env.is_some() {
                return Err(bad(
                    url.at(),
                    "keys `args` and `env` are for `command` servers, not `url` ones".into(),
                ));
            }
            if !(url.value.starts_with("http://") || url.value.starts_with("https://")) {
                return Err(bad(
                    url.at(),
                    format!(
                        "key `url`: `{}` is not an http:// or https:// address",
                        url.value
                    ),
                ));
            }
            Transport::Http {
                url: url.value,
                credentials,
            }
        }
        (Some(command), Some(_)) => {
            return Err(bad(
                command.at(),
                "has both `command` and `url`; a server is either a program (stdio) or an \
                 address (Streamable HTTP)"
                    .into(),
            ))
        }
        (None, None) => {
            return Err(ConfigError::NoTransport {
                at: defined_at,
                server: name.to_string(),
            })
        }
    };
    Ok(ServerDef {
        name: name.to_string(),
        defined_at,
        transport,
        enabled: raw.enabled.unwrap_or(true),
        timeout: Duration::from_secs(raw.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S).max(1)),
        startup_timeout: Duration::from_secs(
            raw.startup_timeout_s
                .unwrap_or(raw.timeout_s.unwrap_or(0).max(DEFAULT_TIMEOUT_S))
                .max(1),
        ),
        trust: raw.trust.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use crate::{Config, Source};

    use super::*;

    fn load(text: &str) -> Result<Config, ConfigError> {
        Config::from_sources(&[Source {
            name: "my.toml".into(),
            text: text.into(),
        }])
    }

    fn error(text: &str) -> String {
        load(text).unwrap_err().to_string()
    }

    #[test]
    fn stdio_and_http_servers_with_defaults() {
        let config = load(
            "[mcp.servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"server\"]\nenv = { A = \"1\" }\n\n\
             [mcp.servers.web]\nurl = \"https://example.test/mcp\"\nenabled = false\ntimeout_s = 5\ntrust = true\n",
        )
        .unwrap();
        let fs = &config.mcp_servers["fs"];
        assert_eq!(
            fs.transport,
            Transport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "server".into()],
                env: [("A".to_string(), "1".to_string())].into(),
            }
        );
        assert!(fs.enabled && !fs.trust);
        assert_eq!(fs.timeout, Duration::from_secs(DEFAULT_TIMEOUT_S));
        assert_eq!(fs.defined_at, "my.toml:1");
        let web = &config.mcp_servers["web"];
        assert_eq!(
            web.transport,
            Transport::Http {
                url: "https://example.test/mcp".into(),
                credentials: Credentials::default(),
            }
        );
        assert!(!web.enabled && web.trust);
        assert_eq!(web.timeout, Duration::from_secs(5));
        // A short call timeout leaves start-up its minute.
        assert_eq!(web.startup_timeout, Duration::from_secs(60));
        assert_eq!(web.defined_at, "my.toml:6");
    }

    #[test]
    fn a_later_file_overrides_single_keys() {
        let config = Config::from_sources(&[
            Source {
                name: "a.toml".into(),
                text: "[mcp.servers.fs]\ncommand = \"one\"\n".into(),
            },
            Source {
                name: "b.toml".into(),
                text: "\n[mcp.servers.fs]\nenabled = false\n".into(),
            },
        ])
        .unwrap();
        let fs = &config.mcp_servers["fs"];
        assert!(!fs.enabled);
        assert!(matches!(&fs.transport, Transport::Stdio { command, .. } if command == "one"));
        assert_eq!(fs.defined_at, "b.toml:2");
    }

    #[test]
    fn unknown_key_names_file_line_server_and_key() {
        let err = error(
            "[backends.a]\ncommand = \"a\"\n\n[mcp.servers.fs]\ncommand = \"x\"\ntrusted = true\n",
        );
        assert!(
            err.starts_with("my.toml:6: MCP server `fs`: unknown field `trusted`"),
            "{err}"
        );
        let err = error("[mcp]\nserver = 1\n");
        assert!(
            err.starts_with(
                "my.toml:2: unknown field `server` (did you mean `servers`?), expected `servers`"
            ),
            "{err}"
        );
    }

    #[test]
    fn command_and_url_are_exclusive_and_one_is_needed() {
        let err = error("[mcp.servers.fs]\ncommand = \"x\"\nurl = \"http://h/mcp\"\n");
        assert!(
            err.starts_with("my.toml:2: MCP server `fs`: has both `command` and `url`"),
            "{err}"
        );
        let err = error("[mcp.servers.fs]\nenabled = true\n");
        assert!(
            err.starts_with("my.toml:1: MCP server `fs` has neither `command`"),
            "{err}"
        );
    }

    #[test]
    fn credentials_are_for_url_servers_with_header_names() {
        let config = load(
            "[mcp.servers.gh]\nurl = \"https://example.test/mcp\"\n\
             bearer_token_env_var = \"GITHUB_TOKEN\"\nhttp_headers = { \"X-Team\" = \"blue\" }\n\
             env_http_headers = { \"X-Api-Key\" = \"MY_KEY_VAR\" }\n",
        )
        .unwrap();
        let Transport::Http { credentials, .. } = &config.mcp_servers["gh"].transport else {
            panic!("a url server")
        };
        assert_eq!(credentials.env_names(), ["GITHUB_TOKEN", "MY_KEY_VAR"]);
        assert!(config.api_key_envs().contains(&"MY_KEY_VAR".to_string()));
        let err = error("[mcp.servers.fs]\ncommand = \"x\"\nbearer_token_env_var = \"T\"\n");
        assert!(
            err.starts_with(
                "my.toml:2: MCP server `fs`: key `bearer_token_env_var` is for `url` servers"
            ),
            "{err}"
        );
        let err =
            error("[mcp.servers.w]\nurl = \"http://h/mcp\"\nhttp_headers = { \"a b\" = \"1\" }\n");
        assert!(err.contains("`a b` is not an HTTP header name"), "{err}");
    }

    #[test]
    fn bad_url_and_name_are_named() {
        let err = error("[mcp.servers.web]\n\nurl = \"ftp://h/mcp\"\n");
        assert_eq!(
            err,
            "my.toml:3: MCP server `web`: key `url`: `ftp://h/mcp` is not an http:// or https:// address"
        );
        let err = error("[mcp.servers.\"a.b\"]\ncommand = \"x\"\n");
        assert!(
            err.starts_with("my.toml:1: MCP server `a.b`: the name may only hold"),
            "{err}"
        );
    }
}
