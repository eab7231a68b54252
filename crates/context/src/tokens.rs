//! Token counts without a tokenizer, for what has no exact count (see `exact`), and the
//! measure that picks between the two: each message is measured in UTF-8 bytes once, when it
//! is added, and converted with a bytes-per-token ratio per backend. The ratio starts at 4 and
//! is corrected whenever a backend reports how many input tokens a request really took.
//!
//! The measure is bytes rather than characters: text in non-Latin scripts takes more bytes
//! per character and also more tokens per character, so bytes keep the ratio in a narrower
//! range across languages, and `str::len` costs nothing.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::exact::{Exact, Method};
use crate::tools::ToolSpec;

/// The ratio before any backend reported a count: English prose and code average about 4.
pub const DEFAULT_BYTES_PER_TOKEN: f64 = 4.0;
/// Reported counts move the ratio only within the range real tokenizers show. An agent CLI
/// adds its own hidden system prompt to the count, which would otherwise drive it to nonsense.
pub const MIN_BYTES_PER_TOKEN: f64 = 2.0;
pub const MAX_BYTES_PER_TOKEN: f64 = 6.0;

/// Bytes a message takes besides its text when rendered: role label, separators.
pub(super) const MESSAGE_OVERHEAD: usize = 16;
/// Bytes around one tool call or result: id, name, delimiters.
pub(super) const CALL_OVERHEAD: usize = 48;
/// Bytes of the fixed instructions in the preamble, besides the tools and memory.
const PREAMBLE_OVERHEAD: usize = 640;

/// How big one message is: its measured bytes, the backend's count where it gave one, and
/// its exact count by the last method that made one (see `context::exact`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageSize {
    pub bytes: usize,
    pub reported: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<Exact>,
}

/// How the tokens of a request are counted: its backend's method, and the ratio for what
/// the method has no exact count of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measure {
    pub bytes_per_token: f64,
    pub method: Method,
}

impl From<f64> for Measure {
    /// The estimate alone.
    fn from(bytes_per_token: f64) -> Measure {
        Measure {
            bytes_per_token,
            method: Method::Estimate,
        }
    }
}

impl MessageSize {
    /// The exact count by `method`, if it made one.
    pub fn exact(&self, method: Method) -> Option<u64> {
        self.exact
            .filter(|e| method.is_exact() && e.method == method)
            .map(|e| e.tokens)
    }

    /// The exact count by the measure's method, or the reported count, or the estimate at
    /// its ratio.
    pub fn tokens(&self, measure: impl Into<Measure>) -> u64 {
        let measure = measure.into();
        self.exact(measure.method)
            .or(self.reported)
            .unwrap_or_else(|| estimate(self.bytes, measure.bytes_per_token))
    }
}

/// Anthropic's estimate of an image's tokens: its pixels divided by this.
const PIXELS_PER_TOKEN: u64 = 750;
/// The most one image costs: the APIs scale larger ones down before the model sees them
/// (Anthropic to about 1.15 megapixels, about 1,600 tokens).
pub const MAX_IMAGE_TOKENS: u64 = 1600;

/// The tokens of an image of `pixels` (width, height): its pixels / 750, at most what a
/// scaled-down image takes (the most, when its header gave no size).
pub fn image_tokens(pixels: Option<(u64, u64)>) -> u64 {
    pixels
        .map_or(MAX_IMAGE_TOKENS, |(w, h)| {
            (w * h).div_ceil(PIXELS_PER_TOKEN)
        })
        .clamp(1, MAX_IMAGE_TOKENS)
}

/// The bytes an image counts as in a message's size: the text its tokens would be at the
/// default ratio (the ratio a backend's reports correct is text's, so this stays fixed).
pub fn image_bytes(tokens: u64) -> usize {
    (tokens as f64 * DEFAULT_BYTES_PER_TOKEN) as usize
}

