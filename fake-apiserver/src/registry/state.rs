//! Saved cluster state (`fake-apiserver --state FILE`): the file format's checks and the atomic
//! file write.
//!
//! A state file is `{"revision": "N", "objects": [{"resource": "group/plural", "object": {...}}]}`
//! as [`crate::FakeApiServer::export_state`] writes it. Loading checks the whole file before
//! anything is stored, so a truncated or corrupt file is refused with an error that says where
//! and what is wrong, and the server is left as it was. Saving writes a temporary file in the
//! same directory, syncs it to disk and renames it over the old one, so a crash or a kill at any
//! moment leaves either the old file or the new one, never a mixture.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use serde_json::Value;

use crate::registry::{self, Registry};
use crate::resource::ResourceInfo;
use crate::store::resource_key;

/// Why a state file cannot be loaded.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StateError {
    /// The file ends in the middle of the JSON document.
    #[error("the file is truncated: it ends after {bytes} bytes in the middle of a JSON value")]
    Truncated {
        /// The file's length.
        bytes: usize,
    },
    /// The file is not JSON.
    #[error("the file is not valid JSON: {message} (line {line}, column {column})")]
    Syntax {
        /// serde_json's description.
        message: String,
        /// Where, 1-based.
        line: usize,
        /// Where, 1-based.
        column: usize,
    },
    /// The JSON does not have the state's shape, or describes objects the server cannot hold.
    #[error("{at}: {problem}")]
    Invalid {
        /// Where in the document, e.g. `objects[3].object.metadata.name`.
        at: String,
        /// What is wrong there.
        problem: String,
    },
}

fn invalid(at: impl Into<String>, problem: impl Into<String>) -> StateError {
    StateError::Invalid {
        at: at.into(),
        problem: problem.into(),
    }
}

/// Parses a state file's bytes, telling a truncated file from one that is not JSON.
pub fn parse(bytes: &[u8]) -> Result<Value, StateError> {
    crate::store::json::from_slice(bytes).map_err(|e| match e.classify() {
        serde_json::error::Category::Eof => StateError::Truncated { bytes: bytes.len() },
        _ => StateError::Syntax {
            message: e.to_string(),
            line: e.line(),
            column: e.column(),
        },
    })
}

/// One object of a checked state.
#[derive(Debug, Clone)]
pub struct StateObject {
    /// The resource key, `group/plural`.
    pub resource: String,
    /// Namespace (empty for a cluster-scoped object).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The object's JSON.
    pub bytes: Bytes,
}

/// A state file's content after every check passed.
#[derive(Debug, Clone)]
pub struct CheckedState {
    /// The revision the state was saved at.
    pub revision: u64,
    /// Every object.
    pub objects: Vec<StateObject>,
    /// The resources each stored CRD serves, by CRD name.
    pub custom_resources: Vec<(String, Vec<ResourceInfo>)>,
}

