//! `metadata.managedFields`: one entry per manager identity (manager name, operation, subresource
//! and, for updates, API version) with the set of fields it owns, read from and written to the
//! object as kube-apiserver encodes them (apply entries first, then by time, manager, API
//! version and subresource).
//!
//! Decoding and encoding `fieldsV1` is most of what tracking a write costs, and a write mostly
//! leaves every entry's fields as they were. So the field sets of a stored object's entries are
//! kept beside its parse ([`Decoded`], a [`crate::store::Derived`]): an entry of the next write
//! whose `fieldsV1` equals a stored entry's takes that entry's set instead of being decoded, and
//! an entry whose set nothing changed writes its `fieldsV1` back as it was read. Both are exact:
//! a stored entry's `fieldsV1` is what [`encode`] made of its set, so writing it back is what
//! encoding the set again would give.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::fieldpath::Set;
use super::fingerprint;
use crate::rules::civil_time::written_second;
use crate::store::value_eq::equal;

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
#[derive(Debug, Clone, Eq)]
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

impl PartialEq for Identity {
    /// Field by field, as a derived one; the strings without a `memcmp` call when they are
    /// short or empty (a write compares identities a dozen times, and most have an empty
    /// `subresource`: see [`serde_json::short_bytes::eq_bytes`]).
    fn eq(&self, other: &Self) -> bool {
        let same = |a: &str, b: &str| serde_json::short_bytes::eq_bytes(a.as_bytes(), b.as_bytes());
        self.operation == other.operation
            && same(&self.manager, &other.manager)
            && same(&self.subresource, &other.subresource)
            && same(&self.api_version, &other.api_version)
    }
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
#[derive(Debug, Clone)]
pub struct Entry {
    /// Who.
    pub id: Identity,
    /// The API version the set is expressed in.
    pub api_version: String,
    /// When the manager last changed something.
    pub time: Option<String>,
    /// The fields it owns (shared with the stored object's [`Decoded`] until changed).
    set: Arc<Set>,
    /// The entry's `fieldsV1` as stored, with its fingerprint, while `set` is still what it
    /// says (only for entries whose set came from a [`Decoded`], i.e. made by [`encode`]).
    raw: Option<(Value, u64)>,
    /// The whole item the entry was read from, alongside `raw`: written back as it is when
    /// it still says everything the entry does (see [`Entry::encoded_item`]).
    item: Option<Value>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.api_version == other.api_version
            && self.time == other.time
            && self.set == other.set
    }
}

impl Entry {
    /// An entry owning `set`.
    pub fn new(id: Identity, api_version: String, time: Option<String>, set: Set) -> Self {
        Self {
            id,
            api_version,
            time,
            set: Arc::new(set),
            raw: None,
            item: None,
        }
    }

    /// An entry owning `set`, whose `FieldsV1` document (with its fingerprint) is `fields`.
    pub(crate) fn with_fields_v1(
        id: Identity,
        api_version: String,
        time: Option<String>,
        set: Arc<Set>,
        fields: (Value, u64),
    ) -> Self {
        Self {
            id,
            api_version,
            time,
            set,
            raw: Some(fields),
            item: None,
        }
    }

    /// The fields it owns.
    pub fn set(&self) -> &Set {
        &self.set
    }

    /// The fields it owns, to change (its stored `fieldsV1` no longer says what they are).
    pub fn set_mut(&mut self) -> &mut Set {
        self.raw = None;
        self.item = None;
        Arc::make_mut(&mut self.set)
    }

    /// Removes `paths` ([`Set::remove`]); the set is copied only when it holds one of them.
    pub fn remove(&mut self, paths: &Set) {
        if self.set.overlaps(paths) {
            self.set_mut().remove(paths);
        }
    }

    /// Adds `paths`; the set is copied only when one of them is new.
    pub fn add(&mut self, paths: &Set) {
        if !self.set.contains_all(paths) {
            self.set_mut().add(paths);
        }
    }

