//! Discovery: the order of the places, the project winning a clash, skipped files, refresh.

use super::*;

fn skill(root: &Path, folder: &str, front: &str) -> PathBuf {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(SKILL_FILE);
    std::fs::write(&file, format!("---\n{front}---\nDo {folder}.\n")).unwrap();
    file
}

fn named(name: &str, description: &str) -> String {
    format!("name: {name}\ndescription: {description}\n")
}

#[test]
fn places_run_from_the_working_directory_up_to_the_repository_then_user_config_setting() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let cwd = repo.join("a").join("b");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir(repo.join(".git")).unwrap();
    let home = tmp.path().join("home");
    let config = tmp.path().join("config");
    let extra = tmp.path().join("claude");
    let places = Places::new(
        &cwd,
        Some(&home),
        Some(&config),
        std::slice::from_ref(&extra),
    );
    let skills = |d: &Path| d.join(".agents").join("skills");
    assert_eq!(
        places.folders,
        vec![
            (skills(&cwd), Origin::Project),
            (skills(&repo.join("a")), Origin::Project),
            (skills(&repo), Origin::Project),
            (skills(&home), Origin::User),
            (config.join("skills"), Origin::Config),
            (extra, Origin::Setting),
        ]
    );
    // Outside a repository: the working directory only, never its parents.
    let loose = tmp.path().join("loose").join("x");
    std::fs::create_dir_all(&loose).unwrap();
    let places = Places::new(&loose, None, None, &[]);
    assert_eq!(places.folders, vec![(skills(&loose), Origin::Project)]);
}

#[test]
fn the_nearest_and_the_project_win_a_clash_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let cwd = repo.join("sub");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let home = tmp.path().join("home");
    let near = skill(
        &cwd.join(".agents/skills"),
        "deploy",
        &named("deploy", "near"),
    );
    let far = skill(
        &repo.join(".agents/skills"),
        "deploy",
        &named("deploy", "far"),
    );
    let user = skill(
        &home.join(".agents/skills"),
        "deploy",
        &named("deploy", "user"),
    );
    skill(
        &home.join(".agents/skills"),
        "notes",
        &named("notes", "user notes"),
    );
    let library = Library::load(Places::new(&cwd, Some(&home), None, &[]));
    let found: Vec<(&str, &str, Origin)> = library
        .skills()
        .iter()
        .map(|s| (s.name(), s.front.description.as_str(), s.origin))
        .collect();
    assert_eq!(
        found,
        [
            ("deploy", "near", Origin::Project),
            ("notes", "user notes", Origin::User)
        ]
    );
    assert_eq!(
        library.warnings(),
        [
            Warning::Clash {
                name: "deploy".into(),
                kept: near.clone(),
                kept_origin: Origin::Project,
                skipped: far,
            },
            Warning::Clash {
                name: "deploy".into(),
                kept: near.clone(),
                kept_origin: Origin::Project,
                skipped: user.clone(),
            },
        ]
    );
    assert_eq!(
        library.warnings()[1].to_string(),
        format!(
            "skill {} is skipped: the project skill `deploy` of {} has its name, and the \
             project's wins",
            user.display(),
            near.display()
        )
    );
    assert_eq!(
        library.get("deploy").unwrap().body().unwrap(),
        "Do deploy.\n"
    );
}

#[test]
fn a_skill_that_breaks_a_rule_is_skipped_with_its_file_and_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    skill(&root, "good", &named("good", "fine"));
    let bad = skill(&root, "bad", &named("Bad", "upper case"));
    let other = skill(&root, "other", &named("another", "not its folder"));
    // Hidden folders and folders without a SKILL.md are not skills.
    skill(&root, ".hidden", &named("hidden", "x"));
    std::fs::create_dir_all(root.join("empty")).unwrap();
    let library = Library::load(Places {
        folders: vec![(root, Origin::Setting)],
    });
    assert_eq!(library.skills().len(), 1);
    assert_eq!(library.skills()[0].origin.to_string(), "skill_dirs");
    let warnings: Vec<String> = library.warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warnings,
        [
            format!(
                "skill {} is skipped: `name` `Bad` may hold only lower-case letters, digits \
                 and single hyphens, not first or last",
                bad.display()
            ),
            format!(
                "skill {} is skipped: `name` `another` must equal its folder's name, `other`",
                other.display()
            ),
        ]
    );
}

#[test]
fn refresh_reads_again_only_when_a_skill_md_changed_and_tells_new_warnings_once() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    let file = skill(&root, "a", &named("a", "first"));
    let mut library = Library::load(Places {
        folders: vec![(root.clone(), Origin::Config)],
    });
    assert_eq!(library.skills()[0].front.description, "first");
    assert_eq!(library.refresh(), []);
    // A longer text changes the size, whatever the clock's resolution.
    std::fs::write(&file, "---\nname: a\ndescription: second one\n---\n").unwrap();
    assert_eq!(library.refresh(), []);
    assert_eq!(library.skills()[0].front.description, "second one");
    let bad = skill(&root, "b", "name: b\n");
    let new = library.refresh();
    assert_eq!(
        new,
        [Warning::Invalid {
            file: bad,
            rule: Rule::MissingDescription
        }]
    );
    skill(&root, "c", &named("c", "third"));
    // Read again, but the same warning is not told twice.
    assert_eq!(library.refresh(), []);
    assert_eq!(library.skills().len(), 2);
    std::fs::remove_dir_all(root.join("a")).unwrap();
    library.refresh();
    assert_eq!(library.skills()[0].name(), "c");
}

#[test]
fn a_skill_md_over_the_cap_is_skipped_unread_with_why() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    let huge = skill(&root, "huge", &named("huge", "big"));
    let text = std::fs::read_to_string(&huge).unwrap();
    std::fs::write(&huge, text + &"x".repeat(MAX_SKILL_BYTES as usize)).unwrap();
    skill(&root, "small", &named("small", "fits"));
    let library = Library::load(Places {
        folders: vec![(root, Origin::Config)],
    });
    assert_eq!(library.skills().len(), 1);
    assert_eq!(library.skills()[0].name(), "small");
    assert_eq!(library.warnings(), [Warning::TooBig { file: huge.clone() }]);
    let said = library.warnings()[0].to_string();
    assert!(said.starts_with(&format!(
        "skill {} is skipped: it is over 64 KiB",
        huge.display()
    )));
}

#[test]
fn a_skill_md_linked_from_outside_its_folder_is_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    let outside = skill(
        &tmp.path().join("elsewhere"),
        "out",
        &named("out", "outside"),
    );
    std::fs::create_dir_all(root.join("out")).unwrap();
    let file = root.join("out").join(SKILL_FILE);
    std::os::unix::fs::symlink(&outside, &file).unwrap();
    // A link inside the folder is followed.
    let inside = skill(&root, "in", &named("in", "inside"));
    std::fs::rename(&inside, root.join("in/real.md")).unwrap();
    std::os::unix::fs::symlink("real.md", &inside).unwrap();
    let library = Library::load(Places {
        folders: vec![(root, Origin::Config)],
    });
    let names: Vec<&str> = library.skills().iter().map(|s| s.name()).collect();
    assert_eq!(names, ["in"]);
    assert_eq!(library.warnings(), [Warning::LinkOut { file }]);
}
