//! Sort orders ("Sorting") and their JSON form (Appendix C, "Sort Orders").

use std::fmt;

use serde_json::{Map, Value};

use super::json::{index, Obj};
use super::partition::{read_source_ids, read_transform, write_source_ids};
use super::transform::Transform;
use crate::error::{Error, Result};

/// The order id reserved for the unsorted order.
pub const UNSORTED_ORDER_ID: i32 = 0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortDirection {
    Asc,
    Desc,
}

impl SortDirection {
    pub fn as_str(&self) -> &'static str {
        match self {
            SortDirection::Asc => "asc",
            SortDirection::Desc => "desc",
        }
    }

    /// Parses `asc`/`desc`, ignoring case as the reference implementation does.
    pub fn parse(s: &str) -> Option<SortDirection> {
        match s.to_ascii_lowercase().as_str() {
            "asc" => Some(SortDirection::Asc),
            "desc" => Some(SortDirection::Desc),
            _ => None,
        }
    }
}

impl fmt::Display for SortDirection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NullOrder {
    NullsFirst,
    NullsLast,
}

impl NullOrder {
    pub fn as_str(&self) -> &'static str {
        match self {
            NullOrder::NullsFirst => "nulls-first",
            NullOrder::NullsLast => "nulls-last",
        }
    }

    /// Parses `nulls-first`/`nulls-last`, ignoring case.
    pub fn parse(s: &str) -> Option<NullOrder> {
        match s.to_ascii_lowercase().as_str() {
            "nulls-first" => Some(NullOrder::NullsFirst),
            "nulls-last" => Some(NullOrder::NullsLast),
            _ => None,
        }
    }
}

impl fmt::Display for NullOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One field of a sort order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortField {
    pub source_ids: Vec<i32>,
    pub transform: Transform,
    pub direction: SortDirection,
    pub null_order: NullOrder,
}

impl SortField {
    pub fn new(
        source_id: i32,
        transform: Transform,
        direction: SortDirection,
        null_order: NullOrder,
    ) -> Self {
        SortField {
            source_ids: vec![source_id],
            transform,
            direction,
            null_order,
        }
    }

    pub fn source_id(&self) -> i32 {
        self.source_ids.first().copied().unwrap_or_default()
    }

    pub fn from_json(value: &Value, path: &str) -> Result<SortField> {
        let o = Obj::new(value, path)?;
        let transform = read_transform(&o)?;
        let source_ids = read_source_ids(&o)?;
        let d = o.req_str("direction")?;
        let direction = SortDirection::parse(d).ok_or_else(|| {
            Error::invalid_metadata(
                o.field("direction"),
                format!("'{d}' is not a sort direction (asc or desc)"),
            )
        })?;
        let n = o.req_str("null-order")?;
        let null_order = NullOrder::parse(n).ok_or_else(|| {
            Error::invalid_metadata(
                o.field("null-order"),
                format!("'{n}' is not a null order (nulls-first or nulls-last)"),
            )
        })?;
        Ok(SortField {
            source_ids,
            transform,
            direction,
            null_order,
        })
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("transform".into(), self.transform.to_string().into());
        write_source_ids(&mut m, &self.source_ids);
        m.insert("direction".into(), self.direction.as_str().into());
        m.insert("null-order".into(), self.null_order.as_str().into());
        Value::Object(m)
    }
}

/// A sort order: an id and the fields sorted on, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SortOrder {
    pub order_id: i32,
    pub fields: Vec<SortField>,
}

impl SortOrder {
    /// The unsorted order (id 0, no fields).
    pub fn unsorted() -> SortOrder {
        SortOrder::default()
    }

    /// Builds a sort order, checking that id 0 is used by, and only by, the unsorted order.
    pub fn new(order_id: i32, fields: Vec<SortField>) -> Result<SortOrder> {
        if fields.is_empty() && order_id != UNSORTED_ORDER_ID {
            return Err(Error::invalid_metadata(
                "order-id",
                format!("an unsorted order must have id 0, found {order_id}"),
            ));
        }
        if !fields.is_empty() && order_id == UNSORTED_ORDER_ID {
            return Err(Error::invalid_metadata(
                "order-id",
                "order id 0 is reserved for the unsorted order",
            ));
        }
        Ok(SortOrder { order_id, fields })
    }

