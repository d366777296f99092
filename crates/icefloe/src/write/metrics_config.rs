//! Which metrics a data file records per column: the `write.metadata.metrics.*` table
//! properties, read as Java's `MetricsConfig.from(properties, schema, sortOrder)` reads them.

use std::collections::{HashMap, HashSet};

use crate::spec::sort::SortOrder;
use crate::spec::{Schema, StructType, Type};

pub const DEFAULT_WRITE_METRICS_MODE: &str = "write.metadata.metrics.default";
pub const METRICS_MODE_COLUMN_CONF_PREFIX: &str = "write.metadata.metrics.column.";
pub const METRICS_MAX_INFERRED_COLUMN_DEFAULTS: &str =
    "write.metadata.metrics.max-inferred-column-defaults";
pub const METRICS_MAX_INFERRED_COLUMN_DEFAULTS_DEFAULT: usize = 100;

/// What is recorded for one column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsMode {
    /// Nothing, not even the column size.
    None,
    /// Value, null and NaN counts.
    Counts,
    /// Counts, and bounds with strings and binary cut to this many characters / bytes.
    Truncate(u32),
    /// Counts and exact bounds.
    Full,
}

/// The default: `truncate(16)`.
pub const DEFAULT_MODE: MetricsMode = MetricsMode::Truncate(16);

impl MetricsMode {
    /// Parses `none`, `counts`, `full` or `truncate(N)` (N > 0, case-insensitive), as
    /// `MetricsModes.fromString`; `None` for anything else.
    pub fn parse(s: &str) -> Option<MetricsMode> {
        let lower = s.to_ascii_lowercase();
        match lower.as_str() {
            "none" => return Some(MetricsMode::None),
            "counts" => return Some(MetricsMode::Counts),
            "full" => return Some(MetricsMode::Full),
            _ => {}
        }
        let digits = lower.strip_prefix("truncate(")?.strip_suffix(')')?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // Java parses an int: larger values are invalid, and so is 0
        let n: i32 = digits.parse().ok()?;
        (n > 0).then_some(MetricsMode::Truncate(n as u32))
    }

    /// Whether bounds are kept.
    pub fn has_bounds(&self) -> bool {
        matches!(self, MetricsMode::Truncate(_) | MetricsMode::Full)
    }
}

/// Metrics modes by column (full column names, as `Schema::name_by_id` gives them) with a
/// default for the others.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsConfig {
    column_modes: HashMap<String, MetricsMode>,
    default_mode: MetricsMode,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            column_modes: HashMap::new(),
            default_mode: DEFAULT_MODE,
        }
    }
}

