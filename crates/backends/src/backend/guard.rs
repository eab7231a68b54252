//! The preset's guard (`[backends.NAME.guard]`) of an ACP or terminal agent: settings of
//! higher precedence than the agent's own files, passed when agent-loop's approval asks, so
//! that nothing the agent kept between runs (Claude Code's `permissions.allow`, gemini's
//! `tools.allowed`, opencode's `"edit": "allow"`) lets it edit or run a command without a
//! question. An agent you host is untrusted code: an ACP agent's mode is set before every
//! prompt, but its settings files outrank its mode, so the agent is started with settings
//! that outrank them in turn. The same settings keep a project's own (a cloned repository's
//! MCP servers, hooks, plugins) from starting commands unasked; a CLI agent in `loop` mode
//! is always started with its guard.

use serde_json::Value;
use std::collections::BTreeMap;

use crate::config::own_files;
use crate::config::{Guard, GUARD_FILE, GUARD_MCP_SERVERS};

/// Why an agent started without its guard (under `--yes`) is started again once
/// agent-loop's approval asks (`/yes off`).
pub const UNGUARDED: &str =
    "agent-loop's approval asks now, and its own settings may allow what it asks for";

/// What the agent is started with: its arguments and variables with the guard's added, and
/// the private folder of the guard's file, removed when this is dropped (after the agent).
pub struct Start {
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub folder: Option<tempfile::TempDir>,
}

/// The agent's start in `dir` with `guard` added; `Err` when its file cannot be written or
/// a file it reads is not what it should be. `mcp_servers` names the MCP servers agent-loop
/// gives the agent itself (an ACP agent's `session/new`), the only ones `{mcp_servers}` lets
/// it start.
pub fn start(
    guard: Option<&Guard>,
    args: Vec<String>,
    env: &BTreeMap<String, String>,
    mcp_servers: &[&str],
    dir: &std::path::Path,
) -> std::io::Result<Start> {
    let mut start = Start {
        args,
        env: env.clone(),
        folder: None,
    };
    let Some(guard) = guard else {
        return Ok(start);
    };
    let path = match &guard.file {
        Some(text) => {
            let text = over_replaced(guard, text, env)?;
            // A folder of its own (mode 0700), so the file is the agent-loop user's alone.
            let folder = tempfile::Builder::new()
                .prefix("agent-loop-guard-")
                .tempdir()?;
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o700))?;
            let path = folder.path().join(&guard.file_name);
            std::fs::write(&path, text)?;
            start.folder = Some(folder);
            path.display().to_string()
        }
        None => String::new(),
    };
    let servers = allowed_servers(mcp_servers);
    let put = |v: &String| {
        v.replace(GUARD_FILE, &path)
            .replace(GUARD_MCP_SERVERS, &servers)
    };
    start.args.extend(guard.args.iter().map(put));
    start
        .env
        .extend(guard.env.iter().map(|(k, v)| (k.clone(), put(v))));
    start.args.extend(per_name(guard, dir)?);
    for name in &guard.keep_env {
        if !start.env.contains_key(name) && std::env::var_os(name).is_none() {
            start.env.insert(name.clone(), your_own(guard, name));
        }
    }
    Ok(start)
}

/// The guard's `per_name` arguments for the names its files hold (a relative path in each
/// of `dir`'s project folders), each with the keys its first entry sets.
fn per_name(guard: &Guard, dir: &std::path::Path) -> std::io::Result<Vec<String>> {
    let Some(per) = &guard.per_name else {
        return Ok(Vec::new());
    };
    let mut paths = Vec::new();
    for file in &per.files {
        if std::path::Path::new(file).is_relative() && !file.starts_with(['~', '$']) {
            paths.extend(project_folders(dir).iter().map(|f| f.join(file)));
        } else {
            paths.extend(own_files::expand(file));
        }
    }
    let mut entries: Vec<(String, Vec<String>)> = Vec::new();
    for path in paths {
        for (name, keys) in own_files::table_entries(&path, &per.table)? {
            // A name again (in a file of higher precedence) keeps its first entry's keys.
            if !entries.iter().any(|(n, _)| *n == name) {
                entries.push((name, keys));
            }
        }
    }
    Ok(per.args_for(&entries))
}

/// `dir` and each folder above it up to the project's root (the folder holding `.git`),
/// your home folder left out (what it holds is your own): where an agent reads a project's
/// files from.
fn project_folders(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let mut folders = Vec::new();
    for folder in dir.ancestors() {
        if home.as_deref() != Some(folder) {
            folders.push(folder.to_path_buf());
        }
        if folder.join(".git").symlink_metadata().is_ok() {
            break;
        }
    }
    folders
}

