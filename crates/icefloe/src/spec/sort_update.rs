//! Sort order changes: the fields of a table's next sort order, built from column names
//! and transforms, as Java's `BaseReplaceSortOrder` (a `SortOrder.Builder`) builds them.
//!
//! A replacement is a whole new order, not an edit of the current one. Each field is
//! bound to the current schema when it is added (the column must exist and suit the
//! transform) and the order is checked when it is applied (sources primitive). Unlike
//! partition fields, sort fields may come from inside lists and maps and may repeat.
//!
//! The order id of the result is 1 (0 when no field was added, the unsorted order); the
//! table metadata builder re-uses the id of an equal earlier order or takes the next one.

use super::schema::Schema;
use super::sort::{NullOrder, SortDirection, SortField, SortOrder, UNSORTED_ORDER_ID};
use super::transform::Transform;
use crate::error::{Error, Result};

fn bad(message: impl Into<String>) -> Error {
    Error::invalid_argument(message)
}

/// A sort order being built. Create with [`ReplaceSortOrder::new`], add fields in order
/// with [`ReplaceSortOrder::asc`] / [`ReplaceSortOrder::desc`], then
/// [`ReplaceSortOrder::apply`].
#[derive(Debug, Clone)]
pub struct ReplaceSortOrder {
    schema: Schema,
    fields: Vec<SortField>,
    case_sensitive: bool,
}

impl ReplaceSortOrder {
    /// A new order for a table whose current schema is `schema`.
    pub fn new(schema: &Schema) -> ReplaceSortOrder {
        ReplaceSortOrder {
            schema: schema.clone(),
            fields: Vec::new(),
            case_sensitive: true,
        }
    }

    /// Whether column names given to later calls are matched case-sensitively (default true).
    pub fn case_sensitive(&mut self, case_sensitive: bool) -> &mut Self {
        self.case_sensitive = case_sensitive;
        self
    }

    /// Sorts next by `transform` of column `source`, ascending.
    pub fn asc(
        &mut self,
        source: &str,
        transform: Transform,
        null_order: NullOrder,
    ) -> Result<&mut Self> {
        self.sort_by(source, transform, SortDirection::Asc, null_order)
    }

    /// Sorts next by `transform` of column `source`, descending.
    pub fn desc(
        &mut self,
        source: &str,
        transform: Transform,
        null_order: NullOrder,
    ) -> Result<&mut Self> {
        self.sort_by(source, transform, SortDirection::Desc, null_order)
    }

    /// Sorts next by `transform` of column `source` (a dotted name for nested columns).
    pub fn sort_by(
        &mut self,
        source: &str,
        transform: Transform,
        direction: SortDirection,
        null_order: NullOrder,
    ) -> Result<&mut Self> {
        let field = self
            .schema
            .field_by_name(source, self.case_sensitive)
            .ok_or_else(|| {
                bad(format!(
                    "Cannot find field '{source}' in schema {}",
                    self.schema.schema_id()
                ))
            })?;
        // identity is a bare column reference, which Java binds without a type check
        // (the check comes when the result is applied)
        if transform != Transform::Identity && !transform.can_transform(&field.field_type) {
            return Err(bad(format!(
                "Cannot bind: {transform} cannot transform {} values from '{source}'",
                field.field_type
            )));
        }
        self.fields
            .push(SortField::new(field.id, transform, direction, null_order));
        Ok(self)
    }