    /// The item this entry was read from, taken out, when it is exactly what encoding the entry
    /// would write: the same members (Go's `omitempty` ones left out when empty), each with the
    /// entry's value, and the set still the one its `fieldsV1` says. An entry a write left
    /// alone (most of an object's entries, and the writer's own when it changed nothing it
    /// did not already own) is then written back by a sharing clone, not rebuilt.
    fn encoded_item(&mut self) -> Option<Value> {
        let (fields, _) = self.raw.as_ref()?;
        let item = self.item.take()?;
        let map = item.as_object()?;
        let text = |key: &str| map.get(key).and_then(Value::as_str);
        let optional = |key: &str, value: &str| match text(key) {
            Some(found) => found == value && !value.is_empty(),
            None => value.is_empty() && !map.contains_key(key),
        };
        let members = 3 // operation, fieldsType, fieldsV1
            + usize::from(!self.id.manager.is_empty())
            + usize::from(!self.api_version.is_empty())
            + usize::from(self.time.is_some())
            + usize::from(!self.id.subresource.is_empty());
        let same = map.len() == members
            && text("operation") == Some(self.id.operation.as_str())
            && text("fieldsType") == Some("FieldsV1")
            && map
                .get("fieldsV1")
                .is_some_and(|stored| crate::store::value_eq::equal(stored, fields))
            && optional("manager", &self.id.manager)
            && optional("apiVersion", &self.api_version)
            && optional("subresource", &self.id.subresource)
            && match &self.time {
                Some(time) => text("time") == Some(time.as_str()),
                None => !map.contains_key("time"),
            };
        same.then_some(item)
    }
}

/// The field sets of one stored object's `managedFields`, in its order, each with a
/// fingerprint of the `fieldsV1` it was read from or encoded to: kept beside the object's parse
/// (see the module documentation).
#[derive(Debug, Default)]
pub struct Decoded {
    sets: Vec<(u64, Arc<Set>)>,
}

impl Decoded {
    /// How many entries it describes.
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    /// Whether it describes no entry.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// The set of its only entry, with the fingerprint of that entry's `fieldsV1`.
    pub(crate) fn only(&self) -> Option<(u64, &Arc<Set>)> {
        match self.sets.as_slice() {
            [(fingerprint, set)] => Some((*fingerprint, set)),
            _ => None,
        }
    }
}

/// What is known of the stored object when the entries of a write are read: its
/// `managedFields` and their [`Decoded`] sets.
#[derive(Debug, Clone, Copy)]
pub struct Known<'a> {
    /// The stored `managedFields` list.
    pub list: &'a Value,
    /// Their sets, as the write that stored them left them.
    pub decoded: &'a Decoded,
    /// `list` is known to be what the sets were encoded to (the object was stored as the field
    /// manager left it): a set found for an equal `fieldsV1` needs no fingerprint check.
    /// Debug builds check it anyway.
    pub exact: bool,
}

impl Known<'_> {
    /// The set of the stored entry whose `fieldsV1` equals `fields` (the entry at `hint` is
    /// tried first), with the fingerprint of that `fieldsV1`. `checked` memoises, per stored
    /// entry, whether the stored `fieldsV1` still has the fingerprint recorded with its set.
    fn find(
        &self,
        fields: &Value,
        hint: usize,
        checked: &mut [Option<bool>],
    ) -> Option<(u64, Arc<Set>)> {
        let items = self.list.as_array()?;
        if items.len() != self.decoded.sets.len() {
            return None;
        }
        let order = std::iter::once(hint).chain((0..items.len()).filter(|j| *j != hint));
        for j in order.filter(|j| *j < items.len()) {
            let Some(stored) = items[j].get("fieldsV1") else {
                continue;
            };
            if !equal(stored, fields) {
                continue;
            }
            let (fingerprint, set) = &self.decoded.sets[j];
            debug_assert!(
                !self.exact || fingerprint::fingerprint(stored) == *fingerprint,
                "managedFields said to be exact differ from their sets: {stored}"
            );
            let valid = self.exact
                || *checked[j]
                    .get_or_insert_with(|| fingerprint::fingerprint(stored) == *fingerprint);
            if valid {
                return Some((*fingerprint, set.clone()));
            }
        }
        None
    }
}

