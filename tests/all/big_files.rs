//! A file larger than the memory a tool call may take: read and grep go through it line by
//! line, keeping only what they return, and edit refuses it by its size. Before, each held
//! the whole file (a 10 GB log in the folder took the process down).

use crate::common::Workspace;

/// One line of 64 MiB (text for the tools: no NUL in its first 8 KiB), then a short one.
/// Sparse, so it costs the test no disk and no time to write.
fn big_file(ws: &Workspace) {
    use std::io::Write as _;
    let path = ws.work().join("big.txt");
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(&[b'a'; 9000]).unwrap();
    file.set_len(64 << 20).unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"\nneedle here\n").unwrap();
}

#[test]
fn read_grep_and_edit_of_a_64_mib_file_stay_far_below_its_size() {
    let ws = Workspace::new();
    big_file(&ws);
    ws.reply(
        1,
        concat!(
            r#"<tool_call>{"name":"read","arguments":{"path":"big.txt"}}</tool_call>"#,
            r#"<tool_call>{"name":"grep","arguments":{"pattern":"needle"}}</tool_call>"#,
            r#"<tool_call>{"name":"edit","arguments":{"path":"big.txt","#,
            r#""old_string":"needle","new_string":"pin"}}</tool_call>"#,
        ),
    );
    ws.reply(2, "done");
    let (run, peak_kib) =
        ws.run_measured(ws.cmd(&["--backend", "fake", "--yes", "--no-save", "look"]));
    run.expect_code(0);
    // What the tools hold is the 200 KB a read returns and grep's 4 MiB of one line; a
    // whole file held would put the peak past the file's own 64 MiB.
    assert!(peak_kib < 48 * 1024, "peak RSS {peak_kib} KiB");
    let prompt = ws.prompt(2);
    for expected in [
        "[line 1 cut: 66904064 more bytes were dropped after the first 204800; bash",
        "[lines 1-1 of 2; read again with offset 2 for more]",
        "big.txt:2:needle here\n[big.txt:1: a line longer than 4 MiB, searched in its first \
         4 MiB only]",
        "big.txt is larger than the 16 MiB edit works on; use bash for it",
    ] {
        let short: Vec<&str> = prompt.lines().filter(|l| l.len() < 300).collect();
        assert!(
            prompt.contains(expected),
            "no {expected:?} in:\n{}",
            short.join("\n")
        );
    }
}