/// Tokens for `bytes` at `bytes_per_token`, rounded up.
pub fn estimate(bytes: usize, bytes_per_token: f64) -> u64 {
    (bytes as f64 / bytes_per_token).ceil() as u64
}

/// The bytes of the preamble: instructions and tool descriptions (the memory file is added
/// separately, as it can change between turns).
pub fn preamble_bytes(tools: &[ToolSpec]) -> usize {
    PREAMBLE_OVERHEAD
        + tools
            .iter()
            .map(|t| CALL_OVERHEAD + t.name.len() + t.description.len() + t.schema_text().len())
            .sum::<usize>()
}

/// The bytes-per-token ratio of each backend, corrected from the counts it reports.
#[derive(Debug, Clone, Default)]
pub struct Calibration {
    ratios: HashMap<String, f64>,
}

impl Calibration {
    /// The ratio for `backend`: the last corrected one, or the default.
    pub fn bytes_per_token(&self, backend: &str) -> f64 {
        self.ratios
            .get(backend)
            .copied()
            .unwrap_or(DEFAULT_BYTES_PER_TOKEN)
    }

    /// A request of `sent_bytes` (as measured here) took `input_tokens` by the backend's
    /// count: from now on its ratio is the observed one, kept within the plausible range.
    pub fn observe(&mut self, backend: &str, sent_bytes: usize, input_tokens: u64) {
        if input_tokens == 0 || sent_bytes == 0 {
            return;
        }
        let observed = sent_bytes as f64 / input_tokens as f64;
        self.ratios.insert(
            backend.to_string(),
            observed.clamp(MIN_BYTES_PER_TOKEN, MAX_BYTES_PER_TOKEN),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_count_wins_over_the_estimate() {
        let size = MessageSize {
            bytes: 400,
            ..Default::default()
        };
        assert_eq!(size.tokens(4.0), 100);
        assert_eq!(size.tokens(3.0), 134);
        let size = MessageSize {
            bytes: 400,
            reported: Some(7),
            exact: Some(Exact {
                method: Method::Encoding(crate::exact::Encoding::O200kBase),
                tokens: 9,
            }),
        };
        assert_eq!(size.tokens(4.0), 7);
        // The exact count wins for its own method only.
        let o200k = |m| Measure {
            bytes_per_token: 4.0,
            method: Method::Encoding(m),
        };
        assert_eq!(size.tokens(o200k(crate::exact::Encoding::O200kBase)), 9);
        assert_eq!(size.tokens(o200k(crate::exact::Encoding::Cl100kBase)), 7);
    }

    #[test]
    fn calibration_corrects_the_ratio_per_backend() {
        let mut c = Calibration::default();
        assert_eq!(c.bytes_per_token("a"), 4.0);
        // 9,000 bytes took 3,000 tokens: 3 bytes per token from now on, for `a` only.
        c.observe("a", 9_000, 3_000);
        assert_eq!(c.bytes_per_token("a"), 3.0);
        assert_eq!(c.bytes_per_token("b"), 4.0);
        assert_eq!(estimate(9_000, c.bytes_per_token("a")), 3_000);
        // A later report replaces it.
        c.observe("a", 10_000, 2_000);
        assert_eq!(c.bytes_per_token("a"), 5.0);
    }

    #[test]
    fn calibration_stays_in_the_plausible_range() {
        let mut c = Calibration::default();
        // A CLI that adds 20k tokens of its own prompt to a 4 KB request.
        c.observe("cli", 4_000, 21_000);
        assert_eq!(c.bytes_per_token("cli"), MIN_BYTES_PER_TOKEN);
        c.observe("cli", 100_000, 1_000);
        assert_eq!(c.bytes_per_token("cli"), MAX_BYTES_PER_TOKEN);
        // A zero count says nothing.
        c.observe("cli", 100, 0);
        assert_eq!(c.bytes_per_token("cli"), MAX_BYTES_PER_TOKEN);
    }
}
