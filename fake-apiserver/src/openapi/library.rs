//! The built-in kinds' OpenAPI definitions: k8s-openapi's `schemars` schemas (the real Kubernetes
//! schemas under their real names, such as `io.k8s.api.core.v1.Pod`) with the Kubernetes
//! extensions added ([`super::add_kubernetes_extensions`]).
//!
//! Generating every definition costs milliseconds (a Pod alone reaches well over a hundred), while
//! a starting server writes only a handful of kinds (namespaces, RBAC, config maps) and most test
//! servers never serve an OpenAPI document. So the definitions one kind reaches are generated on
//! that kind's first use ([`definitions_of`]), and the whole library ([`library`]) only when a
//! document needs it. Both come from the same generator settings, so a definition reads the same
//! in either. The per-kind definitions share one generator, so what kinds have in common
//! (`ObjectMeta` and all it reaches) is generated once.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, OnceLock};

use k8s_openapi::schemars::generate::{SchemaGenerator, SchemaSettings};
use k8s_openapi::schemars::{JsonSchema, Schema};
use serde_json::{json, Map, Value};

use super::{add_kubernetes_extensions, OBJECT_META, STATUS};

use k8s_openapi::api::{
    admissionregistration, apps, autoscaling, batch, certificates, coordination, core, discovery,
    events, networking, node, policy, rbac, scheduling, storage,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions;
use k8s_openapi::apimachinery::pkg::apis::meta;

/// A built-in kind whose schema comes from k8s-openapi.
pub(super) struct TypedKind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    /// Its definition name, e.g. `io.k8s.api.core.v1.Pod` (cheap: no schema is generated).
    name: fn() -> Cow<'static, str>,
    /// Adds its schema, and every definition that schema reaches, to a generator.
    register: fn(&mut SchemaGenerator),
}

/// Adds `T`'s schema and everything it reaches to `generator`.
fn register<T: JsonSchema>(generator: &mut SchemaGenerator) {
    generator.subschema_for::<T>();
}

macro_rules! typed {
    ($(($group:literal, $version:literal, $kind:literal, $ty:ty)),* $(,)?) => {
        &[$(TypedKind {
            group: $group,
            version: $version,
            kind: $kind,
            name: <$ty as JsonSchema>::schema_name,
            register: register::<$ty>,
        }),*]
    };
}

