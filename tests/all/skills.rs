//! Agent Skills end to end against the HTTP mock: discovery order and the project winning a
//! clash, files that break a rule skipped with a warning, the catalog in the exact system
//! prompt of the request, activation through the `skill` tool with no question asked, a
//! skill's files read outside `--root` and nothing else, and `/skills`.

use std::path::{Path, PathBuf};

use crate::common::Workspace;
use crate::http::server::{json, Recorded};
use crate::http::{run_api, setup, Format};

/// Writes `root/NAME/SKILL.md`; returns the file.
fn skill(root: &Path, folder: &str, front: &str, body: &str) -> PathBuf {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("SKILL.md");
    std::fs::write(&file, format!("---\n{front}---\n{body}")).unwrap();
    file
}

/// An OpenAI answer that calls the `skill` tool with `args` (JSON text).
fn call(args: &str) -> String {
    call_tool("skill", args)
}

fn call_tool(name: &str, args: &str) -> String {
    serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": name, "arguments": args}}]},
        "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}})
    .to_string()
}

const DONE: &str = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],
    "usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}"#;

fn canonical(path: &Path) -> String {
    std::fs::canonicalize(path).unwrap().display().to_string()
}

/// The project's `pdf-forms` (with a script and a reference), the user's `pdf-forms` (which
/// loses) and `notes`, and a broken one in the config folder.
fn skills(ws: &Workspace) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let project = skill(
        &ws.work().join(".agents/skills"),
        "pdf-forms",
        "name: pdf-forms\ndescription: Fill PDF forms. Use when a task mentions a form.\n",
        "Read references/fields.md, then run scripts/fill.sh.\n",
    );
    let dir = project.parent().unwrap();
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::write(dir.join("scripts/fill.sh"), "echo filled\n").unwrap();
    std::fs::write(dir.join("references/fields.md"), "name, date\n").unwrap();
    let user_root = ws.path("home/.agents/skills");
    let clash = skill(
        &user_root,
        "pdf-forms",
        "name: pdf-forms\ndescription: The user's.\n",
        "Old.\n",
    );
    let notes = skill(
        &user_root,
        "notes",
        "name: notes\ndescription: Keep notes <tidy> & short.\n",
        "See guide.md.\n",
    );
    std::fs::write(user_root.join("notes/guide.md"), "one line a note\n").unwrap();
    std::fs::write(ws.path("home/secret.txt"), "secret\n").unwrap();
    let broken = skill(
        &ws.path("xdg/agent-loop/skills"),
        "broken",
        "name: Broken\ndescription: x\n",
        "",
    );
    (project, clash, notes, broken)
}

fn tool_result(request: &Recorded) -> String {
    let body = request.json();
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "tool", "{body}");
    last["content"].as_str().unwrap().to_string()
}

