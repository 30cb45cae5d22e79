//! Descriptions of the resource types the server serves: built-in kinds and those added by CRDs.

use std::cmp::Ordering;

use serde_json::Value;

/// Everything the server needs to know about one served resource type (one group/version/plural).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResourceInfo {
    /// API group; empty for the core group.
    pub group: String,
    /// API version within the group, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Pod`.
    pub kind: String,
    /// Lower-case plural used in URLs, e.g. `pods`.
    pub plural: String,
    /// Lower-case singular, e.g. `pod`.
    pub singular: String,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Whether the `/status` subresource is served (and the main endpoint ignores `status`).
    pub has_status: bool,
    /// Short names for kubectl, e.g. `po`.
    pub short_names: Vec<String>,
    /// Categories for kubectl, e.g. `all`.
    pub categories: Vec<String>,
    /// Whether a PUT without `metadata.resourceVersion` is allowed (unconditional update).
    pub allow_unconditional_update: bool,
    /// Whether a PUT to an object that does not exist creates it (the strategy's
    /// `AllowCreateOnUpdate`), answered `201`; otherwise it is a `404`.
    pub allow_create_on_update: bool,
    /// Whether this is a custom resource served from a CRD.
    pub custom: bool,
    /// For custom resources: the `openAPIV3Schema` of this version, used for defaults and pruning.
    pub schema: Option<Value>,
    /// For custom resources: the CRD's `additionalPrinterColumns` for this version.
    pub additional_printer_columns: Vec<Value>,
    /// For custom resources: the CRD's `selectableFields` JSON paths for this version.
    pub selectable_fields: Vec<String>,
    /// A review API (`authorization.k8s.io` access reviews): only `create`, answered and never
    /// stored.
    pub review: bool,
    /// A read-only status computed on each request (`componentstatuses`): only `get` and
    /// `list`, never stored.
    pub computed: bool,
    /// Whether the strategy starts `metadata.generation` at 1 on create (custom resources,
    /// pods, deployments, CRDs, ...; kinds without it keep what the client sent). What moves it
    /// on update is `registry::generation`'s.
    pub tracks_generation: bool,
    /// For custom resources: the CRD version's `subresources.scale`, if declared.
    pub scale: Option<ScalePaths>,
    /// The server-side apply schema, looked up once (a custom resource's is built from
    /// `schema`; a built-in kind's is shared by every resource of that kind).
    pub apply_schema: crate::apply::schema::SchemaCell,
    /// The warning every answer about this resource carries when it is deprecated: a CRD
    /// version's `deprecationWarning` (or the default one), or a deprecated built-in's
    /// (`v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice`).
    pub deprecation_warning: Option<String>,
    /// For custom resources: every version of the CRD and the one objects are stored at, shared
    /// by the infos of all its served versions (see `registry::conversion`).
    pub versions: Option<std::sync::Arc<CustomVersions>>,
}

/// A CRD's versions as conversion sees them: objects are written at the storage version and
/// served at the version a request names, each version's schema pruning what it does not
/// declare (`conversion.strategy: None`, the apiextensions server's `nopConverter`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CustomVersions {
    /// The API group.
    pub group: String,
    /// The version new writes are stored at (`storage: true`).
    pub storage: String,
    /// Each version's `openAPIV3Schema` by name, served or not (objects stored at an unserved
    /// version are still read through its schema).
    pub schemas: std::collections::BTreeMap<String, Value>,
    /// The conversion webhook, when `spec.conversion.strategy` is `Webhook`.
    pub webhook: Option<ConversionWebhook>,
    /// The kind of list answers: `spec.names.listKind` (defaulted to `<kind>List`), shared by
    /// every version of the CRD.
    pub list_kind: String,
    /// When the storage these versions are served from was built, and since when each
    /// version's schema is what it is (see [`crate::registry::crd_storage`]).
    pub epoch: StorageEpoch,
}

/// When a CRD's storage was built, and since when each version's schema is what it is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StorageEpoch {
    /// The revision of the CRD write the storage was built at: watches cannot resume from
    /// before it.
    pub since: u64,
    /// For each version whose schema changed while the CRD existed, the revision of that
    /// change: objects stored at that version and last written before it are decoded with the
    /// present schema when read. A version absent here has had its schema since the CRD was
    /// created.
    pub schema_changed: std::collections::BTreeMap<String, u64>,
    /// What the storage was built from: the CRD's `spec` and `status.acceptedNames`.
    pub(crate) built_from: Value,
}

