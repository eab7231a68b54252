//! `agent-loop backends` asks each found CLI for its version once per install: the answer is
//! remembered in `$XDG_CACHE_HOME/agent-loop/versions.json` by program path, and asked again
//! when the program changes.

use crate::common::Workspace;

#[test]
fn versions_are_asked_once_per_program_and_again_when_it_changes() {
    let ws = Workspace::new();
    let program = ws.path("fake/versioned");
    let script = "#!/bin/sh\necho asked >> \"$FAKE_DIR/asked\"\necho 'versioned 1.0'\n";
    std::fs::write(&program, script).unwrap();
    let mut perms = std::fs::metadata(&program).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&program, perms).unwrap();
    ws.add_config(&format!(
        "\n[backends.v]\ncommand = \"{}\"\n",
        program.display()
    ));
    let listing = || {
        let run = ws.run(&["backends"]);
        run.expect_code(0);
        let out = run.stdout();
        let row = out
            .lines()
            .find(|l| l.starts_with("v "))
            .unwrap_or_else(|| panic!("no row for v: {out}"))
            .to_string();
        let asked = std::fs::read_to_string(ws.path("fake/asked")).unwrap_or_default();
        (row, asked.lines().count())
    };
    let (row, asked) = listing();
    assert!(row.ends_with("versioned 1.0"), "{row}");
    assert_eq!(asked, 1);
    assert!(ws.path("cache/agent-loop/versions.json").is_file());
    let (row, asked) = listing();
    assert!(row.ends_with("versioned 1.0"), "{row}");
    assert_eq!(asked, 1, "the second listing read the cache");
    // Reinstalled: another size (and modification time).
    std::fs::write(&program, script.replace("1.0", "1.10")).unwrap();
    let (row, asked) = listing();
    assert!(row.ends_with("versioned 1.10"), "{row}");
    assert_eq!(asked, 2);
}
