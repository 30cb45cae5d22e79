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

pub mod apiregistration;
pub(crate) mod civil_time;
pub mod crd_validation;
pub mod defaults;
pub mod field_labels;
pub mod field_path;
pub mod go_duration;
pub mod go_encoding;
pub mod go_regexp;
pub(crate) mod known_maps;
pub mod netip;
pub mod options;
pub mod request_uri;
pub mod schema;
pub mod schema_format;
pub mod selectors;
pub mod strconv;
pub(crate) mod valid_creates;
pub mod validation;

pub mod apps;
pub mod autoscaling;
pub mod batch;
pub mod certificates;
pub mod coordination;
pub mod core;
pub mod discovery;
pub mod events;
pub mod meta;
pub mod networking;
pub mod node;
pub mod policy;
pub(crate) mod quantity;
pub mod rbac;
pub mod scheduling;
pub mod storage;
pub mod warnings;

pub use quantity::{Quantity, QUANTITY_FORMAT_ERROR};
pub(crate) mod selector;

use serde_json::Value;

use crate::error::ApiError;
use crate::resource::ResourceInfo;
use crate::rules::validation::Cause;

/// Whether the write is to the main resource or to one of its subresources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The object itself (POST, PUT, PATCH).
    Main,
    /// The `/status` subresource.
    Status,
    /// A pod's `/ephemeralcontainers` subresource.
    EphemeralContainers,
    /// A pod's `/resize` subresource.
    Resize,
    /// A CertificateSigningRequest's `/approval` subresource.
    Approval,
}

/// The causes of creating `object` (metadata and the kind's own rules), as the kind's strategy
/// `Validate` gives them.
pub fn create_causes(info: &ResourceInfo, object: &Value) -> Vec<Cause> {
    create_causes_known(info, object, false)
}

/// [`create_causes`], but for the kind's own checks when `kind_valid` says they are known to
/// find nothing (an object alike to one that passed them: see [`valid_creates`]).
fn create_causes_known(info: &ResourceInfo, object: &Value, kind_valid: bool) -> Vec<Cause> {
    let mut causes = meta::create_causes(info, object);
    if !kind_valid {
        causes.extend(kind_create_causes(info, object));
    }
    if causes.is_empty() {
        // `rest.BeforeCreate` runs the generic metadata check only once the strategy passed.
        causes = meta::generic_create_causes(info, object);
    }
    causes
}

/// What of an update's new object is known to have passed its checks already: parts equal to
/// the stored version's, which passed them when it was written (see
/// [`crate::registry::semantics::VersionMemo`]). Each check is a function of that part alone,
/// so running it again could only find the same nothing; it is skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KnownValid {
    /// `new`'s spec is `old`'s, which passed the kind's spec validation under the same name
    /// (today only pods keep that knowledge).
    pub spec: bool,
    /// `new`'s `metadata.labels` are `old`'s, which passed `ValidateLabels`.
    pub labels: bool,
    /// `new`'s `metadata.annotations` are `old`'s, which passed `ValidateAnnotations`.
    pub annotations: bool,
    /// `old`'s `metadata.annotations` passed `ValidateAnnotations`: the keys `new` keeps from
    /// them are valid names (their values and the total size are still checked).
    pub old_annotations: bool,
}

/// The causes of updating `old` into `new`: the generic metadata checks of `BeforeUpdate`
/// (`validateCommonFields`), then the kind strategy's `ValidateUpdate`; the checks of what
/// `known` says passed already are skipped.
pub fn update_causes(
    info: &ResourceInfo,
    old: &Value,
    new: &Value,
    target: Target,
    known: KnownValid,
) -> Vec<Cause> {
    let mut causes = meta::update_causes(info, old, new, target, known);
    causes.extend(kind_update_causes(info, old, new, target, known.spec));
    causes
}

/// [`create_causes`] as a 422 `Invalid` error naming the object.
pub fn validate_create(info: &ResourceInfo, object: &Value) -> Result<(), ApiError> {
    invalid(info, object, create_causes(info, object))
}

/// [`validate_create`] of an object the kind's own checks are known to pass when `kind_valid`
/// (see [`valid_creates`]): only the metadata checks run then.
pub(crate) fn validate_create_known(
    info: &ResourceInfo,
    object: &Value,
    kind_valid: bool,
) -> Result<(), ApiError> {
    invalid(info, object, create_causes_known(info, object, kind_valid))
}

/// [`update_causes`] as a 422 `Invalid` error naming the object.
pub fn validate_update(
    info: &ResourceInfo,
    old: &Value,
    new: &Value,
    target: Target,
    known: KnownValid,
) -> Result<(), ApiError> {
    invalid(info, new, update_causes(info, old, new, target, known))
}

