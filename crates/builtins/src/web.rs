//! The web under read_url and web_search: fetching with address checks (`fetch`, with
//! agent-loop-tools' `address`), decoding and turning pages into Markdown (`charset` with
//! `prescan`, `dom`, `convert`), and the search at a provider (`search`); why either failed
//! (`failure`).

pub mod charset;
pub mod convert;
pub mod dom;
pub mod failure;
pub mod fetch;
mod prescan;
pub mod search;

pub use agent_loop_tools::web::{address, host_of, provider, WebOptions};