/// Reads `managedFields`; entries of one identity are merged. An error when an entry is not a
/// `FieldsV1` entry or its fields cannot be read.
pub fn decode(list: Option<&Value>) -> Result<Vec<Entry>, String> {
    match list {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(list) if !list.is_array() => Err("managedFields is not a list".into()),
        Some(list) => decode_known(list.clone(), None),
    }
}

/// [`decode`] of an owned list, taking the sets of entries the stored object has already from
/// `known` (and keeping their `fieldsV1` to write back).
pub fn decode_known(list: Value, known: Option<Known<'_>>) -> Result<Vec<Entry>, String> {
    let items = match list {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        _ => return Err("managedFields is not a list".into()),
    };
    let mut checked = vec![None; known.map_or(0, |k| k.decoded.len())];
    let mut entries: Vec<Entry> = Vec::new();
    for (i, item) in items.iter().enumerate() {
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
        let id = Identity::new(
            s("manager"),
            operation,
            s("apiVersion"),
            Some(s("subresource")),
        );
        let api_version = s("apiVersion").to_string();
        let time = item.get("time").and_then(Value::as_str).map(str::to_string);
        // A clone shares the map's entries (an item read against the stored list is the
        // stored item: taking the member out would copy it first).
        let fields = item.get("fieldsV1").cloned().unwrap_or(Value::Null);
        let entry = match known.and_then(|k| k.find(&fields, i, &mut checked)) {
            Some((fingerprint, set)) => Entry {
                id,
                api_version,
                time,
                set,
                raw: Some((fields, fingerprint)),
                // A sharing clone, as `fields` is.
                item: Some(item.clone()),
            },
            None => {
                let set = match &fields {
                    Value::Null => Set::new(),
                    v => Set::from_fields_v1(v).map_err(|e| e.to_string())?,
                };
                Entry::new(id, api_version, time, set)
            }
        };
        match entries.iter_mut().find(|e| e.id == entry.id) {
            Some(existing) => existing.add(entry.set()),
            None => entries.push(entry),
        }
    }
    Ok(entries)
}

/// Writes entries in the server's order.
pub fn encode(entries: &[Entry]) -> Value {
    encode_owned(entries.to_vec()).0
}

