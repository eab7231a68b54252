//! The approval policy, as data: when a tool call may run without asking. Every tool call
//! passes through [`Policy::needs_approval`]; nothing else decides.

use std::collections::HashSet;
use std::str::FromStr;

use globset::{Glob, GlobMatcher};

use crate::context::ToolCall;
use crate::tools::{Subject, ToolSpec};
use crate::UnknownValue;

/// When to ask before a tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalMode {
    /// Never ask: everything runs (`--yes`).
    Never,
    /// Ask before tools that change things: bash, write, edit (the default).
    #[default]
    OnWrite,
    /// Ask before every tool call.
    AlwaysAsk,
}

impl ApprovalMode {
    /// Every mode, in the order a front end offers them: the default first.
    pub const ALL: [ApprovalMode; 3] = [
        ApprovalMode::OnWrite,
        ApprovalMode::AlwaysAsk,
        ApprovalMode::Never,
    ];

    /// The mode's name in a front end's list of modes (an editor's mode selector).
    pub fn title(self) -> &'static str {
        match self {
            ApprovalMode::OnWrite => "Ask before changes",
            ApprovalMode::AlwaysAsk => "Ask always",
            ApprovalMode::Never => "Never ask",
        }
    }

    /// What the mode does, in a line.
    pub fn description(self) -> &'static str {
        match self {
            ApprovalMode::OnWrite => "Ask before bash, write and edit",
            ApprovalMode::AlwaysAsk => "Ask before every tool call",
            ApprovalMode::Never => "Run every tool without asking",
        }
    }
}

impl FromStr for ApprovalMode {
    type Err = UnknownValue;
    fn from_str(s: &str) -> Result<Self, UnknownValue> {
        match s {
            "never" => Ok(ApprovalMode::Never),
            "on-write" => Ok(ApprovalMode::OnWrite),
            "always-ask" => Ok(ApprovalMode::AlwaysAsk),
            _ => Err(UnknownValue {
                what: "approval mode",
                value: s.to_string(),
                expected: "the modes are never, on-write, always-ask",
            }),
        }
    }
}

impl std::fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ApprovalMode::Never => "never",
            ApprovalMode::OnWrite => "on-write",
            ApprovalMode::AlwaysAsk => "always-ask",
        })
    }
}

/// `TOOL` (every call of the tool) or `TOOL:PATTERN` (calls whose subject matches the glob,
/// e.g. `bash:git status*`: bash's command, a file tool's resolved path, a command tool's
/// argv, an MCP tool's arguments; see [`crate::tools::Subject`]), allowed without asking.
#[derive(Debug, Clone)]
pub struct AllowRule {
    pub tool: String,
    pattern: Option<GlobMatcher>,
    text: String,
}

/// An `--allow` rule that cannot be read, as written (`rule`).
#[derive(Debug, thiserror::Error)]
pub enum AllowRuleError {
    #[error("allow rule `{rule}`: no tool name before `:`")]
    NoTool { rule: String },
    #[error("allow rule `{rule}`: {source}")]
    Glob {
        rule: String,
        source: globset::Error,
    },
}

impl FromStr for AllowRule {
    type Err = AllowRuleError;
    fn from_str(s: &str) -> Result<Self, AllowRuleError> {
        let (tool, pattern) = match s.split_once(':') {
            Some((tool, pattern)) => (tool, Some(pattern)),
            None => (s, None),
        };
        let rule = s.to_string();
        if tool.is_empty() {
            return Err(AllowRuleError::NoTool { rule });
        }
        let pattern = pattern
            .map(|p| Glob::new(p).map(|g| g.compile_matcher()))
            .transpose()
            .map_err(|source| AllowRuleError::Glob { rule, source })?;
        Ok(AllowRule {
            tool: tool.to_string(),
            pattern,
            text: s.to_string(),
        })
    }
}

impl std::fmt::Display for AllowRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The policy of one session: the mode, the allow rules, the tools the user answered
/// "always" for, and the approval keys (tool, host) an answer covers for the session.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub mode: ApprovalMode,
    pub allow: Vec<AllowRule>,
    always: HashSet<String>,
    approved: HashSet<(String, String)>,
}

