//! Exact token counts before a request is planned: the messages the backend's method has not
//! counted yet are counted by it (see `context::exact`), so the budget, and the check of a
//! new prompt against it, count them exactly. A local encoding counts at once; a
//! count-tokens endpoint is asked once per message, and the count stays with the message
//! (in the saved session too). An endpoint that fails is given up for the run, with a notice.

use super::Agent;
use crate::context::exact::{Exact, Method};

impl Agent {
    /// The backend's method, with the messages it can count at once (a local encoding)
    /// counted: for `/context` and after a change of backend or session.
    pub(super) fn count_local(&mut self) -> Method {
        let method = self.backend.token_method();
        self.context.set_method(method);
        if let Method::Encoding(encoding) = method {
            self.conversation
                .count_exact(method, |m| encoding.count_message(m));
        }
        method
    }

    /// How the current backend's tokens are counted (for `/context`).
    pub fn token_method(&self) -> Method {
        self.backend.token_method()
    }

    /// Counts what the backend's method has not counted yet; the notice when its endpoint
    /// failed and the estimate takes over.
    pub(super) async fn count_exact(&mut self) -> Option<String> {
        let method = self.count_local();
        if !matches!(method, Method::Api(_)) {
            return None;
        }
        for i in self.conversation.uncounted(method) {
            match self
                .backend
                .count_tokens(&self.conversation.messages[i])
                .await
            {
                Ok(tokens) => self.conversation.set_exact(i, Exact { method, tokens }),
                Err(why) => {
                    self.context.set_method(Method::Estimate);
                    return Some(format!(
                        "backend `{}` could not count tokens through its API ({why}); they are \
                         estimated for the rest of this run",
                        self.backend.name()
                    ));
                }
            }
        }
        None
    }
}
