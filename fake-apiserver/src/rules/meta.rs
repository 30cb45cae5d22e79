//! Object metadata rules per kind: which name rule a kind's strategy passes to
//! `ValidateObjectMeta`, the finalizer-name rule the built-in kinds add on top
//! (`validateKubeFinalizerName`), and how many times each metadata check runs on an update.
//!
//! Upstream: `staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go`
//! (`ValidateObjectMetaAccessor`, `ValidateObjectMetaAccessorUpdate`),
//! `pkg/apis/core/validation/validation.go` (`ValidateObjectMeta`, `ValidateObjectMetaUpdate`,
//! the `Validate*Name` functions), `staging/src/k8s.io/apiserver/pkg/registry/rest/update.go`
//! (`validateCommonFields`).

use serde_json::Value;

use super::Target;
use crate::resource::ResourceInfo;
use crate::rules::validation::{
    object_meta_causes, object_meta_causes_with, object_meta_update_causes_with, Cause,
    MetadataMapCauses, NameRule,
};

/// How a kind's strategy validates metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaRules {
    /// A built-in kind validated through `pkg/apis/core/validation.ValidateObjectMeta` with this
    /// name rule (which adds the finalizer-name rule). `update_revalidates` is whether the kind's
    /// `ValidateUpdate` also runs its create validation (`ValidateObjectMeta`) on the new object.
    Builtin {
        /// The name rule of the kind (`ValidatePodName`, `ValidateNamespaceName`, ...).
        name: NameRule,
        /// `ValidateXUpdate` calls `ValidateX(new)` too.
        update_revalidates: bool,
    },
    /// A core `v1` Event: its strategy validates no metadata (`legacyValidateEvent`); only the
    /// registry's generic checks (path-segment names) apply.
    LegacyEvent,
    /// A custom resource: apimachinery's checks with DNS-subdomain names (`customResourceValidator`).
    Custom,
    /// A CustomResourceDefinition: its own validation checks the metadata.
    Crd,
}

/// The metadata rules of a kind.
pub fn rules_for(info: &ResourceInfo) -> MetaRules {
    if info.custom {
        return MetaRules::Custom;
    }
    let builtin = |name, update_revalidates| MetaRules::Builtin {
        name,
        update_revalidates,
    };
    match (info.group.as_str(), info.kind.as_str()) {
        ("apiextensions.k8s.io", "CustomResourceDefinition") => MetaRules::Crd,
        ("", "Event") => MetaRules::LegacyEvent,
        (group, kind) => builtin(name_rule(group, kind), update_revalidates(group, kind)),
    }
}

/// The name rule a built-in kind's strategy validates names with.
///
/// - `ValidateNamespaceName` (`NameIsDNSLabel`): Namespace.
/// - `ValidateServiceName` (`NameIsDNS1035Label`): Service.
/// - `ValidateStatefulSetName` (`NameIsDNSLabel`, the name is part of its pods' host names).
/// - `ValidatePersistentVolumeName` (`path.ValidatePathSegmentName`): PersistentVolume.
/// - `minimalNameRequirements` (`path.IsValidPathSegmentName`): the RBAC kinds.
/// - `ValidateCertificateRequestName`: none (CertificateSigningRequest).
/// - `NameIsDNSSubdomain` for every other kind served here (`ValidatePodName`,
///   `ValidateConfigMapName`, `ValidateSecretName`, `ValidateServiceAccountName`,
///   `ValidateNodeName`, `ValidateDeploymentName`, `ValidateLeaseName`, ...).
pub fn name_rule(group: &str, kind: &str) -> NameRule {
    match (group, kind) {
        ("", "Namespace") | ("apps", "StatefulSet") => NameRule::Dns1123Label,
        ("", "Service") => NameRule::Dns1035Label,
        ("", "PersistentVolume") => NameRule::PathSegment,
        (
            "rbac.authorization.k8s.io",
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding",
        ) => NameRule::PathSegment,
        ("certificates.k8s.io", "CertificateSigningRequest") => NameRule::Unchecked,
        // `ValidateAPIService` checks the name against the spec (see `apiregistration`).
        ("apiregistration.k8s.io", "APIService") => NameRule::Unchecked,
        _ => NameRule::Dns1123Subdomain,
    }
}

