//! `--root` without races (issue 30): a path component swapped for a symbolic link while the
//! file tools read and write in a loop never leads outside; special files are refused without
//! blocking; a replaced file keeps its owner and mode (never setuid) and a read-only one is
//! refused. The tools are called through the library, as the loop calls them.

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use agent_loop_tools::{Root, ToolContext, ToolOutput};
use serde_json::{json, Value};

fn context(dir: &Path) -> ToolContext {
    ToolContext {
        cwd: dir.to_path_buf(),
        root: Root::new(dir).unwrap(),
        artifacts: None,
        env: Default::default(),
        web: Default::default(),
        progress: Default::default(),
        files: Default::default(),
    }
}

fn call(ctx: &ToolContext, tool: &str, args: Value) -> ToolOutput {
    let registry = agent_loop_builtins::registry(None).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(registry.get(tool).unwrap().run(args, ctx))
}

const ROUNDS: usize = 2000;

/// While a thread keeps swapping `root/sub` for a link to a folder outside and back, 2000
/// reads of `sub/file.txt` and 2000 writes of `sub/new.txt` never touch the outside one.
#[test]
fn swapping_a_folder_for_a_link_never_escapes_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("sub/file.txt"), "inside\n").unwrap();
    std::fs::write(outside.join("file.txt"), "SECRET\n").unwrap();
    let ctx = context(&root);
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, root, outside) = (stop.clone(), root.clone(), outside.clone());
        std::thread::spawn(move || {
            let (sub, real) = (root.join("sub"), root.join("sub.real"));
            while !stop.load(Ordering::Relaxed) {
                std::fs::rename(&sub, &real).unwrap();
                // The write tool may have made a new `sub` in between (it creates missing
                // folders): then there is no room for the link this round.
                let _ = std::os::unix::fs::symlink(&outside, &sub);
                // Until the real folder is back (the tool may make `sub` again meanwhile).
                while std::fs::rename(&real, &sub).is_err() {
                    match std::fs::symlink_metadata(&sub) {
                        Ok(meta) if meta.is_dir() => {
                            let _ = std::fs::remove_dir_all(&sub);
                        }
                        _ => {
                            let _ = std::fs::remove_file(&sub);
                        }
                    }
                }
            }
        })
    };
    let mut escapes = 0;
    for i in 0..ROUNDS {
        let read = call(&ctx, "read", json!({"path": "sub/file.txt"}));
        escapes += usize::from(read.output.contains("SECRET"));
        call(
            &ctx,
            "write",
            json!({"path": "sub/new.txt", "content": format!("{i}")}),
        );
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let written_outside = std::fs::read_dir(&outside).unwrap().count() - 1;
    assert_eq!(
        (escapes, written_outside),
        (0, 0),
        "reads and writes that escaped"
    );
}

/// `read` on a FIFO hung forever; now it is refused at once, as are devices.
#[test]
fn special_files_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    let ctx = context(dir.path());
    let (tx, rx) = std::sync::mpsc::channel();
    let ctx2 = ctx.clone();
    std::thread::spawn(move || {
        let _ = tx.send(call(&ctx2, "read", json!({"path": "fifo"})));
    });
    let out = rx
        // Far above the work (a refusal is immediate): only a read that blocks reaches it.
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("read blocked on a FIFO");
    assert!(!out.ok);
    assert!(out.output.contains("fifo is a FIFO"), "{}", out.output);
    let out = call(
        &ctx,
        "edit",
        json!({"path": "fifo", "old_string": "a", "new_string": "b"}),
    );
    assert!(
        out.output.contains("only open regular files"),
        "{}",
        out.output
    );
    let out = call(&ctx, "write", json!({"path": "fifo", "content": "x"}));
    assert!(out.output.contains("is a FIFO"), "{}", out.output);
    assert!(std::fs::symlink_metadata(dir.path().join("fifo"))
        .unwrap()
        .file_type()
        .is_fifo());
    let anywhere = ToolContext {
        root: Root::Anywhere,
        ..ctx
    };
    let out = call(&anywhere, "read", json!({"path": "/dev/zero"}));
    assert!(
        out.output.contains("is a character device"),
        "{}",
        out.output
    );
}

/// A replaced file kept setuid and became the runner's; a 0444 file was overwritten.
#[test]
fn replaced_files_keep_owner_and_mode_but_never_setuid() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let file = dir.path().join("tool.sh");
    std::fs::write(&file, "old\n").unwrap();
    // Created by this process: owned by root when the tests run as root.
    let root = std::fs::metadata(&file).unwrap().uid() == 0;
    if root {
        // nobody's file, as in the report.
        std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
    }
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let out = call(
        &ctx,
        "write",
        json!({"path": "tool.sh", "content": "new\n"}),
    );
    assert!(out.ok, "{}", out.output);
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o755);
    if root {
        assert_eq!((meta.uid(), meta.gid()), (65534, 65534));
    }
    let out = call(
        &ctx,
        "edit",
        json!({"path": "tool.sh", "old_string": "new", "new_string": "newer"}),
    );
    assert!(out.ok, "{}", out.output);
    assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o7777, 0o755);

    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
    for (tool, args) in [
        ("write", json!({"path": "tool.sh", "content": "x"})),
        (
            "edit",
            json!({"path": "tool.sh", "old_string": "newer", "new_string": "x"}),
        ),
    ] {
        let out = call(&ctx, tool, args);
        assert!(!out.ok);
        assert!(
            out.output.contains("tool.sh is read-only"),
            "{}",
            out.output
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "newer\n");
}
