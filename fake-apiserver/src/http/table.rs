//! Server-side printing: the `meta.k8s.io/v1` Table that `kubectl get` asks for, with the columns
//! a real server prints for the built-in kinds and the CRD's `additionalPrinterColumns`.

use axum::http::{header, HeaderMap};
use serde_json::{json, Value};

use crate::resource::ResourceInfo;

/// Whether the client asked for a Table (`Accept: application/json;as=Table;...`).
pub fn wants_table(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| {
            accept
                .split(',')
                .next()
                .is_some_and(|first| first.contains("as=Table"))
        })
}

/// One column: name, type, format, priority, and how to compute its cell.
struct Column {
    name: String,
    kind: &'static str,
    format: &'static str,
    priority: i64,
    description: String,
    cell: Cell,
}

enum Cell {
    Name,
    Age,
    Path(String),
    Computed(fn(&Value) -> Value),
    /// An integer read from the object, 0 when absent.
    Integer(fn(&Value) -> Option<i64>),
    /// How long ago the timestamp at this path was (`translateTimestampSince`), `<none>` when
    /// absent.
    AgeAt(String),
}

fn col(name: &str, kind: &'static str, priority: i64, cell: Cell) -> Column {
    Column {
        name: name.into(),
        kind,
        format: if name == "Name" { "name" } else { "" },
        priority,
        description: String::new(),
        cell,
    }
}

fn name_col() -> Column {
    Column {
        description: "Name must be unique within a namespace. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names".into(),
        ..col("Name", "string", 0, Cell::Name)
    }
}

fn age_col() -> Column {
    col("Age", "string", 0, Cell::Age)
}