/// Every typed built-in kind.
static TYPED_KINDS: &[TypedKind] = typed![
    ("", "v1", "Namespace", core::v1::Namespace),
    ("", "v1", "Pod", core::v1::Pod),
    ("", "v1", "Node", core::v1::Node),
    ("", "v1", "ConfigMap", core::v1::ConfigMap),
    ("", "v1", "ComponentStatus", core::v1::ComponentStatus),
    ("", "v1", "Secret", core::v1::Secret),
    ("", "v1", "Event", core::v1::Event),
    ("", "v1", "ServiceAccount", core::v1::ServiceAccount),
    ("", "v1", "Service", core::v1::Service),
    ("", "v1", "Endpoints", core::v1::Endpoints),
    ("", "v1", "PersistentVolume", core::v1::PersistentVolume),
    (
        "",
        "v1",
        "PersistentVolumeClaim",
        core::v1::PersistentVolumeClaim
    ),
    ("", "v1", "LimitRange", core::v1::LimitRange),
    ("", "v1", "ResourceQuota", core::v1::ResourceQuota),
    ("", "v1", "PodTemplate", core::v1::PodTemplate),
    (
        "",
        "v1",
        "ReplicationController",
        core::v1::ReplicationController
    ),
    (
        "coordination.k8s.io",
        "v1",
        "Lease",
        coordination::v1::Lease
    ),
    ("apps", "v1", "Deployment", apps::v1::Deployment),
    ("apps", "v1", "ReplicaSet", apps::v1::ReplicaSet),
    ("apps", "v1", "StatefulSet", apps::v1::StatefulSet),
    ("apps", "v1", "DaemonSet", apps::v1::DaemonSet),
    (
        "apps",
        "v1",
        "ControllerRevision",
        apps::v1::ControllerRevision
    ),
    ("batch", "v1", "Job", batch::v1::Job),
    ("batch", "v1", "CronJob", batch::v1::CronJob),
    (
        "policy",
        "v1",
        "PodDisruptionBudget",
        policy::v1::PodDisruptionBudget
    ),
    (
        "networking.k8s.io",
        "v1",
        "Ingress",
        networking::v1::Ingress
    ),
    (
        "networking.k8s.io",
        "v1",
        "IngressClass",
        networking::v1::IngressClass
    ),
    (
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        networking::v1::NetworkPolicy
    ),
    (
        "discovery.k8s.io",
        "v1",
        "EndpointSlice",
        discovery::v1::EndpointSlice
    ),
    (
        "storage.k8s.io",
        "v1",
        "StorageClass",
        storage::v1::StorageClass
    ),
    (
        "storage.k8s.io",
        "v1",
        "VolumeAttachment",
        storage::v1::VolumeAttachment
    ),
    ("storage.k8s.io", "v1", "CSIDriver", storage::v1::CSIDriver),
    ("storage.k8s.io", "v1", "CSINode", storage::v1::CSINode),
    (
        "storage.k8s.io",
        "v1",
        "CSIStorageCapacity",
        storage::v1::CSIStorageCapacity
    ),
    (
        "storage.k8s.io",
        "v1",
        "VolumeAttributesClass",
        storage::v1::VolumeAttributesClass
    ),
    (
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        scheduling::v1::PriorityClass
    ),
    ("node.k8s.io", "v1", "RuntimeClass", node::v1::RuntimeClass),
    (
        "certificates.k8s.io",
        "v1",
        "CertificateSigningRequest",
        certificates::v1::CertificateSigningRequest
    ),
    (
        "apiregistration.k8s.io",
        "v1",
        "APIService",
        k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService
    ),
    (
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        autoscaling::v2::HorizontalPodAutoscaler
    ),
    (
        "autoscaling",
        "v1",
        "HorizontalPodAutoscaler",
        autoscaling::v1::HorizontalPodAutoscaler
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        admissionregistration::v1::ValidatingWebhookConfiguration
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
        admissionregistration::v1::MutatingWebhookConfiguration
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicy",
        admissionregistration::v1::ValidatingAdmissionPolicy
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicyBinding",
        admissionregistration::v1::ValidatingAdmissionPolicyBinding
    ),
    (
        "authorization.k8s.io",
        "v1",
        "SelfSubjectAccessReview",
        k8s_openapi::api::authorization::v1::SelfSubjectAccessReview
    ),
    (
        "authorization.k8s.io",
        "v1",
        "SelfSubjectRulesReview",
        k8s_openapi::api::authorization::v1::SelfSubjectRulesReview
    ),
    (
        "authorization.k8s.io",
        "v1",
        "SubjectAccessReview",
        k8s_openapi::api::authorization::v1::SubjectAccessReview
    ),
    (
        "authorization.k8s.io",
        "v1",
        "LocalSubjectAccessReview",
        k8s_openapi::api::authorization::v1::LocalSubjectAccessReview
    ),
    (
        "authentication.k8s.io",
        "v1",
        "SelfSubjectReview",
        k8s_openapi::api::authentication::v1::SelfSubjectReview
    ),
    (
        "authentication.k8s.io",
        "v1",
        "TokenReview",
        k8s_openapi::api::authentication::v1::TokenReview
    ),
    ("rbac.authorization.k8s.io", "v1", "Role", rbac::v1::Role),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        rbac::v1::ClusterRole
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        rbac::v1::RoleBinding
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        rbac::v1::ClusterRoleBinding
    ),
    ("events.k8s.io", "v1", "Event", events::v1::Event),
    (
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        apiextensions::v1::CustomResourceDefinition
    ),
];

/// The `meta/v1` definitions every document carries besides the kinds'.
const META: [fn(&mut SchemaGenerator); 5] = [
    register::<meta::v1::ObjectMeta>,
    register::<meta::v1::ListMeta>,
    register::<meta::v1::Status>,
    register::<meta::v1::DeleteOptions>,
    register::<meta::v1::Patch>,
];

