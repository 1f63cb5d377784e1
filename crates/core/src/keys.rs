//! What every floor needs to read a scenario's keys, kept below them all: the error that
//! names a rejected key ([`ScenarioError`], made by `invalid`), the names a key takes
//! ([`Named`]), and the range of an offered load ([`is_load`]). The scenario, the blocks that
//! read their own sections and the designs all import them from here.

/// The smallest offered load (a fraction of line rate) a source takes: below it a run of any
/// practical length carries nothing, and the idle gaps' geometric draws lose their precision
/// (the fuzzer found a load of 1e-80 that never finished).
pub const MIN_LOAD: f64 = 1e-6;

/// True for an offered load a source can generate: from [`MIN_LOAD`] to 1.
pub fn is_load(load: f64) -> bool {
    (MIN_LOAD..=1.0).contains(&load)
}

/// A scenario rejected before it ran: the offending key and what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct ScenarioError {
    /// Dotted path of the offending key (`traffic.load`), or `scenario` for the whole document.
    pub key: String,
    /// What is wrong and what was expected.
    pub message: String,
}

/// The error for `key`: `message` says what was expected.
pub(crate) fn invalid(key: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        key: key.to_string(),
        message: message.into(),
    }
}

/// Checks that `key`'s `value` is at most `limit_key`'s `limit`: the error names both.
pub(crate) fn at_most(
    key: &str,
    value: u32,
    limit_key: &str,
    limit: u32,
) -> Result<(), ScenarioError> {
    if value > limit {
        return Err(invalid(
            key,
            format!("expected at most {limit_key} ({limit})"),
        ));
    }
    Ok(())
}

/// Checks that `key`'s `value` is from 1 to `max` counted in `unit`: the error says the range
/// and the value.
pub(crate) fn one_to(key: &str, value: u32, max: u32, unit: &str) -> Result<(), ScenarioError> {
    if !(1..=max).contains(&value) {
        return Err(invalid(
            key,
            format!("expected 1 to {max} {unit}, got {value}"),
        ));
    }
    Ok(())
}

/// Checks that `key`'s `bytes` are fewer than `limit_key`'s `limit_bytes`: the error names both.
pub(crate) fn fewer_bytes_than<T: PartialOrd + std::fmt::Display>(
    key: &str,
    bytes: T,
    limit_key: &str,
    limit_bytes: T,
) -> Result<(), ScenarioError> {
    if bytes >= limit_bytes {
        let message = format!("expected fewer bytes than {limit_key} ({limit_bytes})");
        return Err(invalid(key, message));
    }
    Ok(())
}

/// A mechanism name a scenario key takes: every value, its name as written in scenarios, and
/// what it is in one line (for `cellfabric list`). The serde name and this one must agree; a
/// catalog test checks that every listed name parses.
pub trait Named: Copy + 'static {
    /// Every value.
    const ALL: &'static [Self];
    /// The name as written in scenarios, and what it is.
    fn entry(self) -> (&'static str, &'static str);
    /// The name as written in scenarios.
    fn as_str(self) -> &'static str {
        self.entry().0
    }
    /// What it is, in one line.
    fn description(self) -> &'static str {
        self.entry().1
    }
}