/// What your own files of `keep_env_from` give `name`: the first dotenv file of them that
/// exists (the one file the agent would read where the project has none), then each settings
/// file (`PATH#KEY`: JSON with comments, the variables an object holds, as qwen's `env`);
/// nothing where none says (nor where a file cannot be read: the agent takes nothing then).
fn your_own(guard: &Guard, name: &str) -> String {
    let (settings, dotenv): (Vec<_>, Vec<_>) =
        guard.keep_env_from.iter().partition(|f| f.contains('#'));
    let first = dotenv
        .into_iter()
        .filter_map(|f| own_files::expand(f))
        .find(|p| p.exists());
    let from_dotenv = first
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|text| own_files::dotenv_value(&text, name));
    let from_settings = || {
        settings.into_iter().find_map(|f| {
            let (path, key) = f.split_once('#')?;
            let text = std::fs::read_to_string(own_files::expand(path)?).ok()?;
            let settings: Value =
                serde_json::from_str(&super::commented::uncommented(&text)).ok()?;
            let vars = key.split('.').try_fold(&settings, |v, k| v.get(k))?;
            vars.get(name)?.as_str().map(String::from)
        })
    };
    from_dotenv.or_else(from_settings).unwrap_or_default()
}

/// The first of the guard's `refuse` paths found in `dir` or a folder above it, or of its
/// `refuse_keys` files that sets one of their keys, up to the project's root (the folder
/// holding `.git`), your home folder left out (what it holds is your own): the agent reads
/// its project files from all of them, and would run what that path holds unasked, with
/// nothing to pass it that turns that off. `None` without a guard; else what was found.
pub fn refused(guard: Option<&Guard>, dir: &std::path::Path) -> Option<String> {
    let guard = guard?;
    for folder in project_folders(dir) {
        let found = guard.refuse.iter().map(|p| folder.join(p));
        if let Some(found) = found.into_iter().find(|p| p.symlink_metadata().is_ok()) {
            return Some(found.display().to_string());
        }
        for (file, keys) in &guard.refuse_keys {
            let path = folder.join(file);
            match sets(&path, keys) {
                Some(UNREAD) => return Some(format!("{} ({UNREAD})", path.display())),
                Some(key) => return Some(format!("`{key}` in {}", path.display())),
                None => {}
            }
        }
    }
    None
}

/// A settings file that is there but that agent-loop cannot read as JSON: the agent's own
/// reader may take it (Node's takes a lone `\ud800` and any depth), so it counts as setting
/// what is refused.
const UNREAD: &str = "its settings, which agent-loop cannot read as JSON";

/// The first of `keys` that the file at `path` sets: in a dotenv file (a name ending in
/// `.env`) a variable with a value; in a settings file (JSON with comments) a dotted path
/// (`security.auth.baseUrl`) holding anything but null, `{}`, `[]`, `""`, `false` or `0`. `None` where it sets
/// none or is missing; [`UNREAD`] where it is there but cannot be read.
fn sets<'a>(path: &std::path::Path, keys: &'a [String]) -> Option<&'a str> {
    // Only a file is read as one, by the agent too: a folder of that name (a Python
    // project's `.env` virtualenv) says nothing.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(_) => return Some(UNREAD),
    };
    if path.to_string_lossy().ends_with(".env") {
        let set =
            |key: &&String| own_files::dotenv_value(&text, key).is_some_and(|v| !v.is_empty());
        return keys.iter().find(set).map(String::as_str);
    }
    let Ok(settings) = serde_json::from_str::<Value>(&super::commented::uncommented(&text)) else {
        return Some(UNREAD);
    };
    let at = |key: &str| key.split('.').try_fold(&settings, |v, k| v.get(k));
    let set = |key: &&String| match at(key) {
        None | Some(Value::Null) => false,
        Some(Value::Object(o)) => !o.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        // As the agent's JavaScript reads it: "", false and 0 say nothing.
        Some(Value::String(text)) => !text.is_empty(),
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
    };
    keys.iter().find(set).map(String::as_str)
}

/// Why an agent is not started: `found`, of its guard's `refuse` or `refuse_keys`; `yes`:
/// whether `--yes` starts it (its guard is left out then), not so in `loop` mode.
pub fn refusal(found: &str, yes: bool) -> String {
    let otherwise = if yes {
        "remove it, or pass --yes to start the agent as its own settings say"
    } else {
        "remove it to run this backend here"
    };
    format!(
        "not started: with {found} here the agent acts on the project's settings unasked (runs \
         its code as it starts, or sends your key and the conversation to its host), and \
         nothing agent-loop can pass it turns that off; {otherwise}"
    )
}