/// The typed kinds with their definition names, in [`TYPED_KINDS`] order.
pub(super) fn typed_kinds() -> impl Iterator<Item = (&'static TypedKind, &'static str)> {
    static NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
        TYPED_KINDS
            .iter()
            .map(|k| (k.name)().into_owned())
            .collect()
    });
    TYPED_KINDS.iter().zip(NAMES.iter().map(String::as_str))
}

/// The definition name of a typed built-in kind.
/// Looked up on every write (managedFields schema, typed shape): by hash, not by scanning.
pub(super) fn definition_name(group: &str, version: &str, kind: &str) -> Option<&'static str> {
    type ByKind = HashMap<(&'static str, &'static str, &'static str), &'static str>;
    static BY_KIND: LazyLock<ByKind> = LazyLock::new(|| {
        typed_kinds()
            .map(|(k, name)| ((k.group, k.version, k.kind), name))
            .collect()
    });
    // The map's keys are `'static`; reading it as keyed by shorter-lived strings is sound
    // (`HashMap` is covariant in its key) and lets the lookup borrow the caller's strings.
    let by_kind: &HashMap<(&str, &str, &str), &'static str> = &BY_KIND;
    by_kind.get(&(group, version, kind)).copied()
}

/// The definitions reached from the typed kind or `ObjectMeta` named `name` (itself included),
/// generated on first use; `None` for any other name.
pub(super) fn definitions_of(name: &str) -> Option<&'static Map<String, Value>> {
    static PER_ROOT: LazyLock<Vec<OnceLock<Map<String, Value>>>> =
        LazyLock::new(|| (0..=TYPED_KINDS.len()).map(|_| OnceLock::new()).collect());
    if name == OBJECT_META {
        let slot = PER_ROOT.get(TYPED_KINDS.len())?;
        return Some(slot.get_or_init(|| Shared::definitions_from(META[0], OBJECT_META)));
    }
    let index = typed_kinds().position(|(_, n)| n == name)?;
    let kind = &TYPED_KINDS[index];
    Some(
        PER_ROOT
            .get(index)?
            .get_or_init(|| Shared::definitions_from(kind.register, name)),
    )
}

/// One generator behind every kind's own definitions, so that what kinds share (`ObjectMeta`
/// and everything it reaches) is generated, transformed and extended once, not once per kind.
struct Shared {
    generator: SchemaGenerator,
    /// Every definition generated so far, finished as [`generate`] finishes them.
    finished: Map<String, Value>,
}

impl Shared {
    /// The definitions `root` reaches (itself included) once `register` has run.
    fn definitions_from(register: fn(&mut SchemaGenerator), root: &str) -> Map<String, Value> {
        static SHARED: LazyLock<Mutex<Shared>> = LazyLock::new(|| {
            Mutex::new(Shared {
                generator: SchemaSettings::openapi3().into_generator(),
                finished: Map::new(),
            })
        });
        let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        shared.add(register);
        shared.reached_from(root)
    }

    /// Runs `register` and finishes the definitions it added.
    fn add(&mut self, register: fn(&mut SchemaGenerator)) {
        register(&mut self.generator);
        let mut fresh: Map<String, Value> = self
            .generator
            .definitions()
            .iter()
            .filter(|(name, _)| !self.finished.contains_key(*name))
            .map(|(name, schema)| (name.clone(), schema.clone()))
            .collect();
        for schema in fresh.values_mut() {
            if let Ok(schema) = <&mut Schema>::try_from(schema) {
                for transform in self.generator.transforms_mut() {
                    transform.transform(schema);
                }
            }
        }
        finish(&mut fresh);
        self.finished.extend(fresh);
    }

    /// `root` and every finished definition it references, however indirectly.
    fn reached_from(&self, root: &str) -> Map<String, Value> {
        let mut out = Map::new();
        let mut pending = vec![root.to_string()];
        while let Some(name) = pending.pop() {
            if out.contains_key(&name) {
                continue;
            }
            let Some(schema) = self.finished.get(&name) else {
                continue;
            };
            super::collect_refs(schema, &mut pending);
            out.insert(name, schema.clone());
        }
        out
    }
}

