//! The shape of an object as server-side apply sees it: for each position, whether it is a
//! scalar, a list (atomic, a set, or a map keyed by some of its elements' fields) or a map
//! (a struct with named fields, or a map of arbitrary keys; granular or atomic).
//!
//! Built from OpenAPI schemas the way kube-openapi's `schemaconv` builds structured-merge-diff
//! schemas: `x-kubernetes-list-type` (`atomic`, `set`, `map` with `x-kubernetes-list-map-keys`),
//! else `x-kubernetes-patch-strategy: merge` (keyed by `x-kubernetes-patch-merge-key`, or a set),
//! else atomic; `x-kubernetes-map-type` (`atomic`, `granular`, the default). Positions without a
//! type (`x-kubernetes-preserve-unknown-fields`, no schema) are *deduced*: maps granular, lists
//! atomic; `x-kubernetes-int-or-string` is an untyped atomic value.
//!
//! Built-in kinds use the server's own OpenAPI definitions ([`crate::openapi::builtin_definitions_of`],
//! which carry the upstream extensions); custom resources their CRD's `openAPIV3Schema` with the
//! built-in `ObjectMeta` at `metadata`, as kube-apiserver does.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::fieldpath::PathElement;
use crate::resource::ResourceInfo;

/// Index of a type in a [`TypeSchema`].
pub type TypeId = usize;

/// How the elements of a list are told apart.
///
/// (The serde names are short: built-in kinds' schemas are stored serialized in
/// [`super::schema_table`].)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ListKind {
    /// The list is one value.
    #[serde(rename = "a")]
    Atomic,
    /// Scalars identified by value (`x-kubernetes-list-type: set`).
    #[serde(rename = "s")]
    Set,
    /// Objects identified by key fields, each with its default (if the schema has one).
    #[serde(rename = "m")]
    Map(Vec<(String, Option<Value>)>),
}

/// One type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Atom {
    /// A string, number or boolean.
    #[serde(rename = "s")]
    Scalar,
    /// A list.
    #[serde(rename = "l")]
    List {
        /// Element type.
        #[serde(rename = "e")]
        elem: TypeId,
        /// How elements are identified.
        #[serde(rename = "k")]
        kind: ListKind,
    },
    /// A struct (named fields) and/or a map (any key, of type `elem`).
    #[serde(rename = "m")]
    Map {
        /// Named fields.
        #[serde(rename = "f")]
        fields: BTreeMap<Arc<str>, TypeId>,
        /// The type of keys not in `fields` (`None`: such keys are deduced).
        #[serde(rename = "e")]
        elem: Option<TypeId>,
        /// `x-kubernetes-map-type: atomic`.
        #[serde(rename = "a")]
        atomic: bool,
    },
    /// Anything: a scalar, an atomic list, or a granular map of deduced values.
    #[serde(rename = "d")]
    Deduced,
    /// Anything, always atomic (`x-kubernetes-int-or-string`, untyped values).
    #[serde(rename = "u")]
    UntypedAtomic,
}

/// The types of one kind, with the root at [`TypeSchema::root`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypeSchema {
    atoms: Vec<Atom>,
    /// The type of the whole object.
    pub root: TypeId,
}

/// The index of [`Atom::Deduced`] in every schema.
pub const DEDUCED: TypeId = 0;
/// The index of [`Atom::UntypedAtomic`] in every schema.
pub const UNTYPED_ATOMIC: TypeId = 1;
/// The index of [`Atom::Scalar`] in every schema.
pub const SCALAR: TypeId = 2;

impl TypeSchema {
    /// The type at `id` (deduced for an out-of-range id).
    pub fn atom(&self, id: TypeId) -> &Atom {
        self.atoms.get(id).unwrap_or(&Atom::Deduced)
    }

    /// A schema where everything is deduced (for kinds without a schema).
    pub fn deduced() -> Self {
        Builder::new(&EMPTY_DEFINITIONS).finish(DEDUCED)
    }