    pub fn is_unsorted(&self) -> bool {
        self.fields.is_empty()
    }

    pub fn from_json(value: &Value, path: &str) -> Result<SortOrder> {
        let o = Obj::new(value, path)?;
        let order_id = o.req_i32("order-id")?;
        let items = o.req_array("fields")?;
        let fpath = o.field("fields");
        let fields = items
            .iter()
            .enumerate()
            .map(|(i, v)| SortField::from_json(v, &index(&fpath, i)))
            .collect::<Result<Vec<_>>>()?;
        SortOrder::new(order_id, fields).map_err(|e| e.under(path))
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("order-id".into(), self.order_id.into());
        m.insert(
            "fields".into(),
            Value::Array(self.fields.iter().map(SortField::to_json).collect()),
        );
        Value::Object(m)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The example of Appendix C.
    const EXAMPLE: &str = r#"{"order-id": 1, "fields": [
        {"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-first"},
        {"transform": "bucket[4]", "source-id": 3, "direction": "desc", "null-order": "nulls-last"}]}"#;

    #[test]
    fn spec_example_parses_and_round_trips() {
        let v: Value = serde_json::from_str(EXAMPLE).unwrap();
        let o = SortOrder::from_json(&v, "sort-orders[1]").unwrap();
        assert_eq!(
            o,
            SortOrder::new(
                1,
                vec![
                    SortField::new(
                        2,
                        Transform::Identity,
                        SortDirection::Asc,
                        NullOrder::NullsFirst
                    ),
                    SortField::new(
                        3,
                        Transform::Bucket(4),
                        SortDirection::Desc,
                        NullOrder::NullsLast
                    ),
                ]
            )
            .unwrap()
        );
        assert_eq!(o.to_json(), v);
        assert_eq!(SortOrder::from_json(&o.to_json(), "x").unwrap(), o);
    }

    #[test]
    fn unsorted_is_id_zero() {
        let v = serde_json::json!({"order-id": 0, "fields": []});
        assert!(SortOrder::from_json(&v, "s").unwrap().is_unsorted());
        let v = serde_json::json!({"order-id": 3, "fields": []});
        let e = SortOrder::from_json(&v, "sort-orders[0]").unwrap_err();
        assert_eq!(e.location().unwrap().field, "sort-orders[0].order-id");
        let v = serde_json::json!({"order-id": 0, "fields": [
            {"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-first"}]});
        assert!(SortOrder::from_json(&v, "s").is_err());
    }

    #[test]
    fn bad_values_name_their_path() {
        let v = serde_json::json!({"order-id": 1, "fields": [
            {"transform": "identity", "source-id": 2, "direction": "up", "null-order": "nulls-first"}]});
        let e = SortOrder::from_json(&v, "sort-orders[0]").unwrap_err();
        assert_eq!(
            e.location().unwrap().field,
            "sort-orders[0].fields[0].direction"
        );
        let v = serde_json::json!({"order-id": 1, "fields": [
            {"transform": "identity", "source-id": 2, "direction": "asc"}]});
        let e = SortOrder::from_json(&v, "s").unwrap_err();
        assert_eq!(e.location().unwrap().field, "s.fields[0].null-order");
        let v = serde_json::json!({"order-id": 1, "fields": [
            {"transform": "zorder", "source-ids": [2, 3], "direction": "DESC", "null-order": "NULLS-LAST"}]});
        let o = SortOrder::from_json(&v, "s").unwrap();
        assert_eq!(o.fields[0].source_ids, vec![2, 3]);
        assert_eq!(o.fields[0].direction, SortDirection::Desc);
        assert_eq!(
            o.to_json()["fields"][0]["source-ids"],
            serde_json::json!([2, 3])
        );
    }
}
