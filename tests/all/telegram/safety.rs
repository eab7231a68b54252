//! What the bot shows of untrusted text: error pages from the Bot API base without the token
//! or their control characters.

use serde_json::json;

use super::mock::{Mock, TOKEN};
use super::Bot;
use crate::common::Workspace;

/// A Bot API base (a local Bot API server, a proxy) whose error pages echo the request's
/// path: the token in it never reaches stderr, nor does a control character of the page.
#[test]
fn error_pages_that_echo_the_token_are_masked() {
    let ws = Workspace::new();
    let mock = Mock::start();
    mock.fail_next(
        |c| c.method == "setMyCommands",
        404,
        json!({"ok": false, "error_code": 404,
               "description": format!("Not Found: /bot{TOKEN}/setMyCommands\u{1b}[2J\nsecond line")}),
    );
    let encoded = TOKEN.replace(':', "%3A");
    mock.fail_next(
        |c| c.method == "getUpdates",
        502,
        json!(format!(
            "<html>502 Bad Gateway for /bot{encoded}/getUpdates and /bot{TOKEN}/getUpdates</html>"
        )),
    );
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake"]);
    bot.wait_stderr("setMyCommands failed");
    bot.wait_stderr("getUpdates: ");
    assert_eq!(bot.terminate(), 0);
    let stderr = bot.stderr();
    assert!(stderr.contains("/bot[REDACTED]/setMyCommands"), "{stderr}");
    assert!(stderr.contains("/bot[REDACTED]/getUpdates"), "{stderr}");
    assert!(!stderr.contains(TOKEN), "{stderr}");
    assert!(!stderr.contains(&encoded), "{stderr}");
    assert!(
        !stderr.contains("SECRET") && !stderr.contains("TEST-token"),
        "{stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    assert!(
        stderr.lines().all(|l| !l.starts_with("second line")),
        "{stderr}"
    );
}
