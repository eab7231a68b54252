//! Opening files beneath the file tools' folder (`--root`) with no window for a race: a path
//! component swapped for a symbolic link between the check and the open cannot lead outside.
//!
//! Paths arrive resolved by [`super::Root::check`]: canonical, inside the root, no `..` and no
//! link left in them. So they are opened relative to the root following no symbolic link at
//! all; a link found now appeared after the check, and the open fails. Two ways, one meaning:
//!
//! - `openat2` (Linux 5.6 and later) with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//!   RESOLVE_NO_MAGICLINKS`: the kernel resolves the whole path in one call;
//! - where the kernel lacks it (`ENOSYS`, old Android kernels under Termux, or a sandbox that
//!   forbids it), a walk: each folder opened from the one before with `O_NOFOLLOW`.
//!
//! Only regular files are opened for reading (folders for `ls`): a FIFO, device or socket is
//! refused, opened with `O_NONBLOCK` so that refusing never blocks. Replacing a file keeps its
//! owner, group and mode (minus setuid/setgid) and refuses a file the user could not write.

use std::fs::File;
use std::io::Write as _;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};
use std::sync::OnceLock;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use crate::error::FileError;

/// How files are opened beneath the root on this kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Openat2,
    Walk,
}

impl Method {
    /// The method in a few words, for `agent-loop doctor` and the docs.
    pub fn describe(self) -> &'static str {
        match self {
            Method::Openat2 => "openat2 (RESOLVE_BENEATH, no symbolic links)",
            Method::Walk => "O_NOFOLLOW walk (this kernel has no openat2)",
        }
    }
}

/// The method this kernel allows, probed once.
pub fn method() -> Method {
    static METHOD: OnceLock<Method> = OnceLock::new();
    *METHOD.get_or_init(|| {
        let probe = rustix::fs::openat2(
            rustix::fs::CWD,
            ".",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH,
        );
        match probe {
            // ENOSYS: no such call; EPERM: a seccomp filter forbids it.
            Err(Errno::NOSYS) | Err(Errno::PERM) => Method::Walk,
            _ => Method::Openat2,
        }
    })
}

/// What an opened path turned out to be.
pub enum Opened {
    File(File),
    Dir(OwnedFd),
}

/// Opens `resolved` (inside `root`) for reading: a regular file, or a folder when `dir_ok`.
/// Anything else is an error meant for the model.
pub fn open_read(
    root: &Path,
    resolved: &Path,
    shown: &str,
    dir_ok: bool,
) -> Result<Opened, FileError> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let verb = if dir_ok { "list" } else { "read" };
    let fd = open(root, resolved, flags, Mode::empty()).map_err(|e| explain(verb, shown, e))?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| explain(verb, shown, e))?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => Ok(Opened::File(File::from(fd))),
        FileType::Directory if dir_ok => Ok(Opened::Dir(fd)),
        FileType::Directory => Err(FileError::Folder {
            shown: shown.to_string(),
        }),
        other => Err(special(shown, other)),
    }
}

/// What `resolved` (inside `root`) is, found as [`open_read`] would find it (no link
/// followed) without opening it for reading: `ls` tells of a link's target so, and a link
/// swapped in meanwhile shows as a link, never as what it leads to.
pub fn stat(root: &Path, resolved: &Path) -> std::io::Result<std::fs::Metadata> {
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    File::from(open(root, resolved, flags, Mode::empty())?).metadata()
}