fn columns_for(info: &ResourceInfo) -> Vec<Column> {
    if info.custom {
        let mut cols = vec![name_col()];
        if info.additional_printer_columns.is_empty() {
            cols.push(age_col());
        }
        for c in &info.additional_printer_columns {
            let kind = match c["type"].as_str() {
                Some("integer") => "integer",
                Some("number") => "number",
                Some("boolean") => "boolean",
                Some("date") => "date",
                _ => "string",
            };
            let path = c["jsonPath"].as_str().unwrap_or_default().to_string();
            cols.push(Column {
                name: c["name"].as_str().unwrap_or_default().to_string(),
                kind,
                format: "",
                priority: c["priority"].as_i64().unwrap_or(0),
                description: c["description"].as_str().unwrap_or_default().to_string(),
                cell: Cell::Path(path),
            });
        }
        return cols;
    }
    let mut cols = vec![name_col()];
    match (info.group.as_str(), info.kind.as_str()) {
        ("", "Pod") => {
            cols.push(col("Ready", "string", 0, Cell::Computed(pod_ready)));
            cols.push(col("Status", "string", 0, Cell::Computed(pod_status)));
            cols.push(col("Restarts", "string", 0, Cell::Computed(pod_restarts)));
            cols.push(age_col());
            cols.push(col("IP", "string", 1, Cell::Path(".status.podIP".into())));
            cols.push(col(
                "Node",
                "string",
                1,
                Cell::Path(".spec.nodeName".into()),
            ));
            cols.push(col(
                "Nominated Node",
                "string",
                1,
                Cell::Path(".status.nominatedNodeName".into()),
            ));
            cols.push(col(
                "Readiness Gates",
                "string",
                1,
                Cell::Computed(|_| json!("<none>")),
            ));
        }
        ("", "Node") => {
            cols.push(col("Status", "string", 0, Cell::Computed(node_status)));
            cols.push(col("Roles", "string", 0, Cell::Computed(node_roles)));
            cols.push(age_col());
            cols.push(col(
                "Version",
                "string",
                0,
                Cell::Path(".status.nodeInfo.kubeletVersion".into()),
            ));
        }
        ("", "Namespace") => {
            cols.push(col(
                "Status",
                "string",
                0,
                Cell::Path(".status.phase".into()),
            ));
            cols.push(age_col());
        }
        ("", "ConfigMap") => {
            cols.push(col("Data", "integer", 0, Cell::Computed(data_count)));
            cols.push(age_col());
        }
        ("", "Secret") => {
            cols.push(col("Type", "string", 0, Cell::Path(".type".into())));
            cols.push(col("Data", "integer", 0, Cell::Computed(data_count)));
            cols.push(age_col());
        }
        ("apps", "Deployment") => {
            cols.push(col(
                "Ready",
                "string",
                0,
                Cell::Computed(|o| ready_of_desired(o, 1)),
            ));
            cols.push(col(
                "Up-to-date",
                "integer",
                0,
                Cell::Computed(|o| json!(o["status"]["updatedReplicas"].as_i64().unwrap_or(0))),
            ));
            cols.push(col(
                "Available",
                "integer",
                0,
                Cell::Computed(|o| json!(o["status"]["availableReplicas"].as_i64().unwrap_or(0))),
            ));
            cols.push(age_col());
        }
        ("coordination.k8s.io", "Lease") => {
            cols.push(col(
                "Holder",
                "string",
                0,
                Cell::Path(".spec.holderIdentity".into()),
            ));
            cols.push(age_col());
        }
        ("", "Service") => {
            cols.push(col("Type", "string", 0, Cell::Path(".spec.type".into())));
            cols.push(col(
                "Cluster-IP",
                "string",
                0,
                Cell::Path(".spec.clusterIP".into()),
            ));
            cols.push(col(
                "External-IP",
                "string",
                0,
                Cell::Computed(|_| json!("<none>")),
            ));
            cols.push(col("Port(s)", "string", 0, Cell::Computed(service_ports)));
            cols.push(age_col());
        }
        ("apps", "ReplicaSet") | ("", "ReplicationController") => {
            // `printReplicaSet`, `printReplicationController`.
            cols.push(int_col("Desired", |o| o["spec"]["replicas"].as_i64()));
            cols.push(int_col("Current", |o| o["status"]["replicas"].as_i64()));
            cols.push(int_col("Ready", |o| o["status"]["readyReplicas"].as_i64()));
            cols.push(age_col());
        }
        ("apps", "DaemonSet") => {
            // `printDaemonSet`.
            cols.push(int_col("Desired", |o| {
                o["status"]["desiredNumberScheduled"].as_i64()
            }));
            cols.push(int_col("Current", |o| {
                o["status"]["currentNumberScheduled"].as_i64()
            }));
            cols.push(int_col("Ready", |o| o["status"]["numberReady"].as_i64()));
            cols.push(int_col("Up-to-date", |o| {
                o["status"]["updatedNumberScheduled"].as_i64()
            }));
            cols.push(int_col("Available", |o| {
                o["status"]["numberAvailable"].as_i64()
            }));
            cols.push(col(
                "Node Selector",
                "string",
                0,
                Cell::Computed(|o| {
                    json!(format_labels(
                        &o["spec"]["template"]["spec"]["nodeSelector"]
                    ))
                }),
            ));
            cols.push(age_col());
        }
        ("apps", "StatefulSet") => {
            // `printStatefulSet`: ready of desired.
            cols.push(col(
                "Ready",
                "string",
                0,
                Cell::Computed(|o| ready_of_desired(o, 0)),
            ));
            cols.push(age_col());
        }
        ("policy", "PodDisruptionBudget") => {
            // `printPodDisruptionBudget`: an unset bound prints `N/A`.
            cols.push(col(
                "Min Available",
                "string",
                0,
                Cell::Computed(|o| int_or_string(&o["spec"]["minAvailable"])),
            ));
            cols.push(col(
                "Max Unavailable",
                "string",
                0,
                Cell::Computed(|o| int_or_string(&o["spec"]["maxUnavailable"])),
            ));
            cols.push(int_col("Allowed Disruptions", |o| {
                o["status"]["disruptionsAllowed"].as_i64()
            }));
            cols.push(age_col());
        }
        ("batch", "CronJob") => {
            // `printCronJob`.
            cols.push(col(
                "Schedule",
                "string",
                0,
                Cell::Path(".spec.schedule".into()),
            ));
            cols.push(col(
                "Timezone",
                "string",
                0,
                Cell::Path(".spec.timeZone".into()),
            ));
            cols.push(col(
                "Suspend",
                "boolean",
                0,
                Cell::Computed(|o| {
                    json!(match o["spec"]["suspend"].as_bool() {
                        Some(true) => "True",
                        Some(false) => "False",
                        None => "<unset>",
                    })
                }),
            ));
            cols.push(int_col("Active", |o| {
                o["status"]["active"].as_array().map(|a| a.len() as i64)
            }));
            cols.push(col(
                "Last Schedule",
                "string",
                0,
                Cell::AgeAt(".status.lastScheduleTime".into()),
            ));
            cols.push(age_col());
        }
        ("", "ServiceAccount") => cols.push(age_col()),
        _ => cols.push(Column {
            format: "date",
            ..col(
                "Created At",
                "date",
                0,
                Cell::Path(".metadata.creationTimestamp".into()),
            )
        }),
    }
    cols
}