/// What `{mcp_servers}` stands for: the names of the MCP servers agent-loop gives the agent,
/// comma-separated; with none, a name no server has. An agent's allow-list of server names
/// (gemini's and qwen's `--allowed-mcp-server-names`) then keeps every server of its own
/// settings from starting, the project's among them: a cloned repository's settings would
/// otherwise start any command they name. The name is drawn anew for every start, so a
/// project cannot give its own server that name.
fn allowed_servers(names: &[&str]) -> String {
    if !names.is_empty() {
        return names.join(",");
    }
    use std::hash::{BuildHasher, Hasher};
    // Keyed at random for each process, and counted on within it.
    let drawn = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!("agent-loop-none-{drawn:016x}")
}

/// The guard's file merged over the file it takes the place of (`replaces`, or what the
/// variable that names `{file}` names already), so that what that file says stays said: a
/// system settings file's own deny rules, say. JSON: objects key by key, lists joined.
fn over_replaced(
    guard: &Guard,
    text: &str,
    env: &BTreeMap<String, String>,
) -> std::io::Result<String> {
    let named = guard
        .env
        .iter()
        .find(|(_, v)| *v == GUARD_FILE)
        .and_then(|(k, _)| {
            env.get(k)
                .cloned()
                .or_else(|| std::env::var(k).ok())
                .filter(|v| !v.is_empty())
        });
    let Some(replaced) = named.or_else(|| guard.replaces.clone()) else {
        return Ok(text.to_string());
    };
    let kept = match std::fs::read_to_string(&replaced) {
        Ok(kept) => kept,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(text.to_string()),
        Err(e) => return Err(e),
    };
    let not_json = |what: &str, e: serde_json::Error| {
        std::io::Error::other(format!(
            "{what} is not JSON ({e}), so the guard cannot be merged over it and the agent \
             is not started; correct that file"
        ))
    };
    // As the agent reads it: JSON with comments.
    let kept = super::commented::uncommented(&kept);
    let mut merged: Value = serde_json::from_str(&kept).map_err(|e| {
        not_json(
            &format!("{replaced}, which its guard takes the place of,"),
            e,
        )
    })?;
    let over = serde_json::from_str(text).map_err(|e| not_json("the guard's file", e))?;
    join(&mut merged, over);
    Ok(merged.to_string())
}

/// `over` merged into `into` as settings files are: objects key by key, lists joined.
fn join(into: &mut Value, over: Value) {
    match (into, over) {
        (Value::Object(into), Value::Object(over)) => {
            for (key, value) in over {
                join(into.entry(key).or_insert(Value::Null), value);
            }
        }
        (Value::Array(into), Value::Array(over)) => into.extend(over),
        (into, over) => *into = over,
    }
}