/// Replaces (or creates) `resolved` inside `root` with `content`, atomically: a temporary
/// file in the same folder, then a rename, so no link is ever written through. Missing
/// folders are created. An existing file keeps its owner, group and mode (minus setuid and
/// setgid); one the user could not write, or one that is not a regular file, is refused.
pub fn replace(root: &Path, resolved: &Path, shown: &str, content: &[u8]) -> Result<(), FileError> {
    let rel = relative(root, resolved).map_err(|e| explain("write", shown, e))?;
    let name = rel.file_name().ok_or_else(|| FileError::NoFileName {
        shown: shown.to_string(),
    })?;
    let dir = create_dirs(root, rel.parent().unwrap_or(Path::new("")))
        .map_err(|e| explain_io("write", shown, e))?;
    let existing = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Some(stat),
        Err(Errno::NOENT) => None,
        Err(e) => return Err(explain("write", shown, e)),
    };
    if let Some(stat) = &existing {
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => {}
            FileType::Symlink => return Err(explain("write", shown, Errno::LOOP)),
            FileType::Directory => {
                return Err(FileError::Folder {
                    shown: shown.to_string(),
                })
            }
            other => return Err(special(shown, other)),
        }
        if !writable(&dir, name, stat) {
            return Err(FileError::ReadOnly {
                shown: shown.to_string(),
                mode: stat.st_mode & 0o7777,
            });
        }
    }
    let tmp = format!(
        ".{}.agent-loop-{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    );
    // A new file gets the usual 0666 minus umask; a replaced one its old mode, set below.
    let mode = if existing.is_some() { 0o600 } else { 0o666 };
    let result = (|| {
        let fd = rustix::fs::openat(
            &dir,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        )?;
        let mut file = File::from(fd);
        file.write_all(content)?;
        if let Some(stat) = &existing {
            let owner = rustix::fs::Uid::from_raw(stat.st_uid);
            let group = rustix::fs::Gid::from_raw(stat.st_gid);
            // Only root can give a file away; anyone else keeps what they can.
            match rustix::fs::fchown(&file, Some(owner), Some(group)) {
                Ok(()) | Err(Errno::PERM) => {}
                Err(e) => return Err(e.into()),
            }
            // After chown (which clears them anyway): never setuid or setgid.
            let keep = stat.st_mode & 0o1777;
            rustix::fs::fchmod(&file, Mode::from_raw_mode(keep))?;
        }
        file.sync_all()?;
        rustix::fs::renameat(&dir, tmp.as_str(), &dir, name)?;
        Ok::<(), std::io::Error>(())
    })();
    if let Err(e) = result {
        let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
        return Err(explain_io("write", shown, e));
    }
    Ok(())
}

/// Whether the user may write the file: root can write anything, so for root the mode bits
/// decide (a 0444 file stays read-only); anyone else asks the kernel.
fn writable(dir: &OwnedFd, name: &std::ffi::OsStr, stat: &rustix::fs::Stat) -> bool {
    if rustix::process::geteuid().is_root() {
        stat.st_mode & 0o222 != 0
    } else {
        kernel_lets_write(dir, name, stat)
    }
}

/// The kernel's answer for the effective ids. The plain check asks about the real ids: the
/// same question whenever they are the effective ones, as they always are for an Android
/// app. Android's C library has no AT_EACCESS (nor rustix there), so a set-id process on
/// Android falls back to the mode bits.
fn kernel_lets_write(dir: &OwnedFd, name: &std::ffi::OsStr, stat: &rustix::fs::Stat) -> bool {
    use rustix::process::{getegid, geteuid, getgid, getuid};
    let write = rustix::fs::Access::WRITE_OK;
    if getuid() == geteuid() && getgid() == getegid() {
        return rustix::fs::accessat(dir, name, write, AtFlags::empty()).is_ok();
    }
    #[cfg(not(target_os = "android"))]
    let lets = {
        let _ = stat;
        rustix::fs::accessat(dir, name, write, AtFlags::EACCESS).is_ok()
    };
    #[cfg(target_os = "android")]
    let lets = mode_lets_write(stat, geteuid().as_raw(), getegid().as_raw());
    lets
}

/// The owner's, the group's or the others' write bit, as the user with these effective ids
/// is the file's owner, in its group, or neither (no ACLs, no supplementary groups).
#[cfg(any(target_os = "android", test))]
fn mode_lets_write(stat: &rustix::fs::Stat, uid: u32, gid: u32) -> bool {
    let bit = if stat.st_uid == uid {
        0o200
    } else if stat.st_gid == gid {
        0o020
    } else {
        0o002
    };
    stat.st_mode & bit != 0
}

fn special(shown: &str, kind: FileType) -> FileError {
    FileError::Special {
        shown: shown.to_string(),
        what: kind_words(kind),
    }
}

/// What a file that is neither a regular file nor a folder is, in words.
fn kind_words(kind: FileType) -> &'static str {
    match kind {
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        _ => "not a regular file",
    }
}

/// What `resolved` is, in words, when it exists and is neither a regular file nor a folder:
/// a program given its name would block on a FIFO, or read a device without end. `None` for
/// a file, a folder or nothing there.
pub fn special_kind(resolved: &Path) -> Option<&'static str> {
    let kind = FileType::from_raw_mode(rustix::fs::stat(resolved).ok()?.st_mode);
    (!matches!(kind, FileType::RegularFile | FileType::Directory)).then(|| kind_words(kind))
}