/// An integer column read from the object (absent counts as 0, Go's zero value).
fn int_col(name: &str, read: fn(&Value) -> Option<i64>) -> Column {
    col(name, "integer", 0, Cell::Integer(read))
}

/// `labels.FormatLabels`: the label set's string, `<none>` when there are none.
fn format_labels(labels: &Value) -> String {
    let pairs = crate::rules::selector::format_label_set(labels);
    if pairs.is_empty() {
        "<none>".to_string()
    } else {
        pairs
    }
}

/// `ready/desired` replicas of a workload (`default` when `spec.replicas` is unset).
fn ready_of_desired(o: &Value, default: i64) -> Value {
    json!(format!(
        "{}/{}",
        o["status"]["readyReplicas"].as_i64().unwrap_or(0),
        o["spec"]["replicas"].as_i64().unwrap_or(default)
    ))
}

/// An `IntOrString` as `String()` prints it; `N/A` when unset.
fn int_or_string(value: &Value) -> Value {
    match value {
        Value::Number(n) => json!(n.to_string()),
        Value::String(s) => json!(s),
        _ => json!("N/A"),
    }
}

fn data_count(o: &Value) -> Value {
    let n = o["data"].as_object().map_or(0, |m| m.len())
        + o["binaryData"].as_object().map_or(0, |m| m.len());
    json!(n)
}

fn pod_ready(o: &Value) -> Value {
    let total = o["spec"]["containers"].as_array().map_or(0, |c| c.len());
    let ready = o["status"]["containerStatuses"].as_array().map_or(0, |s| {
        s.iter().filter(|c| c["ready"] == json!(true)).count()
    });
    json!(format!("{ready}/{total}"))
}

fn pod_status(o: &Value) -> Value {
    if o["metadata"]
        .get("deletionTimestamp")
        .is_some_and(|t| !t.is_null())
    {
        return json!("Terminating");
    }
    let reason = o["status"]["reason"]
        .as_str()
        .or_else(|| o["status"]["phase"].as_str())
        .unwrap_or("Unknown");
    json!(reason)
}

fn pod_restarts(o: &Value) -> Value {
    let n: i64 = o["status"]["containerStatuses"].as_array().map_or(0, |s| {
        s.iter()
            .map(|c| c["restartCount"].as_i64().unwrap_or(0))
            .sum()
    });
    json!(n.to_string())
}

