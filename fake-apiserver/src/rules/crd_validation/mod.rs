//! Validation of a CustomResourceDefinition, as the apiextensions API server validates one on
//! create and update (`apiextensions/validation.ValidateCustomResourceDefinition{,Update}`).
//!
//! The real server validates the *internal* form of a CRD: the v1 object converted with
//! `Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec`, which
//! moves a per-version `schema`, `subresources`, `additionalPrinterColumns` or
//! `selectableFields` that is the same in every version to the top of the spec. That is why a
//! single-version CRD's schema errors are reported under `spec.validation.openAPIV3Schema`
//! and a multi-version CRD's (with differing schemas) under
//! `spec.versions[i].schema.openAPIV3Schema`. [`InternalSpec`] is that view over the JSON.
//!
//! The rules are split by what they look at:
//! - [`spec`]: group, scope, names, versions, conversion, subresources, printer columns,
//!   selectable fields, stored versions, API approval, `preserveUnknownFields`;
//! - [`openapi`]: `ValidateCustomResourceDefinitionOpenAPISchema`, the OpenAPI v3 rules every
//!   schema node must follow (`x-kubernetes-*` consistency, unsupported keywords);
//! - [`structural`]: `schema.ValidateStructural`, what makes a schema structural (types
//!   everywhere, metadata restrictions, value validations without structure);
//! - [`defaults`]: `defaulting.ValidateDefaults`, defaults that must be pruned and valid.
//!
//! `x-kubernetes-validations` rules are compiled by [`crate::cel::crd_rules`].
//!
//! Not implemented: the metadata coercion of defaults inside an embedded resource's `metadata`.
//! (`pattern` regular expressions are not compiled here, as the real validation does not
//! compile them: a pattern Go refuses fails every value, see `crate::rules::schema`.)

mod defaults;
mod go_value;
mod openapi;
mod path;
mod spec;
mod structural;

// The webhook client configuration checks the admission registration kinds share, and the
// conversion `caBundle` check the establishing controller makes too.
pub(crate) use spec::{ca_bundle_error, validate_webhook_service, validate_webhook_url};

use serde_json::{json, Value};

use crate::error::ApiError;
use crate::rules::validation::{validate_object_meta, Cause, NameRule};

pub use path::Path;

/// The group of CustomResourceDefinitions.
const GROUP: &str = "apiextensions.k8s.io";
/// The kind.
const KIND: &str = "CustomResourceDefinition";

/// Fills the defaults the v1 API gives a CRD on decode (`SetDefaults_CustomResourceDefinition`
/// and friends): `names.singular` (the lower-cased kind), `names.listKind` (`<Kind>List`),
/// `conversion` (`strategy: None`) and a webhook service's port (443).
pub fn apply_defaults(crd: &mut Value) {
    let Some(spec) = crd.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if names
            .get("singular")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            names.insert("singular".into(), json!(kind.to_lowercase()));
        }
        if names
            .get("listKind")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
            && !kind.is_empty()
        {
            names.insert("listKind".into(), json!(format!("{kind}List")));
        }
    }
    let conversion = spec
        .entry("conversion")
        .or_insert_with(|| json!({"strategy": "None"}));
    if conversion.is_null() {
        *conversion = json!({"strategy": "None"});
    }
    if let Some(service) = conversion
        .pointer_mut("/webhook/clientConfig/service")
        .and_then(Value::as_object_mut)
    {
        service.entry("port").or_insert(json!(443));
    }
}

/// A CRD's spec as the internal API version sees it (see the module documentation).
pub(crate) struct InternalSpec<'a> {
    /// The v1 spec.
    pub raw: &'a Value,
    /// `spec.version`: the first version's name.
    pub version: Option<&'a str>,
    /// `spec.validation` (a `CustomResourceValidation`) when every version has the same schema.
    pub validation: Option<&'a Value>,
    /// `spec.subresources` when every version has the same.
    pub subresources: Option<&'a Value>,
    /// `spec.additionalPrinterColumns` when every version has the same.
    pub columns: Option<&'a Value>,
    /// `spec.selectableFields` when every version has the same.
    pub selectable_fields: Option<&'a Value>,
    /// The versions, with the fields moved to the top removed.
    pub versions: Vec<InternalVersion<'a>>,
}

/// One entry of `spec.versions` in the internal form.
pub(crate) struct InternalVersion<'a> {
    /// The v1 version object.
    pub raw: &'a Value,
    /// `schema` unless moved to the top.
    pub schema: Option<&'a Value>,
    /// `subresources` unless moved to the top.
    pub subresources: Option<&'a Value>,
    /// `additionalPrinterColumns` unless moved to the top.
    pub columns: Option<&'a Value>,
    /// `selectableFields` unless moved to the top.
    pub selectable_fields: Option<&'a Value>,
}