/// Checks a parsed state document against the kinds `registry` serves (and those its own CRDs
/// define): every object is a JSON object of a known resource, with a name, a namespace exactly
/// when its resource is namespaced, a resourceVersion no newer than the state's revision, and
/// no two objects share a key.
pub fn check(state: &Value, registry: &Registry) -> Result<CheckedState, StateError> {
    let Some(top) = state.as_object() else {
        return Err(invalid("the document", "is not a JSON object"));
    };
    let revision = match top.get("revision") {
        Some(Value::String(r)) => r
            .parse::<u64>()
            .map_err(|_| invalid("revision", format!("{r:?} is not a revision number")))?,
        Some(Value::Number(n)) => n
            .as_u64()
            .ok_or_else(|| invalid("revision", format!("{n} is not a revision number")))?,
        Some(other) => return Err(invalid("revision", format!("{other} is not a string"))),
        None => return Err(invalid("revision", "is missing")),
    };
    let items = match top.get("objects") {
        Some(Value::Array(items)) => items,
        Some(_) => return Err(invalid("objects", "is not a list")),
        None => return Err(invalid("objects", "is missing")),
    };

    // The resources the state's own CRDs define, so that their objects are recognised.
    let crd_key = resource_key("apiextensions.k8s.io", "customresourcedefinitions");
    let mut custom_resources = Vec::new();
    let mut custom: HashMap<String, ResourceInfo> = HashMap::new();
    for item in items {
        if item["resource"].as_str() == Some(crd_key.as_str()) {
            let crd = &item["object"];
            let name = crd["metadata"]["name"].as_str().unwrap_or_default();
            // A CRD that serves no version defines nothing to check objects against.
            let infos = registry::resources_of_crd(crd);
            for info in &infos {
                custom.insert(resource_key(&info.group, &info.plural), info.clone());
            }
            custom_resources.push((name.to_string(), infos));
        }
    }

    let mut seen = HashSet::new();
    let mut objects = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("objects[{i}]");
        let Some(resource) = item["resource"].as_str() else {
            return Err(invalid(
                format!("{at}.resource"),
                "is missing or not a string",
            ));
        };
        let Some((group, plural)) = resource.split_once('/') else {
            return Err(invalid(
                format!("{at}.resource"),
                format!("{resource:?} is not \"group/plural\""),
            ));
        };
        let namespaced = match registry.lookup_resource(group, plural) {
            Some(info) => info.namespaced,
            None => match custom.get(resource) {
                Some(info) => info.namespaced,
                None => {
                    return Err(invalid(
                        format!("{at}.resource"),
                        format!("{resource:?} is not a resource this server serves, and no CustomResourceDefinition in the state defines it"),
                    ))
                }
            },
        };
        let object = &item["object"];
        if !object.is_object() {
            return Err(invalid(
                format!("{at}.object"),
                "is missing or not a JSON object",
            ));
        }
        let metadata = &object["metadata"];
        let name = match metadata["name"].as_str() {
            Some(name) if !name.is_empty() => name,
            _ => {
                return Err(invalid(
                    format!("{at}.object.metadata.name"),
                    "is missing or empty",
                ))
            }
        };
        let at = format!("{at} ({resource} {name:?})");
        let namespace = match (&metadata["namespace"], namespaced) {
            (Value::String(ns), true) if !ns.is_empty() => ns.clone(),
            (Value::Null, false) => String::new(),
            (Value::String(ns), false) if ns.is_empty() => String::new(),
            (_, true) => {
                return Err(invalid(
                    format!("{at}.metadata.namespace"),
                    "is missing, but the resource is namespaced",
                ))
            }
            (other, false) => {
                return Err(invalid(
                    format!("{at}.metadata.namespace"),
                    format!("is {other}, but the resource is cluster-scoped"),
                ))
            }
        };
        match &metadata["resourceVersion"] {
            Value::String(rv) => match rv.parse::<u64>() {
                Ok(rv) if rv <= revision => {}
                Ok(rv) => {
                    return Err(invalid(
                        format!("{at}.metadata.resourceVersion"),
                        format!("{rv} is newer than the state's revision {revision}"),
                    ))
                }
                Err(_) => {
                    return Err(invalid(
                        format!("{at}.metadata.resourceVersion"),
                        format!("{rv:?} is not a revision number"),
                    ))
                }
            },
            _ => {
                return Err(invalid(
                    format!("{at}.metadata.resourceVersion"),
                    "is missing or not a string",
                ))
            }
        }
        if !seen.insert((resource.to_string(), namespace.clone(), name.to_string())) {
            return Err(invalid(at, "appears twice in the state"));
        }
        let bytes = serde_json::to_vec(object).map_err(|e| invalid(&at, e.to_string()))?;
        objects.push(StateObject {
            resource: resource.to_string(),
            namespace,
            name: name.to_string(),
            bytes: Bytes::from(bytes),
        });
    }
    Ok(CheckedState {
        revision,
        objects,
        custom_resources,
    })
}

/// The temporary file [`write_atomically`] writes before renaming it to `path`.
pub fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".tmp.{}", std::process::id()));
    path.with_file_name(name)
}

