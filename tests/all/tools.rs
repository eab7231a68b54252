//! The built-in tools, called through the registry as the loop calls them: real files in a
//! temporary folder, real processes for bash.

use agent_loop_tools::{Root, ToolContext, ToolOutput};
use serde_json::{json, Value};

fn call(dir: &std::path::Path, tool: &str, args: Value) -> ToolOutput {
    let registry = agent_loop_builtins::registry(None).unwrap();
    let ctx = ToolContext {
        cwd: dir.to_path_buf(),
        root: Root::new(dir).unwrap(),
        artifacts: None,
        env: Default::default(),
        web: Default::default(),
        progress: Default::default(),
        files: Default::default(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(registry.get(tool).expect("tool exists").run(args, &ctx))
}

#[test]
fn bash_reports_exit_code_stdout_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let out = call(
        dir.path(),
        "bash",
        json!({"command": "echo out; echo err >&2; exit 7"}),
    );
    assert!(!out.ok);
    assert_eq!(out.exit_code, Some(7));
    assert_eq!(out.output, "exit code: 7\nstdout:\nout\nstderr:\nerr");
}

#[test]
fn bash_runs_in_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker"), "").unwrap();
    let out = call(dir.path(), "bash", json!({"command": "ls"}));
    assert!(out.ok, "{}", out.output);
    assert_eq!(out.output, "exit code: 0\nstdout:\nmarker");
}

#[test]
fn bash_timeout_kills_the_group_with_exit_124() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let out = call(
        dir.path(),
        "bash",
        json!({"command": format!("sleep 300 & echo $! > {}; wait", pidfile.display()), "timeout_s": 1}),
    );
    assert_eq!(out.exit_code, Some(124));
    assert!(out.output.contains("timed out after 1s"), "{}", out.output);
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        crate::common::wait_gone(pid),
        "the background sleep survived"
    );
}

#[test]
fn bash_output_is_capped_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let out = call(
        dir.path(),
        "bash",
        json!({"command": "head -c 300000 /dev/zero | tr '\\0' a"}),
    );
    assert!(out.ok);
    assert!(out.output.len() < 210 * 1024, "{}", out.output.len());
    assert!(
        out.output
            .ends_with("[stdout cut: 95200 more bytes were dropped after the first 204800]"),
        "{}",
        &out.output[out.output.len() - 100..]
    );
}

#[test]
fn bash_with_bad_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let out = call(dir.path(), "bash", json!({"cmd": "ls"}));
    assert!(!out.ok);
    assert!(
        out.output
            .starts_with("invalid arguments for bash: unknown field `cmd`"),
        "{}",
        out.output
    );
    let out = call(dir.path(), "bash", json!({}));
    assert_eq!(
        out.output,
        "invalid arguments for bash: missing field `command`"
    );
}

#[test]
fn read_numbers_lines_and_pages() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("f.txt"), text).unwrap();
    let out = call(
        dir.path(),
        "read",
        json!({"path": "f.txt", "offset": 3, "limit": 2}),
    );
    assert!(out.ok);
    assert_eq!(
        out.output,
        "     3\tline 3\n     4\tline 4\n[lines 3-4 of 10; read again with offset 5 for more]"
    );
    let out = call(dir.path(), "read", json!({"path": "f.txt", "offset": 11}));
    assert!(!out.ok);
    assert_eq!(out.output, "f.txt has 10 lines; offset 11 is past the end");
}

/// A line past the 200 KB a read returns is cut with a note, never "past the end" (it could
/// not be read at all: offset and limit count whole lines); the next line is read after it.
#[test]
fn read_cuts_a_line_longer_than_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    // Cut on a character boundary: byte 204800 is in the middle of an `é`.
    let long = format!("a{}", "é".repeat(500_000));
    std::fs::write(dir.path().join("min.js"), format!("{long}\nsecond line\n")).unwrap();
    let out = call(dir.path(), "read", json!({"path": "min.js"}));
    assert!(out.ok, "{}", out.output);
    let (shown, notes) = out.output.split_once('\n').unwrap();
    assert!(shown.starts_with("     1\taé") && shown.ends_with('é'));
    assert_eq!(
        notes,
        format!(
            "[line 1 cut: {} more bytes were dropped after the first 204799; bash (cut -c, \
             head -c) can show the rest]\n[lines 1-1 of 2; read again with offset 2 for more]",
            1_000_001 - 204_799
        )
    );
    let out = call(dir.path(), "read", json!({"path": "min.js", "offset": 2}));
    assert_eq!(out.output, "     2\tsecond line");
    let out = call(dir.path(), "read", json!({"path": "min.js", "limit": 0}));
    assert_eq!(
        out.output,
        "limit 0 asks for no line; leave it out for 2000"
    );
}

