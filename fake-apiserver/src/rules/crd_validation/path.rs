//! Field paths as `k8s.io/apimachinery/pkg/util/validation/field.Path` prints them:
//! `spec.versions[0].schema.openAPIV3Schema.properties[status].items`.

use std::fmt;

/// A field path: children joined with `.`, map keys and list indexes in brackets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path(String);

impl Path {
    /// A path with one root element.
    pub fn new(root: &str) -> Self {
        Path(root.to_string())
    }

    /// `path.Child(name)`; a name may hold several dot-separated elements.
    pub fn child(&self, name: &str) -> Self {
        if self.0.is_empty() {
            Path(name.to_string())
        } else {
            Path(format!("{}.{name}", self.0))
        }
    }

    /// `path.Key(key)`: `path[key]`.
    pub fn key(&self, key: &str) -> Self {
        Path(format!("{}[{key}]", self.0))
    }

    /// `path.Index(i)`: `path[i]`.
    pub fn index(&self, i: usize) -> Self {
        Path(format!("{}[{i}]", self.0))
    }

    /// The rendered path.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&Path> for String {
    fn from(p: &Path) -> String {
        p.0.clone()
    }
}

impl From<Path> for String {
    fn from(p: Path) -> String {
        p.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_field_path() {
        let p = Path::new("spec")
            .child("versions")
            .index(1)
            .child("schema.openAPIV3Schema")
            .child("properties")
            .key("status");
        assert_eq!(
            p.as_str(),
            "spec.versions[1].schema.openAPIV3Schema.properties[status]"
        );
        assert_eq!(String::from(Path::new("").child("a")), "a");
    }
}
