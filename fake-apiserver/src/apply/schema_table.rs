//! The apply schemas of the built-in kinds, precomputed.
//!
//! Building a kind's [`TypeSchema`] from its OpenAPI definitions means generating those
//! definitions first (k8s-openapi's `schemars` schemas, with the Kubernetes extensions added):
//! about a millisecond for the handful of kinds a starting server writes (namespaces, service
//! accounts, RBAC), most of it faulting in the generators' code. That was half of the
//! `fake-apiserver` binary's start, and every test process paid it again on its first write of
//! each kind. So the schemas are stored here, serialized, one line per kind
//! (`schema_table.txt`: definition name, a tab, the schema as JSON), and a kind's line is decoded
//! on its first use instead.
//!
//! The table is generated: `the_stored_schemas_are_the_generated_ones` fails when any line differs
//! from what [`super::schema::builtin_schema`] builds now (after a k8s-openapi upgrade, or a change
//! to how schemas are built), and rewrites the file when run with
//! `FAKE_APISERVER_UPDATE_SCHEMAS=1` (`make schemas`).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::schema::TypeSchema;

/// The stored table: `name\tjson` lines, sorted by name.
const TABLE: &str = include_str!("schema_table.txt");

/// The table's lines by definition name, split once: a starting server looks up several kinds,
/// and scanning the 200 KB table for each was a tenth of its start.
fn index() -> &'static BTreeMap<&'static str, &'static str> {
    static INDEX: OnceLock<BTreeMap<&'static str, &'static str>> = OnceLock::new();
    INDEX.get_or_init(|| {
        TABLE
            .lines()
            .filter_map(|line| line.split_once('\t'))
            .collect()
    })
}

/// The stored schema of the built-in kind whose definition is `name`; `None` when the table has
/// no such line (or it does not decode: then the caller builds the schema itself).
pub(super) fn stored(name: &str) -> Option<TypeSchema> {
    let json = *index().get(name)?;
    match serde_json::from_str(json) {
        Ok(schema) => Some(schema),
        Err(e) => {
            tracing::warn!(definition = name, error = %e, "stored apply schema does not decode; building it");
            None
        }
    }
}

/// The table as it would be generated now: every typed built-in kind's schema, sorted by name.
#[cfg(test)]
fn generated() -> String {
    let mut names: Vec<&str> = crate::openapi::builtin_definition_names().collect();
    names.sort_unstable();
    names.dedup();
    let mut out = String::new();
    for name in names {
        let schema = super::schema::builtin_schema(name);
        let json = serde_json::to_string(&schema).expect("a schema serializes");
        out.push_str(name);
        out.push('\t');
        out.push_str(&json);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each stored line is exactly what building the kind's schema gives now, and every typed
    /// kind has one. With `FAKE_APISERVER_UPDATE_SCHEMAS=1` the file is rewritten instead.
    #[test]
    fn the_stored_schemas_are_the_generated_ones() {
        let generated = generated();
        if std::env::var_os("FAKE_APISERVER_UPDATE_SCHEMAS").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/apply/schema_table.txt");
            std::fs::write(path, &generated).expect("the table can be written");
            return;
        }
        let stored: Vec<&str> = TABLE.lines().collect();
        let fresh: Vec<&str> = generated.lines().collect();
        for (stored, fresh) in stored.iter().zip(&fresh) {
            let name = fresh.split('\t').next().unwrap_or_default();
            assert_eq!(
                stored, fresh,
                "the stored apply schema of {name} is stale: run `make schemas`"
            );
        }
        assert_eq!(
            stored.len(),
            fresh.len(),
            "the stored table has {} kinds, the built-in kinds are {}: run `make schemas`",
            stored.len(),
            fresh.len()
        );
    }

    /// A stored schema decodes into the one built from the definitions (the serde names round
    /// trip), and a name without a line has no stored schema.
    #[test]
    fn stored_schemas_decode_to_the_built_ones() {
        for name in ["io.k8s.api.core.v1.Pod", "io.k8s.api.rbac.v1.ClusterRole"] {
            assert_eq!(
                stored(name),
                Some(super::super::schema::builtin_schema(name))
            );
        }
        assert_eq!(stored("io.k8s.api.core.v1.NoSuchKind"), None);
    }
}