#[test]
fn the_catalog_is_in_the_request_and_the_skill_tool_activates_without_a_question() {
    let (ws, server) = setup(
        Format::OpenAi,
        vec![json(200, &call(r#"{"name":"pdf-forms"}"#)), json(200, DONE)],
        "",
    );
    let (project, clash, notes, broken) = skills(&ws);
    let run = run_api(
        &ws,
        &["--no-stream", "--tools", "ls,skill", "fill the form"],
    );
    run.expect_code(0);
    let stderr = run.stderr();
    for warning in [
        format!(
            "warning: skill {} is skipped: the project skill `pdf-forms` of {} has its name, \
             and the project's wins",
            clash.display(),
            project.display()
        ),
        format!(
            "warning: skill {} is skipped: `name` `Broken` may hold only lower-case letters, \
             digits and single hyphens, not first or last",
            broken.display()
        ),
    ] {
        assert!(stderr.contains(&warning), "{warning}\nnot in\n{stderr}");
    }
    let requests = server.requests();
    let first = requests[0].json();
    let cwd = canonical(&ws.work());
    assert_eq!(
        first["messages"][0]["content"].as_str().unwrap(),
        format!(
            "You are a coding agent driven by agent-loop. The working directory is {cwd}. Use \
             the tools to look at and change files and to run commands; several tool calls in \
             one reply run in order. When the task is done, reply with the answer and no tool \
             call.\n# Skills\nSkills are folders of instructions for particular tasks. When a \
             task matches a skill's description, call the `skill` tool with its name before you \
             start, and follow the instructions it returns. A skill's files (scripts, \
             references, assets) are read with the `skill` tool too, with their `path` inside \
             the skill's folder; run its scripts with bash.\n\n<available_skills>\n<skill>\n\
             <name>pdf-forms</name>\n<description>Fill PDF forms. Use when a task mentions a \
             form.</description>\n<location>{}</location>\n</skill>\n<skill>\n<name>notes</name>\n\
             <description>Keep notes &lt;tidy&gt; &amp; short.</description>\n<location>{}\
             </location>\n</skill>\n</available_skills>",
            project.display(),
            notes.display()
        )
    );
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["ls", "skill"]);
    // No approval was asked (stdin is closed: a question would have refused the call).
    let dir = project.parent().unwrap();
    assert_eq!(
        tool_result(&requests[1]),
        format!(
            "<skill_content name=\"pdf-forms\">\nRead references/fields.md, then run \
             scripts/fill.sh.\n</skill_content>\n\nSkill folder: {} (the paths in the \
             instructions are relative to it). Read one with the `skill` tool and its `path`.\n\
             <skill_resources>\n<file>references/fields.md</file>\n<file>scripts/fill.sh</file>\n\
             </skill_resources>",
            dir.display()
        )
    );
}

/// A skill's folder outside `--root` (the user's, under HOME) is readable through `skill`;
/// a path out of it is not, and `read` still refuses the file outside the root.
#[test]
fn a_skills_files_are_read_outside_the_root_and_nothing_else() {
    let answers = [
        r#"{"name":"notes","path":"guide.md"}"#,
        r#"{"name":"notes","path":"../../secret.txt"}"#,
        r#"{"name":"notes","path":"/etc/passwd"}"#,
        r#"{"name":"nope"}"#,
    ];
    let mut script: Vec<_> = answers.iter().map(|a| json(200, &call(a))).collect();
    let read = r#"{"path":"../home/.agents/skills/notes/guide.md"}"#;
    script.push(json(200, &call_tool("read", read)));
    script.push(json(200, DONE));
    let (ws, server) = setup(Format::OpenAi, script, "");
    skills(&ws);
    run_api(&ws, &["--no-stream", "--tools", "read,skill", "notes"]).expect_code(0);
    let requests = server.requests();
    let results: Vec<String> = requests[1..].iter().map(tool_result).collect();
    assert_eq!(results[0], "one line a note\n");
    for refused in &results[1..3] {
        assert!(
            refused.contains("without `..` or a leading `/`") && !refused.contains("secret\n"),
            "{refused}"
        );
    }
    assert_eq!(
        results[3],
        "no skill is named `nope`; the skills are: pdf-forms, notes"
    );
    // The same file through `read`: outside the root, refused.
    assert!(!results[4].contains("one line a note"), "{}", results[4]);
}

#[test]
fn a_link_out_of_a_skills_folder_is_refused() {
    let (ws, server) = setup(
        Format::OpenAi,
        vec![
            json(200, &call(r#"{"name":"notes","path":"link.md"}"#)),
            json(200, DONE),
        ],
        "",
    );
    skills(&ws);
    std::os::unix::fs::symlink(
        ws.path("home/secret.txt"),
        ws.path("home/.agents/skills/notes/link.md"),
    )
    .unwrap();
    run_api(&ws, &["--no-stream", "--tools", "skill", "notes"]).expect_code(0);
    let result = tool_result(&server.requests()[1]);
    assert!(!result.contains("secret\n"), "{result}");
    // Said as what it is: a link there all along, not one that appeared on the way.
    assert!(
        result.contains("refused: link.md is a symbolic link, or inside one"),
        "{result}"
    );
}

#[test]
fn the_skills_command_lists_origin_and_state() {
    let ws = Workspace::new();
    let (project, _, notes, _) = skills(&ws);
    std::fs::write(
        &notes,
        "---\nname: notes\ndescription: d\nallowed-tools: Bash(git:*)\n---\nx\n",
    )
    .unwrap();
    let (code, screen) = crate::repl::repl(&ws, "--backend fake", "/skills\n/exit\n");
    assert_eq!(code, 0, "{screen}");
    for expected in [
        format!("pdf-forms  (project, available)  {}", project.display()),
        format!("notes  (user, available)  {}", notes.display()),
        "  allowed-tools is ignored: tools keep asking as the approval settings say".into(),
        "warning: skill ".into(),
    ] {
        assert!(screen.contains(&expected), "{expected}\nnot in\n{screen}");
    }
}

/// docs/skills.md's worked example, step by step: the catalog offers `release-notes`, the
/// model activates it, reads its two files with `skill` and `path`, and runs `git log` with
/// bash, which asks first as bash always does (here, with no terminal to ask on, it is not run).
#[test]
fn the_worked_example_of_the_docs() {
    let front = "name: release-notes\ndescription: Write release notes from the git log. Use \
                 when asked for release notes or a changelog entry.\nlicense: MIT\n";
    let body = "# Release notes\n\n1. Run `git log --oneline LAST_TAG..HEAD` with bash.\n\
                2. Group the commits as references/groups.md says.\n\
                3. Write the notes in the style of assets/template.md.\n";
    let steps = [
        call(r#"{"name":"release-notes"}"#),
        call(r#"{"name":"release-notes","path":"references/groups.md"}"#),
        call(r#"{"name":"release-notes","path":"assets/template.md"}"#),
        call_tool("bash", r#"{"command":"git log --oneline v1.1..HEAD"}"#),
    ];
    let mut script: Vec<_> = steps.iter().map(|s| json(200, s)).collect();
    script.push(json(200, DONE));
    let (ws, server) = setup(Format::OpenAi, script, "");
    let file = skill(
        &ws.work().join(".agents/skills"),
        "release-notes",
        front,
        body,
    );
    let dir = file.parent().unwrap();
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(dir.join("references/groups.md"), "Features, fixes, docs.\n").unwrap();
    std::fs::write(dir.join("assets/template.md"), "## VERSION\n").unwrap();
    let run = run_api(
        &ws,
        &[
            "--no-stream",
            "--tools",
            "bash,skill",
            "write the release notes for 1.2",
        ],
    );
    // 4: a call was refused for want of a terminal to ask on.
    run.expect_code(4);
    let requests = server.requests();
    let system = requests[0].json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains(&format!(
            "<name>release-notes</name>\n<description>Write release notes from the git log. \
             Use when asked for release notes or a changelog entry.</description>\n\
             <location>{}</location>",
            file.display()
        )),
        "{system}"
    );
    let results: Vec<String> = requests[1..].iter().map(tool_result).collect();
    assert_eq!(
        results[0],
        format!(
            "<skill_content name=\"release-notes\">\n{body}</skill_content>\n\nSkill folder: {} \
             (the paths in the instructions are relative to it). Read one with the `skill` tool \
             and its `path`.\n<skill_resources>\n<file>assets/template.md</file>\n\
             <file>references/groups.md</file>\n</skill_resources>",
            dir.display()
        )
    );
    assert_eq!(results[1], "Features, fixes, docs.\n");
    assert_eq!(results[2], "## VERSION\n");
    assert!(
        results[3].contains("not run: agent-loop cannot ask for approval"),
        "{}",
        results[3]
    );
}

/// A skill written after the chat started (here by the backend's own `write` call) is not
/// loaded: `/skills` names it and says to restart, instead of asking for the file that is
/// already there.
#[test]
fn the_skills_command_names_a_skill_added_since_the_start() {
    // In a usual place, then in a folder of the `skill_dirs` setting.
    for file in [
        ".agents/skills/release-notes/SKILL.md",
        "more/release-notes/SKILL.md",
    ] {
        added_since(file);
    }
}

fn added_since(file: &str) {
    let ws = Workspace::new();
    let settings = ws.path("xdg/agent-loop/config.toml");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let more = ws.work().join("more");
    std::fs::write(
        &settings,
        format!("skill_dirs = [{:?}]\n", more.display().to_string()),
    )
    .unwrap();
    let content = "---\\nname: release-notes\\ndescription: Write release notes.\\n---\\nx\\n";
    ws.reply(
        1,
        format!(
            "<tool_call>{{\"name\":\"write\",\"arguments\":{{\"path\":\"{file}\",\"content\":\"{content}\"}}}}</tool_call>\n"
        ),
    );
    ws.reply(2, "Written.\n");
    let (code, screen) = crate::repl::repl(
        &ws,
        "--backend fake --yes",
        "add the skill\n/skills\n/exit\n",
    );
    assert_eq!(code, 0, "{screen}");
    assert!(ws.work().join(file).exists(), "{screen}");
    assert!(
        screen.contains("no skills were found when this chat started; added since: release-notes"),
        "{screen}"
    );
    assert!(screen.contains("restart agent-loop"), "{screen}");
    assert!(!screen.contains("put one in"), "{screen}");
}