impl Policy {
    pub fn new(mode: ApprovalMode, allow: Vec<AllowRule>) -> Self {
        Policy {
            mode,
            allow,
            always: HashSet::new(),
            approved: HashSet::new(),
        }
    }

    /// Whether this call must be approved by the user before it runs. Rules judge the
    /// call's `subject`, everything it will use (a file tool's path where it leads).
    pub fn needs_approval(&self, call: &ToolCall, spec: &ToolSpec, subject: &Subject) -> bool {
        let asks = match self.mode {
            ApprovalMode::Never => false,
            ApprovalMode::OnWrite => spec.mutating,
            ApprovalMode::AlwaysAsk => true,
        };
        if !asks {
            return false;
        }
        let main = subject.matched.as_str();
        // Into .git/ (hooks, config: code that git runs) a change always asks, unless a rule
        // names .git/ itself; "always" answers do not cover it either.
        if spec.mutating && subject.paths.iter().any(|p| in_git(p)) {
            return !self
                .allow
                .iter()
                .any(|rule| rule.names_git() && rule.matches(&call.name, main));
        }
        !self.always.contains(&call.name)
            && !self
                .approved
                .contains(&(call.name.clone(), approval_key(call, spec)))
            && !self.allow.iter().any(|rule| rule.matches(&call.name, main))
    }

    /// The user approved this call: for a tool with an approval key (read_url: the host),
    /// later calls with the same key run without asking in this session.
    pub fn approved_once(&mut self, call: &ToolCall, spec: &ToolSpec) {
        if spec.approval_key.is_some() {
            let key = approval_key(call, spec);
            self.approved.insert((call.name.clone(), key));
        }
    }

    /// The globs of `TOOL:GLOB` allow rules for `tool`: what the user named explicitly
    /// (read_url fetches a private address only when one of them matches its URL).
    pub fn named_patterns(&self, tool: &str) -> Vec<GlobMatcher> {
        self.allow
            .iter()
            .filter(|r| r.tool == tool)
            .filter_map(|r| r.pattern.clone())
            .collect()
    }

    /// The user answered "always" for this tool.
    pub fn allow_always(&mut self, tool: &str) {
        self.always.insert(tool.to_string());
    }

    /// Another session begins (`/clear`, `/load`, a bot's `/new`): the answers given in the
    /// one before, "always" and a host approved once, stop counting, since the user gave
    /// them for that conversation. The mode and the allow rules are the run's and stay.
    pub fn forget_answers(&mut self) {
        self.always.clear();
        self.approved.clear();
    }

    /// The tools the user answered "always" for, sorted (what a session keeps).
    pub fn always(&self) -> Vec<String> {
        let mut tools: Vec<String> = self.always.iter().cloned().collect();
        tools.sort();
        tools
    }
}

impl AllowRule {
    /// The glob after `TOOL:`, as written; `None` for a rule naming the tool alone.
    pub fn pattern_text(&self) -> Option<&str> {
        self.pattern.as_ref().map(|glob| glob.glob().glob())
    }

    /// Whether the rule vouches for a call of `tool` whose subject is `main`.
    fn matches(&self, tool: &str, main: &str) -> bool {
        self.tool == tool
            && match &self.pattern {
                None => true,
                // A pattern vouches for one command, not for whatever is chained to it:
                // `git status; rm -rf ~` does not match `git status*`.
                Some(glob) => !(tool == "bash" && chains_commands(main)) && glob.is_match(main),
            }
    }

    /// Whether the pattern names `.git` itself (`write:.git/hooks/*`).
    fn names_git(&self) -> bool {
        self.text
            .split_once(':')
            .is_some_and(|(_, pattern)| pattern.split('/').any(|part| part == ".git"))
    }
}

/// Whether a resolved path lies in a `.git` folder.
fn in_git(target: &str) -> bool {
    std::path::Path::new(target)
        .components()
        .any(|c| c.as_os_str() == ".git")
}