    /// The type of field `name` inside the map type `id`.
    pub fn field_type(&self, id: TypeId, name: &str) -> TypeId {
        match self.atom(id) {
            Atom::Map { fields, elem, .. } => {
                fields.get(name).copied().or(*elem).unwrap_or(DEDUCED)
            }
            Atom::UntypedAtomic => UNTYPED_ATOMIC,
            _ => DEDUCED,
        }
    }

    /// The path element of the member `name` of the map type `id`, and its type
    /// ([`TypeSchema::field_type`]): a named field's element shares the schema's copy of the name
    /// (a reference count, no allocation), any other key's gets a copy of its own.
    pub fn member(&self, id: TypeId, name: &str) -> (PathElement, TypeId) {
        match self.atom(id) {
            Atom::Map { fields, elem, .. } => match fields.get_key_value(name) {
                Some((shared, ty)) => (PathElement::Field(Arc::clone(shared)), *ty),
                None => (PathElement::Field(name.into()), elem.unwrap_or(DEDUCED)),
            },
            Atom::UntypedAtomic => (PathElement::Field(name.into()), UNTYPED_ATOMIC),
            _ => (PathElement::Field(name.into()), DEDUCED),
        }
    }

    /// A cursor giving [`TypeSchema::member`] of names asked in sorted order (a map's keys, or
    /// some of them): one walk along the type's sorted fields beside them rather than a search
    /// per name.
    pub fn members_in_order(&self, id: TypeId) -> MembersInOrder<'_> {
        let (fields, other) = match self.atom(id) {
            Atom::Map { fields, elem, .. } => {
                (Some(fields.iter().peekable()), elem.unwrap_or(DEDUCED))
            }
            Atom::UntypedAtomic => (None, UNTYPED_ATOMIC),
            _ => (None, DEDUCED),
        };
        MembersInOrder {
            fields,
            other,
            #[cfg(debug_assertions)]
            last: None,
        }
    }

    /// Whether `name` is a named (struct) field of the map type `id`.
    pub fn is_struct_field(&self, id: TypeId, name: &str) -> bool {
        matches!(self.atom(id), Atom::Map { fields, .. } if fields.contains_key(name))
    }
}

/// [`TypeSchema::members_in_order`]'s cursor.
pub struct MembersInOrder<'s> {
    /// The type's named fields not yet passed (`None`: it has none).
    fields: Option<std::iter::Peekable<std::collections::btree_map::Iter<'s, Arc<str>, TypeId>>>,
    /// The type of a name that is not a field.
    other: TypeId,
    /// The name asked last (debug builds check the order).
    #[cfg(debug_assertions)]
    last: Option<String>,
}

impl MembersInOrder<'_> {
    /// [`TypeSchema::member`] of `name`, which sorts after every name asked before.
    pub fn member(&mut self, name: &str) -> (PathElement, TypeId) {
        #[cfg(debug_assertions)]
        {
            debug_assert!(
                self.last.as_deref().is_none_or(|last| last < name),
                "{name:?} asked after {:?}",
                self.last
            );
            self.last = Some(name.to_string());
        }
        let Some(fields) = self.fields.as_mut() else {
            return (PathElement::Field(name.into()), self.other);
        };
        while fields.next_if(|(field, _)| &***field < name).is_some() {}
        match fields.next_if(|(field, _)| &***field == name) {
            Some((shared, ty)) => (PathElement::Field(Arc::clone(shared)), *ty),
            None => (PathElement::Field(name.into()), self.other),
        }
    }
}

static EMPTY_DEFINITIONS: std::sync::LazyLock<Map<String, Value>> =
    std::sync::LazyLock::new(Map::new);

/// Converts OpenAPI schemas into a [`TypeSchema`], resolving `$ref`s against `definitions`.
struct Builder<'a> {
    definitions: &'a Map<String, Value>,
    atoms: Vec<Atom>,
    by_name: HashMap<String, TypeId>,
}

const REF_PREFIXES: [&str; 2] = ["#/components/schemas/", "#/definitions/"];