impl StorageEpoch {
    /// Whether any version's schema changed since the CRD was created (if not, stored bytes
    /// are what a read decodes them to).
    pub fn any_schema_changed(&self) -> bool {
        !self.schema_changed.is_empty()
    }

    /// Whether `object`, stored at `version`, was last written before that version's schema
    /// last changed, so that a read decodes it with the present schema.
    pub fn written_before_schema(&self, version: &str, object: &Value) -> bool {
        let Some(&changed) = self.schema_changed.get(version) else {
            return false;
        };
        written_at(object).is_none_or(|written| written < changed)
    }

    /// The `410 Expired` a watch resuming from `revision` gets, when that is before the
    /// storage was built.
    pub fn watch_too_old(&self, revision: u64) -> Option<crate::error::ApiError> {
        (revision < self.since).then(|| {
            crate::error::ApiError::expired(format!(
                "too old resource version: {revision} ({})",
                self.since
            ))
        })
    }
}

/// The revision an object was last written at: its `metadata.resourceVersion`.
pub fn written_at(object: &Value) -> Option<u64> {
    object["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse::<u64>().ok())
}

/// A CRD's `spec.conversion.webhook`: where `ConversionReview`s go.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConversionWebhook {
    /// `clientConfig` (a URL or a service, and the `caBundle`).
    pub client_config: Value,
    /// `conversionReviewVersions`, in the CRD's order of preference.
    pub review_versions: Vec<String>,
}

impl CustomVersions {
    /// `group/version` of the storage version.
    pub fn storage_api_version(&self) -> String {
        format!("{}/{}", self.group, self.storage)
    }
}

/// A CRD's `subresources.scale`: where a custom resource keeps its replicas and selector.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScalePaths {
    /// `specReplicasPath`, e.g. `.spec.replicas`.
    pub spec_replicas_path: String,
    /// `statusReplicasPath`, e.g. `.status.replicas`.
    pub status_replicas_path: String,
    /// `labelSelectorPath`, if set.
    pub label_selector_path: Option<String>,
}

impl ScalePaths {
    /// Reads `subresources.scale` of a CRD version; `None` when absent or without paths.
    pub fn from_crd_version(version: &Value) -> Option<Self> {
        let scale = version.pointer("/subresources/scale")?;
        Some(ScalePaths {
            spec_replicas_path: scale["specReplicasPath"].as_str()?.to_string(),
            status_replicas_path: scale["statusReplicasPath"].as_str()?.to_string(),
            label_selector_path: scale["labelSelectorPath"].as_str().map(str::to_string),
        })
    }
}

impl ResourceInfo {
    /// Whether this is the built-in resource of `kind` in `group` (`""` for the core group), not
    /// a custom resource that happens to share the names.
    pub fn is_builtin(&self, group: &str, kind: &str) -> bool {
        !self.custom && self.kind == kind && same_group(&self.group, group)
    }

    /// `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The kind of the list type, e.g. `PodList`; a custom resource's is its CRD's
    /// `names.listKind` (the real server builds list answers from `acceptedNames.listKind`).
    pub fn list_kind(&self) -> String {
        match &self.versions {
            Some(custom) if !custom.list_kind.is_empty() => custom.list_kind.clone(),
            _ => format!("{}List", self.kind),
        }
    }

    /// The verbs the resource supports, as discovery lists them.
    pub fn verbs(&self) -> Vec<&'static str> {
        if self.review {
            return vec!["create"];
        }
        if self.computed {
            return vec!["get", "list"];
        }
        vec![
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ]
    }
}

/// One row of the built-in table: (group, version, kind, plural, namespaced, status, generation, short names, categories).
type BuiltinRow = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    bool,
    bool,
    &'static [&'static str],
    &'static [&'static str],
);

/// The review kinds, answered and never stored: (group, kind, plural, namespaced).
const REVIEWS: &[(&str, &str, &str, bool)] = &[
    (
        "authorization.k8s.io",
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
        false,
    ),
    (
        "authorization.k8s.io",
        "SelfSubjectRulesReview",
        "selfsubjectrulesreviews",
        false,
    ),
    (
        "authorization.k8s.io",
        "SubjectAccessReview",
        "subjectaccessreviews",
        false,
    ),
    (
        "authorization.k8s.io",
        "LocalSubjectAccessReview",
        "localsubjectaccessreviews",
        true,
    ),
    (
        "authentication.k8s.io",
        "SelfSubjectReview",
        "selfsubjectreviews",
        false,
    ),
    (
        "authentication.k8s.io",
        "TokenReview",
        "tokenreviews",
        false,
    ),
];