/// The error of an open beneath the root, for the model: `cannot VERB PATH: why`.
fn explain(verb: &'static str, shown: &str, e: Errno) -> FileError {
    explain_io(verb, shown, e.into())
}

fn explain_io(verb: &'static str, shown: &str, e: std::io::Error) -> FileError {
    let shown = shown.to_string();
    match e.raw_os_error() {
        // A link where the check found none: it appeared after the check.
        Some(code) if code == libc::ELOOP || code == libc::EXDEV => FileError::Raced { shown },
        _ => FileError::Io {
            verb,
            shown,
            source: e,
        },
    }
}

/// `resolved` relative to `root`; it must be inside (it was checked) and hold plain names.
fn relative<'a>(root: &Path, resolved: &'a Path) -> Result<&'a Path, Errno> {
    let rel = resolved.strip_prefix(root).map_err(|_| Errno::XDEV)?;
    if rel.components().all(|c| matches!(c, Component::Normal(_))) {
        Ok(rel)
    } else {
        Err(Errno::XDEV)
    }
}

fn open_root(root: &Path) -> Result<OwnedFd, Errno> {
    rustix::fs::open(
        root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Opens `resolved` (inside `root`) with `flags`, following no symbolic link.
fn open(root: &Path, resolved: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
    open_by(method(), root, resolved, flags, mode)
}

/// [`open`] the way `method` says.
fn open_by(
    method: Method,
    root: &Path,
    resolved: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    let rel = relative(root, resolved)?;
    let base = open_root(root)?;
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    match method {
        Method::Openat2 => rustix::fs::openat2(
            &base,
            rel,
            flags,
            mode,
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        ),
        Method::Walk => walk(base, rel, flags, mode),
    }
}

/// Opens each folder of `rel` from the one before with `O_NOFOLLOW`, then the last name.
fn walk(mut dir: OwnedFd, rel: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
    let names: Vec<_> = rel.components().collect();
    for (i, name) in names.iter().enumerate() {
        let name = name.as_os_str();
        if i + 1 == names.len() {
            return rustix::fs::openat(&dir, name, flags | OFlags::NOFOLLOW, mode);
        }
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        dir = match rustix::fs::openat(&dir, name, flags, Mode::empty()) {
            // A link where a folder was: say so, as openat2 does (ELOOP).
            Err(Errno::NOTDIR) if is_link(&dir, name) => return Err(Errno::LOOP),
            other => other?,
        };
    }
    Ok(dir)
}

fn is_link(dir: &OwnedFd, name: &std::ffi::OsStr) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink)
}

