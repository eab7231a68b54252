//! Exact token counts where the model's tokenizer is known: OpenAI's published encodings
//! (`o200k_base`, `cl100k_base`) counted here, and the count-tokens endpoints of Anthropic
//! and Gemini (the backends ask them; this module says which method a backend uses and what
//! a message's count is made of). Everything else keeps the calibrated estimate of
//! [`tokens`](super::tokens).
//!
//! A message counts its text (its tool calls' names and arguments, a tool result's output)
//! plus [`MESSAGE_FRAME`] tokens, and its images at the estimate of [`image`](super::image):
//! the APIs publish no tokenizer for images.

use std::fmt;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use tiktoken_rs::{CoreBPE, Rank};

use super::Message;

/// Tokens OpenAI's chat format adds around each message (`<|start|>role<|message|>` and
/// `<|end|>`), as OpenAI's cookbook counts them.
pub const MESSAGE_FRAME: u64 = 3;

/// One of OpenAI's published byte-pair encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, GPT-5, the o-series and gpt-oss.
    O200kBase,
    /// GPT-4 and GPT-3.5 Turbo.
    Cl100kBase,
}

/// Model-name prefixes and their encodings, as tiktoken maps them (longest first where one
/// is the prefix of another).
const PREFIXES: [(&str, Encoding); 13] = [
    ("gpt-4o", Encoding::O200kBase),
    ("gpt-4.1", Encoding::O200kBase),
    ("gpt-4.5", Encoding::O200kBase),
    ("gpt-5", Encoding::O200kBase),
    ("gpt-oss", Encoding::O200kBase),
    ("chatgpt-4o", Encoding::O200kBase),
    ("codex-", Encoding::O200kBase),
    ("o1", Encoding::O200kBase),
    ("o3", Encoding::O200kBase),
    ("o4", Encoding::O200kBase),
    ("gpt-4", Encoding::Cl100kBase),
    ("gpt-3.5", Encoding::Cl100kBase),
    ("text-embedding-3", Encoding::Cl100kBase),
];

impl Encoding {
    /// The encoding's name, as tiktoken spells it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// The encoding of an OpenAI model (`gpt-4o-mini`, `openai/gpt-5`, `ft:gpt-4.1:...`),
    /// if it is one whose encoding is published.
    pub fn for_model(model: &str) -> Option<Encoding> {
        let model = model.trim();
        let model = model.strip_prefix("openai/").unwrap_or(model);
        let model = model.strip_prefix("ft:").unwrap_or(model);
        PREFIXES.iter().find_map(|&(prefix, encoding)| {
            let rest = model.strip_prefix(prefix)?;
            // `o1`, `o3-mini`, `gpt-4-turbo`: the prefix ends a word, not `o100`.
            let ends_word = rest.is_empty()
                || rest.starts_with(['-', '.', ':'])
                || prefix.ends_with('-')
                || !prefix.starts_with('o');
            ends_word.then_some(encoding)
        })
    }

    /// The encoding's embedded table and pattern.
    fn data(self) -> (&'static [u8], &'static str) {
        match self {
            Encoding::O200kBase => (include_bytes!("../data/o200k_base.ranks.z"), O200K_PATTERN),
            Encoding::Cl100kBase => (
                include_bytes!("../data/cl100k_base.ranks.z"),
                CL100K_PATTERN,
            ),
        }
    }