const BUILTINS: &[BuiltinRow] = &[
    (
        "",
        "v1",
        "Namespace",
        "namespaces",
        false,
        true,
        false,
        &["ns"],
        &[],
    ),
    ("", "v1", "Pod", "pods", true, true, true, &["po"], &["all"]),
    ("", "v1", "Node", "nodes", false, true, false, &["no"], &[]),
    (
        "",
        "v1",
        "ConfigMap",
        "configmaps",
        true,
        false,
        false,
        &["cm"],
        &[],
    ),
    ("", "v1", "Secret", "secrets", true, false, false, &[], &[]),
    (
        "",
        "v1",
        "Event",
        "events",
        true,
        false,
        false,
        &["ev"],
        &[],
    ),
    (
        "",
        "v1",
        "ServiceAccount",
        "serviceaccounts",
        true,
        false,
        false,
        &["sa"],
        &[],
    ),
    (
        "",
        "v1",
        "Service",
        "services",
        true,
        true,
        false,
        &["svc"],
        &["all"],
    ),
    (
        "",
        "v1",
        "Endpoints",
        "endpoints",
        true,
        false,
        false,
        &["ep"],
        &[],
    ),
    (
        "",
        "v1",
        "PersistentVolume",
        "persistentvolumes",
        false,
        true,
        false,
        &["pv"],
        &[],
    ),
    (
        "",
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        true,
        true,
        false,
        &["pvc"],
        &[],
    ),
    (
        "",
        "v1",
        "LimitRange",
        "limitranges",
        true,
        false,
        false,
        &["limits"],
        &[],
    ),
    (
        "",
        "v1",
        "ResourceQuota",
        "resourcequotas",
        true,
        true,
        false,
        &["quota"],
        &[],
    ),
    (
        "",
        "v1",
        "PodTemplate",
        "podtemplates",
        true,
        false,
        true,
        &[],
        &[],
    ),
    (
        "",
        "v1",
        "ReplicationController",
        "replicationcontrollers",
        true,
        true,
        true,
        &["rc"],
        &["all"],
    ),
    (
        "coordination.k8s.io",
        "v1",
        "Lease",
        "leases",
        true,
        false,
        false,
        &[],
        &[],
    ),
    (
        "apps",
        "v1",
        "Deployment",
        "deployments",
        true,
        true,
        true,
        &["deploy"],
        &["all"],
    ),
    (
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
        true,
        true,
        true,
        &["rs"],
        &["all"],
    ),
    (
        "apps",
        "v1",
        "StatefulSet",
        "statefulsets",
        true,
        true,
        true,
        &["sts"],
        &["all"],
    ),
    (
        "apps",
        "v1",
        "DaemonSet",
        "daemonsets",
        true,
        true,
        true,
        &["ds"],
        &["all"],
    ),
    (
        "apps",
        "v1",
        "ControllerRevision",
        "controllerrevisions",
        true,
        false,
        false,
        &[],
        &[],
    ),
    (
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
        true,
        false,
        &["hpa"],
        &["all"],
    ),
    (
        "autoscaling",
        "v1",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
        true,
        false,
        &["hpa"],
        &["all"],
    ),
    (
        "batch",
        "v1",
        "Job",
        "jobs",
        true,
        true,
        true,
        &[],
        &["all"],
    ),
    (
        "batch",
        "v1",
        "CronJob",
        "cronjobs",
        true,
        true,
        true,
        &["cj"],
        &["all"],
    ),
    (
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
        true,
        true,
        &["pdb"],
        &[],
    ),
    (
        "networking.k8s.io",
        "v1",
        "Ingress",
        "ingresses",
        true,
        true,
        true,
        &["ing"],
        &[],
    ),
    (
        "networking.k8s.io",
        "v1",
        "IngressClass",
        "ingressclasses",
        false,
        false,
        true,
        &[],
        &[],
    ),
    (
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        "networkpolicies",
        true,
        false,
        true,
        &["netpol"],
        &[],
    ),
    (
        "discovery.k8s.io",
        "v1",
        "EndpointSlice",
        "endpointslices",
        true,
        false,
        true,
        &[],
        &[],
    ),
    (
        "storage.k8s.io",
        "v1",
        "StorageClass",
        "storageclasses",
        false,
        false,
        false,
        &["sc"],
        &[],
    ),
    (
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
        false,
        false,
        true,
        &["pc"],
        &[],
    ),
    (
        "node.k8s.io",
        "v1",
        "RuntimeClass",
        "runtimeclasses",
        false,
        false,
        false,
        &[],
        &[],
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
        false,
        true,
        &[],
        &["api-extensions"],
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        false,
        false,
        true,
        &[],
        &["api-extensions"],
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicy",
        "validatingadmissionpolicies",
        false,
        true,
        true,
        &[],
        &["api-extensions"],
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicyBinding",
        "validatingadmissionpolicybindings",
        false,
        false,
        true,
        &[],
        &["api-extensions"],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "Role",
        "roles",
        true,
        false,
        false,
        &[],
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
        false,
        false,
        false,
        &[],
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "rolebindings",
        true,
        false,
        false,
        &[],
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
        false,
        false,
        &[],
        &[],
    ),
    (
        "apiregistration.k8s.io",
        "v1",
        "APIService",
        "apiservices",
        false,
        true,
        false,
        &[],
        &["api-extensions"],
    ),
    (
        "storage.k8s.io",
        "v1",
        "VolumeAttachment",
        "volumeattachments",
        false,
        true,
        false,
        &[],
        &[],
    ),
    (
        "storage.k8s.io",
        "v1",
        "CSIDriver",
        "csidrivers",
        false,
        false,
        false,
        &[],
        &[],
    ),
    (
        "storage.k8s.io",
        "v1",
        "CSINode",
        "csinodes",
        false,
        false,
        false,
        &[],
        &[],
    ),
    (
        "storage.k8s.io",
        "v1",
        "CSIStorageCapacity",
        "csistoragecapacities",
        true,
        false,
        false,
        &[],
        &[],
    ),
    (
        "storage.k8s.io",
        "v1",
        "VolumeAttributesClass",
        "volumeattributesclasses",
        false,
        false,
        false,
        &["vac"],
        &[],
    ),
    (
        "certificates.k8s.io",
        "v1",
        "CertificateSigningRequest",
        "certificatesigningrequests",
        false,
        true,
        false,
        &["csr"],
        &[],
    ),
    (
        "events.k8s.io",
        "v1",
        "Event",
        "events",
        true,
        false,
        false,
        &["ev"],
        &[],
    ),
    (
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
        true,
        true,
        &["crd", "crds"],
        &["api-extensions"],
    ),
];

