//! Server-side printing: the `meta.k8s.io/v1` Table that `kubectl get` asks for.
//!
//! Built-in kinds print the columns kubernetes' `pkg/printers/internalversion/printers.go` gives
//! them (`AddHandlers`), ported kind by kind: the pod in [`pod`], the rest of the core group in
//! [`core_api`], the controllers' kinds in [`workloads`], the CSI storage kinds in [`storage`], everything else in [`other`]. A real server
//! always asks the printers for the wide output (`printers.GenerateOptions{Wide: true}` in
//! `pkg/printers/storage`), so every row carries the priority-1 cells too and `kubectl get -o wide`
//! only shows more of them. Kinds `printers.go` has no handler for (Role, ClusterRole,
//! LimitRange, CustomResourceDefinition, ...) print the default table convertor's `Name` and
//! `Created At` (`rest.NewDefaultTableConvertor`); custom resources their CRD's
//! `additionalPrinterColumns`.
//!
//! Cells never read the clock: ages are computed against the `now` that [`to_table`] is given.

mod core_api;
mod other;
mod pod;
mod storage;
mod workloads;

use jiff::Timestamp;
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::http::negotiation::Negotiated;
use crate::resource::ResourceInfo;
use crate::rules::selectors::{LabelSelector, Operator};

/// The `meta.k8s.io` version (`v1` or `v1beta1`) of the Table a request's negotiated answer is
/// (`application/json;as=Table;g=meta.k8s.io;v=v1`, as `kubectl get` asks), if it is one.
pub fn wants_table(negotiated: &Negotiated) -> Option<&'static str> {
    match negotiated.transform_to("Table")? {
        "v1beta1" => Some("v1beta1"),
        _ => Some("v1"),
    }
}

/// What a Table row carries as its `object` (`TableOptions.includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    /// The object's metadata as `PartialObjectMetadata` (the default).
    #[default]
    Metadata,
    /// The whole object (`kubectl get --sort-by` asks for it).
    Object,
    /// Nothing.
    None,
}

impl IncludeObject {
    /// The `includeObject` query parameter, read as `asTable` reads it: empty is `Metadata`,
    /// an unknown value a `400`.
    pub fn parse(value: Option<&str>) -> Result<Self, ApiError> {
        match value.unwrap_or_default() {
            "" | "Metadata" => Ok(Self::Metadata),
            "Object" => Ok(Self::Object),
            "None" => Ok(Self::None),
            other => Err(ApiError::bad_request(format!(
                "unrecognized includeObject value: {other:?}"
            ))),
        }
    }
}

/// The server's time, parsed once per table; `None` when it does not parse (every age is then
/// `<unknown>`).
type Now = Option<Timestamp>;

/// One column (a `metav1.TableColumnDefinition`) and how to compute its cell.
struct Column {
    name: String,
    kind: &'static str,
    format: &'static str,
    priority: i64,
    description: String,
    cell: Cell,
}

impl Column {
    /// `Priority: 1`: a column `kubectl get` shows only with `-o wide`.
    fn wide(mut self) -> Self {
        self.priority = 1;
        self
    }
}

/// Reads an optional integer from the object.
type ReadInteger = Box<dyn Fn(&Value) -> Option<i64>>;

/// Prints a cell that depends on the server's time.
type PrintTimed = Box<dyn Fn(&Value, Now) -> String>;

/// How a cell is computed from the object.
enum Cell {
    /// `metadata.name`.
    Name,
    /// `translateTimestampSince(obj.CreationTimestamp)`.
    Age,
    /// The default table convertor's `Created At`: the creation time in RFC 3339.
    CreatedAt,
    /// A CRD column's JSON path, printed as found (`null` when absent).
    Path(String),
    /// A CRD `date` column: how long ago the timestamp at the path was.
    Date(String),
    /// A string computed from the object.
    Text(Box<dyn Fn(&Value) -> String>),
    /// A JSON value computed from the object (booleans, numbers).
    Computed(Box<dyn Fn(&Value) -> Value>),
    /// An integer read from the object, 0 when absent (Go's zero value).
    Integer(ReadInteger),
    /// A string that depends on the server's time (ages, durations).
    Timed(PrintTimed),
}

