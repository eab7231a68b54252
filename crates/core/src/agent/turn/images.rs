//! Whether the backend takes images, asked before a prompt with images joins the
//! conversation: by every such turn, and by a front end that would fetch an image first (the
//! Telegram bot), so that the refusal comes before the download.

use super::Agent;
use crate::agent::host::LoopHost;
use crate::event::{Event, Observer};
use crate::Error;

impl Agent {
    /// `Ok` when the backend takes images (an ACP agent is started to ask it; it gets no
    /// prompt); otherwise the refusal, which names the backend and what to set, told to
    /// `obs` as an error event too.
    pub async fn check_images(&mut self, obs: &mut dyn Observer) -> Result<(), Error> {
        let tools = self.tool_context();
        let mut host = LoopHost {
            obs: &mut *obs,
            policy: &mut self.options.policy,
            tools,
        };
        let checked = self
            .backend
            .check_images(&self.options.cwd, &mut host)
            .await;
        if let Err(e) = &checked {
            obs.event(&Event::Error {
                message: e.message.clone(),
                kind: e.kind,
            });
        }
        checked
    }
}