impl<'a> Builder<'a> {
    fn new(definitions: &'a Map<String, Value>) -> Self {
        Self {
            definitions,
            atoms: vec![Atom::Deduced, Atom::UntypedAtomic, Atom::Scalar],
            by_name: HashMap::new(),
        }
    }

    fn finish(self, root: TypeId) -> TypeSchema {
        TypeSchema {
            atoms: self.atoms,
            root,
        }
    }

    fn push(&mut self, atom: Atom) -> TypeId {
        self.atoms.push(atom);
        self.atoms.len() - 1
    }

    /// The type of a named definition (converted once; recursion is fine).
    fn named(&mut self, name: &str) -> TypeId {
        if let Some(id) = self.by_name.get(name) {
            return *id;
        }
        let Some(definition) = self.definitions.get(name) else {
            return DEDUCED;
        };
        let id = self.push(Atom::Deduced);
        self.by_name.insert(name.to_string(), id);
        let atom = self.atom_of(definition);
        self.atoms[id] = atom;
        id
    }

    fn reference(schema: &Value) -> Option<&str> {
        let r = schema.get("$ref").and_then(Value::as_str).or_else(|| {
            // `allOf: [{$ref}]`, as some generators wrap a reference with a description.
            match schema.get("allOf").and_then(Value::as_array)?.as_slice() {
                [only] => only.get("$ref").and_then(Value::as_str),
                _ => None,
            }
        })?;
        REF_PREFIXES.iter().find_map(|p| r.strip_prefix(p))
    }

    /// The type of a schema node.
    fn convert(&mut self, schema: &Value) -> TypeId {
        if let Some(name) = Self::reference(schema) {
            let id = self.named(name);
            // A reference may override the map type of what it points to.
            if let Some(map_type) = schema.get("x-kubernetes-map-type").and_then(Value::as_str) {
                if let Atom::Map { fields, elem, .. } = self.atom(id).clone() {
                    return self.push(Atom::Map {
                        fields,
                        elem,
                        atomic: map_type == "atomic",
                    });
                }
            }
            return id;
        }
        let atom = self.atom_of(schema);
        match atom {
            Atom::Deduced => DEDUCED,
            Atom::UntypedAtomic => UNTYPED_ATOMIC,
            Atom::Scalar => SCALAR,
            other => self.push(other),
        }
    }

    fn atom(&self, id: TypeId) -> &Atom {
        self.atoms.get(id).unwrap_or(&Atom::Deduced)
    }

