//! Defaults in a CRD schema (`defaulting.ValidateDefaults`): a default must be pruned (hold no
//! field its schema would drop) and must itself validate against its schema.
//!
//! Defaults are not followed into `additionalProperties` (they are forbidden there), and a
//! default inside an embedded resource's `apiVersion`, `kind` or `metadata` is not checked
//! (upstream coerces and validates it as object metadata).

use serde_json::Value;

use super::openapi::{flag, present, props};
use super::{go_value, Path};
use crate::rules::validation::{Cause, FieldErrorType};

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// `ValidateDefaults` for a resource's root schema at `path`.
pub fn validate(path: &Path, schema: &Value, require_pruned: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    // The root is a resource: it is treated as an embedded resource.
    walk(path, schema, true, false, require_pruned, &mut causes);
    causes
}

fn walk(
    path: &Path,
    s: &Value,
    resource_root: bool,
    inside_meta: bool,
    require_pruned: bool,
    causes: &mut Vec<Cause>,
) {
    if !s.is_object() {
        return;
    }
    let embedded = resource_root || flag(s, "x-kubernetes-embedded-resource");
    let inside_meta = inside_meta && !embedded;
    if let Some(default) = present(s, "default") {
        if !inside_meta {
            let default_path = path.child("default");
            if require_pruned {
                let mut pruned = default.clone();
                crate::rules::schema::prune_at(s, &mut pruned, embedded);
                if !crate::store::value_eq::equal(&pruned, default) {
                    causes.push(Cause::new(
                        FieldErrorType::Invalid,
                        &default_path,
                        Some(go_value::go_json(default)),
                        "must not have unknown fields",
                    ));
                }
            }
            causes.extend(
                crate::rules::schema::validate_detached(s, default)
                    .into_iter()
                    .map(|c| prefixed(c, &default_path)),
            );
        }
    }
    if let Some(items) = present(s, "items").filter(|i| i.is_object()) {
        walk(
            &path.child("items"),
            items,
            false,
            inside_meta,
            require_pruned,
            causes,
        );
    }
    if let Some(properties) = props(s) {
        let mut keys: Vec<&String> = properties.keys().collect();
        keys.sort();
        for key in keys {
            let sub_inside = inside_meta || (embedded && META_FIELDS.contains(&key.as_str()));
            walk(
                &path.child("properties").key(key),
                &properties[key.as_str()],
                false,
                sub_inside,
                require_pruned,
                causes,
            );
        }
    }
}

/// Puts a cause found in a default value under the default's own path.
fn prefixed(mut cause: Cause, prefix: &Path) -> Cause {
    cause.field = if cause.field.is_empty() {
        prefix.to_string()
    } else if cause.field.starts_with('[') {
        format!("{prefix}{}", cause.field)
    } else {
        format!("{prefix}.{}", cause.field)
    };
    cause
}

/// Whether a schema has a default that pruning would change (`schemaHasUnprunedDefaults`).
pub fn has_unpruned_defaults(schema: &Value) -> bool {
    fn walk(s: &Value, root: bool) -> bool {
        if !s.is_object() {
            return false;
        }
        let embedded = root || flag(s, "x-kubernetes-embedded-resource");
        if let Some(default) = present(s, "default") {
            let mut pruned = default.clone();
            crate::rules::schema::prune_at(s, &mut pruned, embedded);
            if !crate::store::value_eq::equal(&pruned, default) {
                return true;
            }
        }
        present(s, "items").is_some_and(|i| walk(i, false))
            || props(s).is_some_and(|p| p.values().any(|v| walk(v, false)))
    }
    super::structural::is_structural(schema) && walk(schema, true)
}