/// `params` of `session/new` or `session/load` with the guard's `meta` merged into `_meta`
/// (objects key by key, lists joined).
pub fn with_meta(mut params: Value, guard: Option<&Guard>) -> Value {
    if let Some(meta) = guard.and_then(|g| g.meta.as_ref()) {
        let meta = serde_json::to_value(meta).unwrap_or(Value::Null);
        join(&mut params["_meta"], meta);
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    /// `start` with `guard` in `/`, with no arguments or servers of agent-loop's.
    fn bare(guard: &Guard, env: &BTreeMap<String, String>) -> Start {
        start(Some(guard), vec![], env, &[], Path::new("/")).unwrap()
    }

    /// A guard as an entry of backends.toml gives it.
    fn guard() -> Guard {
        let text = "[backends.a]\ntype = \"acp\"\ncommand = \"a\"\n[backends.a.guard]\n\
                    args = [\"--policy\", \"{file}\"]\nenv = { SETTINGS = \"at {file}\" }\n\
                    file = \"ask = true\\n\"\nfile_name = \"ask.toml\"\n\
                    meta = { agent = { options = { settings = '{\"ask\":[\"Bash\"]}' } } }\n";
        let source = crate::config::Source {
            name: "my.toml".into(),
            text: text.into(),
        };
        let config = crate::config::Config::from_sources(&[source]).unwrap();
        let Ok(crate::config::Definition::Acp(def)) = config.backend("a") else {
            panic!("a is an ACP backend")
        };
        def.guard.clone().expect("it has a guard")
    }

    #[test]
    fn the_file_is_written_privately_named_and_removed_with_the_start() {
        let env = [("KEEP".to_string(), "1".to_string())].into();
        let start = start(
            Some(&guard()),
            vec!["--acp".into()],
            &env,
            &[],
            std::path::Path::new("/"),
        )
        .unwrap();
        let path = &start.args[2];
        assert_eq!(start.args[..2], ["--acp", "--policy"]);
        assert!(path.ends_with("/ask.toml"), "{path}");
        assert_eq!(std::fs::read_to_string(path).unwrap(), "ask = true\n");
        assert_eq!(start.env["SETTINGS"], format!("at {path}"));
        assert_eq!(start.env["KEEP"], "1");
        use std::os::unix::fs::PermissionsExt;
        let folder = Path::new(path).parent().unwrap();
        let mode = std::fs::metadata(folder).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        let folder = folder.to_path_buf();
        drop(start);
        assert!(!folder.exists());
        // No guard: as given.
        let start = super::start(
            None,
            vec!["--acp".into()],
            &env,
            &[],
            std::path::Path::new("/"),
        )
        .unwrap();
        assert_eq!(start.args, ["--acp"]);
        assert!(start.folder.is_none());
    }

    #[test]
    fn the_file_it_takes_the_place_of_is_kept_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let system = dir.path().join("system.json");
        std::fs::write(
            &system,
            r#"{"permissions":{"ask":["Mine"],"deny":["Bash(rm *)"]}}"#,
        )
        .unwrap();
        let mut guard = guard();
        guard.env = [("SYSTEM".to_string(), "{file}".to_string())].into();
        guard.file = Some(r#"{"permissions":{"ask":["Bash"]}}"#.into());
        guard.replaces = Some(system.display().to_string());
        let read = |start: &Start| {
            let text = std::fs::read_to_string(&start.env["SYSTEM"]).unwrap();
            serde_json::from_str::<Value>(&text).unwrap()
        };
        let start = bare(&guard, &BTreeMap::new());
        assert_eq!(
            read(&start),
            json!({ "permissions": { "ask": ["Mine", "Bash"], "deny": ["Bash(rm *)"] } })
        );
        // The file the variable named already, where it is set.
        let other = dir.path().join("other.json");
        std::fs::write(&other, r#"{"theme":"dark"}"#).unwrap();
        let env = [("SYSTEM".to_string(), other.display().to_string())].into();
        let start = bare(&guard, &env);
        assert_eq!(
            read(&start),
            json!({ "theme": "dark", "permissions": { "ask": ["Bash"] } })
        );
        // None there: the guard's alone. Not JSON: the agent is not started.
        guard.replaces = Some(dir.path().join("none.json").display().to_string());
        let start = bare(&guard, &BTreeMap::new());
        assert_eq!(read(&start), json!({ "permissions": { "ask": ["Bash"] } }));
        // Commented, as the agent reads it.
        std::fs::write(&system, "// a comment\n{\"theme\": \"dark\" /* mine */}").unwrap();
        guard.replaces = Some(system.display().to_string());
        let start = bare(&guard, &BTreeMap::new());
        assert_eq!(
            read(&start),
            json!({ "theme": "dark", "permissions": { "ask": ["Bash"] } })
        );
        std::fs::write(&system, "{ oops }").unwrap();
        let e = super::start(
            Some(&guard),
            vec![],
            &BTreeMap::new(),
            &[],
            std::path::Path::new("/"),
        )
        .err()
        .unwrap();
        assert!(
            e.to_string().contains("which its guard takes the place of"),
            "{e}"
        );
        assert!(!e.to_string().contains("--yes"), "{e}");
    }

    #[test]
    fn mcp_servers_names_the_agents_servers_or_one_no_server_has() {
        let mut guard = guard();
        guard.args = vec!["--allowed-mcp-server-names".into(), "{mcp_servers}".into()];
        guard.env = [("ALLOWED".to_string(), "{mcp_servers}".to_string())].into();
        guard.file = None;
        let given = start(
            Some(&guard),
            vec![],
            &BTreeMap::new(),
            &["docs", "db"],
            std::path::Path::new("/"),
        )
        .unwrap();
        assert_eq!(given.args, ["--allowed-mcp-server-names", "docs,db"]);
        assert_eq!(given.env["ALLOWED"], "docs,db");
        // None given: a name drawn for each start, which a project cannot have chosen.
        let none = |_| bare(&guard, &BTreeMap::new()).args[1].clone();
        let (first, second) = (none(1), none(2));
        assert!(first.starts_with("agent-loop-none-"), "{first}");
        assert_ne!(first, second);
    }

    #[test]
    fn meta_is_merged_key_by_key() {
        let params = json!({ "cwd": "/w", "_meta": { "agent": { "mine": 1 }, "other": 2 } });
        let merged = with_meta(params.clone(), Some(&guard()));
        assert_eq!(
            merged,
            json!({ "cwd": "/w", "_meta": {
                "agent": { "mine": 1, "options": { "settings": "{\"ask\":[\"Bash\"]}" } },
                "other": 2 } })
        );
        assert_eq!(with_meta(params.clone(), None), params);
        let bare = with_meta(json!({ "cwd": "/w" }), Some(&guard()));
        assert_eq!(
            bare["_meta"]["agent"]["options"]["settings"],
            "{\"ask\":[\"Bash\"]}"
        );
    }
}