/// [`encode`], consuming the entries: those whose set did not change write their stored
/// `fieldsV1` back. Also returns the sets, in the written order, to keep with the object.
pub fn encode_owned(entries: Vec<Entry>) -> (Value, Decoded) {
    let mut sorted: Vec<(i64, Entry)> = if entries.len() > 1 {
        entries
            .into_iter()
            .map(|e| (time_seconds(&e.time), e))
            .collect()
    } else {
        // Nothing to order: the time is not read.
        entries.into_iter().map(|e| (0, e)).collect()
    };
    // Strings ordered by `cmp_bytes`: the subresource is mostly empty on both sides, where
    // `cmp` would call `memcmp` at dangling pointers (see `crate::resource::same_group`).
    let text = |a: &str, b: &str| serde_json::short_bytes::cmp_bytes(a.as_bytes(), b.as_bytes());
    sorted.sort_by(|(ta, a), (tb, b)| {
        a.id.operation
            .cmp(&b.id.operation)
            .then_with(|| ta.cmp(tb))
            .then_with(|| text(&a.id.manager, &b.id.manager))
            .then_with(|| text(&a.api_version, &b.api_version))
            .then_with(|| text(&a.id.subresource, &b.id.subresource))
    });
    let mut decoded = Decoded::default();
    let list = sorted
        .into_iter()
        .map(|(_, mut e)| {
            let item = e.encoded_item();
            let (fields, fingerprint) = match e.raw {
                Some(raw) => raw,
                None => e.set.to_fields_v1_with_fingerprint(),
            };
            decoded.sets.push((fingerprint, e.set));
            if let Some(item) = item {
                return item;
            }
            // As Go encodes a `ManagedFieldsEntry` (for custom resources too: the real server
            // sets their entries through the typed struct): every field is `omitempty`.
            let mut m = Map::new();
            if !e.id.manager.is_empty() {
                m.insert("manager".into(), Value::String(e.id.manager));
            }
            m.insert("operation".into(), json!(e.id.operation.as_str()));
            if !e.api_version.is_empty() {
                m.insert("apiVersion".into(), Value::String(e.api_version));
            }
            if let Some(t) = e.time {
                m.insert("time".into(), Value::String(t));
            }
            m.insert("fieldsType".into(), json!("FieldsV1"));
            m.insert("fieldsV1".into(), fields);
            if !e.id.subresource.is_empty() {
                m.insert("subresource".into(), Value::String(e.id.subresource));
            }
            Value::Object(m)
        })
        .collect();
    (Value::Array(list), decoded)
}

