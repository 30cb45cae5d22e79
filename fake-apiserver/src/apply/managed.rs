//! `metadata.managedFields`: one entry per manager identity (manager name, operation, subresource
//! and, for updates, API version) with the set of fields it owns, read from and written to the
//! object as kube-apiserver encodes them (apply entries first, then by time, manager, API
//! version and subresource).

use serde_json::{json, Map, Value};

use super::fieldpath::Set;

/// `Apply` or `Update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Every other write.
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// Who owns a set of fields. Apply identities do not include the API version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The field manager.
    pub manager: String,
    /// How it wrote.
    pub operation: Operation,
    /// `status` for writes through the status subresource, else empty.
    pub subresource: String,
    /// The API version of an `Update` entry (empty for `Apply`).
    pub api_version: String,
}

impl Identity {
    /// The identity of a write.
    pub fn new(
        manager: &str,
        operation: Operation,
        api_version: &str,
        subresource: Option<&str>,
    ) -> Self {
        Self {
            manager: manager.to_string(),
            operation,
            subresource: subresource.unwrap_or_default().to_string(),
            api_version: match operation {
                Operation::Apply => String::new(),
                Operation::Update => api_version.to_string(),
            },
        }
    }

    /// How conflict messages name the manager, e.g. `"kubectl" using apps/v1`.
    pub fn describe(&self) -> String {
        let mut out = crate::rules::validation::go_quote(&self.manager);
        if !self.subresource.is_empty() {
            out.push_str(&format!(
                " with subresource {}",
                crate::rules::validation::go_quote(&self.subresource)
            ));
        }
        if self.operation == Operation::Update {
            out.push_str(&format!(" using {}", self.api_version));
        }
        out
    }

    /// The order managers are listed in.
    pub fn sort_key(&self) -> (&str, Operation, &str, &str) {
        (
            &self.manager,
            self.operation,
            &self.api_version,
            &self.subresource,
        )
    }
}

/// One `managedFields` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Who.
    pub id: Identity,
    /// The API version the set is expressed in.
    pub api_version: String,
    /// When the manager last changed something.
    pub time: Option<String>,
    /// The fields it owns.
    pub set: Set,
}

/// Reads `managedFields`; entries of one identity are merged. An error when an entry is not a
/// `FieldsV1` entry or its fields cannot be read.
pub fn decode(list: Option<&Value>) -> Result<Vec<Entry>, String> {
    let Some(list) = list.filter(|l| !l.is_null()) else {
        return Ok(Vec::new());
    };
    let Some(items) = list.as_array() else {
        return Err("managedFields is not a list".into());
    };
    let mut entries: Vec<Entry> = Vec::new();
    for item in items {
        let s = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or_default();
        let operation = match s("operation") {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            other => return Err(format!("unknown operation {other:?}")),
        };
        let fields_type = s("fieldsType");
        if fields_type != "FieldsV1" {
            return Err(format!("cannot decode fields of type {fields_type:?}"));
        }
        let set = match item.get("fieldsV1") {
            None | Some(Value::Null) => Set::new(),
            Some(v) => Set::from_fields_v1(v).map_err(|e| e.to_string())?,
        };
        let id = Identity::new(
            s("manager"),
            operation,
            s("apiVersion"),
            Some(s("subresource")),
        );
        let entry = Entry {
            id,
            api_version: s("apiVersion").to_string(),
            time: item.get("time").and_then(Value::as_str).map(str::to_string),
            set,
        };
        match entries.iter_mut().find(|e| e.id == entry.id) {
            Some(existing) => existing.set = existing.set.union(&entry.set),
            None => entries.push(entry),
        }
    }
    Ok(entries)
}

/// Writes entries in the server's order.
pub fn encode(entries: &[Entry]) -> Value {
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by(|a, b| {
        a.id.operation
            .cmp(&b.id.operation)
            .then_with(|| time_seconds(&a.time).cmp(&time_seconds(&b.time)))
            .then_with(|| a.id.manager.cmp(&b.id.manager))
            .then_with(|| a.api_version.cmp(&b.api_version))
            .then_with(|| a.id.subresource.cmp(&b.id.subresource))
    });
    Value::Array(
        sorted
            .into_iter()
            .map(|e| {
                let mut m = Map::new();
                m.insert("manager".into(), json!(e.id.manager));
                m.insert("operation".into(), json!(e.id.operation.as_str()));
                m.insert("apiVersion".into(), json!(e.api_version));
                if let Some(t) = &e.time {
                    m.insert("time".into(), json!(t));
                }
                m.insert("fieldsType".into(), json!("FieldsV1"));
                m.insert("fieldsV1".into(), e.set.to_fields_v1());
                if !e.id.subresource.is_empty() {
                    m.insert("subresource".into(), json!(e.id.subresource));
                }
                Value::Object(m)
            })
            .collect(),
    )
}

fn time_seconds(t: &Option<String>) -> i64 {
    t.as_deref()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| t.as_second())
        .unwrap_or(0)
}

/// Sorts identities for messages (by manager, then operation, version, subresource).
pub fn sort_identities(ids: &mut [Identity]) {
    ids.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_in_server_order() {
        let list = json!([
            {"manager": "kubectl-edit", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:02Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:b": {}}}},
            {"manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:01Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:a": {}}}},
            {"manager": "ctl", "operation": "Apply", "apiVersion": "v1", "time": "2024-01-01T00:00:03Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:c": {}}}, "subresource": "status"}
        ]);
        let entries = decode(Some(&list)).unwrap();
        let out = encode(&entries);
        let managers: Vec<&str> = out
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(managers, ["ctl", "kubectl-create", "kubectl-edit"]);
        assert_eq!(out[1], list[1]);
        assert_eq!(out[0], list[2]);
        assert!(decode(Some(
            &json!([{"manager": "m", "operation": "Other", "fieldsType": "FieldsV1"}])
        ))
        .is_err());
    }

    #[test]
    fn identities_describe_themselves_as_conflict_messages_do() {
        assert_eq!(
            Identity::new("kubectl", Operation::Update, "apps/v1", None).describe(),
            "\"kubectl\" using apps/v1"
        );
        assert_eq!(
            Identity::new("ctl", Operation::Apply, "v1", Some("status")).describe(),
            "\"ctl\" with subresource \"status\""
        );
    }
}
