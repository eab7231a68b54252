//! Keys every kind of backend entry reads: prices, the context settings, the timeout's
//! default, parsing a located string with `FromStr`, and regex keys.

use super::raw::RawBackend;
use super::source::{Located, Source};
use super::ConfigError;
use crate::context::{ContextMode, ContextSettings};
use crate::parse::{Pattern, Prices};

/// The timeout of a backend call when its entry sets none.
pub(super) const DEFAULT_TIMEOUT_S: u64 = 600;
/// Seconds between the reports that a backend is still working, when its entry sets none.
pub(super) const DEFAULT_PROGRESS_S: u64 = 10;

/// `price_input_per_mtok` and `price_output_per_mtok`, if either is set.
pub(super) fn prices(raw: &RawBackend) -> Option<Prices> {
    match (raw.price_input_per_mtok, raw.price_output_per_mtok) {
        (None, None) => None,
        (i, o) => Some(Prices {
            input_per_mtok: i.unwrap_or(0.0),
            output_per_mtok: o.unwrap_or(0.0),
        }),
    }
}

/// The context keys of a backend entry, defaults filled in.
pub(super) fn context_settings(
    raw: &RawBackend,
    name: &str,
    bad: &dyn Fn(&str, String) -> ConfigError,
) -> Result<ContextSettings, ConfigError> {
    let defaults = ContextSettings::default();
    let mode: Option<ContextMode> = parse_located(raw.context.as_ref(), name, "context")?;
    let max_tokens = raw.max_context_tokens.unwrap_or(defaults.max_tokens);
    if let Some(why) = crate::context::modes::context_tokens_too_small(max_tokens) {
        return Err(bad("max_context_tokens", why));
    }
    let tool_result_max_chars = match raw.tool_result_max_chars {
        Some(0) => return Err(bad("tool_result_max_chars", "must be above 0".into())),
        Some(n) => n as usize,
        None => defaults.tool_result_max_chars,
    };
    Ok(ContextSettings {
        mode: mode.unwrap_or(defaults.mode),
        max_tokens,
        tool_result_max_chars,
    })
}

/// A located string key parsed with `FromStr`; a bad value names file, line, backend and key.
pub(super) fn parse_located<T>(
    value: Option<&Located>,
    backend: &str,
    key: &str,
) -> Result<Option<T>, ConfigError>
where
    T: std::str::FromStr<Err: std::fmt::Display>,
{
    value
        .map(|v| {
            v.value
                .parse()
                .map_err(|e: T::Err| ConfigError::key(v.at(), backend, key, e.to_string()))
        })
        .transpose()
}

/// A regex key's pattern, with the names of its groups when it is the user's. The built-in
/// file's patterns are compiled when first used (a unit test compiles them all); a user's
/// now, so that a mistake is reported, with its file, line, backend and key, before anything
/// runs.
pub(super) fn located_pattern(
    located: &Located,
    multi_line: bool,
    backend: &str,
    key: &str,
) -> Result<(Pattern, Option<Vec<String>>), ConfigError> {
    if located.file == Source::BUILTIN_NAME {
        return Ok((Pattern::lazy(&located.value, multi_line), None));
    }
    Pattern::checked(&located.value, multi_line)
        .map(|(pattern, names)| (pattern, Some(names)))
        .map_err(|source| ConfigError::BadRegex {
            at: located.at(),
            backend: backend.to_string(),
            key: key.to_string(),
            source,
        })
}