/// Whether the kind's `ValidateXUpdate` re-runs `ValidateX` (and so `ValidateObjectMeta`) on the
/// new object: `ValidateConfigMapUpdate`, `ValidateSecretUpdate`, `ValidateServiceAccountUpdate`,
/// `ValidatePodUpdate` (through `validatePodMetadataAndSpec`), `ValidateServiceUpdate`,
/// the CSIStorageCapacity strategy (`ValidateCSIStorageCapacity` + its update),
/// `ValidateControllerRevisionUpdate`, the RBAC `Validate*Update`, the node strategy
/// (`ValidateNode` + `ValidateNodeUpdate`) and the job strategy (`ValidateJob` +
/// `ValidateJobUpdate`) and the daemon set strategy (`ValidateDaemonSet` + `ValidateDaemonSetUpdate`)
/// do; the apps workloads, Namespace, Lease and
/// CronJob validate only the update of the metadata.
fn update_revalidates(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        (
            "",
            "ConfigMap"
                | "Secret"
                | "ServiceAccount"
                | "Pod"
                | "Service"
                | "Node"
                | "Endpoints"
                | "LimitRange"
                | "ResourceQuota"
                | "PersistentVolumeClaim"
                | "PodTemplate"
        ) | ("apps", "ControllerRevision" | "DaemonSet")
            | ("networking.k8s.io", "Ingress" | "IngressClass")
            | ("batch", "Job")
            | ("storage.k8s.io", "CSIStorageCapacity")
            | ("rbac.authorization.k8s.io", _)
    )
}

/// The standard finalizers a built-in kind accepts without a domain (`IsStandardFinalizerName`).
const STANDARD_FINALIZERS: [&str; 3] = ["kubernetes", "orphan", "foregroundDeletion"];

/// `validateKubeFinalizerName` at `metadata.finalizers[i]`: a finalizer without `/` must be one
/// of the standard ones.
pub fn kube_finalizer_causes(obj: &Value) -> Vec<Cause> {
    let items = obj["metadata"]["finalizers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    items
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let f = f.as_str()?;
            (!f.contains('/') && !STANDARD_FINALIZERS.contains(&f)).then(|| {
                Cause::invalid_str(
                    format!("metadata.finalizers[{i}]"),
                    f,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            })
        })
        .collect()
}

/// The metadata causes of a create, as the kind's strategy `Validate` reports them.
pub fn create_causes(info: &ResourceInfo, obj: &Value) -> Vec<Cause> {
    match rules_for(info) {
        MetaRules::Builtin { name, .. } => {
            kube_create(info, name, obj, &MetadataMapCauses::of(obj))
        }
        MetaRules::Custom => object_meta_causes(info.namespaced, NameRule::Dns1123Subdomain, obj),
        MetaRules::LegacyEvent | MetaRules::Crd => Vec::new(),
    }
}

/// Whether the create and update checks of `info`'s kind check `metadata.labels` and
/// `metadata.annotations` here (for a CRD, its own validation does).
pub fn checks_labels_and_annotations(info: &ResourceInfo) -> bool {
    rules_for(info) != MetaRules::Crd
}

/// The generic check `rest.BeforeCreate` runs after the strategy passed
/// (`ValidateObjectMetaAccessor` with `path.ValidatePathSegmentName`).
pub fn generic_create_causes(info: &ResourceInfo, obj: &Value) -> Vec<Cause> {
    if rules_for(info) == MetaRules::Crd {
        return Vec::new();
    }
    object_meta_causes(info.namespaced, NameRule::PathSegment, obj)
}