/// A [`Cell::Text`].
fn text(f: impl Fn(&Value) -> String + 'static) -> Cell {
    Cell::Text(Box::new(f))
}

/// A [`Cell::Computed`].
fn computed(f: impl Fn(&Value) -> Value + 'static) -> Cell {
    Cell::Computed(Box::new(f))
}

/// A [`Cell::Integer`].
fn integer(f: impl Fn(&Value) -> Option<i64> + 'static) -> Cell {
    Cell::Integer(Box::new(f))
}

/// A [`Cell::Timed`].
fn timed(f: impl Fn(&Value, Now) -> String + 'static) -> Cell {
    Cell::Timed(Box::new(f))
}

/// `metav1.ObjectMeta{}.SwaggerDoc()["name"]`.
const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// `metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]`.
const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// The description of every `Containers` column.
const CONTAINERS_DESCRIPTION: &str = "Names of each container in the template.";

/// The description of every `Images` column.
const IMAGES_DESCRIPTION: &str = "Images referenced by each container in the template.";

/// A column of type `kind`; the one named `Name` has the `name` format.
fn col(name: &str, kind: &'static str, description: &str, cell: Cell) -> Column {
    Column {
        name: name.into(),
        kind,
        format: if name == "Name" { "name" } else { "" },
        priority: 0,
        description: description.into(),
        cell,
    }
}

/// The `Name` column every kind starts with.
fn name_col() -> Column {
    col("Name", "string", NAME_DESCRIPTION, Cell::Name)
}

/// The `Age` column.
fn age_col() -> Column {
    col("Age", "string", CREATION_TIMESTAMP_DESCRIPTION, Cell::Age)
}

/// An `integer` column read from the object (absent counts as 0).
fn int_col(
    name: &str,
    description: &str,
    read: impl Fn(&Value) -> Option<i64> + 'static,
) -> Column {
    col(name, "integer", description, integer(read))
}

/// A column declared `string` whose cells are integers (`int64(len(obj.Data))` and the like;
/// absent counts as 0).
fn int_string_col(name: &str, description: &str, read: fn(&Value) -> i64) -> Column {
    col(
        name,
        "string",
        description,
        computed(move |o| json!(read(o))),
    )
}

/// The `Containers` and `Images` columns of a pod template whose containers are at the JSON
/// pointer `containers` (`layoutContainerCells`); the workloads make them wide, the pod
/// template does not.
fn container_cols(containers: &'static str) -> [Column; 2] {
    [
        col(
            "Containers",
            "string",
            CONTAINERS_DESCRIPTION,
            text(move |o| container_field(o.pointer(containers), "name")),
        ),
        col(
            "Images",
            "string",
            IMAGES_DESCRIPTION,
            text(move |o| container_field(o.pointer(containers), "image")),
        ),
    ]
}

/// One field of each container, comma-joined (`layoutContainerCells`).
fn container_field(containers: Option<&Value>, field: &str) -> String {
    containers
        .map(arr)
        .unwrap_or_default()
        .iter()
        .map(|c| str_of(&c[field]))
        .collect::<Vec<_>>()
        .join(",")
}

/// The columns of a CRD's custom resources: `Name`, then its `additionalPrinterColumns` (or
/// `Age` when it declares none).
fn custom_columns(info: &ResourceInfo) -> Vec<Column> {
    let mut cols = vec![name_col()];
    if info.additional_printer_columns.is_empty() {
        cols.push(age_col());
    }
    for c in &info.additional_printer_columns {
        let path = c["jsonPath"].as_str().unwrap_or_default().to_string();
        let (kind, cell) = match c["type"].as_str() {
            Some("integer") => ("integer", Cell::Path(path)),
            Some("number") => ("number", Cell::Path(path)),
            Some("boolean") => ("boolean", Cell::Path(path)),
            Some("date") => ("string", Cell::Date(path)),
            _ => ("string", Cell::Path(path)),
        };
        cols.push(Column {
            name: c["name"].as_str().unwrap_or_default().to_string(),
            kind,
            format: "",
            priority: c["priority"].as_i64().unwrap_or(0),
            description: c["description"].as_str().unwrap_or_default().to_string(),
            cell,
        });
    }
    cols
}

