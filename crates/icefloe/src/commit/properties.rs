//! Table properties that govern commits, with Java's names and defaults
//! (`TableProperties`), and the retry policy they define (Java's `Tasks` backoff).

use std::time::Duration;

use crate::error::{Error, Result};
use crate::spec::table_metadata::TableMetadata;

pub const COMMIT_NUM_RETRIES: &str = "commit.retry.num-retries";
pub const COMMIT_NUM_RETRIES_DEFAULT: u32 = 4;
pub const COMMIT_MIN_RETRY_WAIT_MS: &str = "commit.retry.min-wait-ms";
pub const COMMIT_MIN_RETRY_WAIT_MS_DEFAULT: u64 = 100;
pub const COMMIT_MAX_RETRY_WAIT_MS: &str = "commit.retry.max-wait-ms";
pub const COMMIT_MAX_RETRY_WAIT_MS_DEFAULT: u64 = 60_000;
pub const COMMIT_TOTAL_RETRY_TIME_MS: &str = "commit.retry.total-timeout-ms";
pub const COMMIT_TOTAL_RETRY_TIME_MS_DEFAULT: u64 = 1_800_000;

pub const MANIFEST_TARGET_SIZE_BYTES: &str = "commit.manifest.target-size-bytes";
pub const MANIFEST_TARGET_SIZE_BYTES_DEFAULT: u64 = 8 * 1024 * 1024;
pub const MANIFEST_MIN_MERGE_COUNT: &str = "commit.manifest.min-count-to-merge";
pub const MANIFEST_MIN_MERGE_COUNT_DEFAULT: usize = 100;
pub const MANIFEST_MERGE_ENABLED: &str = "commit.manifest-merge.enabled";
pub const MANIFEST_MERGE_ENABLED_DEFAULT: bool = true;

pub const METADATA_PREVIOUS_VERSIONS_MAX: &str = "write.metadata.previous-versions-max";
pub const METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT: usize = 100;
/// Where manifests and manifest lists go (default `<location>/metadata`).
pub const WRITE_METADATA_LOCATION: &str = "write.metadata.path";

const COMMIT_PROPERTIES: [&str; 4] = [
    COMMIT_NUM_RETRIES,
    COMMIT_MIN_RETRY_WAIT_MS,
    COMMIT_MAX_RETRY_WAIT_MS,
    COMMIT_TOTAL_RETRY_TIME_MS,
];

/// As Java's `PropertyUtil.validateCommitProperties`: the `commit.retry.*` properties,
/// where set, are non-negative integers.
pub fn validate_commit_properties(properties: &[(String, String)]) -> Result<()> {
    for (k, v) in properties {
        if COMMIT_PROPERTIES.contains(&k.as_str()) {
            match v.parse::<i32>() {
                Ok(n) if n >= 0 => {}
                Ok(_) => {
                    return Err(Error::validation_failed(format!(
                        "table property {k} must have a non-negative integer value, found {v}"
                    )))
                }
                Err(_) => {
                    return Err(Error::validation_failed(format!(
                        "table property {k} must have an integer value, found {v}"
                    )))
                }
            }
        }
    }
    Ok(())
}

/// A property parsed as `T`, or the default when unset or unparsable (as Java's
/// `PropertyUtil.propertyAsInt` would fail on garbage, we fall back instead: a bad value
/// must not make a table uncommittable).
pub fn property_or<T: std::str::FromStr>(md: &TableMetadata, key: &str, default: T) -> T {
    md.property(key)
        .and_then(|v| v.trim().parse::<T>().ok())
        .unwrap_or(default)
}

/// The directory for new manifests and manifest lists: `write.metadata.path`, else
/// `<location>/metadata`.
pub fn metadata_dir(md: &TableMetadata) -> String {
    match md.property(WRITE_METADATA_LOCATION) {
        Some(p) => p.trim_end_matches('/').to_string(),
        None => format!("{}/metadata", md.location.trim_end_matches('/')),
    }
}

/// How often and how long to retry a commit that lost a race (`commit.retry.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub num_retries: u32,
    pub min_wait: Duration,
    pub max_wait: Duration,
    pub total_timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            num_retries: COMMIT_NUM_RETRIES_DEFAULT,
            min_wait: Duration::from_millis(COMMIT_MIN_RETRY_WAIT_MS_DEFAULT),
            max_wait: Duration::from_millis(COMMIT_MAX_RETRY_WAIT_MS_DEFAULT),
            total_timeout: Duration::from_millis(COMMIT_TOTAL_RETRY_TIME_MS_DEFAULT),
        }
    }
}

impl RetryPolicy {
    /// The policy of a table's properties.
    pub fn for_table(md: &TableMetadata) -> RetryPolicy {
        RetryPolicy {
            num_retries: property_or(md, COMMIT_NUM_RETRIES, COMMIT_NUM_RETRIES_DEFAULT),
            min_wait: Duration::from_millis(property_or(
                md,
                COMMIT_MIN_RETRY_WAIT_MS,
                COMMIT_MIN_RETRY_WAIT_MS_DEFAULT,
            )),
            max_wait: Duration::from_millis(property_or(
                md,
                COMMIT_MAX_RETRY_WAIT_MS,
                COMMIT_MAX_RETRY_WAIT_MS_DEFAULT,
            )),
            total_timeout: Duration::from_millis(property_or(
                md,
                COMMIT_TOTAL_RETRY_TIME_MS,
                COMMIT_TOTAL_RETRY_TIME_MS_DEFAULT,
            )),
        }
    }

    /// The wait before retry number `attempt` (1 for the first retry): `min * 2^(attempt-1)`
    /// capped at `max`, plus up to 10% random jitter so racing writers spread out, as Java.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let min = self.min_wait.as_millis() as f64;
        let max = self.max_wait.as_millis() as f64;
        let exp = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        let delay = (min * 2f64.powi(exp)).min(max).max(0.0) as u64;
        let bound = (delay / 10).max(1);
        let random = u64::from_le_bytes(
            uuid::Uuid::new_v4().as_bytes()[..8]
                .try_into()
                .unwrap_or([0; 8]),
        );
        Duration::from_millis(delay + random % bound)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_with_bounded_jitter() {
        let p = RetryPolicy {
            num_retries: 4,
            min_wait: Duration::from_millis(100),
            max_wait: Duration::from_millis(350),
            total_timeout: Duration::from_secs(1),
        };
        for (attempt, base) in [(1u32, 100u64), (2, 200), (3, 350), (10, 350)] {
            let d = p.backoff(attempt).as_millis() as u64;
            assert!(d >= base && d < base + base / 10 + 1, "{attempt}: {d}");
        }
    }

    #[test]
    fn commit_properties_must_be_non_negative_integers() {
        let ok = vec![(COMMIT_NUM_RETRIES.to_string(), "0".to_string())];
        validate_commit_properties(&ok).unwrap();
        for bad in ["-1", "x"] {
            let props = vec![(COMMIT_MIN_RETRY_WAIT_MS.to_string(), bad.to_string())];
            assert!(matches!(
                validate_commit_properties(&props),
                Err(Error::ValidationFailed { .. })
            ));
        }
    }
}