    fn atom_of(&mut self, schema: &Value) -> Atom {
        if let Some(name) = Self::reference(schema) {
            let id = self.named(name);
            return self.atom(id).clone();
        }
        let flag = |key: &str| schema.get(key).and_then(Value::as_bool) == Some(true);
        if flag("x-kubernetes-int-or-string") {
            return Atom::UntypedAtomic;
        }
        let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
        let properties = schema.get("properties").and_then(Value::as_object);
        match ty {
            "string" | "integer" | "number" | "boolean" => Atom::Scalar,
            "array" => {
                let elem = schema
                    .get("items")
                    .filter(|i| i.is_object())
                    .map(|i| self.convert(i))
                    .unwrap_or(UNTYPED_ATOMIC);
                let kind = self.list_kind(schema, elem);
                Atom::List { elem, kind }
            }
            "object" | ""
                if properties.is_some() || schema.get("additionalProperties").is_some() =>
            {
                let mut fields = BTreeMap::new();
                for (name, prop) in properties.into_iter().flatten() {
                    let id = self.convert(prop);
                    fields.insert(name.as_str().into(), id);
                }
                let elem = match schema.get("additionalProperties") {
                    Some(Value::Object(ap)) => Some(self.convert(&Value::Object(ap.clone()))),
                    Some(Value::Bool(true)) => Some(DEDUCED),
                    _ if flag("x-kubernetes-preserve-unknown-fields") => Some(DEDUCED),
                    _ => None,
                };
                let atomic =
                    schema.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic");
                Atom::Map {
                    fields,
                    elem,
                    atomic,
                }
            }
            "object" => {
                if schema.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic") {
                    Atom::UntypedAtomic
                } else {
                    Atom::Deduced
                }
            }
            _ => Atom::Deduced,
        }
    }

    fn list_kind(&self, schema: &Value, elem: TypeId) -> ListKind {
        let ext = |key: &str| schema.get(key);
        match ext("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("set") => return ListKind::Set,
            Some("map") => {
                return ListKind::Map(self.keys(ext("x-kubernetes-list-map-keys"), elem))
            }
            Some(_) => return ListKind::Atomic,
            None => {}
        }
        match ext("x-kubernetes-patch-strategy").and_then(Value::as_str) {
            Some("merge" | "merge,retainKeys") => {
                match ext("x-kubernetes-patch-merge-key").and_then(Value::as_str) {
                    Some(key) => ListKind::Map(self.keys(Some(&Value::from(vec![key])), elem)),
                    None => ListKind::Set,
                }
            }
            _ => ListKind::Atomic,
        }
    }

    /// The key fields of a keyed list, with the defaults the element schema gives them.
    fn keys(&self, names: Option<&Value>, elem: TypeId) -> Vec<(String, Option<Value>)> {
        let names: Vec<String> = names
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|n| n.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let elem_schema = self
            .by_name
            .iter()
            .find(|(_, id)| **id == elem)
            .and_then(|(name, _)| self.definitions.get(name));
        names
            .into_iter()
            .map(|name| {
                let default = elem_schema
                    .and_then(|s| s.pointer(&format!("/properties/{name}/default")))
                    .cloned();
                (name, default)
            })
            .collect()
    }
}

/// Adds inline defaults of keyed lists in a CRD schema (the element schema is inline there).
fn crd_key_defaults(schema: &Value, out: &mut HashMap<String, Value>) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    if obj.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map") {
        for key in obj
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if let Some(d) = schema.pointer(&format!("/items/properties/{key}/default")) {
                out.insert(key.to_string(), d.clone());
            }
        }
    }
    for child in ["items", "additionalProperties"] {
        if let Some(c) = obj.get(child) {
            crd_key_defaults(c, out);
        }
    }
    for prop in obj
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.values())
    {
        crd_key_defaults(prop, out);
    }
}

/// The schema of a kind: built once per built-in kind and per CRD version (cached on the
/// [`ResourceInfo`]).
pub fn schema_for(info: &ResourceInfo) -> Arc<TypeSchema> {
    info.apply_schema
        .get_or_init(|| match info.custom {
            true => Arc::new(custom_schema(info.schema.as_ref())),
            false => builtin_schema_for(info),
        })
        .clone()
}

/// The schema of a built-in kind, built once per kind and shared by every [`ResourceInfo`] of
/// it (each keeps it in its cell: [`schema_for`]).
fn builtin_schema_for(info: &ResourceInfo) -> Arc<TypeSchema> {
    static BUILTIN: OnceLock<std::sync::Mutex<HashMap<String, Arc<TypeSchema>>>> = OnceLock::new();
    let Some(name) =
        crate::openapi::builtin_definition_name(&info.group, &info.version, &info.kind)
    else {
        static DEDUCED_SCHEMA: OnceLock<Arc<TypeSchema>> = OnceLock::new();
        return DEDUCED_SCHEMA
            .get_or_init(|| Arc::new(TypeSchema::deduced()))
            .clone();
    };
    let cache = BUILTIN.get_or_init(Default::default);
    let mut cache = match cache.lock() {
        Ok(c) => c,
        Err(poisoned) => poisoned.into_inner(),
    };
    cache
        .entry(name.to_string())
        .or_insert_with(|| {
            Arc::new(super::schema_table::stored(name).unwrap_or_else(|| builtin_schema(name)))
        })
        .clone()
}

