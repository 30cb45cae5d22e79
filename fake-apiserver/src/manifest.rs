//! Reading Kubernetes manifests from disk: a file or a directory of YAML (`---`-separated
//! documents) and JSON (one or more concatenated objects) files, with `kind: List` and other
//! `*List` objects flattened into their items.
//!
//! The objects come back ready to apply in order: CustomResourceDefinitions first (so the custom
//! resources after them are served), then Namespaces (so namespaced objects have a home), then
//! everything else in file order. Errors name the file and the document's index within it.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Number, Value};

/// Why manifests could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// A file or directory could not be read.
    #[error("reading {path}: {source}", path = path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A document is not valid YAML or JSON.
    #[error("{path}: document {index}: {message}", path = path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The 0-based index of the document within the file.
        index: usize,
        /// What the parser said.
        message: String,
    },
    /// A document parsed but is not a Kubernetes object (no `apiVersion`/`kind`, not a mapping).
    #[error("{path}: document {index}: {message}", path = path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The 0-based index of the document within the file.
        index: usize,
        /// What is wrong with it.
        message: String,
    },
}

/// File name extensions read from a directory (compared case-insensitively).
const MANIFEST_EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];

/// Loads every object from `path`: one file, or every `.yaml`/`.yml`/`.json` file under a
/// directory (recursively, in path order). The result is ordered for applying (see
/// [`order_for_apply`]).
pub fn load(path: &Path) -> Result<Vec<Value>, ManifestError> {
    let io_error = |source| ManifestError::Io {
        path: path.to_path_buf(),
        source,
    };
    let metadata = std::fs::metadata(path).map_err(io_error)?;
    let files = if metadata.is_dir() {
        let mut files = Vec::new();
        collect_manifest_files(path, &mut files)?;
        files.sort();
        files
    } else {
        vec![path.to_path_buf()]
    };
    let mut objects = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|source| ManifestError::Io {
            path: file.clone(),
            source,
        })?;
        objects.extend(parse(&text, &file)?);
    }
    order_for_apply(&mut objects);
    tracing::debug!(path = %path.display(), objects = objects.len(), "manifests loaded");
    Ok(objects)
}

/// Parses the text of one manifest file. `origin` names it in errors and picks the format: a
/// `.json` file is read as a stream of JSON values, anything else as multi-document YAML. Empty
/// documents are skipped; lists are flattened. Objects keep their order in the file.
pub fn parse(text: &str, origin: &Path) -> Result<Vec<Value>, ManifestError> {
    let is_json = origin
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let documents = if is_json {
        parse_json_stream(text, origin)?
    } else {
        parse_yaml_stream(text, origin)?
    };
    let mut objects = Vec::new();
    for (index, document) in documents.into_iter().enumerate() {
        if document.is_null() {
            continue;
        }
        flatten(document, &mut objects).map_err(|message| ManifestError::Invalid {
            path: origin.to_path_buf(),
            index,
            message,
        })?;
    }
    Ok(objects)
}

/// Orders objects for applying: CustomResourceDefinitions, then Namespaces, then the rest, each
/// group keeping its original order.
pub fn order_for_apply(objects: &mut [Value]) {
    objects.sort_by_key(|object| {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        if kind == "CustomResourceDefinition" && api_version.starts_with("apiextensions.k8s.io/") {
            0
        } else if kind == "Namespace" && api_version == "v1" {
            1
        } else {
            2
        }
    });
}

fn collect_manifest_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ManifestError> {
    let io_error = |source| ManifestError::Io {
        path: dir.to_path_buf(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(io_error)? {
        let path = entry.map_err(io_error)?.path();
        if path.is_dir() {
            collect_manifest_files(&path, out)?;
        } else if path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
            MANIFEST_EXTENSIONS
                .iter()
                .any(|x| e.eq_ignore_ascii_case(x))
        }) {
            out.push(path);
        }
    }
    Ok(())
}

fn parse_json_stream(text: &str, origin: &Path) -> Result<Vec<Value>, ManifestError> {
    let mut documents = Vec::new();
    for (index, document) in serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .enumerate()
    {
        documents.push(document.map_err(|e| ManifestError::Parse {
            path: origin.to_path_buf(),
            index,
            message: e.to_string(),
        })?);
    }
    Ok(documents)
}

fn parse_yaml_stream(text: &str, origin: &Path) -> Result<Vec<Value>, ManifestError> {
    let mut documents = Vec::new();
    for (index, document) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let parse_error = |message: String| ManifestError::Parse {
            path: origin.to_path_buf(),
            index,
            message,
        };
        let yaml =
            serde_yaml::Value::deserialize(document).map_err(|e| parse_error(e.to_string()))?;
        documents.push(yaml_to_json(yaml).map_err(parse_error)?);
    }
    Ok(documents)
}

/// Converts YAML to JSON the way Kubernetes' YAML reader does: scalar mapping keys become strings,
/// tags are dropped.
fn yaml_to_json(yaml: serde_yaml::Value) -> Result<Value, String> {
    Ok(match yaml {
        serde_yaml::Value::Null => Value::Null,
        serde_yaml::Value::Bool(b) => Value::Bool(b),
        serde_yaml::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                Value::Number(
                    Number::from_f64(f).ok_or_else(|| format!("number {n} has no JSON form"))?,
                )
            }
        }
        serde_yaml::Value::String(s) => Value::String(s),
        serde_yaml::Value::Sequence(items) => Value::Array(
            items
                .into_iter()
                .map(yaml_to_json)
                .collect::<Result<_, _>>()?,
        ),
        serde_yaml::Value::Mapping(mapping) => {
            let mut map = Map::new();
            for (key, value) in mapping {
                let key = match key {
                    serde_yaml::Value::String(s) => s,
                    serde_yaml::Value::Bool(b) => b.to_string(),
                    serde_yaml::Value::Number(n) => n.to_string(),
                    serde_yaml::Value::Null => "null".to_string(),
                    _ => return Err("a mapping key must be a scalar".to_string()),
                };
                map.insert(key, yaml_to_json(value)?);
            }
            Value::Object(map)
        }
        serde_yaml::Value::Tagged(tagged) => yaml_to_json(tagged.value)?,
    })
}