impl<'a> InternalVersion<'a> {
    /// The version's name.
    pub fn name(&self) -> &'a str {
        self.raw
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

/// A field that is set: present and not null (and, for lists, not empty — the API machinery's
/// semantic equality does not tell an empty list from a missing one).
fn set_field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    match v.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) if a.is_empty() => None,
        Some(other) => Some(other),
    }
}

impl<'a> InternalSpec<'a> {
    /// Converts a v1 spec to the internal view.
    pub fn of(spec: &'a Value) -> Self {
        let raw_versions: Vec<&Value> = spec
            .get("versions")
            .and_then(Value::as_array)
            .map(|vs| vs.iter().collect())
            .unwrap_or_default();
        let mut versions: Vec<InternalVersion<'a>> = raw_versions
            .iter()
            .map(|v| InternalVersion {
                raw: v,
                schema: set_field(v, "schema"),
                subresources: set_field(v, "subresources"),
                columns: set_field(v, "additionalPrinterColumns"),
                selectable_fields: set_field(v, "selectableFields"),
            })
            .collect();
        let mut internal = InternalSpec {
            raw: spec,
            version: None,
            validation: None,
            subresources: None,
            columns: None,
            selectable_fields: None,
            versions: Vec::new(),
        };
        if let Some(first) = versions.first() {
            internal.version = Some(first.name());
            let same = |get: fn(&InternalVersion<'a>) -> Option<&'a Value>| {
                let first = get(&versions[0]);
                versions
                    .iter()
                    .all(|v| semantic_eq_opt(get(v), first))
                    .then_some(first)
            };
            let validation = same(|v| v.schema);
            let subresources = same(|v| v.subresources);
            let columns = same(|v| v.columns);
            let selectable = same(|v| v.selectable_fields);
            if let Some(s) = validation {
                internal.validation = s;
            }
            if let Some(s) = subresources {
                internal.subresources = s;
            }
            if let Some(c) = columns {
                internal.columns = c;
            }
            if let Some(f) = selectable {
                internal.selectable_fields = f;
            }
            for v in &mut versions {
                if validation.is_some() {
                    v.schema = None;
                }
                if subresources.is_some() {
                    v.subresources = None;
                }
                if columns.is_some() {
                    v.columns = None;
                }
                if selectable.is_some() {
                    v.selectable_fields = None;
                }
            }
        }
        internal.versions = versions;
        internal
    }

    /// Every schema the CRD has (`openAPIV3Schema` of the top-level validation and of every version).
    pub fn schemas(&self) -> Vec<&'a Value> {
        let mut out = Vec::new();
        if let Some(s) = self
            .validation
            .and_then(|v| set_field(v, "openAPIV3Schema"))
        {
            out.push(s);
        }
        for v in &self.versions {
            if let Some(s) = v.schema.and_then(|v| set_field(v, "openAPIV3Schema")) {
                out.push(s);
            }
        }
        out
    }

    /// `spec.preserveUnknownFields` is true.
    pub fn preserve_unknown_fields(&self) -> bool {
        self.raw
            .get("preserveUnknownFields")
            .and_then(Value::as_bool)
            == Some(true)
    }
}

/// Semantic equality of two optional JSON values (numbers compared by value, empty lists as
/// missing).
fn semantic_eq_opt(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => crate::store::value_eq::equal(a, b),
        _ => false,
    }
}

/// Options that depend on the stored CRD (`validationOptions`): an update never tightens a rule
/// the stored CRD already broke.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// Every version must have a schema (`requireOpenAPISchema`).
    pub require_openapi_schema: bool,
    /// Types must be OpenAPI v3 types (`requireValidPropertyType`).
    pub require_valid_property_type: bool,
    /// Schemas must be structural (`requireStructuralSchema`).
    pub require_structural: bool,
    /// Defaults must be pruned (`requirePrunedDefaults`).
    pub require_pruned_defaults: bool,
    /// Items of a set list must be atomic (`requireAtomicSetType`).
    pub require_atomic_set_type: bool,
    /// Map list keys must be required or defaulted, not nullable (`requireMapListKeysMapSetValidation`).
    pub require_map_list_keys: bool,
    /// A conversion webhook must accept a known ConversionReview version.
    pub require_recognized_conversion_review_version: bool,
    /// A conversion webhook's `caBundle` is not checked (`allowInvalidCABundle`: a create, a
    /// CRD not yet established, or one whose stored bundle is already invalid).
    pub allow_invalid_ca_bundle: bool,
    /// Scope and kind may not change (the stored CRD is established).
    pub require_immutable_names: bool,
    /// Versions whose schema did not change in this update, with their selectable field count
    /// allowed to stay above the maximum (`allowTooManySelectableFields`, keyed by version, `""`
    /// for the top level).
    pub allow_too_many_selectable_fields: Vec<String>,
}