fn node_status(o: &Value) -> Value {
    let ready = o["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
        .map(|c| match c["status"].as_str() {
            Some("True") => "Ready",
            Some("False") => "NotReady",
            _ => "Unknown",
        })
        .unwrap_or("Unknown");
    if o["spec"]["unschedulable"] == json!(true) {
        return json!(format!("{ready},SchedulingDisabled"));
    }
    json!(ready)
}

fn node_roles(o: &Value) -> Value {
    let roles: Vec<&str> = o["metadata"]["labels"]
        .as_object()
        .map(|l| {
            l.keys()
                .filter_map(|k| k.strip_prefix("node-role.kubernetes.io/"))
                .collect()
        })
        .unwrap_or_default();
    if roles.is_empty() {
        json!("<none>")
    } else {
        json!(roles.join(","))
    }
}

fn service_ports(o: &Value) -> Value {
    let ports: Vec<String> = o["spec"]["ports"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .map(|p| {
                    format!(
                        "{}/{}",
                        p["port"].as_i64().unwrap_or(0),
                        p["protocol"].as_str().unwrap_or("TCP")
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    if ports.is_empty() {
        json!("<none>")
    } else {
        json!(ports.join(","))
    }
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

fn age_of(timestamp: Option<&str>, now: &str) -> Value {
    let (Some(t), Ok(now)) = (timestamp, now.parse::<jiff::Timestamp>()) else {
        return json!("<unknown>");
    };
    match t.parse::<jiff::Timestamp>() {
        Ok(t) => json!(human_duration(now.duration_since(t).as_secs())),
        Err(_) => json!("<unknown>"),
    }
}

/// Renders objects as a Table. `now` is the server's time (for ages); column definitions are
/// included when `include_columns` (watch events after the first leave them out).
pub fn to_table(info: &ResourceInfo, objects: &[Value], now: &str, include_columns: bool) -> Value {
    let columns = columns_for(info);
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let cells: Vec<Value> = columns
                .iter()
                .map(|c| match &c.cell {
                    Cell::Name => o["metadata"]["name"].clone(),
                    Cell::Age => age_of(o["metadata"]["creationTimestamp"].as_str(), now),
                    Cell::Computed(f) => f(o),
                    Cell::Integer(read) => json!(read(o).unwrap_or(0)),
                    Cell::AgeAt(p) => match json_path(o, p).and_then(Value::as_str) {
                        Some(t) => age_of(Some(t), now),
                        None => json!("<none>"),
                    },
                    Cell::Path(p) => {
                        let v = json_path(o, p).cloned().unwrap_or(Value::Null);
                        if c.kind == "date" {
                            age_of(v.as_str(), now)
                        } else if v.is_null() && !info.custom {
                            json!("<none>")
                        } else {
                            v
                        }
                    }
                })
                .collect();
            json!({
                "cells": cells,
                "object": {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": o["metadata"].clone(),
                }
            })
        })
        .collect();
    let definitions: Vec<Value> = if include_columns {
        columns
            .iter()
            .map(|c| {
                json!({"name": c.name, "type": if c.kind == "date" { "string" } else { c.kind }, "format": c.format,
                       "description": c.description, "priority": c.priority})
            })
            .collect()
    } else {
        Vec::new()
    };
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {},
        "columnDefinitions": definitions,
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

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

    #[test]
    fn pods_print_ready_and_status() {
        let pods = crate::resource::builtin_resources()
            .into_iter()
            .find(|r| r.plural == "pods")
            .unwrap();
        let pod = json!({"metadata": {"name": "p", "creationTimestamp": "2024-01-01T00:00:00Z"}, "spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Running", "containerStatuses": [{"ready": true, "restartCount": 2}]}});
        let t = to_table(&pods, &[pod], "2024-01-01T00:01:00Z", true);
        assert_eq!(
            t["rows"][0]["cells"],
            json!(["p", "1/1", "Running", "2", "60s", "<none>", "<none>", "<none>", "<none>"])
        );
        assert_eq!(t["columnDefinitions"][0]["format"], "name");
    }

    /// The columns `printers.go` gives these kinds, and their cells.
    #[rstest::rstest]
    #[case::replica_set("replicasets", json!({"spec": {"replicas": 3}, "status": {"replicas": 2, "readyReplicas": 1}}),
        &["Name", "Desired", "Current", "Ready", "Age"], json!(["x", 3, 2, 1, "60s"]))]
    #[case::replication_controller("replicationcontrollers", json!({"spec": {"replicas": 1}}),
        &["Name", "Desired", "Current", "Ready", "Age"], json!(["x", 1, 0, 0, "60s"]))]
    #[case::daemon_set("daemonsets", json!({"spec": {"template": {"spec": {"nodeSelector": {"zone": "a", "os": "linux"}}}},
        "status": {"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberReady": 1, "updatedNumberScheduled": 2, "numberAvailable": 1}}),
        &["Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age"],
        json!(["x", 2, 2, 1, 2, 1, "os=linux,zone=a", "60s"]))]
    #[case::stateful_set("statefulsets", json!({"spec": {"replicas": 3}, "status": {"readyReplicas": 2}}),
        &["Name", "Ready", "Age"], json!(["x", "2/3", "60s"]))]
    #[case::pdb("poddisruptionbudgets", json!({"spec": {"minAvailable": "50%"}, "status": {"disruptionsAllowed": 1}}),
        &["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"], json!(["x", "50%", "N/A", 1, "60s"]))]
    #[case::cron_job("cronjobs", json!({"spec": {"schedule": "*/5 * * * *", "suspend": false},
        "status": {"lastScheduleTime": "2024-01-01T00:00:30Z"}}),
        &["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age"],
        json!(["x", "*/5 * * * *", "<none>", "False", 0, "30s", "60s"]))]
    fn workloads_print_the_real_columns(
        #[case] plural: &str,
        #[case] mut object: Value,
        #[case] columns: &[&str],
        #[case] cells: Value,
    ) {
        let info = crate::resource::builtin_resources()
            .into_iter()
            .find(|r| r.plural == plural)
            .unwrap();
        object["metadata"] = json!({"name": "x", "creationTimestamp": "2024-01-01T00:00:00Z"});
        let t = to_table(&info, &[object], "2024-01-01T00:01:00Z", true);
        let names: Vec<&str> = t["columnDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["name"].as_str())
            .collect();
        assert_eq!(names, columns);
        assert_eq!(t["rows"][0]["cells"], cells);
    }
}
