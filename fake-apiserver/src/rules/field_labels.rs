//! Field selectors on built-in kinds: which labels each kind's API version accepts, the name
//! each label reads internally, the error for any other label, and the value each selectable
//! field has on an object.
//!
//! A real server answers a field selector in two steps. First the scheme's field label
//! conversion function for the request's group/version/kind (`AddFieldLabelConversionFunc`)
//! accepts or refuses every label and may rename it (`spec.host` → `spec.nodeName`,
//! `regarding.name` → `involvedObject.name`); a kind without one falls back to
//! `runtime.DefaultMetaV1FieldSelectorConversion` (name and namespace only). Each conversion
//! function words its refusal its own way, so [`Refusal`] keeps the three wordings apart. Then
//! the registry's `GetAttrs` builds the object's field set, and a label missing from that set
//! reads as the empty string. [`selectable_value`] gives that set's value for one field.

use serde_json::Value;

use crate::rules::validation::go_quote;

/// How a conversion function words its refusal of an unsupported label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `field label not supported: X` (core v1 kinds, events.k8s.io/v1, certificates/v1).
    NotSupported,
    /// `field label "X" not supported for <type>` (batch/v1 Job: `batchv1.Job`).
    QuotedFor(&'static str),
    /// `runtime.DefaultMetaV1FieldSelectorConversion`:
    /// `"X" is not a known field selector: only "metadata.name", "metadata.namespace"`.
    DefaultMeta,
}

/// One kind's field label conversion: accepted labels with the internal field each reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conversion {
    /// `(label, internal field)` pairs.
    pub labels: &'static [(&'static str, &'static str)],
    /// The refusal wording for any other label.
    pub refusal: Refusal,
}

const META: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
];

/// `pkg/apis/core/v1/conversion.go` `addConversionFuncs`, Pod.
const POD: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
    ("spec.nodeName", "spec.nodeName"),
    ("spec.restartPolicy", "spec.restartPolicy"),
    ("spec.schedulerName", "spec.schedulerName"),
    ("spec.serviceAccountName", "spec.serviceAccountName"),
    ("spec.hostNetwork", "spec.hostNetwork"),
    ("status.phase", "status.phase"),
    ("status.podIP", "status.podIP"),
    ("status.podIPs", "status.podIPs"),
    ("status.nominatedNodeName", "status.nominatedNodeName"),
    // For old v1 clients.
    ("spec.host", "spec.nodeName"),
];

/// Same file, Node.
const NODE: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("spec.unschedulable", "spec.unschedulable"),
];

/// Same file, ReplicationController.
const REPLICATION_CONTROLLER: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
    ("status.replicas", "status.replicas"),
];

/// Same file, `AddFieldLabelConversionsForEvent`.
const CORE_EVENT: &[(&str, &str)] = &[
    ("involvedObject.kind", "involvedObject.kind"),
    ("involvedObject.namespace", "involvedObject.namespace"),
    ("involvedObject.name", "involvedObject.name"),
    ("involvedObject.uid", "involvedObject.uid"),
    ("involvedObject.apiVersion", "involvedObject.apiVersion"),
    (
        "involvedObject.resourceVersion",
        "involvedObject.resourceVersion",
    ),
    ("involvedObject.fieldPath", "involvedObject.fieldPath"),
    ("reason", "reason"),
    ("reportingComponent", "reportingComponent"),
    ("source", "source"),
    ("type", "type"),
    ("metadata.namespace", "metadata.namespace"),
    ("metadata.name", "metadata.name"),
];

/// Same file, `AddFieldLabelConversionsForNamespace`.
const NAMESPACE: &[(&str, &str)] = &[
    ("status.phase", "status.phase"),
    ("metadata.name", "metadata.name"),
];

/// Same file, `AddFieldLabelConversionsForSecret`.
const SECRET: &[(&str, &str)] = &[
    ("type", "type"),
    ("metadata.namespace", "metadata.namespace"),
    ("metadata.name", "metadata.name"),
];

/// Same file, `AddFieldLabelConversionsForService`.
const SERVICE: &[(&str, &str)] = &[
    ("metadata.namespace", "metadata.namespace"),
    ("metadata.name", "metadata.name"),
    ("spec.clusterIP", "spec.clusterIP"),
    ("spec.type", "spec.type"),
];

/// `pkg/apis/batch/v1/conversion.go` `addConversionFuncs`, Job.
const JOB: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
    ("status.successful", "status.successful"),
];

/// `pkg/apis/events/v1/conversion.go` `AddFieldLabelConversionsForEvent`: the events.k8s.io
/// names mapped onto the core Event's field set (no `involvedObject.*` labels here).
const EVENTS_V1_EVENT: &[(&str, &str)] = &[
    ("reason", "reason"),
    ("regarding.kind", "involvedObject.kind"),
    ("regarding.namespace", "involvedObject.namespace"),
    ("regarding.name", "involvedObject.name"),
    ("regarding.uid", "involvedObject.uid"),
    ("regarding.apiVersion", "involvedObject.apiVersion"),
    (
        "regarding.resourceVersion",
        "involvedObject.resourceVersion",
    ),
    ("regarding.fieldPath", "involvedObject.fieldPath"),
    ("reportingController", "reportingComponent"),
    ("source", "source"),
    ("type", "type"),
    ("metadata.namespace", "metadata.namespace"),
    ("metadata.name", "metadata.name"),
];

