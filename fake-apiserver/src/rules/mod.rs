//! The validation rules of the built-in kinds, one module per API group, each rule following the
//! upstream function it names (`pkg/apis/<group>/validation`, `pkg/registry/<group>/<kind>`).
//!
//! [`validate_create`] and [`validate_update`] collect every cause of a write the way the real
//! registry does (`rest.BeforeCreate` / `rest.BeforeUpdate`): the kind strategy's `Validate`, and
//! on update the generic object-metadata checks first. All causes of one write are reported in
//! one 422, as the real server reports them, duplicates included.
//!
//! Also the rules layer (see the crate documentation), which imports only the store below it:
//! object metadata checks ([`validation`]), defaulting ([`defaults`]), custom resources'
//! structural schemas ([`schema`]) and CRD validation ([`crd_validation`]), and label and field
//! selectors ([`selectors`], [`field_labels`]).

pub mod crd_validation;
pub mod defaults;
pub mod field_labels;
pub mod schema;
pub mod selectors;
pub mod validation;

pub mod apps;
pub mod batch;
pub mod coordination;
pub mod core;
pub mod events;
pub mod meta;
pub mod rbac;
pub(crate) mod selector;

use serde_json::Value;

use crate::error::ApiError;
use crate::resource::ResourceInfo;
use crate::rules::validation::Cause;

/// Whether the write is to the main resource or to its `/status` subresource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The object itself (POST, PUT, PATCH).
    Main,
    /// The `/status` subresource.
    Status,
}

/// The causes of creating `object` (metadata and the kind's own rules), as the kind's strategy
/// `Validate` gives them.
pub fn create_causes(info: &ResourceInfo, object: &Value) -> Vec<Cause> {
    let mut causes = meta::create_causes(info, object);
    causes.extend(kind_create_causes(info, object));
    if causes.is_empty() {
        // `rest.BeforeCreate` runs the generic metadata check only once the strategy passed.
        causes = meta::generic_create_causes(info, object);
    }
    causes
}

/// The causes of updating `old` into `new`: the generic metadata checks of `BeforeUpdate`
/// (`validateCommonFields`), then the kind strategy's `ValidateUpdate`.
pub fn update_causes(info: &ResourceInfo, old: &Value, new: &Value, target: Target) -> Vec<Cause> {
    let mut causes = meta::update_causes(info, old, new, target);
    causes.extend(kind_update_causes(info, old, new, target));
    causes
}

/// [`create_causes`] as a 422 `Invalid` error naming the object.
pub fn validate_create(info: &ResourceInfo, object: &Value) -> Result<(), ApiError> {
    invalid(info, object, create_causes(info, object))
}

/// [`update_causes`] as a 422 `Invalid` error naming the object.
pub fn validate_update(
    info: &ResourceInfo,
    old: &Value,
    new: &Value,
    target: Target,
) -> Result<(), ApiError> {
    invalid(info, new, update_causes(info, old, new, target))
}

/// A `namespaces/finalize` write's finalizers ([`core::namespace_finalize_causes`]) as a 422.
pub fn validate_namespace_finalize(info: &ResourceInfo, namespace: &Value) -> Result<(), ApiError> {
    invalid(info, namespace, core::namespace_finalize_causes(namespace))
}

fn invalid(info: &ResourceInfo, object: &Value, causes: Vec<Cause>) -> Result<(), ApiError> {
    if causes.is_empty() {
        return Ok(());
    }
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    Err(ApiError::invalid(&info.group, &info.kind, name, causes))
}

fn kind_create_causes(info: &ResourceInfo, object: &Value) -> Vec<Cause> {
    match info.group.as_str() {
        "" => core::create_causes(&info.kind, object),
        "apps" => apps::create_causes(&info.kind, object),
        "batch" => batch::create_causes(&info.kind, object),
        "coordination.k8s.io" => coordination::create_causes(&info.kind, object),
        "events.k8s.io" => events::create_causes_events_v1(object),
        "rbac.authorization.k8s.io" => rbac::create_causes(&info.kind, object),
        "admissionregistration.k8s.io" if info.kind.ends_with("WebhookConfiguration") => {
            crate::admission::validation::create_causes(&info.kind, object)
        }
        _ => Vec::new(),
    }
}

fn kind_update_causes(info: &ResourceInfo, old: &Value, new: &Value, target: Target) -> Vec<Cause> {
    match info.group.as_str() {
        "" => core::update_causes(&info.kind, old, new, target),
        "apps" => apps::update_causes(&info.kind, old, new, target),
        "batch" => batch::update_causes(&info.kind, old, new, target),
        "coordination.k8s.io" => coordination::update_causes(&info.kind, old, new),
        "events.k8s.io" => events::update_causes_events_v1(old, new),
        "rbac.authorization.k8s.io" => rbac::update_causes(&info.kind, old, new),
        "admissionregistration.k8s.io" if info.kind.ends_with("WebhookConfiguration") => {
            crate::admission::validation::update_causes(&info.kind, old, new)
        }
        _ => Vec::new(),
    }
}

/// A string field of `v` (empty when absent or not a string).
fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// `ValidateNonnegativeField`: `Invalid value: -1: must be greater than or equal to 0`.
fn nonnegative(causes: &mut Vec<Cause>, value: Option<&Value>, field: &str) {
    if let Some(n) = value.and_then(Value::as_i64) {
        if n < 0 {
            causes.push(Cause::invalid(
                field,
                &Value::from(n),
                "must be greater than or equal to 0",
            ));
        }
    }
}

/// Whether two optional values are the same, an absent field counting as JSON null.
fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    let null = Value::Null;
    crate::store::value_eq::equal(a.unwrap_or(&null), b.unwrap_or(&null))
}