/// The built-in kinds whose strategy refuses a PUT without `metadata.resourceVersion`
/// (`AllowUnconditionalUpdate` false); every other built-in kind allows it. Custom resources
/// refuse it too.
const REFUSE_UNCONDITIONAL_UPDATE: &[(&str, &str)] = &[
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("coordination.k8s.io", "Lease"),
    ("policy", "PodDisruptionBudget"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "CSIStorageCapacity"),
];

/// The built-in kinds whose strategy creates the object on a PUT to a missing name
/// (`AllowCreateOnUpdate` true; the `/status` strategies inherit it). `events.k8s.io` Events
/// are stored through the core Event strategy.
const CREATE_ON_UPDATE: &[(&str, &str)] = &[
    ("", "Endpoints"),
    ("", "Event"),
    ("", "LimitRange"),
    ("", "Service"),
    ("coordination.k8s.io", "Lease"),
    ("events.k8s.io", "Event"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io", "Role"),
    ("rbac.authorization.k8s.io", "RoleBinding"),
];

/// Whether two API groups are the same. The core group is empty, and an empty `String`'s
/// pointer is dangling: `==` would call `memcmp` with a length of 0 there, which glibc's AVX-512
/// variant answers only after a ~100 ns fault-suppression assist.
/// [`serde_json::short_bytes::eq_bytes`] compares without that call.
pub fn same_group(a: &str, b: &str) -> bool {
    serde_json::short_bytes::eq_bytes(a.as_bytes(), b.as_bytes())
}

/// The built-in resource types every server serves, in discovery order.
/// Kube-aware version order, most preferred first: `v2 < v1 < v1beta2 < v1beta1 < v1alpha1`, then
/// versions that do not look like Kubernetes versions, alphabetically
/// (`k8s.io/apimachinery/pkg/version.CompareKubeAwareVersionStrings`, reversed).
pub fn compare_kube_versions(a: &str, b: &str) -> Ordering {
    match (parse_kube_version(a), parse_kube_version(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// `(stability, major, minor)` of a kube-like version, where stability is 2 for GA, 1 for beta and
/// 0 for alpha, so that a larger tuple is the more preferred version.
fn parse_kube_version(version: &str) -> Option<(u8, u64, u64)> {
    let rest = version.strip_prefix('v')?;
    let digits_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let major: u64 = rest[..digits_end].parse().ok()?;
    if major == 0 {
        return None;
    }
    let suffix = &rest[digits_end..];
    if suffix.is_empty() {
        return Some((2, major, 0));
    }
    let (stability, minor) = if let Some(minor) = suffix.strip_prefix("beta") {
        (1, minor)
    } else if let Some(minor) = suffix.strip_prefix("alpha") {
        (0, minor)
    } else {
        return None;
    };
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((stability, major, minor.parse().ok()?))
}

/// The deprecated built-in kinds this server serves: (group, kind, version deprecated in,
/// replacement), from `k8s.io/api`'s `APILifecycleDeprecated` and `APILifecycleReplacement`.
const DEPRECATED: &[(&str, &str, &str, Option<&str>)] = &[
    ("", "ComponentStatus", "1.19", None),
    (
        "",
        "Endpoints",
        "1.33",
        Some("discovery.k8s.io/v1 EndpointSlice"),
    ),
];

/// The deprecation warning of a built-in kind, as the real server words it for every request
/// to the resource (`deprecation.WarningMessage`): `v1 Endpoints is deprecated in v1.33+; use
/// discovery.k8s.io/v1 EndpointSlice`. Every deprecated built-in served here is in `v1`.
fn builtin_deprecation(group: &str, kind: &str) -> Option<String> {
    let (_, _, since, replacement) = DEPRECATED
        .iter()
        .find(|(g, k, _, _)| *g == group && *k == kind)?;
    let mut warning = format!("v1 {kind} is deprecated in v{since}+");
    if let Some(replacement) = replacement {
        warning.push_str(&format!("; use {replacement}"));
    }
    Some(warning)
}

/// The built-in kind `group`/`kind`, for tests.
#[cfg(test)]
pub(crate) fn builtin_info(group: &str, kind: &str) -> ResourceInfo {
    builtin_resources()
        .into_iter()
        .find(|r| r.group == group && r.kind == kind)
        .expect("a built-in kind")
}

pub fn builtin_resources() -> Vec<ResourceInfo> {
    BUILTINS
        .iter()
        .map(
            |&(
                group,
                version,
                kind,
                plural,
                namespaced,
                has_status,
                tracks_generation,
                short,
                cats,
            )| {
                ResourceInfo {
                    group: group.into(),
                    version: version.into(),
                    kind: kind.into(),
                    plural: plural.into(),
                    singular: kind.to_lowercase(),
                    namespaced,
                    has_status,
                    short_names: short.iter().map(|s| s.to_string()).collect(),
                    categories: cats.iter().map(|s| s.to_string()).collect(),
                    allow_unconditional_update: !REFUSE_UNCONDITIONAL_UPDATE
                        .contains(&(group, kind)),
                    allow_create_on_update: CREATE_ON_UPDATE.contains(&(group, kind)),
                    custom: false,
                    schema: None,
                    additional_printer_columns: Vec::new(),
                    selectable_fields: Vec::new(),
                    tracks_generation,
                    review: false,
                    computed: false,
                    scale: None,
                    apply_schema: Default::default(),
                    deprecation_warning: builtin_deprecation(group, kind),
                    versions: None,
                }
            },
        )
        .chain(
            REVIEWS
                .iter()
                .map(|&(group, kind, plural, namespaced)| ResourceInfo {
                    group: group.into(),
                    version: "v1".into(),
                    kind: kind.into(),
                    plural: plural.into(),
                    singular: kind.to_lowercase(),
                    namespaced,
                    review: true,
                    ..Default::default()
                }),
        )
        .chain(std::iter::once(ResourceInfo {
            version: "v1".into(),
            kind: "ComponentStatus".into(),
            plural: "componentstatuses".into(),
            singular: "componentstatus".into(),
            short_names: vec!["cs".into()],
            computed: true,
            deprecation_warning: builtin_deprecation("", "ComponentStatus"),
            ..Default::default()
        }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_cover_the_served_kinds() {
        let all = builtin_resources();
        let pods = all.iter().find(|r| r.plural == "pods").unwrap();
        assert!(pods.namespaced && pods.has_status && pods.tracks_generation);
        assert_eq!(pods.api_version(), "v1");
        let leases = all.iter().find(|r| r.plural == "leases").unwrap();
        assert_eq!(leases.api_version(), "coordination.k8s.io/v1");
        assert_eq!(leases.list_kind(), "LeaseList");
        assert!(all
            .iter()
            .any(|r| r.plural == "customresourcedefinitions" && !r.namespaced));
    }
}
