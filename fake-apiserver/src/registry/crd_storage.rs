//! The storage a CRD's objects are served from, and what rebuilding it does to readers.
//!
//! A real server builds one storage per CRD (a codec with the CRD's schemas, a watch cache) and
//! builds it again whenever the CRD's `spec` or `status.acceptedNames` change
//! (`updateCustomResourceDefinition` in apiextensions-apiserver's `customresource_handler.go`).
//! Three things follow, and each has its counterpart here:
//!
//! - **Reads decode with the schemas of now.** etcd keeps the bytes each object was written as;
//!   every read decodes them through `schemaCoercingDecoder` (pruning by the schema of the
//!   version the object is stored at) and `unstructuredDefaulter` (that schema's defaults). An
//!   object written before its version's schema gained a default is read with it; a field the
//!   schema dropped is not read, and is back if a later schema declares it again. The store
//!   here keeps the bytes as written, too: [`StorageEpoch::written_before_schema`] says which
//!   objects [`crate::registry::conversion`] decodes again.
//! - **Watches on the old storage end.** `tearDown` destroys the old storage's watch cache once
//!   in-flight requests drained (at least a second later), which ends its watches without an
//!   error event; clients watch again ([`WATCH_TEARDOWN_DELAY`]).
//! - **The new watch cache starts at the present.** It lists at the revision it was built
//!   at, so a watch resuming from before that revision is answered `410 Expired`
//!   (`too old resource version: <rv> (<list rv>)`, `getAllEventsSinceLocked`); clients list
//!   again ([`StorageEpoch::since`]).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

pub use crate::resource::{written_at, StorageEpoch};

/// How long after a CRD change its old storage's watches end: `tearDown` waits a second for
/// in-flight requests to register before waiting for them to drain.
pub const WATCH_TEARDOWN_DELAY: Duration = Duration::from_secs(1);

/// What a CRD write does to its storage.
#[derive(Debug, Clone, PartialEq)]
pub struct Rebuild {
    /// The storage to serve from now.
    pub epoch: StorageEpoch,
    /// Whether an existing storage was replaced (its watches are to end).
    pub replaced: bool,
}

/// The storage after a write of `crd` at `revision`, given the storage served until then
/// (`previous`, with the schemas it decoded with), if any.
pub fn rebuild(
    previous: Option<(&StorageEpoch, &BTreeMap<String, Value>)>,
    crd: &Value,
    revision: u64,
    schemas: &BTreeMap<String, Value>,
) -> Rebuild {
    let built_from = json!({
        "spec": crd["spec"],
        "acceptedNames": crd["status"]["acceptedNames"],
    });
    let Some((previous, previous_schemas)) = previous else {
        return Rebuild {
            epoch: StorageEpoch {
                since: revision,
                schema_changed: BTreeMap::new(),
                built_from,
            },
            replaced: false,
        };
    };
    if previous.built_from == built_from {
        return Rebuild {
            epoch: previous.clone(),
            replaced: false,
        };
    }
    let mut schema_changed = previous.schema_changed.clone();
    for (version, schema) in schemas {
        if previous_schemas.get(version) != Some(schema) {
            schema_changed.insert(version.clone(), revision);
        }
    }
    Rebuild {
        epoch: StorageEpoch {
            since: revision,
            schema_changed,
            built_from,
        },
        replaced: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(schema: Value, plural: &str) -> Value {
        json!({
            "spec": {"group": "example.com", "names": {"plural": plural, "kind": "Widget"},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": schema}}]},
            "status": {"acceptedNames": {"plural": plural, "kind": "Widget"}},
        })
    }

    fn schemas(schema: &Value) -> BTreeMap<String, Value> {
        BTreeMap::from([("v1".to_string(), schema.clone())])
    }

    #[test]
    fn a_new_crd_builds_a_storage_at_its_revision() {
        let schema = json!({"type": "object"});
        let rebuild = rebuild(None, &crd(schema.clone(), "widgets"), 7, &schemas(&schema));
        assert!(!rebuild.replaced);
        assert_eq!(rebuild.epoch.since, 7);
        assert!(!rebuild.epoch.any_schema_changed());
        assert!(rebuild.epoch.watch_too_old(6).is_some());
        assert!(rebuild.epoch.watch_too_old(7).is_none());
    }

    #[test]
    fn a_write_that_changes_neither_spec_nor_accepted_names_keeps_the_storage() {
        let schema = json!({"type": "object"});
        let first = rebuild(None, &crd(schema.clone(), "widgets"), 7, &schemas(&schema));
        let mut relabelled = crd(schema.clone(), "widgets");
        relabelled["metadata"] = json!({"labels": {"a": "b"}});
        relabelled["status"]["conditions"] = json!([{"type": "Established"}]);
        let again = rebuild(
            Some((&first.epoch, &schemas(&schema))),
            &relabelled,
            9,
            &schemas(&schema),
        );
        assert!(!again.replaced);
        assert_eq!(again.epoch, first.epoch);
    }

    #[test]
    fn a_schema_change_replaces_the_storage_and_dates_the_schema() {
        let old = json!({"type": "object"});
        let new = json!({"type": "object", "properties": {"spec": {"type": "object"}}});
        let first = rebuild(None, &crd(old.clone(), "widgets"), 7, &schemas(&old));
        let changed = rebuild(
            Some((&first.epoch, &schemas(&old))),
            &crd(new.clone(), "widgets"),
            12,
            &schemas(&new),
        );
        assert!(changed.replaced);
        assert_eq!(changed.epoch.since, 12);
        assert_eq!(changed.epoch.schema_changed.get("v1"), Some(&12));
        let at = |rv: &str| json!({"metadata": {"resourceVersion": rv}});
        assert!(changed.epoch.written_before_schema("v1", &at("11")));
        assert!(!changed.epoch.written_before_schema("v1", &at("12")));
        assert!(!changed.epoch.written_before_schema("v2", &at("11")));
        // A change elsewhere in the spec replaces the storage but keeps the schema's date.
        let mut renamed = crd(new.clone(), "widgets");
        renamed["spec"]["names"]["shortNames"] = json!(["wd"]);
        let later = rebuild(
            Some((&changed.epoch, &schemas(&new))),
            &renamed,
            20,
            &schemas(&new),
        );
        assert!(later.replaced);
        assert_eq!(later.epoch.since, 20);
        assert_eq!(later.epoch.schema_changed.get("v1"), Some(&12));
    }

    #[test]
    fn accepted_names_changing_replaces_the_storage() {
        let schema = json!({"type": "object"});
        let first = rebuild(None, &crd(schema.clone(), "widgets"), 7, &schemas(&schema));
        let mut renamed = crd(schema.clone(), "widgets");
        renamed["status"]["acceptedNames"]["shortNames"] = json!(["wd"]);
        let again = rebuild(
            Some((&first.epoch, &schemas(&schema))),
            &renamed,
            8,
            &schemas(&schema),
        );
        assert!(again.replaced);
        assert!(!again.epoch.any_schema_changed());
    }
}