impl Options {
    /// The options of a create.
    fn create() -> Self {
        Options {
            require_openapi_schema: true,
            require_valid_property_type: true,
            require_structural: true,
            require_pruned_defaults: true,
            require_atomic_set_type: true,
            require_map_list_keys: true,
            require_recognized_conversion_review_version: true,
            allow_invalid_ca_bundle: true,
            require_immutable_names: false,
            allow_too_many_selectable_fields: Vec::new(),
        }
    }

    /// The options of an update of `old`.
    fn update(new: &InternalSpec<'_>, old_crd: &Value, old: &InternalSpec<'_>) -> Self {
        let review_versions_ok = match set_field(old.raw, "conversion") {
            None => true,
            Some(c) => {
                let versions = spec::conversion_review_versions(c);
                versions.is_empty() || versions.iter().any(|v| spec::is_accepted_review_version(v))
            }
        };
        let mut allow_too_many = Vec::new();
        let count = |v: Option<&Value>| v.and_then(Value::as_array).map_or(0, Vec::len);
        if count(old.selectable_fields) > spec::MAX_SELECTABLE_FIELDS
            && semantic_eq_opt(new.selectable_fields, old.selectable_fields)
        {
            allow_too_many.push(String::new());
        }
        for v in &new.versions {
            if let Some(o) = old.versions.iter().find(|o| o.name() == v.name()) {
                if count(o.selectable_fields) > spec::MAX_SELECTABLE_FIELDS
                    && semantic_eq_opt(v.selectable_fields, o.selectable_fields)
                {
                    allow_too_many.push(v.name().to_string());
                }
            }
        }
        let old_schemas = old.schemas();
        let any_old = |pred: &dyn Fn(&Value) -> bool| old_schemas.iter().any(|s| pred(s));
        Options {
            require_openapi_schema: old.all_versions_have_schema(),
            require_valid_property_type: !any_old(&|s| openapi::has_invalid_types(s)),
            require_structural: !any_old(&|s| !structural::is_structural(s)),
            require_pruned_defaults: !any_old(&|s| defaults::has_unpruned_defaults(s)),
            require_atomic_set_type: !any_old(&openapi::has_non_atomic_set_type),
            require_map_list_keys: !any_old(&openapi::has_invalid_map_list_keys),
            require_recognized_conversion_review_version: review_versions_ok,
            allow_invalid_ca_bundle: allow_invalid_ca_bundle(old_crd),
            require_immutable_names: is_established(old_crd),
            allow_too_many_selectable_fields: allow_too_many,
        }
    }
}

/// `allowInvalidCABundle`: an update may carry an invalid conversion `caBundle` only while the
/// stored CRD is not established, or when the stored bundle is invalid too (an empty one is
/// not invalid).
fn allow_invalid_ca_bundle(old_crd: &Value) -> bool {
    if !is_established(old_crd) {
        return true;
    }
    let stored = old_crd
        .pointer("/spec/conversion/webhook/clientConfig/caBundle")
        .and_then(Value::as_str)
        .unwrap_or_default();
    !stored.is_empty() && spec::ca_bundle_error(stored).is_some()
}

impl InternalSpec<'_> {
    /// `allVersionsSpecifyOpenAPISchema`.
    fn all_versions_have_schema(&self) -> bool {
        if self
            .validation
            .and_then(|v| set_field(v, "openAPIV3Schema"))
            .is_some()
        {
            return true;
        }
        self.versions.iter().all(|v| {
            v.schema
                .and_then(|s| set_field(s, "openAPIV3Schema"))
                .is_some()
        })
    }
}

/// Whether the CRD has the condition `Established=True`.
fn is_established(crd: &Value) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
}