/// Every built-in definition: all typed kinds and the `meta/v1` definitions, generated once.
pub(super) fn library() -> &'static Map<String, Value> {
    static LIBRARY: LazyLock<Map<String, Value>> = LazyLock::new(|| {
        let registers: Vec<fn(&mut SchemaGenerator)> =
            TYPED_KINDS.iter().map(|k| k.register).chain(META).collect();
        generate(&registers)
    });
    &LIBRARY
}

/// Runs `registers` on one OpenAPI v3 generator and returns its definitions with the Kubernetes
/// extensions added.
fn generate(registers: &[fn(&mut SchemaGenerator)]) -> Map<String, Value> {
    let mut generator = SchemaSettings::openapi3().into_generator();
    for register in registers {
        register(&mut generator);
    }
    let mut definitions = generator.take_definitions(true);
    finish(&mut definitions);
    definitions
}

/// What the generated (and transformed) definitions lack: the Kubernetes extensions, and
/// `Status`'s group-version-kind; and what they have too much of: k8s-openapi makes every
/// `metadata` field non-optional, so schemars lists it as required, which no real definition
/// does (`metadata` is `omitempty` everywhere).
fn finish(definitions: &mut Map<String, Value>) {
    for definition in definitions.values_mut() {
        unrequire_metadata(definition);
    }
    add_kubernetes_extensions(definitions);
    if let Some(Value::Object(status)) = definitions.get_mut(STATUS) {
        status.insert(
            "x-kubernetes-group-version-kind".into(),
            json!([{"group": "", "kind": "Status", "version": "v1"}]),
        );
    }
}

/// Drops `metadata` from a definition's `required` list (and the list when that empties it).
fn unrequire_metadata(definition: &mut Value) {
    let Some(object) = definition.as_object_mut() else {
        return;
    };
    let Some(Value::Array(required)) = object.get_mut("required") else {
        return;
    };
    required.retain(|field| field != "metadata");
    if required.is_empty() {
        object.remove("required");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As in the real definitions, `metadata` is never required; the fields that are stay so.
    #[test]
    fn metadata_is_never_required() {
        let library = library();
        for (name, definition) in library {
            let required = definition["required"].as_array().into_iter().flatten();
            assert!(
                !required.clone().any(|f| f == "metadata"),
                "{name} requires metadata"
            );
        }
        assert_eq!(library[OBJECT_META].get("required"), None);
        assert_eq!(
            library["io.k8s.api.node.v1.RuntimeClass"]["required"],
            json!(["handler"])
        );
        assert_eq!(library["io.k8s.api.core.v1.Pod"].get("required"), None);
        assert_eq!(
            library["io.k8s.api.rbac.v1.RoleBinding"]["required"],
            json!(["roleRef"])
        );
    }

    /// A kind's own definitions read exactly as in the whole library, and reach everything they
    /// reference.
    #[test]
    fn per_kind_definitions_match_the_library() {
        let library = library();
        for (kind, name) in typed_kinds().chain([(&TYPED_KINDS[0], OBJECT_META)]) {
            let own = definitions_of(name).expect("a typed kind has definitions");
            assert!(
                own.contains_key(name),
                "{} lacks its own definition {name}",
                kind.kind
            );
            for (definition, schema) in own {
                assert_eq!(
                    library.get(definition),
                    Some(schema),
                    "{definition} differs between {name}'s definitions and the library"
                );
            }
            let mut refs = Vec::new();
            for schema in own.values() {
                super::super::collect_refs(schema, &mut refs);
            }
            for r in refs {
                assert!(own.contains_key(&r), "{name}'s definitions miss {r}");
            }
        }
    }

    #[test]
    fn unknown_names_have_no_definitions() {
        assert!(definitions_of("io.k8s.api.core.v1.NoSuchKind").is_none());
        assert_eq!(
            definition_name("", "v1", "Pod"),
            Some("io.k8s.api.core.v1.Pod")
        );
        assert_eq!(definition_name("", "v2", "Pod"), None);
    }
}
