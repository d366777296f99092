//! Partition transforms ("Partition Transforms", "Bucket Transform Details",
//! "Truncate Transform Details", Appendix B hashing).

use std::fmt;
use std::str::FromStr;

use super::types::{PrimitiveType, Type};
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

impl Transform {
    /// Whether this transform accepts a source column of type `source` (the table of
    /// "Partition Transforms"). Unknown transforms accept nothing: they cannot be applied.
    pub fn can_transform(&self, source: &Type) -> bool {
        use PrimitiveType as P;
        let Type::Primitive(p) = source else {
            // void accepts any type; nothing else takes nested or variant sources
            return matches!(self, Transform::Void);
        };
        match self {
            Transform::Void => true,
            Transform::Identity => !matches!(p, P::Geometry { .. } | P::Geography { .. }),
            Transform::Bucket(_) => matches!(
                p,
                P::Int
                    | P::Long
                    | P::Decimal { .. }
                    | P::Date
                    | P::Time
                    | P::Timestamp
                    | P::Timestamptz
                    | P::TimestampNs
                    | P::TimestamptzNs
                    | P::String
                    | P::Uuid
                    | P::Fixed(_)
                    | P::Binary
            ),
            Transform::Truncate(_) => {
                matches!(p, P::Int | P::Long | P::Decimal { .. } | P::String | P::Binary)
            }
            Transform::Year | Transform::Month | Transform::Day => matches!(
                p,
                P::Date | P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs
            ),
            Transform::Hour => matches!(
                p,
                P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs
            ),
            Transform::Unknown(_) => false,
        }
    }

    /// The type of the values this transform produces from `source`.
    ///
    /// Unknown transforms produce `string`, as in the Java reference, so that a partition
    /// type can still be built for a spec that uses one.
    pub fn result_type(&self, source: &Type) -> Result<Type> {
        if let Transform::Unknown(_) = self {
            return Ok(PrimitiveType::String.into());
        }
        if !self.can_transform(source) {
            return Err(Error::invalid_argument(format!(
                "transform '{self}' cannot be applied to type {source}"
            )));
        }
        Ok(match self {
            Transform::Identity | Transform::Truncate(_) | Transform::Void => source.clone(),
            Transform::Bucket(_)
            | Transform::Year
            | Transform::Month
            | Transform::Day
            | Transform::Hour => PrimitiveType::Int.into(),
            Transform::Unknown(_) => PrimitiveType::String.into(),
        })
    }

    /// Whether the transform keeps the order of values (used for sort orders and projections).
    pub fn preserves_order(&self) -> bool {
        matches!(
            self,
            Transform::Identity
                | Transform::Truncate(_)
                | Transform::Year
                | Transform::Month
                | Transform::Day
                | Transform::Hour
        )
    }
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

    #[test]
    fn result_types() {
        use PrimitiveType as P;
        let ts: Type = P::TimestampNs.into();
        assert_eq!(Transform::Day.result_type(&ts).unwrap(), P::Int.into());
        assert_eq!(Transform::Hour.result_type(&P::Date.into()).is_err(), true);
        let dec: Type = P::Decimal { precision: 9, scale: 2 }.into();
        assert_eq!(Transform::Truncate(10).result_type(&dec).unwrap(), dec);
        assert_eq!(Transform::Bucket(4).result_type(&dec).unwrap(), P::Int.into());
        assert!(Transform::Bucket(4).result_type(&P::Float.into()).is_err());
        assert!(Transform::Identity.result_type(&P::Geometry { crs: None }.into()).is_err());
        assert_eq!(Transform::Void.result_type(&P::Float.into()).unwrap(), P::Float.into());
        assert_eq!(
            Transform::Unknown("zorder".into()).result_type(&P::Int.into()).unwrap(),
            P::String.into()
        );
    }
}