/// The stored versions the registry's strategy leaves on the object before validation: none on
/// create (the status is cleared) plus the storage version; on update the stored object's list
/// plus the storage version.
fn stored_versions_after_prepare(crd: &Value, old: Option<&Value>) -> Option<Vec<String>> {
    let mut stored: Option<Vec<String>> = old.and_then(|o| {
        o.pointer("/status/storedVersions")
            .and_then(Value::as_array)
            .map(|vs| {
                vs.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
    });
    let storage = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .and_then(|vs| vs.iter().find(|v| v["storage"].as_bool() == Some(true)))
        .and_then(|v| v["name"].as_str());
    if let Some(storage) = storage {
        let list = stored.get_or_insert_with(Vec::new);
        if !list.iter().any(|s| s == storage) {
            list.push(storage.to_string());
        }
    }
    stored
}

/// The causes of create validation (`ValidateCustomResourceDefinition`), in the real order.
pub fn create_causes(crd: &Value) -> Vec<Cause> {
    let spec_json = crd.get("spec").unwrap_or(&Value::Null);
    let spec = InternalSpec::of(spec_json);
    let mut causes = metadata_causes(crd, &spec);
    causes.extend(spec::validate_spec(
        &spec,
        &Options::create(),
        &Path::new("spec"),
    ));
    causes.extend(spec::validate_status(crd));
    let stored = stored_versions_after_prepare(crd, None);
    causes.extend(spec::validate_stored_versions(stored.as_deref(), &spec));
    causes.extend(spec::validate_api_approval(crd, None));
    causes.extend(spec::validate_preserve_unknown_fields(crd, None));
    causes
}

/// The causes of update validation (`ValidateCustomResourceDefinitionUpdate`); object metadata
/// update rules are checked by the generic update path.
pub fn update_causes(crd: &Value, old: &Value) -> Vec<Cause> {
    let spec_json = crd.get("spec").unwrap_or(&Value::Null);
    let old_spec_json = old.get("spec").unwrap_or(&Value::Null);
    let spec = InternalSpec::of(spec_json);
    let old_spec = InternalSpec::of(old_spec_json);
    let opts = Options::update(&spec, old, &old_spec);
    let path = Path::new("spec");
    let mut causes = spec::validate_spec(&spec, &opts, &path);
    causes.extend(spec::validate_spec_update(&spec, &old_spec, &opts, &path));
    causes.extend(spec::validate_status(old));
    let stored = stored_versions_after_prepare(crd, Some(old));
    causes.extend(spec::validate_stored_versions(stored.as_deref(), &spec));
    causes.extend(spec::validate_api_approval(crd, Some(old)));
    causes.extend(spec::validate_preserve_unknown_fields(crd, Some(old)));
    causes
}

/// Object metadata of a new CRD: the generic rules with the CRD's name rule (an RFC 1123
/// subdomain that equals `<plural>.<group>`).
fn metadata_causes(crd: &Value, spec: &InternalSpec<'_>) -> Vec<Cause> {
    let required = format!(
        "{}.{}",
        spec.raw
            .pointer("/names/plural")
            .and_then(Value::as_str)
            .unwrap_or_default(),
        spec.raw
            .get("group")
            .and_then(Value::as_str)
            .unwrap_or_default()
    );
    let mut causes = match validate_object_meta(
        &crate::rules::validation::qualified_kind(GROUP, KIND),
        false,
        NameRule::Dns1123Subdomain,
        crd,
    ) {
        Ok(()) => Vec::new(),
        Err(e) => e.causes,
    };
    // The CRD's name function adds one message to the generic ones, for the name and for a
    // generateName prefix alike; it comes right after that field's other messages.
    let meta = crd.get("metadata").unwrap_or(&Value::Null);
    for field in ["generateName", "name"] {
        let value = meta.get(field).and_then(Value::as_str).unwrap_or_default();
        if value.is_empty() || value == required {
            continue;
        }
        let path = format!("metadata.{field}");
        let at = causes
            .iter()
            .rposition(|c| c.field == path)
            .map(|i| i + 1)
            .unwrap_or_else(|| {
                // After the generateName causes when the name has none of its own.
                causes
                    .iter()
                    .rposition(|c| c.field == "metadata.generateName")
                    .map_or(0, |i| i + 1)
            });
        causes.insert(
            at,
            Cause::invalid_str(path, value, "must be spec.names.plural+\".\"+spec.group"),
        );
    }
    causes
}

/// Validates a new CRD; the 422 a real server answers when it is invalid.
pub fn validate_create(crd: &Value) -> Result<(), ApiError> {
    finish(crd, create_causes(crd))
}

/// Validates an update of `old` to `crd`.
pub fn validate_update(crd: &Value, old: &Value) -> Result<(), ApiError> {
    finish(crd, update_causes(crd, old))
}

/// Validates a write to the `status` subresource of a CRD
/// (`ValidateUpdateCustomResourceDefinitionStatus`): the accepted names follow the names rules.
pub fn validate_status_update(crd: &Value, _old: &Value) -> Result<(), ApiError> {
    finish(crd, spec::validate_status(crd))
}

fn finish(crd: &Value, causes: Vec<Cause>) -> Result<(), ApiError> {
    if causes.is_empty() {
        return Ok(());
    }
    let name = crd
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    tracing::debug!(crd = name, causes = causes.len(), "CRD refused");
    Err(ApiError::invalid(GROUP, KIND, name, causes))
}

#[cfg(test)]
mod tests;
