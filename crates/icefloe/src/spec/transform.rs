//! Partition transforms ("Partition Transforms", "Bucket Transform Details",
//! "Truncate Transform Details", Appendix B hashing).

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A transform, as written in partition specs and sort orders.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Transform {
    Identity,
    Bucket(u32),
    Truncate(u32),
    Year,
    Month,
    Day,
    Hour,
    Void,
    /// A transform this library does not know; kept verbatim so metadata round-trips,
    /// and ignored when filtering (required of v3 readers).
    Unknown(String),
}

impl FromStr for Transform {
    type Err = Error;

    /// Parses a transform string. Unknown names become [`Transform::Unknown`]; a known
    /// name with a bad parameter (`bucket[0]`, `truncate[x]`) is an error.
    fn from_str(s: &str) -> Result<Transform> {
        let t = match s {
            "identity" => Transform::Identity,
            "year" => Transform::Year,
            "month" => Transform::Month,
            "day" => Transform::Day,
            "hour" => Transform::Hour,
            "void" => Transform::Void,
            _ => {
                let param = |prefix: &str| -> Option<Result<u32>> {
                    let inner = s.strip_prefix(prefix)?.strip_suffix(']')?;
                    Some(match inner.trim().parse::<u32>() {
                        Ok(n) if n > 0 && n <= i32::MAX as u32 => Ok(n),
                        _ => Err(Error::invalid_argument(format!(
                            "invalid transform '{s}': the parameter must be a positive int"
                        ))),
                    })
                };
                if let Some(n) = param("bucket[") {
                    Transform::Bucket(n?)
                } else if let Some(w) = param("truncate[") {
                    Transform::Truncate(w?)
                } else {
                    Transform::Unknown(s.to_string())
                }
            }
        };
        Ok(t)
    }
}

impl fmt::Display for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transform::Identity => write!(f, "identity"),
            Transform::Bucket(n) => write!(f, "bucket[{n}]"),
            Transform::Truncate(w) => write!(f, "truncate[{w}]"),
            Transform::Year => write!(f, "year"),
            Transform::Month => write!(f, "month"),
            Transform::Day => write!(f, "day"),
            Transform::Hour => write!(f, "hour"),
            Transform::Void => write!(f, "void"),
            Transform::Unknown(s) => write!(f, "{s}"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn transform_strings_round_trip() {
        for s in ["identity", "bucket[16]", "truncate[20]", "year", "month", "day", "hour", "void", "zorder"] {
            let t: Transform = s.parse().unwrap();
            assert_eq!(t.to_string(), s);
        }
        assert_eq!("zorder".parse::<Transform>().unwrap(), Transform::Unknown("zorder".into()));
        assert!("bucket[0]".parse::<Transform>().is_err());
        assert!("truncate[-1]".parse::<Transform>().is_err());
    }
}