/// The default table convertor (`rest.NewDefaultTableConvertor`): `Name` and `Created At`.
fn default_columns() -> Vec<Column> {
    vec![
        name_col(),
        col(
            "Created At",
            "date",
            CREATION_TIMESTAMP_DESCRIPTION,
            Cell::CreatedAt,
        ),
    ]
}

fn columns_for(info: &ResourceInfo) -> Vec<Column> {
    if info.custom {
        return custom_columns(info);
    }
    let (group, kind) = (info.group.as_str(), info.kind.as_str());
    core_api::columns(group, kind)
        .or_else(|| workloads::columns(group, kind))
        .or_else(|| storage::columns(group, kind))
        .or_else(|| other::columns(group, kind))
        .unwrap_or_else(default_columns)
}

/// The row's `conditions` (only a finished pod has one, `podSuccessConditions` /
/// `podFailedConditions`).
fn row_conditions(info: &ResourceInfo, object: &Value) -> Option<Value> {
    if info.custom || !info.group.is_empty() || info.kind != "Pod" {
        return None;
    }
    pod::row_conditions(object)
}

/// The string at `v`, empty when absent or not a string (Go's zero value).
fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// The integer at `v`, 0 when absent.
fn int_of(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// The array at `v`, empty when absent.
fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// `s`, or `<none>` when empty.
fn or_none(s: &str) -> String {
    if s.is_empty() {
        "<none>".into()
    } else {
        s.into()
    }
}

/// The string at `v`, or `<none>` when the (pointer) field is absent.
fn pointer_or_none(v: &Value) -> String {
    if v.is_null() {
        "<none>".into()
    } else {
        str_of(v).into()
    }
}

/// The string at `v`, or `<unset>` when the (pointer) field is absent.
fn or_unset(v: &Value) -> String {
    if v.is_null() {
        "<unset>".into()
    } else {
        str_of(v).into()
    }
}

/// `printBool`.
fn print_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// `labels.FormatLabels`: the label set's string, `<none>` when there are none.
fn format_labels(labels: &Value) -> String {
    or_none(&crate::rules::selector::format_label_set(labels))
}

/// `metav1.LabelSelectorAsSelector(selector).String()`: requirements sorted by key, `k=v`,
/// `k in (a,b)`, `k notin (a)`, `k`, `!k`; empty for a `null` (selects nothing) or empty
/// selector; `None` when the selector does not convert. (Duplicate values of an expression print
/// once.)
fn label_selector_string(selector: &Value) -> Option<String> {
    let parsed = LabelSelector::from_label_selector_json(selector).ok()?;
    let terms: Vec<String> = parsed
        .requirements
        .iter()
        .map(|r| {
            let values = r.values.join(",");
            match r.operator {
                Operator::Exists => r.key.clone(),
                Operator::DoesNotExist => format!("!{}", r.key),
                Operator::In => format!("{} in ({values})", r.key),
                Operator::NotIn => format!("{} notin ({values})", r.key),
                Operator::Equals => format!("{}={values}", r.key),
                Operator::DoubleEquals => format!("{}=={values}", r.key),
                Operator::NotEquals => format!("{}!={values}", r.key),
                Operator::GreaterThan => format!("{}>{values}", r.key),
                Operator::LessThan => format!("{}<{values}", r.key),
            }
        })
        .collect();
    Some(terms.join(","))
}

/// `metav1.FormatLabelSelector`: the selector's string, `<none>` when it is empty, `<error>` when
/// it does not convert.
fn format_label_selector(selector: &Value) -> String {
    match label_selector_string(selector) {
        Some(s) => or_none(&s),
        None => "<error>".into(),
    }
}

/// A timestamp field, `None` when absent or not a timestamp (Go's zero `metav1.Time`).
fn timestamp(v: &Value) -> Option<Timestamp> {
    v.as_str()?.parse().ok()
}

/// `translateTimestampSince` of a known time.
fn since_time(t: Timestamp, now: Now) -> String {
    match now {
        Some(now) => human_duration(now.duration_since(t).as_secs()),
        None => "<unknown>".into(),
    }
}

/// `translateTimestampSince`: how long ago the timestamp at `v` was, `<unknown>` when absent.
fn since(v: &Value, now: Now) -> String {
    match timestamp(v) {
        Some(t) => since_time(t, now),
        None => "<unknown>".into(),
    }
}

/// A quantity as `Quantity.String()` prints it; an absent one is the zero quantity, `0`.
fn quantity(v: &Value) -> String {
    crate::rules::Quantity::from_value(v).map_or_else(|| "0".into(), |q| q.canonical())
}

/// Evaluates the simple JSONPath subset printer columns use: `.a.b`, `.a[0].b`,
/// `.a[?(@.type=="Ready")].status`.
pub fn json_path<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    let mut current = object;
    let mut rest = path.trim().trim_start_matches('{').trim_end_matches('}');
    rest = rest.strip_prefix('.').unwrap_or(rest);
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let inner = &after[..end];
            rest = after[end + 1..].trim_start_matches('.');
            let items = current.as_array()?;
            if let Some(filter) = inner.strip_prefix("?(@.").and_then(|f| f.strip_suffix(')')) {
                let (field, want) = filter.split_once("==")?;
                let want = want.trim().trim_matches('"').trim_matches('\'');
                current = items
                    .iter()
                    .find(|item| item[field.trim()].as_str() == Some(want))?;
            } else {
                current = items.get(inner.parse::<usize>().ok()?)?;
            }
            continue;
        }
        // A field name runs to the next unescaped `.` or `[`; `\.` is a literal dot, as in
        // `.metadata.labels.node\.kubernetes\.io/instance-type`.
        let mut name = String::new();
        let mut end = rest.len();
        let mut chars = rest.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        name.push(escaped);
                    }
                }
                '.' | '[' => {
                    end = i;
                    break;
                }
                _ => name.push(c),
            }
        }
        current = current.get(name.as_str())?;
        rest = rest[end..].trim_start_matches('.');
    }
    Some(current)
}