/// An entry's time in seconds since the epoch, for the order of entries (0 when it has none or
/// it does not parse). A time as the server writes it (`2006-01-02T15:04:05Z`, nearly every
/// entry's: see [`written_second`]) is read without a parser; any other is parsed.
fn time_seconds(t: &Option<String>) -> i64 {
    t.as_deref()
        .and_then(|t| {
            written_second(t).or_else(|| t.parse::<jiff::Timestamp>().ok().map(|t| t.as_second()))
        })
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
    fn written_times_read_as_the_parser_reads_them() {
        let parsed = |t: &str| t.parse::<jiff::Timestamp>().ok().map(|t| t.as_second());
        // Every day of some years (leap and not, around the epoch and far from it), at several
        // times of day, as the server writes them.
        for year in [
            1, 4, 100, 400, 1900, 1969, 1970, 2000, 2024, 2026, 2100, 9998,
        ] {
            let start = jiff::civil::date(year, 1, 1);
            for day in 0..366 {
                let Ok(date) = start.checked_add(jiff::Span::new().days(day)) else {
                    continue;
                };
                if date.year() != year {
                    continue;
                }
                for (h, m, s) in [(0, 0, 0), (12, 34, 56), (23, 59, 59)] {
                    let t = format!("{date}T{h:02}:{m:02}:{s:02}Z");
                    assert_eq!(written_second(&t), parsed(&t), "{t}");
                }
            }
        }
        // Not in the written form, or not a time: left to the parser, whatever it says.
        for t in [
            "2026-02-29T00:00:00Z",
            "2024-02-30T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-10T00:00:00Z",
            "2026-01-00T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:60:00Z",
            "2026-01-01T23:59:60Z",
            "0000-01-01T00:00:00Z",
            "9999-12-30T23:59:59Z",
            "9999-01-01T00:00:00Z",
            "2026-01-01T00:00:00+01:00",
            "2026-01-01T00:00:00.5Z",
            "2026-01-01 00:00:00Z",
            "2026-0a-01T00:00:00Z",
            "",
        ] {
            assert_eq!(written_second(t), None, "{t}");
            let with_parser = time_seconds(&Some(t.to_string()));
            assert_eq!(with_parser, parsed(t).unwrap_or(0), "{t}");
        }
    }

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

    /// A stored list, its entries read back against it, changed by `change`, and written:
    /// the written list, and whether its item shares the stored item's entries.
    fn rewritten(stored_item: Value, change: impl Fn(&mut Entry)) -> (Value, bool) {
        let fields = stored_item["fieldsV1"].clone();
        let set = Set::from_fields_v1(&fields).unwrap();
        let (_, decoded) = encode_owned(vec![Entry::new(
            Identity::new("m", Operation::Update, "v1", None),
            "v1".into(),
            None,
            set,
        )]);
        let list = json!([stored_item]);
        let known = Known {
            list: &list,
            decoded: &decoded,
            exact: false,
        };
        let mut entries = decode_known(list.clone(), Some(known)).unwrap();
        change(&mut entries[0]);
        let (out, _) = encode_owned(entries);
        let shared = out[0]
            .as_object()
            .unwrap()
            .shares_entries(list[0].as_object().unwrap());
        (out, shared)
    }

    fn item(extra: Value) -> Value {
        let mut item = json!({"manager": "m", "operation": "Update", "apiVersion": "v1",
            "time": "2024-01-01T00:00:01Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}, "f:a": {}}}});
        for (k, v) in extra.as_object().unwrap() {
            item[k] = v.clone();
        }
        item.as_object_mut().unwrap().retain(|_, v| !v.is_null());
        item
    }

    /// An entry a write leaves exactly as stored is written back as the stored item (a sharing
    /// clone); any change, or a stored item that is not what encoding writes, is rebuilt.
    #[rstest::rstest]
    #[case::left_alone(|_: &mut Entry| {}, json!({}), true, json!({}))]
    #[case::new_time(|e: &mut Entry| e.time = Some("2024-01-01T00:00:09Z".into()), json!({}), false,
        json!({"time": "2024-01-01T00:00:09Z"}))]
    #[case::time_dropped(|e: &mut Entry| e.time = None, json!({}), false, json!({"time": null}))]
    #[case::new_api_version(|e: &mut Entry| e.api_version = "v2".into(), json!({}), false,
        json!({"apiVersion": "v2"}))]
    #[case::set_grown(|e: &mut Entry| e.add(&Set::from_fields_v1(&json!({"f:data": {"f:b": {}}})).unwrap()),
        json!({}), false, json!({"fieldsV1": {"f:data": {".": {}, "f:a": {}, "f:b": {}}}}))]
    #[case::stored_empty_subresource(|_: &mut Entry| {}, json!({"subresource": ""}), false, json!({}))]
    #[case::stored_without_time(|e: &mut Entry| e.time = None, json!({"time": null}), true, json!({"time": null}))]
    #[case::stored_unknown_member(|_: &mut Entry| {}, json!({"other": 1}), false, json!({}))]
    fn an_unchanged_entry_is_written_back_as_stored(
        #[case] change: fn(&mut Entry),
        #[case] stored_extra: Value,
        #[case] shared: bool,
        #[case] expected_extra: Value,
    ) {
        let (out, was_shared) = rewritten(item(stored_extra), change);
        assert_eq!(out, json!([item(expected_extra)]));
        assert_eq!(was_shared, shared);
    }

    /// Identities are equal when every field is (what the derived equality said).
    #[rstest::rstest]
    #[case::same(("m", Operation::Update, "v1", None), true)]
    #[case::other_manager(("n", Operation::Update, "v1", None), false)]
    #[case::other_operation(("m", Operation::Apply, "v1", None), false)]
    #[case::other_version(("m", Operation::Update, "v2", None), false)]
    #[case::other_subresource(("m", Operation::Update, "v1", Some("status")), false)]
    #[case::longer_manager(("kubectl-client-side-apply", Operation::Update, "v1", None), false)]
    fn identities_are_equal_field_by_field(
        #[case] other: (&str, Operation, &str, Option<&str>),
        #[case] equal: bool,
    ) {
        let one = Identity::new("m", Operation::Update, "v1", None);
        let two = Identity::new(other.0, other.1, other.2, other.3);
        assert_eq!(one == two, equal);
        assert_eq!(two == one, equal);
        assert!(two == two.clone());
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