    fn bpe(self) -> &'static CoreBPE {
        static O200K: OnceLock<CoreBPE> = OnceLock::new();
        static CL100K: OnceLock<CoreBPE> = OnceLock::new();
        let cell = match self {
            Encoding::O200kBase => &O200K,
            Encoding::Cl100kBase => &CL100K,
        };
        cell.get_or_init(|| {
            let (compressed, pattern) = self.data();
            let table = table(compressed);
            let ranks: FxHashMap<Vec<u8>, Rank> = tokens(&table)
                .zip(0..)
                .map(|(token, rank)| (token.to_vec(), rank))
                .collect();
            // No special tokens: what a user writes is counted as text.
            CoreBPE::new(ranks, FxHashMap::default(), pattern)
                .expect("tiktoken's pattern compiles (the tests use it)")
        })
    }

    /// Reads the encoding's table on a thread of its own (it takes a moment), once, so that
    /// the first count waits for less of it or not at all.
    pub fn warm(self) {
        static STARTED: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
        if !STARTED[self as usize].swap(true, Ordering::Relaxed) {
            std::thread::spawn(move || self.bpe());
        }
    }

    /// The tokens of the embedded table, in rank order.
    pub fn tokens(self) -> Vec<Vec<u8>> {
        tokens(&table(self.data().0)).map(<[u8]>::to_vec).collect()
    }

    /// The token ids of `text`, special tokens' text counted as ordinary text (as the APIs
    /// treat what a user writes).
    pub fn encode(self, text: &str) -> Vec<u32> {
        self.bpe().encode_ordinary(text)
    }

    /// How many tokens `text` is.
    pub fn count(self, text: &str) -> u64 {
        self.bpe().encode_ordinary(text).len() as u64
    }

    /// How many tokens `message` is: its text and [`MESSAGE_FRAME`], its images estimated.
    pub fn count_message(self, message: &Message) -> u64 {
        MESSAGE_FRAME
            + match message {
                Message::User { text, images } => {
                    self.count(text) + images.iter().map(|i| i.tokens()).sum::<u64>()
                }
                Message::Assistant { text, tool_calls } => {
                    self.count(text)
                        + tool_calls
                            .iter()
                            .map(|c| self.count(&c.name) + self.count(&c.args.to_string()))
                            .sum::<u64>()
                }
                Message::ToolResult { output, .. } => self.count(output),
            }
    }
}

/// tiktoken's pre-tokenising pattern of `o200k_base`.
const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
);

/// tiktoken's pre-tokenising pattern of `cl100k_base`.
const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// An embedded table inflated: each token's bytes after one byte of length, in rank order
/// (written by examples/tokenizer_data.rs from OpenAI's published `.tiktoken` file).
fn table(compressed: &[u8]) -> Vec<u8> {
    let mut table = Vec::new();
    flate2::read::ZlibDecoder::new(compressed)
        .read_to_end(&mut table)
        .expect("the embedded token table is valid zlib (the tests read it)");
    table
}

/// The tokens of an inflated table.
fn tokens(table: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = table;
    std::iter::from_fn(move || {
        let (&len, tail) = rest.split_first()?;
        let (token, tail) = tail.split_at(usize::from(len));
        rest = tail;
        Some(token)
    })
}

/// A provider whose API counts a request's tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    /// `POST /v1/messages/count_tokens`.
    Anthropic,
    /// `POST /v1beta/models/MODEL:countTokens`.
    Gemini,
}

/// How a backend's tokens are counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Bytes at the backend's calibrated ratio.
    #[default]
    Estimate,
    /// Exactly, here, with the model's encoding.
    Encoding(Encoding),
    /// Exactly, by the provider's count-tokens endpoint (a network call per message).
    Api(Provider),
}

impl Method {
    pub fn is_exact(self) -> bool {
        self != Method::Estimate
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Method::Estimate => f.write_str("estimated from bytes, calibrated by reported usage"),
            Method::Encoding(e) => write!(f, "exact, {}", e.name()),
            Method::Api(Provider::Anthropic) => f.write_str("exact, Anthropic's count_tokens API"),
            Method::Api(Provider::Gemini) => f.write_str("exact, Gemini's countTokens API"),
        }
    }
}

/// The `count_tokens` setting: whether a backend whose provider counts tokens through its
/// API is asked to (a network call per message).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CountTokens {
    /// Exact counts made here only; the others estimated.
    #[default]
    Local,
    /// The provider's count-tokens endpoint too, where there is one and a key is set.
    Api,
}

impl std::fmt::Display for CountTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CountTokens::Local => "local",
            CountTokens::Api => "api",
        })
    }
}

impl std::str::FromStr for CountTokens {
    type Err = crate::UnknownValue;
    fn from_str(s: &str) -> Result<Self, crate::UnknownValue> {
        match s {
            "local" => Ok(CountTokens::Local),
            "api" => Ok(CountTokens::Api),
            _ => Err(crate::UnknownValue {
                what: "count_tokens",
                value: s.to_string(),
                expected: "the values are local, api",
            }),
        }
    }
}

/// A message's exact count, and the method that made it (a count by one tokenizer says
/// nothing about another's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exact {
    pub method: Method,
    pub tokens: u64,
}

#[cfg(test)]
#[path = "exact/tests.rs"]
mod tests;