/// A human-readable age, as kubectl's `duration.HumanDuration` prints it.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    let s = seconds.max(0);
    let (m, h, d) = (s / 60, s / 3600, s / 86400);
    if s < 120 {
        format!("{s}s")
    } else if m < 10 {
        if s % 60 == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{}s", s % 60)
        }
    } else if m < 180 {
        format!("{m}m")
    } else if h < 8 {
        if m % 60 == 0 {
            format!("{h}h")
        } else {
            format!("{h}h{}m", m % 60)
        }
    } else if h < 48 {
        format!("{h}h")
    } else if h < 24 * 8 {
        if h % 24 == 0 {
            format!("{d}d")
        } else {
            format!("{d}d{}h", h % 24)
        }
    } else if h < 24 * 365 * 2 {
        format!("{d}d")
    } else if h < 24 * 365 * 8 {
        let y = d / 365;
        if d % 365 == 0 {
            format!("{y}y")
        } else {
            format!("{y}y{}d", d % 365)
        }
    } else {
        format!("{}y", d / 365)
    }
}

/// One cell of `object`.
fn cell(column: &Column, object: &Value, now: Now) -> Value {
    match &column.cell {
        Cell::Name => object["metadata"]["name"].clone(),
        Cell::Age => json!(since(&object["metadata"]["creationTimestamp"], now)),
        Cell::CreatedAt => json!(
            timestamp(&object["metadata"]["creationTimestamp"]).map_or_else(
                || "0001-01-01T00:00:00Z".to_string(),
                crate::registry::semantics::format_time
            )
        ),
        Cell::Path(p) => json_path(object, p).cloned().unwrap_or(Value::Null),
        Cell::Date(p) => json!(since(json_path(object, p).unwrap_or(&Value::Null), now)),
        Cell::Text(f) => json!(f(object)),
        Cell::Computed(f) => f(object),
        Cell::Integer(read) => json!(read(object).unwrap_or(0)),
        Cell::Timed(f) => json!(f(object, now)),
    }
}