/// The schema of the built-in kind whose definition is `name`, built from the server's OpenAPI
/// definitions (what [`super::schema_table`] stores, precomputed).
pub(crate) fn builtin_schema(name: &str) -> TypeSchema {
    let definitions = crate::openapi::builtin_definitions_of(name).unwrap_or(&EMPTY_DEFINITIONS);
    let mut builder = Builder::new(definitions);
    let root = builder.named(name);
    builder.finish(root)
}

/// A custom resource's schema: its `openAPIV3Schema`, `metadata` typed as `ObjectMeta`.
fn custom_schema(schema: Option<&Value>) -> TypeSchema {
    let definitions =
        crate::openapi::builtin_definitions_of(crate::openapi::OBJECT_META_DEFINITION)
            .unwrap_or(&EMPTY_DEFINITIONS);
    let mut builder = Builder::new(definitions);
    let Some(schema) = schema else {
        let meta = builder.named(crate::openapi::OBJECT_META_DEFINITION);
        let mut fields = BTreeMap::new();
        fields.insert("metadata".into(), meta);
        fields.insert("apiVersion".into(), SCALAR);
        fields.insert("kind".into(), SCALAR);
        let root = builder.push(Atom::Map {
            fields,
            elem: Some(DEDUCED),
            atomic: false,
        });
        return builder.finish(root);
    };
    let root = builder.convert(schema);
    let meta = builder.named(crate::openapi::OBJECT_META_DEFINITION);
    // Keyed lists declared inline carry their key defaults in the items' properties.
    let mut defaults = HashMap::new();
    crd_key_defaults(schema, &mut defaults);
    for atom in builder.atoms.iter_mut() {
        if let Atom::List {
            kind: ListKind::Map(keys),
            ..
        } = atom
        {
            for (name, default) in keys.iter_mut() {
                if default.is_none() {
                    *default = defaults.get(name).cloned();
                }
            }
        }
    }
    match builder.atoms.get_mut(root) {
        Some(Atom::Map { fields, .. }) => {
            fields.insert("metadata".into(), meta);
            fields.insert("apiVersion".into(), SCALAR);
            fields.insert("kind".into(), SCALAR);
            builder.finish(root)
        }
        _ => {
            let mut fields = BTreeMap::new();
            fields.insert("metadata".into(), meta);
            fields.insert("apiVersion".into(), SCALAR);
            fields.insert("kind".into(), SCALAR);
            let root = builder.push(Atom::Map {
                fields,
                elem: Some(DEDUCED),
                atomic: false,
            });
            builder.finish(root)
        }
    }
}

/// A lazily built apply schema shared by the clones of one [`ResourceInfo`]; never part of its
/// equality.
#[derive(Clone, Default)]
pub struct SchemaCell(Arc<OnceLock<Arc<TypeSchema>>>);

impl SchemaCell {
    /// The schema, built by `init` the first time.
    pub fn get_or_init(&self, init: impl FnOnce() -> Arc<TypeSchema>) -> &Arc<TypeSchema> {
        self.0.get_or_init(init)
    }
}

impl PartialEq for SchemaCell {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for SchemaCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SchemaCell")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::builtin_resources;
    use serde_json::json;

    fn builtin(plural: &str) -> ResourceInfo {
        builtin_resources()
            .into_iter()
            .find(|r| r.plural == plural)
            .unwrap()
    }

    fn walk(schema: &TypeSchema, path: &[&str]) -> TypeId {
        let mut id = schema.root;
        for step in path {
            id = match (step, schema.atom(id)) {
                (&"[]", Atom::List { elem, .. }) => *elem,
                (name, _) => schema.field_type(id, name),
            };
        }
        id
    }