/// Writes `contents` to `path` so that the file is at every moment either its old content or
/// the new one: a temporary file in the same directory is written and synced to disk, then
/// renamed over `path`, and the directory synced so the rename itself survives a crash.
///
/// `before_rename` runs once the temporary file is complete (tests use it to interrupt here).
pub fn write_atomically(
    path: &Path,
    contents: &[u8],
    before_rename: impl FnOnce(&Path),
) -> std::io::Result<()> {
    let temporary = temporary_path(path);
    let result = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(contents)?;
        file.sync_all()?;
        drop(file);
        before_rename(&temporary);
        std::fs::rename(&temporary, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&temporary);
        return Err(e);
    }
    // The rename is durable once the directory is synced (not every platform can).
    let directory = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if let Ok(dir) = std::fs::File::open(directory) {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cm(name: &str, ns: Option<&str>, rv: &str) -> Value {
        let mut m = json!({"name": name, "resourceVersion": rv});
        if let Some(ns) = ns {
            m["namespace"] = json!(ns);
        }
        json!({"resource": "/configmaps", "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": m}})
    }

    #[test]
    fn a_good_state_passes_with_its_custom_resources() {
        let crd = json!({"resource": "apiextensions.k8s.io/customresourcedefinitions", "object": {
            "metadata": {"name": "widgets.example.com", "resourceVersion": "3"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                     "versions": [{"name": "v1", "served": true, "storage": true}]}}});
        let widget = json!({"resource": "example.com/widgets", "object": {
            "metadata": {"name": "w", "namespace": "ns", "resourceVersion": "4"}}});
        let state = json!({"revision": "9", "objects": [cm("a", Some("ns"), "2"), widget, crd]});
        let checked = check(&state, &Registry::new()).unwrap();
        assert_eq!(checked.revision, 9);
        assert_eq!(checked.objects.len(), 3);
        assert_eq!(checked.custom_resources[0].0, "widgets.example.com");
    }

    #[rstest::rstest]
    #[case::not_an_object(json!([1]), "the document", "not a JSON object")]
    #[case::no_revision(json!({"objects": []}), "revision", "missing")]
    #[case::bad_revision(json!({"revision": "x", "objects": []}), "revision", "not a revision number")]
    #[case::no_objects(json!({"revision": "1"}), "objects", "missing")]
    #[case::objects_not_a_list(json!({"revision": "1", "objects": {}}), "objects", "not a list")]
    #[case::no_resource(json!({"revision": "1", "objects": [{"object": {}}]}), "objects[0].resource", "missing")]
    #[case::unknown_resource(json!({"revision": "1", "objects": [{"resource": "x.io/things", "object": {}}]}), "objects[0].resource", "not a resource this server serves")]
    #[case::not_group_plural(json!({"revision": "1", "objects": [{"resource": "configmaps", "object": {}}]}), "objects[0].resource", "not \"group/plural\"")]
    #[case::object_not_an_object(json!({"revision": "1", "objects": [{"resource": "/configmaps", "object": 5}]}), "objects[0].object", "not a JSON object")]
    #[case::no_name(json!({"revision": "1", "objects": [{"resource": "/configmaps", "object": {"metadata": {}}}]}), "objects[0].object.metadata.name", "missing")]
    #[case::no_namespace(json!({"revision": "5", "objects": [cm("a", None, "1")]}), "metadata.namespace", "namespaced")]
    #[case::rv_too_new(json!({"revision": "5", "objects": [cm("a", Some("ns"), "6")]}), "metadata.resourceVersion", "newer than the state's revision 5")]
    #[case::rv_not_a_number(json!({"revision": "5", "objects": [cm("a", Some("ns"), "x")]}), "metadata.resourceVersion", "not a revision number")]
    #[case::twice(json!({"revision": "5", "objects": [cm("a", Some("ns"), "1"), cm("a", Some("ns"), "2")]}), "objects[1]", "appears twice")]
    #[case::cluster_scoped_with_namespace(json!({"revision": "5", "objects": [{"resource": "/nodes", "object": {"metadata": {"name": "n", "namespace": "x", "resourceVersion": "1"}}}]}), "metadata.namespace", "cluster-scoped")]
    fn a_bad_state_is_refused_saying_where_and_what(
        #[case] state: Value,
        #[case] at: &str,
        #[case] problem: &str,
    ) {
        let error = check(&state, &Registry::new()).unwrap_err().to_string();
        assert!(error.contains(at), "{error}");
        assert!(error.contains(problem), "{error}");
    }

    #[test]
    fn truncated_and_garbled_files_are_told_apart() {
        let good = br#"{"revision": "1", "objects": [{"resource": "/configmaps"}]}"#;
        assert!(parse(good).is_ok());
        for cut in [1, 10, good.len() - 1] {
            assert_eq!(
                parse(&good[..cut]),
                Err(StateError::Truncated { bytes: cut }),
                "cut at {cut}"
            );
        }
        let error = parse(b"{\"revision\": \"1\",\n \"objects\": [x]}").unwrap_err();
        assert!(
            matches!(error, StateError::Syntax { line: 2, .. }),
            "{error}"
        );
        assert!(matches!(
            parse(b""),
            Err(StateError::Truncated { bytes: 0 })
        ));
    }

    #[test]
    fn an_atomic_write_replaces_the_file_or_leaves_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, "old").unwrap();
        write_atomically(&path, b"new", |temporary| {
            // Complete and beside the target, the old file still in place.
            assert_eq!(temporary.parent(), path.parent());
            assert_eq!(std::fs::read(temporary).unwrap(), b"new");
            assert_eq!(std::fs::read(&path).unwrap(), b"old");
        })
        .unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert!(!temporary_path(&path).exists());
        // A failed write leaves the old file and no temporary one.
        let missing = dir.path().join("no-such-dir").join("state.json");
        assert!(write_atomically(&missing, b"x", |_| {}).is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
