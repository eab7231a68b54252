//! A running tool's progress in words (`3/10 (30%) copying`), the same in every display and in
//! Telegram, and how often the append-only display writes it: a server may report thousands
//! of times a second, and a line per report would bury everything else.

use std::time::Duration;

/// How often the append-only display writes a call's progress.
pub const PLAIN_EVERY: Duration = Duration::from_secs(1);

/// `3/10 (30%) copying`; `3 copying` when the total is unknown.
pub fn progress_text(progress: f64, total: Option<f64>, message: Option<&str>) -> String {
    let mut text = match total {
        Some(total) if total > 0.0 => format!(
            "{}/{} ({:.0}%)",
            number(progress),
            number(total),
            (progress / total * 100.0).clamp(0.0, 100.0)
        ),
        _ => number(progress),
    };
    if let Some(message) = message.filter(|m| !m.trim().is_empty()) {
        text.push(' ');
        text.push_str(message.trim());
    }
    text
}

/// `name` in at most `room` columns, its end given up for `…`: on a narrow screen a long tool
/// name would push the time and the progress after it off the line.
pub fn shortened(name: &str, room: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    if unicode_width::UnicodeWidthStr::width(name) <= room {
        return name.to_string();
    }
    let mut used = 0;
    let mut kept: String = name
        .chars()
        .take_while(|c| {
            used += c.width().unwrap_or(0);
            used < room
        })
        .collect();
    kept.push('…');
    kept
}

/// A number as people write it: `3`, `2.5`, at most two decimals.
fn number(n: f64) -> String {
    let text = format!("{n:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_in_words() {
        assert_eq!(
            progress_text(3.0, Some(10.0), Some("copying")),
            "3/10 (30%) copying"
        );
        assert_eq!(progress_text(2.5, None, None), "2.5");
        assert_eq!(progress_text(1.0, Some(3.0), Some("  ")), "1/3 (33%)");
        assert_eq!(progress_text(0.1 + 0.2, Some(0.0), None), "0.3");
    }

    #[test]
    fn a_long_name_gives_way_to_what_follows_it() {
        let name = "mcp.ev.trigger-long-running-operation";
        assert_eq!(shortened(name, 12), "mcp.ev.trig…");
        assert_eq!(shortened("ls", 12), "ls");
        assert_eq!(shortened(name, 1), "…");
    }
}