    #[rstest::rstest]
    #[case::the_root(&[])]
    #[case::a_struct(&["spec"])]
    #[case::a_list_element(&["spec", "containers", "[]"])]
    #[case::a_map_of_strings(&["metadata", "labels"])]
    #[case::a_leaf(&["metadata", "name"])]
    fn members_of_sorted_names_are_those_found_one_by_one(#[case] path: &[&str]) {
        let pods = schema_for(&builtin("pods"));
        let id = walk(&pods, path);
        // Fields of the type and names it does not have, before, between and after them.
        let mut names: Vec<String> = match pods.atom(id) {
            Atom::Map { fields, .. } => fields.keys().map(|f| f.to_string()).collect(),
            _ => Vec::new(),
        };
        names.extend(["", "A", "aaa", "m", "name0", "zzz", "~"].map(String::from));
        names.sort();
        names.dedup();
        let mut cursor = pods.members_in_order(id);
        let walked: Vec<_> = names.iter().map(|n| cursor.member(n)).collect();
        let searched: Vec<_> = names.iter().map(|n| pods.member(id, n)).collect();
        assert_eq!(walked, searched);
        // Every other name (some of a map's keys: the cursor passes the fields between them).
        let mut cursor = pods.members_in_order(id);
        for name in names.iter().step_by(2) {
            assert_eq!(cursor.member(name), pods.member(id, name));
        }
        // Each name alone.
        for name in &names {
            assert_eq!(
                pods.members_in_order(id).member(name),
                pods.member(id, name)
            );
        }
    }

    #[test]
    fn builtin_lists_and_maps_follow_the_openapi_extensions() {
        let pods = schema_for(&builtin("pods"));
        match pods.atom(walk(&pods, &["spec", "containers"])) {
            Atom::List {
                kind: ListKind::Map(keys),
                ..
            } => assert_eq!(keys, &vec![("name".to_string(), None)]),
            other => panic!("containers: {other:?}"),
        }
        match pods.atom(walk(&pods, &["spec", "containers", "[]", "ports"])) {
            Atom::List {
                kind: ListKind::Map(keys),
                ..
            } => assert_eq!(
                keys,
                &vec![
                    ("containerPort".to_string(), None),
                    ("protocol".to_string(), Some(json!("TCP")))
                ]
            ),
            other => panic!("ports: {other:?}"),
        }
        assert!(matches!(
            pods.atom(walk(&pods, &["metadata", "finalizers"])),
            Atom::List {
                kind: ListKind::Set,
                ..
            }
        ));
        assert!(matches!(
            pods.atom(walk(&pods, &["spec", "containers", "[]", "args"])),
            Atom::List {
                kind: ListKind::Atomic,
                ..
            }
        ));
        assert!(matches!(
            pods.atom(walk(&pods, &["metadata", "labels"])),
            Atom::Map { atomic: false, .. }
        ));
        let deployments = schema_for(&builtin("deployments"));
        assert!(
            matches!(
                deployments.atom(walk(&deployments, &["spec", "selector"])),
                Atom::Map { atomic: true, .. }
            ),
            "LabelSelector is x-kubernetes-map-type: atomic"
        );
    }

    #[test]
    fn crd_schemas_use_their_extensions_and_object_meta() {
        let info = ResourceInfo {
            custom: true,
            schema: Some(json!({
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": {
                        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["port", "protocol"],
                            "items": {"type": "object", "properties": {
                                "port": {"type": "integer"},
                                "protocol": {"type": "string", "default": "TCP"}}}},
                        "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                            "properties": {"a": {"type": "string"}}},
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                    }}
                }
            })),
            ..Default::default()
        };
        let s = schema_for(&info);
        assert!(matches!(
            s.atom(walk(&s, &["spec", "tags"])),
            Atom::List {
                kind: ListKind::Set,
                ..
            }
        ));
        match s.atom(walk(&s, &["spec", "ports"])) {
            Atom::List {
                kind: ListKind::Map(keys),
                ..
            } => assert_eq!(keys[1], ("protocol".to_string(), Some(json!("TCP")))),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            s.atom(walk(&s, &["spec", "selector"])),
            Atom::Map { atomic: true, .. }
        ));
        assert_eq!(walk(&s, &["spec", "free"]), DEDUCED);
        assert!(matches!(
            s.atom(walk(&s, &["metadata", "ownerReferences"])),
            Atom::List {
                kind: ListKind::Map(_),
                ..
            }
        ));
    }
}