/// Opens the folder `rel` under `root`, creating what is missing, one name at a time and
/// following no link, on either method.
fn create_dirs(root: &Path, rel: &Path) -> std::io::Result<OwnedFd> {
    let mut dir = open_root(root)?;
    for name in rel.components() {
        let name = name.as_os_str();
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        dir = match rustix::fs::openat(&dir, name, flags, Mode::empty()) {
            Err(Errno::NOENT) => {
                match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                rustix::fs::openat(&dir, name, flags, Mode::empty())?
            }
            other => other?,
        };
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn reads_refuse_links_and_special_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        std::os::unix::fs::symlink(root.join("a.txt"), root.join("link")).unwrap();
        rustix::fs::mkfifoat(rustix::fs::CWD, root.join("fifo"), 0o600.into()).unwrap();
        assert!(matches!(
            open_read(&root, &root.join("a.txt"), "a.txt", false),
            Ok(Opened::File(_))
        ));
        let link = open_read(&root, &root.join("link"), "link", false)
            .err()
            .unwrap();
        assert!(matches!(link, FileError::Raced { .. }), "{link}");
        let fifo = open_read(&root, &root.join("fifo"), "fifo", false)
            .err()
            .unwrap();
        assert!(fifo.to_string().contains("is a FIFO"), "{fifo}");
        assert!(matches!(
            open_read(&root, &root, ".", true),
            Ok(Opened::Dir(_))
        ));
    }

    /// A root holding `sub/f` ("in") beside an `outside/f` ("out"): the guard, the base and
    /// the root.
    fn tree() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(root.join("sub/f"), "in").unwrap();
        std::fs::write(base.join("outside/f"), "out").unwrap();
        (dir, base, root)
    }

    /// Both ways refuse a link anywhere on the path, inside the root or out of it, and open
    /// what has none.
    #[test]
    fn both_methods_follow_no_link() {
        let (_dir, base, root) = tree();
        std::os::unix::fs::symlink(base.join("outside"), root.join("up")).unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("inner")).unwrap();
        std::os::unix::fs::symlink("sub/f", root.join("near")).unwrap();
        let read = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let methods = if method() == Method::Openat2 {
            vec![Method::Openat2, Method::Walk]
        } else {
            vec![Method::Walk]
        };
        for m in methods {
            let open = |rel: &str| open_by(m, &root, &root.join(rel), read, Mode::empty());
            let mut text = String::new();
            let file = open("sub/f").unwrap();
            std::io::Read::read_to_string(&mut File::from(file), &mut text).unwrap();
            assert_eq!(text, "in", "{m:?}");
            for rel in ["up/f", "inner/f", "near"] {
                assert_eq!(open(rel).err(), Some(Errno::LOOP), "{m:?} {rel}");
            }
            assert!(open_by(m, &root, &base.join("outside/f"), read, Mode::empty()).is_err());
            assert!(open(".").is_ok(), "{m:?}");
        }
    }

    /// The walk (the Termux fallback) under a swapping thread, as the fault suite checks the
    /// method this kernel uses: a folder swapped for a link out is never passed through.
    #[test]
    fn the_walk_does_not_race() {
        let (_dir, base, root) = tree();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swapper = {
            let (stop, root, outside) = (stop.clone(), root.clone(), base.join("outside"));
            std::thread::spawn(move || {
                let (sub, real) = (root.join("sub"), root.join("sub.real"));
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::fs::rename(&sub, &real).unwrap();
                    std::os::unix::fs::symlink(&outside, &sub).unwrap();
                    std::fs::remove_file(&sub).unwrap();
                    std::fs::rename(&real, &sub).unwrap();
                }
            })
        };
        let read = OFlags::RDONLY | OFlags::CLOEXEC;
        let mut escapes = 0;
        for _ in 0..2000 {
            if let Ok(fd) = open_by(
                Method::Walk,
                &root,
                &root.join("sub/f"),
                read,
                Mode::empty(),
            ) {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut File::from(fd), &mut text).unwrap();
                escapes += usize::from(text == "out");
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        swapper.join().unwrap();
        assert_eq!(escapes, 0);
    }

    #[test]
    fn replacing_keeps_mode_without_setuid_and_refuses_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let file = root.join("tool");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o4751)).unwrap();
        replace(&root, &file, "tool", b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o7777, 0o751);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
        let err = replace(&root, &file, "tool", b"newer").unwrap_err();
        assert!(
            matches!(err, FileError::ReadOnly { mode: 0o444, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("read-only"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        replace(&root, &root.join("new/dir/f"), "new/dir/f", b"x").unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join("new/dir/f")).unwrap(),
            "x"
        );
    }

    /// The ids here are the effective ones, as in every Android app: the plain check the
    /// Android build makes is the one made here.
    #[test]
    fn the_write_check_asks_the_kernel_with_the_plain_check() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let fd = rustix::fs::open(dir.path(), OFlags::DIRECTORY, Mode::empty()).unwrap();
        let stat = |name: &str| rustix::fs::statat(&fd, name, AtFlags::empty()).unwrap();
        assert!(kernel_lets_write(&fd, "f".as_ref(), &stat("f")));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
        // Root may write a read-only file (so `writable` reads the mode bits for root).
        let root = rustix::process::geteuid().is_root();
        assert_eq!(kernel_lets_write(&fd, "f".as_ref(), &stat("f")), root);
        assert!(!kernel_lets_write(&fd, "gone".as_ref(), &stat("f")));
        assert!(!writable(&fd, "f".as_ref(), &stat("f")));
    }

    #[test]
    fn the_mode_bits_decide_for_the_owner_the_group_and_the_others() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "x").unwrap();
        let fd = rustix::fs::open(dir.path(), OFlags::DIRECTORY, Mode::empty()).unwrap();
        let mut stat = rustix::fs::statat(&fd, "f", AtFlags::empty()).unwrap();
        (stat.st_uid, stat.st_gid) = (1000, 100);
        stat.st_mode = 0o100_640;
        assert!(mode_lets_write(&stat, 1000, 5));
        assert!(!mode_lets_write(&stat, 1001, 100));
        stat.st_mode = 0o100_462;
        assert!(!mode_lets_write(&stat, 1000, 100));
        assert!(mode_lets_write(&stat, 1001, 100));
        assert!(mode_lets_write(&stat, 1001, 5));
        stat.st_mode = 0o100_664;
        assert!(!mode_lets_write(&stat, 1001, 5));
    }
}