/// What an approval of `call` covers; empty (never remembered) for tools without a key.
fn approval_key(call: &ToolCall, spec: &ToolSpec) -> String {
    spec.approval_key
        .and_then(|key| key(&call.args))
        .unwrap_or_default()
}

/// Whether a shell command line does more than run one simple command.
fn chains_commands(command: &str) -> bool {
    command.contains([';', '&', '|', '`', '\n', '>', '<']) || command.contains("$(")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins;
    use crate::tools::{Root, ToolContext};
    use serde_json::{json, Value};

    fn needs(policy: &Policy, tool: &str, args: Value) -> bool {
        needs_in(&std::env::temp_dir(), policy, tool, args)
    }

    /// With `dir` as working directory and root.
    fn needs_in(dir: &std::path::Path, policy: &Policy, tool: &str, args: Value) -> bool {
        let registry = builtins::registry(None).unwrap();
        let spec = registry.get(tool).unwrap().spec().clone();
        let call = ToolCall {
            id: "c".into(),
            name: tool.into(),
            args,
        };
        let ctx = ToolContext {
            cwd: dir.to_path_buf(),
            root: Root::new(dir).unwrap(),
            artifacts: None,
            env: Default::default(),
            web: Default::default(),
            progress: Default::default(),
            files: Default::default(),
        };
        let subject = registry.get(tool).unwrap().subject(&call.args, &ctx);
        policy.needs_approval(&call, &spec, &subject)
    }

    #[test]
    fn path_rules_judge_where_the_path_leads_and_git_asks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::os::unix::fs::symlink(root.join(".git"), root.join("docs/g")).unwrap();
        let write = |path: &str| json!({"path": path, "content": ""});
        let mut policy = Policy::new(ApprovalMode::OnWrite, vec!["write:docs/*".parse().unwrap()]);
        assert!(!needs_in(root, &policy, "write", write("docs/a.md")));
        assert!(!needs_in(root, &policy, "write", write("./docs/x/../a.md")));
        for path in [
            "docs/../.git/config",
            "docs/../src/a.rs",
            "docs/g/config",
            "../x",
        ] {
            assert!(needs_in(root, &policy, "write", write(path)), "{path}");
        }
        // `always` does not cover .git/ either; a rule naming it does.
        policy.allow_always("write");
        assert!(!needs_in(root, &policy, "write", write("src/a.rs")));
        assert!(needs_in(
            root,
            &policy,
            "write",
            write(".git/hooks/pre-commit")
        ));
        let git = Policy::new(
            ApprovalMode::OnWrite,
            vec!["write:.git/hooks/*".parse().unwrap()],
        );
        assert!(!needs_in(
            root,
            &git,
            "write",
            write(".git/hooks/pre-commit")
        ));
        assert!(needs_in(root, &git, "write", write(".git/config")));
    }

    #[test]
    fn modes() {
        let on_write = Policy::default();
        assert!(needs(&on_write, "bash", json!({"command": "ls"})));
        assert!(!needs(&on_write, "read", json!({"path": "x"})));
        let never = Policy::new(ApprovalMode::Never, vec![]);
        assert!(!needs(&never, "write", json!({"path": "x", "content": ""})));
        let always = Policy::new(ApprovalMode::AlwaysAsk, vec![]);
        assert!(needs(&always, "read", json!({"path": "x"})));
    }

    #[test]
    fn allow_rules_match_the_main_argument_and_refuse_chains() {
        let rules = vec![
            "bash:git status*".parse().unwrap(),
            "write".parse().unwrap(),
        ];
        let policy = Policy::new(ApprovalMode::OnWrite, rules);
        assert!(!needs(
            &policy,
            "bash",
            json!({"command": "git status --short"})
        ));
        assert!(needs(&policy, "bash", json!({"command": "git push"})));
        assert!(needs(
            &policy,
            "bash",
            json!({"command": "git status; rm -rf ~"})
        ));
        assert!(needs(
            &policy,
            "bash",
            json!({"command": "git status $(rm x)"})
        ));
        assert!(!needs(
            &policy,
            "write",
            json!({"path": "a", "content": ""})
        ));
        assert!(needs(
            &policy,
            "edit",
            json!({"path": "a", "old_string": "x", "new_string": "y"})
        ));
    }

    /// What docs/security.md says of a `*`: it admits any option, one that runs a program
    /// included; a rule without it is exact.
    #[test]
    fn a_star_admits_options_and_an_exact_rule_does_not() {
        let runner = "cargo test --config 'target.x86_64-unknown-linux-gnu.runner=\"sh -c x\"'";
        let star = Policy::new(
            ApprovalMode::OnWrite,
            vec!["bash:cargo test*".parse().unwrap()],
        );
        assert!(!needs(&star, "bash", json!({ "command": runner })));
        let exact = Policy::new(
            ApprovalMode::OnWrite,
            vec!["bash:cargo test".parse().unwrap()],
        );
        assert!(!needs(&exact, "bash", json!({"command": "cargo test"})));
        for command in [runner, "cargo test -p x", "cargo tests"] {
            assert!(
                needs(&exact, "bash", json!({ "command": command })),
                "{command}"
            );
        }
    }

    #[test]
    fn always_answers_are_remembered_per_tool() {
        let mut policy = Policy::default();
        policy.allow_always("bash");
        assert!(!needs(&policy, "bash", json!({"command": "anything"})));
        assert!(needs(
            &policy,
            "edit",
            json!({"path": "a", "old_string": "x", "new_string": "y"})
        ));
    }

    #[test]
    fn read_url_asks_once_per_host_and_rules_name_urls() {
        let registry = builtins::registry(None).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext {
            cwd: dir.path().to_path_buf(),
            root: Root::new(dir.path()).unwrap(),
            artifacts: None,
            env: Default::default(),
            web: Default::default(),
            progress: Default::default(),
            files: Default::default(),
        };
        let spec = registry.get("read_url").unwrap().spec().clone();
        let judge = |policy: &Policy, call: &ToolCall| {
            let tool = registry.get(&call.name).unwrap();
            policy.needs_approval(call, tool.spec(), &tool.subject(&call.args, &ctx))
        };
        let call = |url: &str| ToolCall {
            id: "c".into(),
            name: "read_url".into(),
            args: json!({ "url": url }),
        };
        let mut policy = Policy::new(
            ApprovalMode::OnWrite,
            vec!["read_url:https://docs.rs/*".parse().unwrap()],
        );
        assert!(!judge(&policy, &call("https://docs.rs/htmd")));
        let page = call("https://example.com/a");
        assert!(judge(&policy, &page));
        policy.approved_once(&page, &spec);
        assert!(!judge(&policy, &call("https://example.com/b?q=1")));
        assert!(judge(&policy, &call("https://example.org/a")));
        assert!(judge(&policy, &call("https://example.com:8443/a")));
        // Approving a bash command once covers nothing else.
        let bash = registry.get("bash").unwrap().spec().clone();
        let ls = ToolCall {
            id: "c".into(),
            name: "bash".into(),
            args: json!({"command": "ls"}),
        };
        policy.approved_once(&ls, &bash);
        assert!(judge(&policy, &ls));
        let named = policy.named_patterns("read_url");
        assert_eq!(named.len(), 1);
        assert!(named[0].is_match("https://docs.rs/x"));
        assert!(policy.named_patterns("bash").is_empty());
        // Another session asks again; the rules stay.
        policy.allow_always("bash");
        policy.forget_answers();
        assert!(judge(&policy, &page));
        assert!(judge(&policy, &ls));
        assert!(!judge(&policy, &call("https://docs.rs/htmd")));
    }

    #[test]
    fn bad_rules_and_modes_are_explained() {
        assert!("".parse::<AllowRule>().is_err());
        assert!(matches!(
            ":x".parse::<AllowRule>(),
            Err(AllowRuleError::NoTool { .. })
        ));
        assert!("bash:["
            .parse::<AllowRule>()
            .unwrap_err()
            .to_string()
            .starts_with("allow rule `bash:[`"));
        assert_eq!(
            "sometimes".parse::<ApprovalMode>().unwrap_err().to_string(),
            "unknown approval mode `sometimes`; the modes are never, on-write, always-ask"
        );
    }
}