/// The metadata causes of an update: `validateCommonFields` of `rest.BeforeUpdate`, then what the
/// kind's `ValidateUpdate` (or `ValidateStatusUpdate`) checks of the metadata.
/// `known`: which of `new`'s labels and annotations are known to pass their checks.
pub fn update_causes(
    info: &ResourceInfo,
    old: &Value,
    new: &Value,
    target: Target,
    known: super::KnownValid,
) -> Vec<Cause> {
    let rules = rules_for(info);
    if rules == MetaRules::Crd {
        // The CRD's own update validation reports its metadata.
        return Vec::new();
    }
    // Labels and annotations are reported by each validation below; checked once.
    let valid_annotation_keys = known
        .old_annotations
        .then(|| old.get("metadata")?.get("annotations")?.as_object())
        .flatten();
    let maps =
        MetadataMapCauses::of_known(new, known.labels, known.annotations, valid_annotation_keys);
    let mut causes = object_meta_causes_with(info.namespaced, NameRule::PathSegment, new, &maps);
    causes.extend(object_meta_update_causes_with(new, old, &maps));
    match rules {
        MetaRules::Builtin {
            name,
            update_revalidates,
        } => {
            let (revalidations, checks_update) = match (info.group.as_str(), info.kind.as_str()) {
                // `ValidateXUpdate` = `ValidateX(new)` + the fixed fields, and the strategy
                // calls `ValidateX(new)` first: the metadata twice, its update never.
                ("storage.k8s.io", "VolumeAttachment" | "CSINode") => (2, false),
                // The same, with `ValidateObjectMetaUpdate` inside `ValidateXUpdate`.
                ("storage.k8s.io", "VolumeAttributesClass") => (2, true),
                _ => (
                    usize::from(update_revalidates && target == Target::Main),
                    true,
                ),
            };
            if checks_update {
                causes.extend(kube_update(new, old, &maps));
            }
            for _ in 0..revalidations {
                causes.extend(kube_create(info, name, new, &maps));
            }
        }
        MetaRules::Custom => causes.extend(object_meta_update_causes_with(new, old, &maps)),
        MetaRules::LegacyEvent | MetaRules::Crd => {}
    }
    causes
}

/// `pkg/apis/core/validation.ValidateObjectMeta`.
fn kube_create(
    info: &ResourceInfo,
    name: NameRule,
    obj: &Value,
    maps: &MetadataMapCauses,
) -> Vec<Cause> {
    let mut causes = object_meta_causes_with(info.namespaced, name, obj, maps);
    causes.extend(kube_finalizer_causes(obj));
    causes
}

