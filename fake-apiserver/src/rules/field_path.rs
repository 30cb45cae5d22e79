//! Field paths written out only when a cause needs them.
//!
//! Validation walks every field of an object and names each one it descends into
//! (`spec.containers[0].ports`), but almost every object is valid, so almost none of those names
//! is ever read. A [`FieldPath`] is a step below a parent path (any `Display`: a `&str` at the
//! root, or another `FieldPath`) that costs two words on the stack; it is formatted — the
//! parent's path, then the step — only when a cause's message or field is built from it.

use std::fmt;

/// One step below a parent path: `parent.name`, `parent[index]` or `parent[key]`.
#[derive(Clone, Copy)]
pub struct FieldPath<'a> {
    parent: &'a dyn fmt::Display,
    step: Step<'a>,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Field(&'a str),
    Index(usize),
    Key(&'a str),
}

impl<'a> FieldPath<'a> {
    /// `parent.name`.
    pub fn field(parent: &'a dyn fmt::Display, name: &'a str) -> Self {
        FieldPath {
            parent,
            step: Step::Field(name),
        }
    }

    /// `parent[key]` (a map's key, as Go's `field.Path.Key` writes it).
    pub fn key(parent: &'a dyn fmt::Display, key: &'a str) -> Self {
        FieldPath {
            parent,
            step: Step::Key(key),
        }
    }

    /// `parent[index]`.
    pub fn index(parent: &'a dyn fmt::Display, index: usize) -> Self {
        FieldPath {
            parent,
            step: Step::Index(index),
        }
    }
}

impl fmt::Display for FieldPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.parent.fmt(f)?;
        match self.step {
            Step::Field(name) => write!(f, ".{name}"),
            Step::Index(index) => write!(f, "[{index}]"),
            Step::Key(key) => write!(f, "[{key}]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_reads_as_its_parent_then_its_steps() {
        let root = "spec";
        let containers = FieldPath::field(&root, "containers");
        let first = FieldPath::index(&containers, 0);
        let ports = FieldPath::field(&first, "ports");
        assert_eq!(ports.to_string(), "spec.containers[0].ports");
        assert_eq!(
            format!("{}", FieldPath::index(&ports, 12)),
            "spec.containers[0].ports[12]"
        );
        let limits = FieldPath::field(&ports, "limits");
        assert_eq!(
            FieldPath::key(&limits, "cpu").to_string(),
            "spec.containers[0].ports.limits[cpu]"
        );
        let owned = String::from("spec.template.spec");
        assert_eq!(
            FieldPath::field(&owned, "volumes").to_string(),
            "spec.template.spec.volumes"
        );
    }
}