impl MetricsConfig {
    /// The config of a table: its properties, schema and sort order (Java's
    /// `MetricsConfig.forTable`). Invalid modes fall back to the default mode, as in Java,
    /// which logs and ignores them. Without a schema (Java's `fromProperties`) the inferred
    /// column limit does not apply.
    pub fn from_properties(
        properties: &[(String, String)],
        schema: Option<&Schema>,
        order: Option<&SortOrder>,
    ) -> MetricsConfig {
        let prop = |key: &str| {
            properties
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        let max_inferred = prop(METRICS_MAX_INFERRED_COLUMN_DEFAULTS)
            .and_then(|v| v.trim().parse::<i64>().ok())
            .filter(|v| *v >= 0)
            .map_or(METRICS_MAX_INFERRED_COLUMN_DEFAULTS_DEFAULT, |v| v as usize);
        let mut column_modes = HashMap::new();
        let default_mode = match (prop(DEFAULT_WRITE_METRICS_MODE), schema) {
            (Some(configured), _) => MetricsMode::parse(configured).unwrap_or(DEFAULT_MODE),
            (None, None) => DEFAULT_MODE,
            (None, Some(schema)) => {
                if projected_id_count(schema.as_struct()) <= max_inferred {
                    DEFAULT_MODE
                } else {
                    // wide tables: the default only for the first columns, none for the rest
                    for id in limit_field_ids(schema.as_struct(), max_inferred) {
                        if let Some(name) = schema.name_by_id(id) {
                            column_modes.insert(name.to_string(), DEFAULT_MODE);
                        }
                    }
                    MetricsMode::None
                }
            }
        };
        // sorted columns get bounds even when the default has none
        if let (Some(order), Some(schema)) = (order, schema) {
            let sorted_mode = match default_mode {
                MetricsMode::None | MetricsMode::Counts => MetricsMode::Truncate(16),
                other => other,
            };
            for f in &order.fields {
                if !f.transform.preserves_order() {
                    continue;
                }
                if let Some(name) = f.source_ids.first().and_then(|id| schema.name_by_id(*id)) {
                    column_modes.insert(name.to_string(), sorted_mode);
                }
            }
        }
        for (key, value) in properties {
            if let Some(column) = key.strip_prefix(METRICS_MODE_COLUMN_CONF_PREFIX) {
                let mode = MetricsMode::parse(value).unwrap_or(default_mode);
                column_modes.insert(column.to_string(), mode);
            }
        }
        MetricsConfig {
            column_modes,
            default_mode,
        }
    }

    /// The mode of a column by its full name.
    pub fn column_mode(&self, column: &str) -> MetricsMode {
        self.column_modes
            .get(column)
            .copied()
            .unwrap_or(self.default_mode)
    }

    /// The mode of a field of `schema` by id (the default for an id not in the schema).
    pub fn mode_for(&self, schema: &Schema, field_id: i32) -> MetricsMode {
        match schema.name_by_id(field_id) {
            Some(name) => self.column_mode(name),
            None => self.default_mode,
        }
    }

    pub fn default_mode(&self) -> MetricsMode {
        self.default_mode
    }
}

/// The number of ids Java's `TypeUtil.getProjectedIds` counts: primitive and struct fields,
/// list elements and map keys and values whose element / value is not nested.
fn projected_id_count(s: &StructType) -> usize {
    fn visit_struct(s: &StructType, n: &mut usize) {
        for f in &s.fields {
            if matches!(
                f.field_type,
                Type::Primitive(_) | Type::Struct(_) | Type::Variant
            ) {
                *n += 1;
            }
            visit(&f.field_type, n);
        }
    }
    fn visit(t: &Type, n: &mut usize) {
        match t {
            Type::Struct(s) => visit_struct(s, n),
            // Java adds the element (key and value) ids when the element (value) is not
            // a struct, list or map
            Type::List(l) => {
                if !l.element_field.field_type.is_nested() {
                    *n += 1;
                }
                visit(&l.element_field.field_type, n);
            }
            Type::Map(m) => {
                if !m.value_field.field_type.is_nested() {
                    *n += 2;
                }
                visit(&m.key_field.field_type, n);
                visit(&m.value_field.field_type, n);
            }
            _ => {}
        }
    }
    let mut n = 0;
    visit_struct(s, &mut n);
    n
}

/// The first `limit` primitive field ids in Java's `MetricsConfig.limitFieldIds` order: a
/// struct's own primitive fields first, then its children, depth first.
fn limit_field_ids(s: &StructType, limit: usize) -> HashSet<i32> {
    fn visit_struct(s: &StructType, ids: &mut Vec<i32>, limit: usize) {
        for f in &s.fields {
            if ids.len() >= limit {
                break;
            }
            if f.field_type.is_primitive() {
                ids.push(f.id);
            }
        }
        for f in &s.fields {
            if ids.len() >= limit {
                break;
            }
            visit(&f.field_type, ids, limit);
        }
    }
    fn visit(t: &Type, ids: &mut Vec<i32>, limit: usize) {
        match t {
            Type::Struct(s) => visit_struct(s, ids, limit),
            Type::List(l) => {
                let e = &l.element_field;
                if ids.len() < limit && e.field_type.is_primitive() {
                    ids.push(e.id);
                }
                visit(&e.field_type, ids, limit);
            }
            Type::Map(m) => {
                let (k, v) = (&m.key_field, &m.value_field);
                if ids.len() < limit && k.field_type.is_primitive() {
                    ids.push(k.id);
                }
                if ids.len() < limit && v.field_type.is_primitive() {
                    ids.push(v.id);
                }
                visit(&k.field_type, ids, limit);
                visit(&v.field_type, ids, limit);
            }
            _ => {}
        }
    }
    let mut ids = Vec::new();
    visit_struct(s, &mut ids, limit);
    ids.into_iter().collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::spec::sort::{NullOrder, SortDirection, SortField};
    use crate::spec::{ListType, NestedField, PrimitiveType as P, Transform};

    fn props(kv: &[(&str, &str)]) -> Vec<(String, String)> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn schema() -> Schema {
        Schema::new(
            0,
            vec![
                NestedField::required(1, "id", P::Long.into()),
                NestedField::optional(2, "name", P::String.into()),
                NestedField::optional(
                    3,
                    "tags",
                    Type::List(std::sync::Arc::new(ListType::new(
                        4,
                        false,
                        P::String.into(),
                    ))),
                ),
            ],
            vec![],
        )
        .unwrap()
    }

    #[test]
    fn parses_modes_as_java() {
        assert_eq!(MetricsMode::parse("None"), Some(MetricsMode::None));
        assert_eq!(MetricsMode::parse("COUNTS"), Some(MetricsMode::Counts));
        assert_eq!(MetricsMode::parse("full"), Some(MetricsMode::Full));
        assert_eq!(
            MetricsMode::parse("Truncate(8)"),
            Some(MetricsMode::Truncate(8))
        );
        for bad in [
            "truncate(0)",
            "truncate()",
            "truncate(-1)",
            "truncate(99999999999)",
            "x",
        ] {
            assert_eq!(MetricsMode::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn defaults_overrides_and_fallbacks() {
        let s = schema();
        let c = MetricsConfig::from_properties(&[], Some(&s), None);
        assert_eq!(c.mode_for(&s, 2), MetricsMode::Truncate(16));
        let c = MetricsConfig::from_properties(
            &props(&[
                ("write.metadata.metrics.default", "counts"),
                ("write.metadata.metrics.column.name", "full"),
                ("write.metadata.metrics.column.tags.element", "bogus"),
            ]),
            Some(&s),
            None,
        );
        assert_eq!(c.mode_for(&s, 1), MetricsMode::Counts);
        assert_eq!(c.mode_for(&s, 2), MetricsMode::Full);
        // an invalid column mode falls back to the default mode
        assert_eq!(c.mode_for(&s, 4), MetricsMode::Counts);
        // an invalid default falls back to truncate(16)
        let c = MetricsConfig::from_properties(
            &props(&[("write.metadata.metrics.default", "truncate(0)")]),
            Some(&s),
            None,
        );
        assert_eq!(c.default_mode(), MetricsMode::Truncate(16));
    }

    #[test]
    fn sorted_columns_are_promoted() {
        let s = schema();
        let order = SortOrder {
            order_id: 1,
            fields: vec![SortField::new(
                1,
                Transform::Identity,
                SortDirection::Asc,
                NullOrder::NullsFirst,
            )],
        };
        let c = MetricsConfig::from_properties(
            &props(&[("write.metadata.metrics.default", "none")]),
            Some(&s),
            Some(&order),
        );
        assert_eq!(c.mode_for(&s, 1), MetricsMode::Truncate(16));
        assert_eq!(c.mode_for(&s, 2), MetricsMode::None);
    }

    #[test]
    fn wide_tables_limit_inferred_defaults() {
        let fields: Vec<NestedField> = (1..=5)
            .map(|i| NestedField::optional(i, format!("c{i}"), P::Int.into()))
            .collect();
        let s = Schema::new(0, fields, vec![]).unwrap();
        let c = MetricsConfig::from_properties(
            &props(&[("write.metadata.metrics.max-inferred-column-defaults", "3")]),
            Some(&s),
            None,
        );
        let modes: Vec<_> = (1..=5).map(|i| c.mode_for(&s, i)).collect();
        assert_eq!(
            modes,
            vec![
                MetricsMode::Truncate(16),
                MetricsMode::Truncate(16),
                MetricsMode::Truncate(16),
                MetricsMode::None,
                MetricsMode::None
            ]
        );
        // a configured default disables the limit
        let c = MetricsConfig::from_properties(
            &props(&[
                ("write.metadata.metrics.max-inferred-column-defaults", "3"),
                ("write.metadata.metrics.default", "full"),
            ]),
            Some(&s),
            None,
        );
        assert_eq!(c.mode_for(&s, 5), MetricsMode::Full);
        // the list element counts towards the limit, the list itself does not (Java)
        let nested = schema();
        assert_eq!(projected_id_count(nested.as_struct()), 3);
    }
}