/// `pkg/apis/core/validation.ValidateObjectMetaUpdate`.
fn kube_update(new: &Value, old: &Value, maps: &MetadataMapCauses) -> Vec<Cause> {
    let mut causes = object_meta_update_causes_with(new, old, maps);
    causes.extend(kube_finalizer_causes(new));
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    use crate::resource::builtin_info as info;

    fn obj(name: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns"}})
    }

    fn texts(causes: &[Cause]) -> Vec<String> {
        causes.iter().map(Cause::error_text).collect()
    }

    #[rstest]
    #[case::pod_subdomain("", "Pod", "a.b-c", true)]
    #[case::pod_upper("", "Pod", "Web", false)]
    #[case::namespace_dot("", "Namespace", "a.b", false)]
    #[case::service_digit_first("", "Service", "1web", false)]
    #[case::service_label("", "Service", "web-1", true)]
    #[case::statefulset_dot("apps", "StatefulSet", "db.0", false)]
    #[case::deployment_dot("apps", "Deployment", "web.v1", true)]
    #[case::role_colon("rbac.authorization.k8s.io", "ClusterRole", "system:aggregate", true)]
    #[case::role_slash("rbac.authorization.k8s.io", "ClusterRole", "a/b", false)]
    #[case::pv_upper("", "PersistentVolume", "PV_1", true)]
    #[case::lease_subdomain("coordination.k8s.io", "Lease", "kube-scheduler", true)]
    fn names_follow_the_kind_rule(
        #[case] group: &str,
        #[case] kind: &str,
        #[case] name: &str,
        #[case] accepted: bool,
    ) {
        let info = info(group, kind);
        let mut o = obj(name);
        if !info.namespaced {
            o["metadata"].as_object_mut().unwrap().remove("namespace");
        }
        assert_eq!(create_causes(&info, &o).is_empty(), accepted, "{name}");
    }

    /// A pod update reports a bad label and a bad annotation once per metadata validation it
    /// runs (`BeforeUpdate`'s, `ValidateObjectMetaUpdate`'s, the strategy's two), each time
    /// labels first: checked once, reported in the same places.
    #[test]
    fn a_pod_update_reports_each_bad_label_and_annotation_four_times_in_order() {
        let old = obj("p");
        let mut new = obj("p");
        new["metadata"]["resourceVersion"] = json!("1");
        new["metadata"]["labels"] = json!({"bad key!": "v"});
        new["metadata"]["annotations"] = json!({"also bad!": "v"});
        let causes = update_causes(
            &info("", "Pod"),
            &old,
            &new,
            Target::Main,
            Default::default(),
        );
        let fields: Vec<&str> = causes.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(
            fields,
            ["metadata.labels", "metadata.annotations"].repeat(4),
            "{:?}",
            texts(&causes)
        );
        assert_eq!(causes[0], causes[2]);
        assert_eq!(causes[1], causes[7]);
    }

    #[test]
    fn statefulset_names_are_labels_with_the_real_message() {
        let causes = create_causes(&info("apps", "StatefulSet"), &obj("db.0"));
        assert_eq!(
            texts(&causes),
            vec!["metadata.name: Invalid value: \"db.0\": must not contain dots"]
        );
    }

    #[rstest]
    #[case::domain("example.com/cleanup", None)]
    #[case::standard("kubernetes", None)]
    #[case::orphan("orphan", None)]
    #[case::bare("cleanup", Some("metadata.finalizers[0]: Invalid value: \"cleanup\": name is neither a standard finalizer name nor is it fully qualified"))]
    fn builtin_finalizers_need_a_domain(#[case] finalizer: &str, #[case] error: Option<&str>) {
        let mut o = obj("cm");
        o["metadata"]["finalizers"] = json!([finalizer]);
        let causes = create_causes(&info("", "ConfigMap"), &o);
        assert_eq!(
            texts(&causes),
            error.map(String::from).into_iter().collect::<Vec<_>>()
        );
    }

    #[test]
    fn custom_resources_take_bare_finalizers() {
        let mut custom = info("", "ConfigMap");
        custom.custom = true;
        let mut o = obj("w");
        o["metadata"]["finalizers"] = json!(["cleanup"]);
        assert!(create_causes(&custom, &o).is_empty());
    }

    #[test]
    fn core_events_skip_strategy_name_rules() {
        let events = info("", "Event");
        let o = obj("Pod.Web_1");
        assert!(create_causes(&events, &o).is_empty());
        assert!(generic_create_causes(&events, &o).is_empty());
        assert_eq!(generic_create_causes(&events, &obj("a/b")).len(), 1);
    }

    /// A bad label on update is reported once by each metadata check that runs: the registry's
    /// two generic checks, the kind's update check and, for kinds that re-validate, the create
    /// check again.
    #[rstest]
    #[case::configmap("", "ConfigMap", Target::Main, 4)]
    #[case::configmap_status("", "ConfigMap", Target::Status, 3)]
    #[case::lease("coordination.k8s.io", "Lease", Target::Main, 3)]
    #[case::deployment("apps", "Deployment", Target::Main, 3)]
    #[case::event("", "Event", Target::Main, 2)]
    fn update_checks_count(
        #[case] group: &str,
        #[case] kind: &str,
        #[case] target: Target,
        #[case] times: usize,
    ) {
        let info = info(group, kind);
        let old = json!({"metadata": {"name": "x", "namespace": "ns", "resourceVersion": "1"}});
        let mut new = old.clone();
        new["metadata"]["labels"] = json!({"a b": "c"});
        let causes = update_causes(&info, &old, &new, target, Default::default());
        assert_eq!(causes.len(), times, "{causes:?}");
        assert!(causes.iter().all(|c| c.field == "metadata.labels"));
    }

    #[test]
    fn no_new_finalizers_while_deleting() {
        let old = json!({"metadata": {"name": "x", "namespace": "ns", "resourceVersion": "1",
            "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["a.io/x"]}});
        let mut new = old.clone();
        new["metadata"]["finalizers"] = json!(["a.io/x", "b.io/y"]);
        let causes = update_causes(
            &info("", "ConfigMap"),
            &old,
            &new,
            Target::Main,
            Default::default(),
        );
        let forbidden: Vec<_> = causes
            .iter()
            .filter(|c| c.reason == "FieldValueForbidden")
            .collect();
        assert_eq!(forbidden.len(), 2);
        assert_eq!(
            forbidden[0].error_text(),
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"b.io/y\"}"
        );
    }
}
