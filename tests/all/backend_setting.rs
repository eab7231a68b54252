//! A backend named by config.toml's `backend` or by AGENT_LOOP_BACKEND that is not configured:
//! the error says where the name came from (the file and line, or the variable), since the
//! user did not type it on this command line; `agent-loop config` still prints its table,
//! the row showing the value and its origin, then the error a run gives (exit 2). So does
//! `default_backend` of a backends.toml, naming that file and line.

use crate::common::Workspace;

const NOT_CONFIGURED: &str = "no backend named `demoo` (did you mean `demo`?)";

/// A workspace whose config.toml sets `backend = "demoo"` on its second line; the file.
fn misspelt_in_config_toml() -> (Workspace, String) {
    let ws = Workspace::new();
    let file = ws.path("xdg/agent-loop/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "# mine\nbackend = \"demoo\"\n").unwrap();
    (ws, file.display().to_string())
}

#[test]
fn a_run_names_config_toml_and_its_line() {
    let (ws, file) = misspelt_in_config_toml();
    let run = ws.run(&["hi"]);
    run.expect_code(2);
    let err = run.stderr();
    assert!(
        err.contains(&format!(
            "{file}:2: setting `backend` = `demoo`: {NOT_CONFIGURED}"
        )),
        "{err}"
    );
    assert_eq!(ws.runs(), 0);
}

#[test]
fn a_run_names_the_variable() {
    let ws = Workspace::new();
    let mut cmd = ws.cmd(&["hi"]);
    cmd.env("AGENT_LOOP_BACKEND", "demoo");
    let run = ws.run_cmd(cmd);
    run.expect_code(2);
    let err = run.stderr();
    assert!(
        err.contains(&format!(
            "environment AGENT_LOOP_BACKEND: setting `backend` = `demoo`: {NOT_CONFIGURED}"
        )),
        "{err}"
    );
}

/// On the command line the user sees the name they typed: no origin is added.
#[test]
fn a_flag_is_reported_as_before() {
    let ws = Workspace::new();
    let run = ws.run(&["--backend", "demoo", "hi"]);
    run.expect_code(2);
    assert!(
        run.stderr()
            .starts_with(&format!("agent-loop: error: {NOT_CONFIGURED}")),
        "{}",
        run.stderr()
    );
}

#[test]
fn config_shows_the_row_then_the_error() {
    let (ws, file) = misspelt_in_config_toml();
    let run = ws.run(&["config"]);
    run.expect_code(2);
    let row = run
        .stdout()
        .lines()
        .find(|l| l.starts_with("backend "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "));
    assert_eq!(
        row,
        Some(format!("backend demoo {file}:2")),
        "{}",
        run.stdout()
    );
    assert!(
        run.stderr()
            .contains(&format!("{file}:2: setting `backend` = `demoo`")),
        "{}",
        run.stderr()
    );
}

#[test]
fn doctor_names_config_toml() {
    let (ws, file) = misspelt_in_config_toml();
    let run = ws.run(&["doctor"]);
    run.expect_code(2);
    assert!(
        run.stdout()
            .contains(&format!("failed: {file}:2: setting `backend` = `demoo`")),
        "{}",
        run.stdout()
    );
}

/// No backend can run and none is named: doctor offers the built-in demo, as a run does.
#[test]
fn doctor_without_a_backend_offers_the_demo() {
    let ws = Workspace::new();
    ws.config("");
    let run = ws.run(&["doctor"]);
    run.expect_code(2);
    assert!(
        run.stdout().contains("`agent-loop doctor demo`"),
        "{}",
        run.stdout()
    );
}

/// A workspace whose own backends.toml sets `default_backend = "demoo"` on its second line;
/// that file.
fn misspelt_default_backend() -> (Workspace, String) {
    let ws = Workspace::new();
    ws.config("# mine\ndefault_backend = \"demoo\"\n");
    let file = ws.path("backends.toml").display().to_string();
    (ws, file)
}

#[test]
fn a_misspelt_default_backend_names_its_file_and_line() {
    let (ws, file) = misspelt_default_backend();
    let said = format!("{file}:2: setting `default_backend` = `demoo`: {NOT_CONFIGURED}");
    let run = ws.run(&["hi"]);
    run.expect_code(2);
    assert!(run.stderr().contains(&said), "{}", run.stderr());
    let run = ws.run(&["doctor"]);
    run.expect_code(2);
    assert!(
        run.stdout().contains(&format!("failed: {said}")),
        "{}",
        run.stdout()
    );
    // `config` checks it as a run would, after its table.
    let run = ws.run(&["config"]);
    run.expect_code(2);
    assert!(run.stdout().contains("SETTING"), "{}", run.stdout());
    assert!(run.stderr().contains(&said), "{}", run.stderr());
    // Unused, it stops nothing: a flag or the `backend` setting chooses instead.
    ws.run(&["--backend", "demo", "hi"]).expect_code(0);
}