/// What a kind's registry allocates on create before validating (today: a Service's cluster IP
/// and node ports, [`core::service::allocate`]); `existing` lists the stored objects of the kind.
/// A requested value that is taken or out of range is a 422.
pub fn allocate_on_create(
    info: &ResourceInfo,
    object: &mut Value,
    existing: impl FnOnce() -> Vec<Value>,
) -> Result<(), ApiError> {
    if info.custom || !info.group.is_empty() || info.kind != "Service" {
        return Ok(());
    }
    let existing = existing();
    match core::service::allocate(object, &existing) {
        Ok(()) => Ok(()),
        Err(causes) => invalid(info, object, causes),
    }
}

/// What a kind's registry changes in an update before validating it: a Service keeps its
/// allocated values ([`core::service::prepare_update`]).
///
/// A pod status write that leaves out the QoS class keeps the stored one (the pod status
/// strategy's `PrepareForUpdate` backfills it for old kubelets). A CertificateSigningRequest
/// takes what its endpoint's strategy lets it change ([`certificates::prepare_update`], which
/// stamps new conditions with `now`). (Generations are the registry's:
/// `registry::generation`.)
pub fn prepare_update(
    info: &ResourceInfo,
    old: &Value,
    new: &mut Value,
    target: Target,
    now: &str,
) {
    if info.is_builtin("certificates.k8s.io", "CertificateSigningRequest") {
        certificates::prepare_update(old, new, target, now);
        return;
    }
    if info.is_builtin("apps", "DaemonSet") {
        apps::daemon_set_template_generation(old, new, target);
        return;
    }
    if info.custom || !info.group.is_empty() {
        return;
    }
    match (info.kind.as_str(), target) {
        ("Service", Target::Main) => core::service::prepare_update(old, new),
        ("Pod", Target::Status) => {
            let empty = new["status"]["qosClass"].as_str().is_none_or(str::is_empty);
            if empty && new["status"].is_object() {
                if let Some(qos) = old["status"].get("qosClass") {
                    new["status"]["qosClass"] = qos.clone();
                }
            }
        }
        _ => {}
    }
}

/// The namespaces the `NamespaceLifecycle` admission plugin never lets go.
pub const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

/// Admission on a delete (`NamespaceLifecycle`): the immortal namespaces may not be deleted
/// (`namespaces "default" is forbidden: this namespace may not be deleted`).
pub fn admit_delete(info: &ResourceInfo, name: &str) -> Result<(), ApiError> {
    let immortal = !info.custom
        && info.group.is_empty()
        && info.kind == "Namespace"
        && IMMORTAL_NAMESPACES.contains(&name);
    if !immortal {
        return Ok(());
    }
    Err(ApiError::new(
        403,
        "Forbidden",
        format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted"),
    )
    .with_details(&info.group, &info.plural, name))
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
        "autoscaling" => autoscaling::create_causes(&info.kind, object),
        "batch" => batch::create_causes(&info.kind, object),
        "coordination.k8s.io" => coordination::create_causes(&info.kind, object),
        "events.k8s.io" => events::create_causes_events_v1(object),
        "rbac.authorization.k8s.io" => rbac::create_causes(&info.kind, object),
        "admissionregistration.k8s.io" if info.kind.ends_with("WebhookConfiguration") => {
            crate::admission::validation::create_causes(&info.kind, object)
        }
        "policy" => policy::create_causes(&info.kind, object),
        "scheduling.k8s.io" => scheduling::create_causes(&info.kind, object),
        "node.k8s.io" => node::create_causes(&info.kind, object),
        "certificates.k8s.io" => certificates::create_causes(&info.kind, object),
        "apiregistration.k8s.io" => apiregistration::create_causes(&info.kind, object),
        "networking.k8s.io" => networking::create_causes(&info.kind, object),
        "discovery.k8s.io" => discovery::create_causes(&info.kind, object),
        "storage.k8s.io" => storage::create_causes(&info.kind, object),
        _ => Vec::new(),
    }
}