/// Appends `document` to `out`, or its items if it is a list; checks each is a Kubernetes object.
fn flatten(document: Value, out: &mut Vec<Value>) -> Result<(), String> {
    check_object(&document)?;
    let is_list = document["kind"]
        .as_str()
        .is_some_and(|kind| kind.ends_with("List"))
        && document["items"].is_array();
    if !is_list {
        out.push(document);
        return Ok(());
    }
    let Value::Object(mut list) = document else {
        return Ok(());
    };
    let Some(Value::Array(items)) = list.remove("items") else {
        return Ok(());
    };
    for (position, item) in items.into_iter().enumerate() {
        flatten(item, out).map_err(|message| format!("items[{position}]: {message}"))?;
    }
    Ok(())
}

fn check_object(document: &Value) -> Result<(), String> {
    let Value::Object(map) = document else {
        return Err("not a mapping (a Kubernetes object is a mapping)".to_string());
    };
    for field in ["apiVersion", "kind"] {
        match map.get(field) {
            Some(Value::String(s)) if !s.is_empty() => {}
            _ => return Err(format!("'{field}' is missing or not a non-empty string")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn kinds(objects: &[Value]) -> Vec<String> {
        objects
            .iter()
            .map(|o| {
                format!(
                    "{}/{}",
                    o["kind"].as_str().unwrap(),
                    o["metadata"]["name"].as_str().unwrap_or("")
                )
            })
            .collect()
    }

    #[test]
    fn yaml_documents_lists_and_empty_documents() {
        let text = "\
---
# only a comment
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
data: {1: one, true: yes}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Secret, metadata: {name: b}}
- apiVersion: v1
  kind: ConfigMapList
  items:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
---
";
        let objects = parse(text, Path::new("x.yaml")).unwrap();
        assert_eq!(kinds(&objects), ["ConfigMap/a", "Secret/b", "ConfigMap/c"]);
        assert_eq!(objects[0]["data"], json!({"1": "one", "true": "yes"}));
    }

    #[test]
    fn json_streams() {
        let text = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}
            {"apiVersion":"v1","kind":"PodList","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}]}"#;
        let objects = parse(text, Path::new("x.JSON")).unwrap();
        assert_eq!(kinds(&objects), ["ConfigMap/a", "Pod/p"]);
    }

    #[rstest]
    #[case("x.yaml", "a: 1\n---\nkind: [\n", 1, "Parse")]
    #[case("x.yaml", "apiVersion: v1\nkind: A\n---\n- 1\n", 1, "Invalid")]
    #[case("x.yaml", "kind: ConfigMap\n", 0, "Invalid")]
    #[case("x.yaml", "apiVersion: v1\nkind: \"\"\n", 0, "Invalid")]
    #[case("x.json", "{\"apiVersion\":\"v1\",\"kind\":\"A\"} {oops", 1, "Parse")]
    #[case(
        "x.yaml",
        "apiVersion: v1\nkind: List\nitems:\n- {kind: Pod}\n",
        0,
        "Invalid"
    )]
    #[case("x.yaml", "apiVersion: v1\nkind: A\n? [1]\n: x\n", 0, "Parse")]
    fn errors_name_the_file_and_document(
        #[case] file: &str,
        #[case] text: &str,
        #[case] expected_index: usize,
        #[case] expected_kind: &str,
    ) {
        let error = parse(text, Path::new(file)).unwrap_err();
        let (path, index, kind) = match &error {
            ManifestError::Parse { path, index, .. } => (path, *index, "Parse"),
            ManifestError::Invalid { path, index, .. } => (path, *index, "Invalid"),
            ManifestError::Io { .. } => panic!("unexpected {error}"),
        };
        assert_eq!(path, Path::new(file));
        assert_eq!(index, expected_index, "{error}");
        assert_eq!(kind, expected_kind, "{error}");
        assert!(
            error
                .to_string()
                .starts_with(&format!("{file}: document {expected_index}: ")),
            "{error}"
        );
    }

    #[test]
    fn list_item_errors_say_which_item() {
        let error = parse(
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod}\n- {kind: Pod}\n",
            Path::new("l.yaml"),
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("items[1]: 'apiVersion'"),
            "{error}"
        );
    }

    #[test]
    fn directories_are_read_recursively_in_order_with_crds_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(
            dir.path().join("a.yaml"),
            "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: team}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("b.json"),
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("sub/crd.yml"),
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("README.md"), "not a manifest: [").unwrap();
        let objects = load(dir.path()).unwrap();
        assert_eq!(
            kinds(&objects),
            [
                "CustomResourceDefinition/widgets.example.com",
                "Namespace/team",
                "Widget/w"
            ]
        );
        let single = load(&dir.path().join("a.yaml")).unwrap();
        assert_eq!(kinds(&single), ["Widget/w"]);
    }

    #[test]
    fn missing_paths_are_io_errors() {
        let error = load(Path::new("/nonexistent/manifests")).unwrap_err();
        assert!(matches!(error, ManifestError::Io { .. }));
        assert!(error.to_string().contains("/nonexistent/manifests"));
    }
}
