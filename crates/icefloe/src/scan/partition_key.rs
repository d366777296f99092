//! A partition tuple as a hash-map key: the spec id and the partition values, compared as
//! "Scan Planning" requires (note 3: floating-point values by their bits with NaNs
//! normalised; note 4: values of unknown transforms take part like any other).
//!
//! [`Literal`] is neither `Hash` nor `Eq` (it holds floats), so the key compares values
//! through a normalised view ([`ValueKey`]). The view also makes an `int` value equal to
//! the same `long` value and a `float` equal to the same value widened to `double`: a spec
//! keeps its id when its source column is promoted, so the two may meet (Java reads old
//! manifests with the promoted type, which has the same effect).
//!
//! Lookups need not build an owned key: a map keyed by [`PartitionKey`] can be queried
//! with [`PartitionKey::lookup`] over a borrowed partition tuple.

use std::borrow::Borrow;
use std::hash::{Hash, Hasher};

use crate::error::{Error, Result};
use crate::spec::Literal;

/// The normalised form of one partition value that hashing and equality use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ValueKey<'a> {
    Null,
    Boolean(bool),
    /// `int` and `long`.
    Integer(i64),
    /// `float` and `double`, as the bits of the `double` value, NaNs normalised to
    /// `0x7ff8000000000000` (Java's `Double.doubleToLongBits`; `-0.0` and `0.0` differ).
    Floating(u64),
    Decimal(i128),
    Date(i32),
    Time(i64),
    Timestamp(i64),
    Timestamptz(i64),
    TimestampNs(i64),
    TimestamptzNs(i64),
    String(&'a str),
    Uuid(u128),
    Fixed(&'a [u8]),
    Binary(&'a [u8]),
    /// Structs, lists and maps are not partition values; keys refuse them
    /// ([`PartitionKey::new`], [`check_values`]).
    Nested,
}

const CANONICAL_NAN_BITS: u64 = 0x7ff8_0000_0000_0000;

fn double_bits(v: f64) -> u64 {
    if v.is_nan() {
        CANONICAL_NAN_BITS
    } else {
        v.to_bits()
    }
}

impl<'a> ValueKey<'a> {
    fn of(value: &'a Option<Literal>) -> ValueKey<'a> {
        let Some(v) = value else {
            return ValueKey::Null;
        };
        match v {
            Literal::Boolean(b) => ValueKey::Boolean(*b),
            Literal::Int(i) => ValueKey::Integer(i64::from(*i)),
            Literal::Long(i) => ValueKey::Integer(*i),
            Literal::Float(f) => ValueKey::Floating(double_bits(f64::from(*f))),
            Literal::Double(d) => ValueKey::Floating(double_bits(*d)),
            Literal::Decimal(d) => ValueKey::Decimal(*d),
            Literal::Date(d) => ValueKey::Date(*d),
            Literal::Time(t) => ValueKey::Time(*t),
            Literal::Timestamp(t) => ValueKey::Timestamp(*t),
            Literal::Timestamptz(t) => ValueKey::Timestamptz(*t),
            Literal::TimestampNs(t) => ValueKey::TimestampNs(*t),
            Literal::TimestamptzNs(t) => ValueKey::TimestamptzNs(*t),
            Literal::String(s) => ValueKey::String(s),
            Literal::Uuid(u) => ValueKey::Uuid(*u),
            Literal::Fixed(b) => ValueKey::Fixed(b),
            Literal::Binary(b) => ValueKey::Binary(b),
            Literal::Struct(_) | Literal::List(_) | Literal::Map(_) => ValueKey::Nested,
        }
    }
}

/// Refuses partition tuples holding nested values (structs, lists, maps), which no
/// transform produces.
pub fn check_values(values: &[Option<Literal>]) -> Result<()> {
    for (i, v) in values.iter().enumerate() {
        if matches!(ValueKey::of(v), ValueKey::Nested) {
            return Err(Error::invalid_metadata(
                format!("partition[{i}]"),
                "a partition value must be of a primitive type",
            ));
        }
    }
    Ok(())
}

fn hash_tuple<H: Hasher>(spec_id: i32, values: &[Option<Literal>], state: &mut H) {
    spec_id.hash(state);
    values.len().hash(state);
    for v in values {
        ValueKey::of(v).hash(state);
    }
}

fn tuples_eq(a_spec: i32, a: &[Option<Literal>], b_spec: i32, b: &[Option<Literal>]) -> bool {
    a_spec == b_spec
        && a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| ValueKey::of(x) == ValueKey::of(y))
}

/// A partition: the id of its spec and its tuple of values. Two keys are equal when the
/// spec ids are equal and the values are pairwise equal as described in the module
/// documentation (nulls equal nulls).
#[derive(Debug, Clone)]
pub struct PartitionKey {
    spec_id: i32,
    values: Vec<Option<Literal>>,
}

impl PartitionKey {
    /// A key for the tuple `values` of spec `spec_id`; fails for nested values.
    pub fn new(spec_id: i32, values: Vec<Option<Literal>>) -> Result<PartitionKey> {
        check_values(&values)?;
        Ok(PartitionKey { spec_id, values })
    }

    pub fn spec_id(&self) -> i32 {
        self.spec_id
    }

    pub fn values(&self) -> &[Option<Literal>] {
        &self.values
    }

    /// A borrowed key to query a map keyed by `PartitionKey` without cloning the values:
    /// `map.get(PartitionKey::lookup(&tuple).as_dyn())`.
    pub fn lookup(spec_id: i32, values: &[Option<Literal>]) -> PartitionKeyRef<'_> {
        PartitionKeyRef { spec_id, values }
    }
}

impl Hash for PartitionKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_tuple(self.spec_id, &self.values, state);
    }
}

