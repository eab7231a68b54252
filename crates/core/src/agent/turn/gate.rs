//! Which tool calls of a reply run. At most `max_tool_calls` of one reply: a reply of thousands
//! of calls would otherwise run thousands of commands before anyone could look, and the rest
//! are answered as not run, so the model can ask again in its next reply. And the same call
//! a third time in one turn stops the turn: the model is not making progress.

use std::collections::HashMap;

use crate::context::ToolCall;

/// The same call (tool and arguments) this many times in one turn stops the turn.
pub(super) const REPEAT_LIMIT: u32 = 3;

/// What has run in a turn so far, to judge the next call by.
pub(super) struct Gate {
    repeats: HashMap<String, u32>,
    /// The call that stopped the turn, when one did.
    stopped: Option<String>,
    max_calls: usize,
}

/// Whether a call runs.
pub(super) enum Verdict {
    Run,
    /// Not run; the reason is its result.
    NotRun(String),
}

impl Gate {
    pub(super) fn new(max_calls: u32) -> Self {
        Gate {
            repeats: HashMap::new(),
            stopped: None,
            max_calls: max_calls.max(1) as usize,
        }
    }

    /// What the user is told of a reply of `calls` calls, when some are past the cap.
    pub(super) fn over_cap(&self, calls: usize) -> Option<String> {
        (calls > self.max_calls).then(|| {
            format!(
                "the reply asked for {calls} tool calls: the first {} ran (max_tool_calls), the \
                 others were answered as not run",
                self.max_calls
            )
        })
    }

    /// The result of the call at `index` of its reply when it is past the cap (it is then
    /// neither run nor shown, valid or not).
    pub(super) fn past_cap(&self, index: usize) -> Option<String> {
        (index >= self.max_calls).then(|| {
            format!(
                "not run: a reply may ask for at most {} tool calls (max_tool_calls); ask for \
                 this one again in your next reply if it is still needed",
                self.max_calls
            )
        })
    }

    /// Whether a valid call runs: not once the turn is stopped, nor the same call a third
    /// time, which stops it.
    pub(super) fn check(&mut self, call: &ToolCall) -> Verdict {
        if self.stopped.is_some() {
            return Verdict::NotRun("not run: the turn was stopped".into());
        }
        let seen = self
            .repeats
            .entry(format!("{}{}", call.name, call.args))
            .or_insert(0);
        *seen += 1;
        if *seen < REPEAT_LIMIT {
            return Verdict::Run;
        }
        self.stopped = Some(format!("{} {}", call.name, call.args));
        Verdict::NotRun("not run: the same call was made three times in this turn".into())
    }

    /// The call that stopped the turn, if one did.
    pub(super) fn stopped(&mut self) -> Option<String> {
        self.stopped.take()
    }
}