    /// The new order: id 1 with the fields added, or the unsorted order when none were.
    pub fn apply(&self) -> Result<SortOrder> {
        if self.fields.is_empty() {
            return Ok(SortOrder::unsorted());
        }
        for f in &self.fields {
            let source = self.schema.field_by_id(f.source_id()).ok_or_else(|| {
                bad(format!(
                    "Cannot find source column for sort field: {}({})",
                    f.transform,
                    f.source_id()
                ))
            })?;
            // neither void nor a bare column (identity) was type-checked when bound
            if !source.field_type.is_primitive() {
                return Err(bad(format!(
                    "Cannot sort by non-primitive source field: {}",
                    source.field_type
                )));
            }
            if !f.transform.can_transform(&source.field_type) {
                return Err(bad(format!(
                    "Invalid source type {} for transform: {}",
                    source.field_type, f.transform
                )));
            }
        }
        SortOrder::new(UNSORTED_ORDER_ID + 1, self.fields.clone())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Schema {
        let v = json!({
        "type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "required": true, "type": "long"},
            {"id": 2, "name": "Data", "required": false, "type": "string"},
            {"id": 3, "name": "ts", "required": false, "type": "timestamptz"},
            {"id": 4, "name": "s", "required": false, "type": {
                "type": "struct", "fields": [
                    {"id": 5, "name": "x", "required": false, "type": "int"}]}},
            {"id": 6, "name": "l", "required": false, "type": {
                "type": "list", "element-id": 7, "element-required": false, "element": {
                    "type": "struct", "fields": [
                        {"id": 8, "name": "y", "required": false, "type": "date"}]}}}]});
        Schema::from_json(&v, "").unwrap()
    }

    #[test]
    fn fields_in_the_order_given_with_direction_and_null_order() {
        let mut r = ReplaceSortOrder::new(&schema());
        r.asc("id", Transform::Bucket(4), NullOrder::NullsFirst)
            .unwrap()
            .desc("ts", Transform::Day, NullOrder::NullsLast)
            .unwrap()
            .asc("s.x", Transform::Identity, NullOrder::NullsLast)
            .unwrap()
            // inside a list is allowed for sorting, and repeats are kept
            .desc("l.y", Transform::Identity, NullOrder::NullsFirst)
            .unwrap()
            .desc("l.y", Transform::Identity, NullOrder::NullsFirst)
            .unwrap();
        let o = r.apply().unwrap();
        assert_eq!(o.order_id, 1);
        let got: Vec<_> = o
            .fields
            .iter()
            .map(|f| {
                (
                    f.source_id(),
                    f.transform.to_string(),
                    f.direction,
                    f.null_order,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    1,
                    "bucket[4]".into(),
                    SortDirection::Asc,
                    NullOrder::NullsFirst
                ),
                (3, "day".into(), SortDirection::Desc, NullOrder::NullsLast),
                (
                    5,
                    "identity".into(),
                    SortDirection::Asc,
                    NullOrder::NullsLast
                ),
                (
                    8,
                    "identity".into(),
                    SortDirection::Desc,
                    NullOrder::NullsFirst
                ),
                (
                    8,
                    "identity".into(),
                    SortDirection::Desc,
                    NullOrder::NullsFirst
                ),
            ]
        );
    }

    #[test]
    fn empty_is_unsorted() {
        let o = ReplaceSortOrder::new(&schema()).apply().unwrap();
        assert!(o.is_unsorted());
        assert_eq!(o.order_id, 0);
    }

    #[test]
    fn names_are_case_sensitive_unless_asked() {
        let mut r = ReplaceSortOrder::new(&schema());
        assert!(r
            .asc("data", Transform::Identity, NullOrder::NullsFirst)
            .is_err());
        r.case_sensitive(false);
        r.asc("data", Transform::Identity, NullOrder::NullsFirst)
            .unwrap();
        assert_eq!(r.apply().unwrap().fields[0].source_id(), 2);
    }

    #[test]
    fn refusals() {
        let mut r = ReplaceSortOrder::new(&schema());
        // unknown column, unsuitable transform, unknown transform
        assert!(r
            .asc("nope", Transform::Identity, NullOrder::NullsFirst)
            .is_err());
        let e = r
            .asc("Data", Transform::Day, NullOrder::NullsFirst)
            .unwrap_err();
        assert!(e.to_string().contains("Cannot bind"), "{e}");
        assert!(r
            .asc(
                "id",
                Transform::Unknown("zorder".into()),
                NullOrder::NullsFirst
            )
            .is_err());
        assert!(r.apply().unwrap().is_unsorted());
        // void and a bare column bind to a struct, but a struct cannot be sorted by
        r.asc("s", Transform::Void, NullOrder::NullsFirst).unwrap();
        let e = r.apply().unwrap_err();
        assert!(e.to_string().contains("non-primitive"), "{e}");
        let mut r = ReplaceSortOrder::new(&schema());
        r.asc("s", Transform::Identity, NullOrder::NullsFirst)
            .unwrap();
        assert!(r.apply().is_err());
    }
}