/// `pkg/apis/certificates/v1/conversion.go`, CertificateSigningRequest.
const CSR: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("spec.signerName", "spec.signerName"),
];

/// The field label conversion registered for `group/version` `kind`, or the default one.
pub fn conversion(group: &str, version: &str, kind: &str) -> Conversion {
    use Refusal::*;
    let (labels, refusal) = match (group, version, kind) {
        ("", "v1", "Pod") => (POD, NotSupported),
        ("", "v1", "Node") => (NODE, NotSupported),
        ("", "v1", "ReplicationController") => (REPLICATION_CONTROLLER, NotSupported),
        ("", "v1", "Event") => (CORE_EVENT, NotSupported),
        ("", "v1", "Namespace") => (NAMESPACE, NotSupported),
        ("", "v1", "Secret") => (SECRET, NotSupported),
        ("", "v1", "Service") => (SERVICE, NotSupported),
        ("batch", "v1", "Job") => (JOB, QuotedFor("batchv1.Job")),
        ("events.k8s.io", "v1", "Event") => (EVENTS_V1_EVENT, NotSupported),
        ("certificates.k8s.io", "v1", "CertificateSigningRequest") => (CSR, NotSupported),
        _ => (META, DefaultMeta),
    };
    Conversion { labels, refusal }
}

impl Conversion {
    /// The internal field `label` reads, or the conversion function's error message.
    pub fn convert(&self, label: &str) -> Result<&'static str, String> {
        if let Some((_, internal)) = self.labels.iter().find(|(l, _)| *l == label) {
            return Ok(internal);
        }
        Err(match self.refusal {
            Refusal::NotSupported => format!("field label not supported: {label}"),
            Refusal::QuotedFor(what) => {
                format!("field label {} not supported for {what}", go_quote(label))
            }
            Refusal::DefaultMeta => format!(
                "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                go_quote(label)
            ),
        })
    }
}

fn at<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(obj, |cur, part| cur.get(part))
}

fn text(obj: &Value, path: &str) -> String {
    match at(obj, path) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// An integer status count as `strconv.Itoa` prints it (0 when unset).
fn count(obj: &Value, path: &str) -> String {
    at(obj, path)
        .and_then(Value::as_i64)
        .unwrap_or(0)
        .to_string()
}

/// A boolean as `strconv.FormatBool` prints it (false when unset).
fn flag(obj: &Value, path: &str) -> String {
    at(obj, path)
        .and_then(Value::as_bool)
        .unwrap_or(false)
        .to_string()
}

fn non_empty(s: String, fallback: impl FnOnce() -> String) -> String {
    if s.is_empty() {
        fallback()
    } else {
        s
    }
}

/// The value of the internal field `field` in the field set the registry's `GetAttrs` builds
/// for `obj`, an object of the built-in `group`/`kind` (`""` for a field the set lacks). Other
/// kinds read the dotted path as it is.
pub fn selectable_value(group: &str, kind: &str, obj: &Value, field: &str) -> String {
    match (group, kind, field) {
        // pkg/registry/core/pod/strategy.go ToSelectableFields.
        ("", "Pod", "spec.hostNetwork") => flag(obj, "spec.hostNetwork"),
        ("", "Pod", "status.podIP") => obj
            .pointer("/status/podIPs/0/ip")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| text(obj, "status.podIP")),
        // Accepted by the conversion but absent from the pod's field set.
        ("", "Pod", "status.podIPs") => String::new(),
        // pkg/registry/core/node/strategy.go NodeToSelectableFields.
        ("", "Node", "spec.unschedulable") => flag(obj, "spec.unschedulable"),
        // pkg/registry/core/replicationcontroller/strategy.go ControllerToSelectableFields.
        ("", "ReplicationController", "status.replicas") => count(obj, "status.replicas"),
        // pkg/registry/batch/job/strategy.go JobToSelectableFields.
        ("batch", "Job", "status.successful") => count(obj, "status.succeeded"),
        // pkg/registry/core/event/strategy.go ToSelectableFields: source falls back to the
        // reporting controller; reportingComponent is the core name of reportingController.
        ("", "Event", "source") => non_empty(text(obj, "source.component"), || {
            text(obj, "reportingComponent")
        }),
        ("events.k8s.io", "Event", _) => events_v1_value(obj, field),
        _ => text(obj, field),
    }
}

/// The core Event field set read from an object in its events.k8s.io/v1 shape
/// (`Convert_v1_Event_To_core_Event`: regarding → involvedObject, deprecatedSource → source).
fn events_v1_value(obj: &Value, field: &str) -> String {
    if let Some(rest) = field.strip_prefix("involvedObject.") {
        return text(obj, &format!("regarding.{rest}"));
    }
    match field {
        "reportingComponent" => text(obj, "reportingController"),
        "source" => non_empty(text(obj, "deprecatedSource.component"), || {
            text(obj, "reportingController")
        }),
        _ => text(obj, field),
    }
}
