//! Where skills are found. In order: the project's `.agents/skills/`, from the working
//! directory up to the repository's root (the nearest first; without a repository, the
//! working directory's only), the user's `~/.agents/skills/`, agent-loop's own
//! `skills/` in its XDG config folder, then the folders the `skill_dirs` setting adds
//! (`~/.claude/skills`, say). Each holds one folder per skill with a `SKILL.md` in it.
//!
//! When two skills share a name the first found wins, so the project's wins over the
//! user's, and the warning names both files. The library is read again when a `SKILL.md`
//! changes, appears or goes: [`Library::refresh`] compares each file's size and time first,
//! so a turn with no change reads no file.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::front::{self, FrontMatter, Rule};

/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// The largest `SKILL.md` read: an active skill's text goes into every later request of the
/// conversation, so a bigger one (a cloned repository's, say) would leave no room for the
/// rest, turn after turn. The specification advises under 5,000 tokens, with the rest in
/// files of the skill's folder, read when needed.
pub const MAX_SKILL_BYTES: u64 = 64 * 1024;

/// Where a skill was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A `.agents/skills/` between the working directory and the repository's root.
    Project,
    /// `~/.agents/skills/`.
    User,
    /// `skills/` in agent-loop's config folder.
    Config,
    /// A folder of the `skill_dirs` setting.
    Setting,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Origin::Project => "project",
            Origin::User => "user",
            Origin::Config => "config",
            Origin::Setting => "skill_dirs",
        })
    }
}

/// The folders looked in, in order of precedence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Places {
    pub folders: Vec<(PathBuf, Origin)>,
}

impl Places {
    /// The places of a run in `cwd`: see the module doc. `home` is the user's home,
    /// `config_dir` agent-loop's config folder, `extra` the `skill_dirs` setting's folders.
    pub fn new(
        cwd: &Path,
        home: Option<&Path>,
        config_dir: Option<&Path>,
        extra: &[PathBuf],
    ) -> Places {
        let mut folders: Vec<(PathBuf, Origin)> = project_dirs(cwd)
            .into_iter()
            .map(|d| (d.join(".agents").join("skills"), Origin::Project))
            .collect();
        folders.extend(home.map(|h| (h.join(".agents").join("skills"), Origin::User)));
        folders.extend(config_dir.map(|c| (c.join("skills"), Origin::Config)));
        folders.extend(extra.iter().map(|d| (d.clone(), Origin::Setting)));
        // A folder listed twice (the home's `.agents` is also the project's) counts once.
        let mut seen = HashSet::new();
        folders.retain(|(d, _)| seen.insert(d.clone()));
        Places { folders }
    }
}

/// The working directory and its parents up to the repository's root (the folder with a
/// `.git`), nearest first; only the working directory when no parent is a repository.
fn project_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for dir in cwd.ancestors() {
        dirs.push(dir.to_path_buf());
        if dir.join(".git").exists() {
            return dirs;
        }
    }
    vec![cwd.to_path_buf()]
}

/// One valid skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub front: FrontMatter,
    pub origin: Origin,
    /// The skill's folder, which its resources are read beneath.
    pub dir: PathBuf,
    /// Its `SKILL.md`.
    pub file: PathBuf,
    /// The bytes of its `SKILL.md` when it was read, for the context budget.
    pub size: u64,
}

impl Skill {
    pub fn name(&self) -> &str {
        &self.front.name
    }

    /// The instructions, read again (the file may have changed since it was found).
    pub fn body(&self) -> Result<String, BodyError> {
        let file = || self.file.clone();
        let text = std::fs::read_to_string(&self.file).map_err(|source| BodyError::Read {
            file: file(),
            source,
        })?;
        let folder = self.dir.file_name().unwrap_or_default().to_string_lossy();
        front::parse(&text, &folder)
            .map(|(_, body)| body.to_string())
            .map_err(|rule| BodyError::Invalid { file: file(), rule })
    }
}

/// Why a skill's instructions could not be read again: its `SKILL.md` is gone or unreadable,
/// or now breaks a rule.
#[derive(Debug)]
pub enum BodyError {
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    Invalid {
        file: PathBuf,
        rule: Rule,
    },
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::Read { file, source } => {
                write!(f, "cannot read {}: {source}", file.display())
            }
            BodyError::Invalid { file, rule } => write!(f, "{}: {rule}", file.display()),
        }
    }
}

impl std::error::Error for BodyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BodyError::Read { source, .. } => Some(source),
            BodyError::Invalid { .. } => None,
        }
    }
}