fn kind_update_causes(
    info: &ResourceInfo,
    old: &Value,
    new: &Value,
    target: Target,
    unchanged_valid_spec: bool,
) -> Vec<Cause> {
    match info.group.as_str() {
        "" => core::update_causes(&info.kind, old, new, target, unchanged_valid_spec),
        "apps" => apps::update_causes(&info.kind, old, new, target),
        "autoscaling" => autoscaling::update_causes(&info.kind, old, new, target == Target::Status),
        "batch" => batch::update_causes(&info.kind, old, new, target),
        "coordination.k8s.io" => coordination::update_causes(&info.kind, old, new),
        "events.k8s.io" => events::update_causes_events_v1(old, new),
        "rbac.authorization.k8s.io" => rbac::update_causes(&info.kind, old, new),
        "admissionregistration.k8s.io" if info.kind.ends_with("WebhookConfiguration") => {
            crate::admission::validation::update_causes(&info.kind, old, new)
        }
        "policy" => policy::update_causes(&info.kind, new, target),
        "scheduling.k8s.io" => scheduling::update_causes(&info.kind, old, new),
        "node.k8s.io" => node::update_causes(&info.kind, old, new),
        "certificates.k8s.io" => certificates::update_causes(&info.kind, old, new, target),
        "apiregistration.k8s.io" => apiregistration::update_causes(&info.kind, new, target),
        "networking.k8s.io" => networking::update_causes(&info.kind, old, new, target),
        "discovery.k8s.io" => discovery::update_causes(&info.kind, old, new),
        "storage.k8s.io" => storage::update_causes(&info.kind, old, new),
        _ => Vec::new(),
    }
}

/// A string field of `v` (empty when absent or not a string).
fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// `ValidateNonnegativeField`: `Invalid value: -1: must be greater than or equal to 0`.
fn nonnegative(causes: &mut Vec<Cause>, value: Option<&Value>, field: &dyn std::fmt::Display) {
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

/// Whether the values at `path` of two objects of the built-in kind `group`/`kind` are the same
/// to `apiequality.Semantic.DeepEqual` (`ValidateImmutableField`): read as the Go type, so a nil
/// and an empty list or map are the same, and quantities compare by value. Falls back to
/// [`same`] where the tables lack the path.
fn same_at(group: &str, kind: &str, path: &[&str], old: &Value, new: &Value) -> bool {
    fn at<'v>(root: &'v Value, path: &[&str]) -> Option<&'v Value> {
        path.iter().try_fold(root, |v, key| v.get(key))
    }
    same_values_at(group, kind, path, at(old, path), at(new, path))
}

/// [`same_at`] for two values already taken from `path` (or made from what is there).
fn same_values_at(
    group: &str,
    kind: &str,
    path: &[&str],
    a: Option<&Value>,
    b: Option<&Value>,
) -> bool {
    go_encoding::semantic::equal_at(group, kind, path, a, b).unwrap_or_else(|| same(a, b))
}

/// Whether two optional values are the same, an absent field counting as JSON null.
fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    let null = Value::Null;
    crate::store::value_eq::equal(a.unwrap_or(&null), b.unwrap_or(&null))
}

/// `IsValidPortName`.
pub(crate) fn port_name_errors(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > 15 {
        errs.push(crate::rules::validation::max_len_error(15));
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".into());
    }
    if name.contains("--") {
        errs.push("must not contain consecutive hyphens".into());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errs.push("must not begin or end with a hyphen".into());
    }
    errs
}

/// Go's `%#v` of an `intstr.IntOrString`, as upstream prints one in its errors.
fn go_int_or_string(v: &Value) -> String {
    match v {
        Value::String(s) => format!(
            "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
            crate::rules::validation::go_quote(s)
        ),
        other => format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            other.as_i64().unwrap_or(0)
        ),
    }
}

/// `ValidatePositiveIntOrPercent` (`pkg/apis/apps/validation`): a non-negative integer or a
/// percent string.
pub(crate) fn int_or_percent(v: &Value, path: &str) -> Vec<Cause> {
    match v {
        Value::String(s) => {
            let digits = s.strip_suffix('%').unwrap_or("");
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                Vec::new()
            } else {
                vec![Cause::new(
                    crate::rules::validation::FieldErrorType::Invalid,
                    path,
                    Some(go_int_or_string(v)),
                    &crate::rules::validation::regex_error(
                        "a valid percent string must be a numeric string followed by an ending '%'",
                        "[0-9]+%",
                        &["1%", "93%"],
                    ),
                )]
            }
        }
        other => {
            let mut causes = Vec::new();
            nonnegative(&mut causes, Some(other), &path);
            causes
        }
    }
}

/// `IsNotMoreThan100Percent`.
pub(crate) fn not_more_than_100_percent(v: &Value, path: &str) -> Vec<Cause> {
    let percent = v
        .as_str()
        .and_then(|s| s.strip_suffix('%'))
        .and_then(|d| d.parse::<i64>().ok());
    match percent {
        Some(p) if p > 100 => vec![Cause::new(
            crate::rules::validation::FieldErrorType::Invalid,
            path,
            Some(go_int_or_string(v)),
            "must not be greater than 100%",
        )],
        _ => Vec::new(),
    }
}
