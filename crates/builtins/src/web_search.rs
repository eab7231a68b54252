//! web_search: a numbered list of results (title, URL, description) from the provider the
//! environment sets up (the search in `web/search.rs`, which provider in agent-loop-tools'
//! `web/provider.rs`); the model then reads what it needs with read_url.
//! Without a provider the tool is not offered at all.

use serde::Deserialize;

use super::tool::{Builtin, Effect, Param, ToolContext, ToolKind, ToolOutput};
use super::web::provider::Provider;
use super::web::search::search;

const DEFAULT_COUNT: usize = 5;
const MAX_COUNT: usize = 20;

pub struct WebSearch {
    pub provider: Provider,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    query: String,
    count: Option<usize>,
}

impl Builtin for WebSearch {
    const NAME: &'static str = "web_search";
    const DESCRIPTION: &'static str =
        "Search the web. Returns numbered results with title, URL and description; read a \
        result with read_url.";
    const MAIN_PARAM: &'static str = "query";
    const KIND: ToolKind = ToolKind::Search;
    const EFFECT: Effect = Effect::Reads;
    const PARAMS: &'static [Param] = &[
        Param::required("query", "string", "What to search for."),
        Param::optional(
            "count",
            "integer",
            "How many results (default 5, at most 20).",
        ),
    ];
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let count = args.count.unwrap_or(DEFAULT_COUNT).clamp(1, MAX_COUNT);
        let hits = match search(&self.provider, &args.query, count, ctx.web.timeout).await {
            Ok(hits) => hits,
            Err(e) => return ToolOutput::error(e.to_string()),
        };
        if hits.is_empty() {
            return ToolOutput::ok(format!("no results for `{}`", args.query));
        }
        let list: Vec<String> = hits
            .iter()
            .enumerate()
            .map(|(i, hit)| {
                let mut entry = format!("{}. {}\n   {}", i + 1, hit.title, hit.url);
                if !hit.description.is_empty() {
                    entry.push_str(&format!("\n   {}", hit.description));
                }
                entry
            })
            .collect();
        ToolOutput::ok(list.join("\n\n"))
    }
}