/// What discovery tells the user about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// A `SKILL.md` that breaks a rule of the specification: skipped.
    Invalid { file: PathBuf, rule: Rule },
    /// A `SKILL.md` that cannot be read: skipped.
    Unreadable { file: PathBuf, why: String },
    /// A `SKILL.md` over [`MAX_SKILL_BYTES`]: skipped, unread.
    TooBig { file: PathBuf },
    /// A `SKILL.md` that is a symbolic link out of its skill's folder: skipped, unread, as
    /// the skill's other files are.
    LinkOut { file: PathBuf },
    /// A second skill of a name already found: skipped.
    Clash {
        name: String,
        kept: PathBuf,
        kept_origin: Origin,
        skipped: PathBuf,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::Invalid { file, rule } => {
                write!(f, "skill {} is skipped: {rule}", file.display())
            }
            Warning::Unreadable { file, why } => {
                write!(f, "skill {} is skipped: {why}", file.display())
            }
            Warning::LinkOut { file } => write!(
                f,
                "skill {} is skipped: it is a symbolic link out of its folder",
                file.display()
            ),
            Warning::TooBig { file } => write!(
                f,
                "skill {} is skipped: it is over {} KiB, the most a SKILL.md may be here (its \
                 text goes into every request once active: keep it short and put the rest in \
                 files of its folder)",
                file.display(),
                MAX_SKILL_BYTES / 1024
            ),
            Warning::Clash {
                name,
                kept,
                kept_origin,
                skipped,
            } => write!(
                f,
                "skill {} is skipped: the {kept_origin} skill `{name}` of {} has its name, and \
                 the {} wins",
                skipped.display(),
                kept.display(),
                match kept_origin {
                    Origin::Project => "project's",
                    _ => "first found",
                }
            ),
        }
    }
}

/// What decides whether the folders need reading again: every `SKILL.md` with its size and
/// time of change.
type Stamp = Vec<(PathBuf, u64, Option<SystemTime>)>;

/// The skills found in a run's places.
#[derive(Debug, Clone, Default)]
pub struct Library {
    places: Places,
    skills: Vec<Skill>,
    warnings: Vec<Warning>,
    stamp: Stamp,
    read_once: bool,
}

impl Library {
    /// Reads the skills of `places`.
    pub fn load(places: Places) -> Library {
        let mut library = Library {
            places,
            ..Library::default()
        };
        library.refresh();
        library
    }

    /// The skills, by precedence (the project's first).
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name() == name)
    }

    /// The warnings of the last reading.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    pub fn places(&self) -> &Places {
        &self.places
    }

    /// Reads the folders again if a `SKILL.md` changed, appeared or went; returns the
    /// warnings that are new since the last reading (those already told are not repeated).
    pub fn refresh(&mut self) -> Vec<Warning> {
        let found = found(&self.places);
        let stamp = stamp(&found);
        if stamp == self.stamp && self.read_once {
            return Vec::new();
        }
        let (skills, warnings) = read(found);
        let new = warnings
            .iter()
            .filter(|w| !self.warnings.contains(w))
            .cloned()
            .collect();
        self.skills = skills;
        self.warnings = warnings;
        self.stamp = stamp;
        self.read_once = true;
        new
    }
}

/// The skill folders of `root`, by name: folders (or links to them) with a `SKILL.md`,
/// hidden ones left out.
fn skill_folders(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.join(SKILL_FILE).is_file())
        .collect();
    dirs.sort();
    dirs
}

/// Every skill folder of `places`, in order of precedence, with where it was found: listed
/// once a reading, for both its stamp and the reading itself.
fn found(places: &Places) -> Vec<(PathBuf, Origin)> {
    places
        .folders
        .iter()
        .flat_map(|(root, origin)| skill_folders(root).into_iter().map(|dir| (dir, *origin)))
        .collect()
}

fn stamp(found: &[(PathBuf, Origin)]) -> Stamp {
    found
        .iter()
        .map(|(dir, _)| {
            let file = dir.join(SKILL_FILE);
            let meta = std::fs::metadata(&file).ok();
            let len = meta.as_ref().map_or(0, |m| m.len());
            (file, len, meta.and_then(|m| m.modified().ok()))
        })
        .collect()
}

fn read(found: Vec<(PathBuf, Origin)>) -> (Vec<Skill>, Vec<Warning>) {
    let mut skills: Vec<Skill> = Vec::new();
    let mut warnings = Vec::new();
    for (dir, origin) in found {
        let file = dir.join(SKILL_FILE);
        if links_out(&dir, &file) {
            warnings.push(Warning::LinkOut { file });
            continue;
        }
        let text = match read_capped(&file) {
            Ok(Some(text)) => text,
            Ok(None) => {
                warnings.push(Warning::TooBig { file });
                continue;
            }
            Err(e) => {
                let why = e.to_string();
                warnings.push(Warning::Unreadable { file, why });
                continue;
            }
        };
        let folder = dir.file_name().unwrap_or_default().to_string_lossy();
        let front = match front::parse(&text, &folder) {
            Ok((front, _)) => front,
            Err(rule) => {
                warnings.push(Warning::Invalid { file, rule });
                continue;
            }
        };
        if let Some(kept) = skills.iter().find(|s| s.front.name == front.name) {
            warnings.push(Warning::Clash {
                name: front.name,
                kept: kept.file.clone(),
                kept_origin: kept.origin,
                skipped: file,
            });
            continue;
        }
        skills.push(Skill {
            front,
            origin,
            dir,
            file,
            size: text.len() as u64,
        });
    }
    (skills, warnings)
}

/// Whether `file` is a symbolic link to a file outside `dir` (the folder itself may be a
/// link: what counts is where both lead).
fn links_out(dir: &Path, file: &Path) -> bool {
    let is_link = file
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink());
    is_link
        && match (dir.canonicalize(), file.canonicalize()) {
            (Ok(dir), Ok(target)) => !target.starts_with(dir),
            _ => true,
        }
}

/// The text of `file`, or `None` when it is over [`MAX_SKILL_BYTES`] (no more is read).
fn read_capped(file: &Path) -> std::io::Result<Option<String>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(file)?
        .take(MAX_SKILL_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SKILL_BYTES {
        return Ok(None);
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests;