impl PartialEq for PartitionKey {
    fn eq(&self, other: &Self) -> bool {
        tuples_eq(self.spec_id, &self.values, other.spec_id, &other.values)
    }
}

impl Eq for PartitionKey {}

/// A partition key over borrowed values, for lookups (see [`PartitionKey::lookup`]).
#[derive(Debug, Clone, Copy)]
pub struct PartitionKeyRef<'a> {
    spec_id: i32,
    values: &'a [Option<Literal>],
}

impl<'a> PartitionKeyRef<'a> {
    /// The form `HashMap<PartitionKey, _>::get` accepts.
    pub fn as_dyn(&self) -> &(dyn AsPartitionKey + 'a) {
        self
    }
}

/// What a partition key is made of; implemented by [`PartitionKey`] and
/// [`PartitionKeyRef`] so that maps keyed by the first can be queried with the second.
pub trait AsPartitionKey {
    fn spec_id(&self) -> i32;
    fn values(&self) -> &[Option<Literal>];
}

impl AsPartitionKey for PartitionKey {
    fn spec_id(&self) -> i32 {
        self.spec_id
    }

    fn values(&self) -> &[Option<Literal>] {
        &self.values
    }
}

impl AsPartitionKey for PartitionKeyRef<'_> {
    fn spec_id(&self) -> i32 {
        self.spec_id
    }

    fn values(&self) -> &[Option<Literal>] {
        self.values
    }
}

impl<'a> Borrow<dyn AsPartitionKey + 'a> for PartitionKey {
    fn borrow(&self) -> &(dyn AsPartitionKey + 'a) {
        self
    }
}

// Must hash exactly as `PartitionKey` does (the contract of `Borrow`).
impl Hash for dyn AsPartitionKey + '_ {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_tuple(self.spec_id(), self.values(), state);
    }
}

impl PartialEq for dyn AsPartitionKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        tuples_eq(
            self.spec_id(),
            self.values(),
            other.spec_id(),
            other.values(),
        )
    }
}

impl Eq for dyn AsPartitionKey + '_ {}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;
    use std::collections::HashMap;

    fn hash_of<T: Hash + ?Sized>(v: &T) -> u64 {
        let mut h = DefaultHasher::new();
        v.hash(&mut h);
        h.finish()
    }

    fn key(spec: i32, values: Vec<Option<Literal>>) -> PartitionKey {
        PartitionKey::new(spec, values).unwrap()
    }

    #[test]
    fn nan_payloads_are_one_value_but_signed_zeros_are_two() {
        let quiet = f64::NAN;
        let other_nan = f64::from_bits(0x7ff0_0000_0000_0001);
        let negative_nan = f64::from_bits(0xfff8_0000_0000_0000);
        assert!(other_nan.is_nan() && negative_nan.is_nan());
        let a = key(1, vec![Some(Literal::Double(quiet))]);
        for nan in [other_nan, negative_nan] {
            let b = key(1, vec![Some(Literal::Double(nan))]);
            assert_eq!(a, b);
            assert_eq!(hash_of(&a), hash_of(&b));
        }
        let f_nan = key(1, vec![Some(Literal::Float(f32::from_bits(0x7f80_0001)))]);
        assert_eq!(f_nan, key(1, vec![Some(Literal::Float(f32::NAN))]));
        assert_ne!(
            key(1, vec![Some(Literal::Double(0.0))]),
            key(1, vec![Some(Literal::Double(-0.0))])
        );
        assert_ne!(
            key(1, vec![Some(Literal::Float(0.0))]),
            key(1, vec![Some(Literal::Float(-0.0))])
        );
    }

    #[test]
    fn spec_id_nulls_and_kinds() {
        let a = key(1, vec![Some(Literal::Int(3)), None]);
        assert_eq!(a, key(1, vec![Some(Literal::Int(3)), None]));
        assert_ne!(a, key(2, vec![Some(Literal::Int(3)), None]));
        assert_ne!(
            a,
            key(1, vec![Some(Literal::Int(3)), Some(Literal::Int(0))])
        );
        assert_ne!(a, key(1, vec![Some(Literal::Int(3))]));
        // promotion: int and long, float and double
        assert_eq!(a, key(1, vec![Some(Literal::Long(3)), None]));
        assert_eq!(
            key(1, vec![Some(Literal::Float(0.1))]),
            key(1, vec![Some(Literal::Double(f64::from(0.1f32)))])
        );
        // other kinds stay apart
        assert_ne!(
            key(1, vec![Some(Literal::Int(3))]),
            key(1, vec![Some(Literal::Date(3))])
        );
        assert_ne!(
            key(1, vec![Some(Literal::Fixed(vec![1]))]),
            key(1, vec![Some(Literal::Binary(vec![1]))])
        );
        assert!(PartitionKey::new(1, vec![Some(Literal::List(vec![]))]).is_err());
    }

    #[test]
    fn borrowed_lookup_finds_owned_keys() {
        let mut m = HashMap::new();
        m.insert(key(4, vec![Some(Literal::String("a".into()))]), 1);
        m.insert(key(4, vec![Some(Literal::Double(f64::NAN))]), 2);
        let a = vec![Some(Literal::String("a".into()))];
        assert_eq!(m.get(PartitionKey::lookup(4, &a).as_dyn()), Some(&1));
        assert_eq!(m.get(PartitionKey::lookup(5, &a).as_dyn()), None);
        let nan = vec![Some(Literal::Double(f64::from_bits(0x7ff0_0000_0000_00ff)))];
        assert_eq!(m.get(PartitionKey::lookup(4, &nan).as_dyn()), Some(&2));
        let owned = key(4, a.clone());
        assert_eq!(
            hash_of(&owned),
            hash_of(PartitionKey::lookup(4, &a).as_dyn())
        );
    }
}
