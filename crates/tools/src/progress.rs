//! How a running tool tells the loop how far it has come (an MCP server's
//! `notifications/progress`), so the front ends can show it while the tool runs. The latest
//! report replaces the one before it: a tool that reports faster than the loop reads costs no
//! memory and floods no display; a [`Throttle`] keeps what is written of them (a terminal's
//! lines, the session's log) to one a second. A tool's log messages (an MCP server's
//! `notifications/message`) go the same way, each kept, up to a bound.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

/// One report: `progress` so far, of `total` when the tool knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// One log message of a tool's source (an MCP server's `notifications/message`): its
/// `level` (`debug` up to `emergency`) and `data`, any JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolLog {
    pub server: String,
    pub level: String,
    pub data: serde_json::Value,
}

/// How many log messages wait for the loop before more are dropped, so a server that logs
/// faster than the loop reads costs bounded memory.
const LOG_BOUND: usize = 64;

/// Where a tool sends its reports; the default goes nowhere (a tool run outside the loop).
#[derive(Clone, Default)]
pub struct ProgressSink(
    Option<Arc<watch::Sender<Option<Progress>>>>,
    Option<mpsc::Sender<ToolLog>>,
);

/// The loop's end: the latest report not yet shown.
pub type ProgressReports = watch::Receiver<Option<Progress>>;

/// The loop's end of the log messages.
pub type ToolLogs = mpsc::Receiver<ToolLog>;

impl ProgressSink {
    pub fn channel() -> (ProgressSink, ProgressReports, ToolLogs) {
        let (sender, receiver) = watch::channel(None);
        let (logs, log_receiver) = mpsc::channel(LOG_BOUND);
        (
            ProgressSink(Some(Arc::new(sender)), Some(logs)),
            receiver,
            log_receiver,
        )
    }

    pub fn report(&self, progress: Progress) {
        if let Some(sender) = &self.0 {
            sender.send_replace(Some(progress));
        }
    }

    /// Passes a log message on; one that finds the queue full is dropped.
    pub fn log(&self, log: ToolLog) {
        if let Some(sender) = &self.1 {
            let _ = sender.try_send(log);
        }
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "ProgressSink"
        } else {
            "ProgressSink(none)"
        })
    }
}

/// Lets a call's progress through to a display or a log at most once per `every`; another
/// call's at once.
pub struct Throttle {
    every: Duration,
    last: Option<(String, Instant)>,
}

impl Throttle {
    pub fn new(every: Duration) -> Self {
        Throttle { every, last: None }
    }

    /// Whether to show this report of `call_id` now.
    pub fn admit(&mut self, call_id: &str) -> bool {
        let now = Instant::now();
        match &self.last {
            Some((id, at)) if id == call_id && now.duration_since(*at) < self.every => false,
            _ => {
                self.last = Some((call_id.to_string(), now));
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_report_replaces_the_ones_before() {
        let (sink, mut reports, _) = ProgressSink::channel();
        for n in 1..=1000 {
            sink.report(Progress {
                progress: f64::from(n),
                total: Some(1000.0),
                message: None,
            });
        }
        assert!(reports.has_changed().unwrap());
        let latest = reports.borrow_and_update().clone().unwrap();
        assert_eq!(latest.progress, 1000.0);
        assert!(!reports.has_changed().unwrap());
        // The default sink takes reports and keeps none.
        ProgressSink::default().report(latest);
    }

    #[test]
    fn log_messages_are_kept_in_order_up_to_the_bound() {
        let (sink, _, mut logs) = ProgressSink::channel();
        let log = |n: usize| ToolLog {
            server: "s".into(),
            level: "info".into(),
            data: n.into(),
        };
        for n in 0..LOG_BOUND * 10 {
            sink.log(log(n));
        }
        let kept: Vec<ToolLog> = std::iter::from_fn(|| logs.try_recv().ok()).collect();
        assert_eq!(kept, (0..LOG_BOUND).map(log).collect::<Vec<_>>());
        ProgressSink::default().log(log(0));
    }

    #[test]
    fn a_call_is_let_through_once_per_interval_another_at_once() {
        let mut throttle = Throttle::new(Duration::from_secs(3600));
        assert!(throttle.admit("c1"));
        assert!((0..10_000).all(|_| !throttle.admit("c1")));
        assert!(throttle.admit("c2"));
        let mut every_time = Throttle::new(Duration::ZERO);
        assert!(every_time.admit("c1") && every_time.admit("c1"));
    }
}
