//! Why a program that is there cannot be started. `exec` of a script whose `#!` line names
//! an interpreter that is not there (`#!/bin/sh` on Termux, where there is no `/bin`) fails
//! with "No such file or directory", which reads as if the script itself were missing; the
//! error is given the interpreter's name and the fix instead.

use std::io::{Error, ErrorKind, Read};
use std::path::Path;

/// `error`, from starting `program`, with the missing interpreter named where that is why.
pub fn explained(program: &Path, error: Error) -> Error {
    if error.kind() != ErrorKind::NotFound {
        return error;
    }
    let Some(interpreter) = interpreter(program) else {
        return error;
    };
    // A file written with Windows line ends names `/bin/sh\r`, which is never there.
    if let Some(named) = interpreter.strip_suffix('\r') {
        return Error::new(
            ErrorKind::NotFound,
            format!(
                "{error}: its #! line ends in a carriage return (Windows line ends), so it \
                 names `{named}\\r`, which is not there; `dos2unix {}` mends it",
                program.display()
            ),
        );
    }
    if Path::new(&interpreter).exists() {
        return error;
    }
    Error::new(
        ErrorKind::NotFound,
        format!(
            "{error}: its #! line names {interpreter}, which is not there (on Termux, \
             `termux-fix-shebang {}` points it at $PREFIX)",
            program.display()
        ),
    )
}

/// The interpreter a script's `#!` line names, if `program` is a file that starts with one.
fn interpreter(program: &Path) -> Option<String> {
    let mut head = [0u8; 256];
    let mut file = std::fs::File::open(program).ok()?;
    let read = file.read(&mut head).ok()?;
    let line = head[..read].strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    let line = String::from_utf8_lossy(line);
    // Up to a blank, a carriage return kept: the kernel takes it as part of the name.
    let line = line.trim_start_matches([' ', '\t']);
    line.split([' ', '\t'])
        .next()
        .filter(|name| !name.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_interpreter_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("agent");
        std::fs::write(&script, "#!/nonexistent/sh -e\necho hi\n").unwrap();
        let error = Error::from(ErrorKind::NotFound);
        let shown = explained(&script, error).to_string();
        assert!(
            shown.contains("its #! line names /nonexistent/sh, which is not there"),
            "{shown}"
        );
        assert!(shown.contains("termux-fix-shebang"), "{shown}");
    }

    #[test]
    fn a_carriage_return_after_the_interpreter_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("agent");
        std::fs::write(&script, "#!/bin/sh\r\necho hi\r\n").unwrap();
        let shown = explained(&script, Error::from(ErrorKind::NotFound)).to_string();
        assert!(shown.contains("ends in a carriage return"), "{shown}");
        assert!(shown.contains("`/bin/sh\\r`"), "{shown}");
    }

    #[test]
    fn other_errors_and_present_interpreters_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("agent");
        let sh = std::env::current_exe().unwrap();
        std::fs::write(&script, format!("#!{}\n", sh.display())).unwrap();
        let shown = explained(&script, Error::from(ErrorKind::NotFound)).to_string();
        assert!(!shown.contains("#!"), "{shown}");
        let denied = explained(&script, Error::from(ErrorKind::PermissionDenied));
        assert_eq!(denied.kind(), ErrorKind::PermissionDenied);
        let missing = explained(&dir.path().join("none"), Error::from(ErrorKind::NotFound));
        assert!(!missing.to_string().contains("#!"));
    }
}
