//! The layers of settings: their origins, config.toml's tables, errors that name where a
//! value came from, and the settings front ends bring.
use super::*;

#[test]
fn layers_and_origins() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.toml");
    std::fs::write(
        &file,
        "backend = \"demo\"\nmax_iterations = 5\nallow = [\"read\", \"bash:ls*\"]\n",
    )
    .unwrap();
    let env = |k: &str| (k == "AGENT_LOOP_MAX_ITERATIONS").then(|| "7".to_string());
    let s = Layers::load(Some(&file), &env).unwrap();
    assert_eq!(
        s.setting::<String>("backend").unwrap(),
        Some(Setting {
            value: "demo".into(),
            origin: Origin::File(format!("{}:1", file.display()))
        })
    );
    assert_eq!(
        s.setting::<u32>("max_iterations").unwrap().unwrap().value,
        7
    );
    assert_eq!(
        s.setting::<List<String>>("allow").unwrap().unwrap().value,
        List(vec!["read".into(), "bash:ls*".into()])
    );
    let approval = s.setting::<String>("approval").unwrap().unwrap();
    assert_eq!(
        (approval.value.as_str(), approval.origin),
        ("on-write", Origin::Default)
    );
    // A flag replaces the value, typed.
    let flagged = Setting::flag(9u32, "--max-iterations");
    let names = KEYS.iter().map(|k| k.name);
    let table = table(s.shown(names).map(|(name, shown)| match name {
        "max_iterations" => (name, Setting::shown(&Some(flagged.clone()))),
        _ => (name, shown),
    }));
    let row = table
        .lines()
        .find(|l| l.starts_with("max_iterations"))
        .unwrap();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        ["max_iterations", "9", "flag", "--max-iterations"]
    );
    // Every column starts at the same place on every line, long names included.
    let value_at = |l: &str| l.find("  ").map(|i| i + l[i..].find(|c| c != ' ').unwrap());
    let starts: std::collections::BTreeSet<_> = table.lines().map(value_at).collect();
    assert_eq!(starts.len(), 1, "{table}");
}

#[test]
fn tables_flatten_to_dotted_keys() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.toml");
    std::fs::write(&file, "[tools.bash]\nenv_keep = [\"A_TOKEN\", \"B\"]\n").unwrap();
    let env = |k: &str| (k == "AGENT_LOOP_TOOLS_BASH_ENV_REMOVE").then(|| "C".to_string());
    let s = Layers::load(Some(&file), &env).unwrap();
    assert_eq!(s.raw("tools.bash.env_keep").unwrap().0, "A_TOKEN,B");
    assert_eq!(
        s.raw("tools.bash.env_keep").unwrap().1,
        Origin::File(format!("{}:2", file.display()))
    );
    assert_eq!(s.raw("tools.bash.env_remove").unwrap().0, "C");
}

#[test]
fn bad_values_and_keys_name_their_origin() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.toml");
    std::fs::write(&file, "backend = \"demo\"\nmax_iteration = 5\n").unwrap();
    let err = Layers::load(Some(&file), &|_| None).unwrap_err();
    assert!(
        err.to_string()
            .contains("config.toml:2: unknown setting `max_iteration`"),
        "{}",
        err.to_string()
    );
    let env = |k: &str| (k == "AGENT_LOOP_MAX_ITERATIONS").then(|| "lots".to_string());
    let s = Layers::load(None, &env).unwrap();
    let err = s.whole::<u32>("max_iterations", 1).unwrap_err();
    assert_eq!(err.to_string(), "environment AGENT_LOOP_MAX_ITERATIONS: setting `max_iterations` = `lots`: expected a whole number from 1");
}

/// A front end's settings are known only to a run that passes them: from its table, the
/// environment and `config`'s listing; a table entry it lacks is an error naming those
/// it has.
#[test]
fn a_front_ends_settings_come_with_it() {
    const BOT: FrontEndKeys = FrontEndKeys {
        keys: &[Key {
            name: "bot_users",
            flag: None,
            default: Some("none"),
            help: "who",
        }],
        table: Some("bot"),
        entries: &[("users", "bot_users")],
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.toml");
    std::fs::write(&file, "[bot]\nusers = [\"1\", \"2\"]\n").unwrap();
    let none = |_: &str| None;
    let s = Layers::load_with(Some(&file), &none, &[BOT]).unwrap();
    assert_eq!(s.raw("bot_users").unwrap().0, "1,2");
    assert!(table(s.shown(["bot_users"])).contains("bot_users  1,2"));
    let err = Layers::load(Some(&file), &none).unwrap_err().to_string();
    assert!(err.contains("bot.users"), "{err}");
    std::fs::write(&file, "[bot]\nwho = 1\n").unwrap();
    let err = Layers::load_with(Some(&file), &none, &[BOT])
        .unwrap_err()
        .to_string();
    assert!(err.contains("who") && err.contains("users"), "{err}");
}

/// A front end's settings without a table are top-level keys, which the library alone
/// does not know.
#[test]
fn a_front_ends_top_level_settings() {
    const SCREEN: FrontEndKeys = FrontEndKeys {
        keys: &[Key {
            name: "screen",
            flag: Some("--screen"),
            default: Some("auto"),
            help: "how",
        }],
        table: None,
        entries: &[],
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.toml");
    std::fs::write(&file, "backend = \"demo\"\nscreen = \"plain\"\n").unwrap();
    let none = |_: &str| None;
    let s = Layers::load_with(Some(&file), &none, &[SCREEN]).unwrap();
    assert_eq!(
        s.raw("screen").unwrap(),
        &(
            "plain".into(),
            Origin::File(format!("{}:2", file.display()))
        )
    );
    let err = Layers::load(Some(&file), &none).unwrap_err().to_string();
    assert!(err.contains(":2: unknown setting `screen`"), "{err}");
}