#[test]
fn read_refuses_binary_and_reports_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.bin"), [0u8, 159, 146, 150]).unwrap();
    let out = call(dir.path(), "read", json!({"path": "b.bin"}));
    assert!(!out.ok);
    assert_eq!(
        out.output,
        "b.bin is a binary file (not UTF-8 text); read refuses it"
    );
    let out = call(dir.path(), "read", json!({"path": "nope.txt"}));
    assert!(
        !out.ok && out.output.starts_with("cannot read nope.txt: No such file"),
        "{}",
        out.output
    );
}

#[test]
fn write_creates_parents_atomically_and_keeps_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let out = call(
        dir.path(),
        "write",
        json!({"path": "a/b/c.sh", "content": "echo 1\n"}),
    );
    assert!(out.ok, "{}", out.output);
    let path = dir.path().join("a/b/c.sh");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo 1\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    call(
        dir.path(),
        "write",
        json!({"path": "a/b/c.sh", "content": "echo 2\n"}),
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo 2\n");
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o755
    );
    // No temporary file is left beside it.
    assert_eq!(
        std::fs::read_dir(dir.path().join("a/b")).unwrap().count(),
        1
    );
}

#[test]
fn edit_requires_a_unique_match_unless_replace_all() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "a x a x a\n").unwrap();
    let out = call(
        dir.path(),
        "edit",
        json!({"path": "f.txt", "old_string": "a", "new_string": "b"}),
    );
    assert!(!out.ok);
    assert!(
        out.output.starts_with("old_string occurs 3 times in f.txt"),
        "{}",
        out.output
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "a x a x a\n"
    );
    let out = call(
        dir.path(),
        "edit",
        json!({"path": "f.txt", "old_string": "a", "new_string": "b", "replace_all": true}),
    );
    assert_eq!(out.output, "edited f.txt: replaced 3 occurrences");
    let out = call(
        dir.path(),
        "edit",
        json!({"path": "f.txt", "old_string": "b x b x b", "new_string": "done"}),
    );
    assert_eq!(out.output, "edited f.txt: replaced 1 occurrence");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "done\n"
    );
    let out = call(
        dir.path(),
        "edit",
        json!({"path": "f.txt", "old_string": "zzz", "new_string": "y"}),
    );
    assert!(!out.ok && out.output.starts_with("old_string does not occur in f.txt"));
}

#[test]
fn ls_sorts_and_marks_folders() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("b.txt"), "12").unwrap();
    std::fs::write(dir.path().join("a.txt"), "").unwrap();
    let out = call(dir.path(), "ls", json!({}));
    assert_eq!(out.output, "a.txt  (0 bytes)\nb.txt  (2 bytes)\nsub/");
    let out = call(dir.path(), "ls", json!({"path": "missing"}));
    assert!(!out.ok && out.output.starts_with("cannot list missing:"));
}

/// A symbolic link shows as one, with what it leads to inside the root; of one leading
/// outside, only its own text (not whether its target exists, nor what it is).
#[test]
fn ls_shows_links_as_links() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("real")).unwrap();
    std::fs::write(root.join("f.txt"), "12345").unwrap();
    std::fs::write(outside.path().join("secret"), "s").unwrap();
    symlink("real", root.join("to-folder")).unwrap();
    symlink("f.txt", root.join("to-file")).unwrap();
    symlink("nowhere", root.join("dangling")).unwrap();
    symlink(outside.path().join("secret"), root.join("out")).unwrap();
    symlink(outside.path().join("missing"), root.join("out-missing")).unwrap();
    let out = call(&root, "ls", json!({}));
    let o = outside.path().display();
    assert_eq!(
        out.output,
        format!(
            "dangling -> nowhere  (a broken link)\n\
             f.txt  (5 bytes)\n\
             out -> {o}/secret  (a link outside the root: the file tools cannot follow it)\n\
             out-missing -> {o}/missing  (a link outside the root: the file tools cannot follow it)\n\
             real/\n\
             to-file -> f.txt  (a link to a file, 5 bytes)\n\
             to-folder -> real  (a link to a folder)"
        )
    );
}

#[test]
fn grep_searches_recursively_and_honours_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::create_dir_all(dir.path().join("target")).unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
    std::fs::write(
        dir.path().join("src/main.rs"),
        "fn main() {}\n// TODO: more\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("target/gen.rs"), "// TODO: generated\n").unwrap();
    let out = call(
        dir.path(),
        "grep",
        json!({"pattern": "todo", "ignore_case": true}),
    );
    assert_eq!(out.output, "src/main.rs:2:// TODO: more");
    let out = call(dir.path(), "grep", json!({"pattern": "("}));
    assert!(!out.ok && out.output.starts_with("invalid pattern:"));
}