/// Renders objects as a Table of `meta.k8s.io/{version}` (its rows' `PartialObjectMetadata`
/// too). `now` is the server's time (for ages); column definitions are included when
/// `include_columns` (watch events after the first leave them out).
pub fn to_table(
    info: &ResourceInfo,
    objects: &[Value],
    now: &str,
    include_columns: bool,
    include: IncludeObject,
    version: &str,
) -> Value {
    let api_version = format!("meta.k8s.io/{version}");
    let columns = columns_for(info);
    let now: Now = now.parse().ok();
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            // The printers read the internal object, the same at every version: a view
            // version's object is read as the stored one.
            let stored;
            let source = if crate::registry::conversion::is_builtin_view(info) {
                stored = crate::registry::conversion::stored_of_builtin_view(info, o);
                &stored
            } else {
                o
            };
            let cells: Vec<Value> = columns.iter().map(|c| cell(c, source, now)).collect();
            let object = match include {
                IncludeObject::Metadata => json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": api_version,
                    "metadata": o["metadata"].clone(),
                }),
                IncludeObject::Object => o.clone(),
                IncludeObject::None => Value::Null,
            };
            let mut row = json!({"cells": cells, "object": object});
            if let Some(conditions) = row_conditions(info, o) {
                row["conditions"] = conditions;
            }
            row
        })
        .collect();
    let definitions: Vec<Value> = if include_columns {
        columns
            .iter()
            .map(|c| {
                json!({"name": c.name, "type": c.kind, "format": c.format,
                       "description": c.description, "priority": c.priority})
            })
            .collect()
    } else {
        Vec::new()
    };
    json!({
        "kind": "Table",
        "apiVersion": api_version,
        "metadata": {},
        "columnDefinitions": definitions,
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[rstest::rstest]
    #[case::default(None, Ok(IncludeObject::Metadata))]
    #[case::metadata(Some("Metadata"), Ok(IncludeObject::Metadata))]
    #[case::object(Some("Object"), Ok(IncludeObject::Object))]
    #[case::none(Some("None"), Ok(IncludeObject::None))]
    #[case::unknown(Some("All"), Err("unrecognized includeObject value: \"All\"".to_string()))]
    fn include_object_is_read_as_as_table_reads_it(
        #[case] value: Option<&str>,
        #[case] expected: Result<IncludeObject, String>,
    ) {
        assert_eq!(IncludeObject::parse(value).map_err(|e| e.message), expected);
    }

    #[test]
    fn rows_carry_what_include_object_asks_for() {
        let info = crate::resource::builtin_resources()
            .into_iter()
            .find(|r| r.plural == "configmaps")
            .unwrap();
        let object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
        let row = |include| {
            to_table(
                &info,
                std::slice::from_ref(&object),
                "",
                true,
                include,
                "v1",
            )["rows"][0]["object"]
                .clone()
        };
        assert_eq!(row(IncludeObject::Object), object);
        assert_eq!(row(IncludeObject::None), Value::Null);
        assert_eq!(
            row(IncludeObject::Metadata)["kind"],
            "PartialObjectMetadata"
        );
    }
    use rstest::rstest;

    /// The table of one object of the built-in resource `resource` (`plural`, or
    /// `plural.group` outside the core group), created a minute before `now`
    /// (`2024-01-01T00:01:00Z`) and named `x` unless the object says otherwise: (column names,
    /// a wide one marked `*`; the row's cells; the whole table).
    pub(super) fn table_of(resource: &str, mut object: Value) -> (Vec<String>, Value, Value) {
        let (plural, group) = resource.split_once('.').unwrap_or((resource, ""));
        let info = crate::resource::builtin_resources()
            .into_iter()
            .find(|r| r.plural == plural && r.group == group)
            .unwrap_or_else(|| panic!("no resource {resource}"));
        if object["metadata"]["name"].is_null() {
            object["metadata"]["name"] = json!("x");
        }
        object["metadata"]["creationTimestamp"] = json!("2024-01-01T00:00:00Z");
        let t = to_table(
            &info,
            &[object],
            "2024-01-01T00:01:00Z",
            true,
            IncludeObject::Metadata,
            "v1",
        );
        let names = t["columnDefinitions"]
            .as_array()
            .map(|cs| {
                cs.iter()
                    .map(|c| {
                        let name = c["name"].as_str().unwrap_or_default();
                        if c["priority"] == 1 {
                            format!("{name}*")
                        } else {
                            name.to_string()
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        (names, t["rows"][0]["cells"].clone(), t)
    }

    #[rstest]
    #[case(0, "0s")]
    #[case(119, "119s")]
    #[case(125, "2m5s")]
    #[case(600, "10m")]
    #[case(3 * 3600 + 60, "3h1m")]
    #[case(30 * 3600, "30h")]
    #[case(3 * 86400 + 3600, "3d1h")]
    #[case(100 * 86400, "100d")]
    fn ages_print_like_kubectl(#[case] secs: i64, #[case] want: &str) {
        assert_eq!(human_duration(secs), want);
    }

    #[test]
    fn json_paths() {
        let o = json!({"status": {"conditions": [{"type": "A", "status": "False"}, {"type": "Ready", "status": "True"}]}, "spec": {"xs": [1, 2]}});
        assert_eq!(
            json_path(&o, ".status.conditions[?(@.type==\"Ready\")].status"),
            Some(&json!("True"))
        );
        assert_eq!(json_path(&o, ".spec.xs[1]"), Some(&json!(2)));
        assert_eq!(json_path(&o, ".spec.nope"), None);
        assert_eq!(json_path(&o, ".spec.xs[9]"), None);
        let labelled = json!({"metadata": {"labels": {"node.kubernetes.io/instance-type": "m5"}}});
        assert_eq!(
            json_path(
                &labelled,
                r".metadata.labels.node\.kubernetes\.io/instance-type"
            ),
            Some(&json!("m5"))
        );
    }

    /// `metav1.FormatLabelSelector`, and the plain `String()` a Deployment prints.
    #[rstest]
    #[case::null(json!(null), "<none>", Some(""))]
    #[case::empty(json!({}), "<none>", Some(""))]
    #[case::labels(json!({"matchLabels": {"b": "2", "a": "1"}}), "a=1,b=2", Some("a=1,b=2"))]
    #[case::expressions(json!({"matchLabels": {"z": "1"}, "matchExpressions": [
        {"key": "t", "operator": "In", "values": ["y", "x"]},
        {"key": "n", "operator": "NotIn", "values": ["a"]},
        {"key": "e", "operator": "Exists"},
        {"key": "d", "operator": "DoesNotExist"}]}),
        "!d,e,n notin (a),t in (x,y),z=1", Some("!d,e,n notin (a),t in (x,y),z=1"))]
    #[case::bad_operator(json!({"matchExpressions": [{"key": "t", "operator": "Equals", "values": ["a"]}]}), "<error>", None)]
    #[case::not_an_object(json!("app=x"), "<error>", None)]
    fn label_selectors_print_like_metav1(
        #[case] selector: Value,
        #[case] formatted: &str,
        #[case] string: Option<&str>,
    ) {
        assert_eq!(format_label_selector(&selector), formatted);
        assert_eq!(label_selector_string(&selector).as_deref(), string);
    }

    /// Kinds `printers.go` has no handler for get the default table convertor: the creation
    /// time in RFC 3339, in a `date` column.
    #[rstest]
    #[case::cluster_role("clusterroles.rbac.authorization.k8s.io")]
    #[case::role("roles.rbac.authorization.k8s.io")]
    #[case::limit_range("limitranges")]
    #[case::crd("customresourcedefinitions.apiextensions.k8s.io")]
    fn kinds_without_a_printer_get_the_default_columns(#[case] plural: &str) {
        let (names, cells, t) = table_of(plural, json!({}));
        assert_eq!(names, ["Name", "Created At"]);
        assert_eq!(cells, json!(["x", "2024-01-01T00:00:00Z"]));
        assert_eq!(t["columnDefinitions"][1]["type"], "date");
        assert_eq!(t["columnDefinitions"][0]["format"], "name");
        assert_eq!(
            t["columnDefinitions"][1]["description"],
            CREATION_TIMESTAMP_DESCRIPTION
        );
    }

    #[test]
    fn custom_resources_print_their_printer_columns() {
        let info = ResourceInfo {
            group: "example.com".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            custom: true,
            additional_printer_columns: vec![
                json!({"name": "Color", "type": "string", "jsonPath": ".spec.color"}),
                json!({"name": "Seen", "type": "date", "jsonPath": ".status.seen", "priority": 1}),
            ],
            ..ResourceInfo::default()
        };
        let o = json!({"metadata": {"name": "w"}, "status": {"seen": "2024-01-01T00:00:30Z"}});
        let t = to_table(
            &info,
            &[o],
            "2024-01-01T00:01:00Z",
            true,
            IncludeObject::Metadata,
            "v1",
        );
        assert_eq!(t["rows"][0]["cells"], json!(["w", null, "30s"]));
        assert_eq!(t["columnDefinitions"][2]["type"], "string");
        assert_eq!(t["columnDefinitions"][2]["priority"], 1);
    }

    #[test]
    fn watch_events_after_the_first_leave_the_columns_out() {
        let info = crate::resource::builtin_resources()
            .into_iter()
            .find(|r| r.plural == "configmaps")
            .unwrap_or_default();
        let t = to_table(
            &info,
            &[json!({"metadata": {"name": "c"}})],
            "",
            false,
            IncludeObject::Metadata,
            "v1",
        );
        assert_eq!(t["columnDefinitions"], json!([]));
        assert_eq!(t["rows"][0]["cells"], json!(["c", 0, "<unknown>"]));
    }

    /// Every built-in kind survives objects of the wrong shape: cells fall back to Go's zero
    /// values, never a panic.
    #[test]
    fn malformed_objects_never_panic() {
        let shapes = [
            json!({}),
            json!({"spec": 1, "status": "x", "metadata": {"labels": 3, "ownerReferences": {}}}),
            json!({"spec": {"containers": "c", "template": [], "selector": 7, "ports": [1, {"port": "x"}]},
                   "status": {"conditions": [null, 1], "containerStatuses": [{"state": 1}], "initContainerStatuses": [1, {"state": {"terminated": 3}}]},
                   "subsets": [{"addresses": 1, "ports": [{}]}], "endpoints": [{"addresses": [1]}],
                   "webhooks": {}, "subjects": [1, {"kind": 2}], "roleRef": [], "involvedObject": 1, "series": {"count": "x"}}),
        ];
        for info in crate::resource::builtin_resources() {
            for shape in &shapes {
                let mut o = shape.clone();
                o["metadata"]["name"] = json!("x");
                let t = to_table(
                    &info,
                    &[o],
                    "2024-01-01T00:01:00Z",
                    true,
                    IncludeObject::Metadata,
                    "v1",
                );
                assert_eq!(
                    t["rows"][0]["cells"].as_array().map(Vec::len),
                    t["columnDefinitions"].as_array().map(Vec::len),
                    "{}",
                    info.plural
                );
            }
        }
    }
}
