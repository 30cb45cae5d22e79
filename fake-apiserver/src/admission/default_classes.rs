//! The `DefaultStorageClass` and `DefaultIngressClass` admission plugins
//! (`plugin/pkg/admission/storage/storageclass/setdefault`,
//! `plugin/pkg/admission/network/defaultingressclass`), on by default in every real server: a
//! PersistentVolumeClaim created without a class gets the default StorageClass's name, an
//! Ingress created without one the default IngressClass's. The default is the class annotated
//! `...is-default-class: "true"`; of several, the newest (then the first by name), as
//! `GetDefaultClass` picks it. A class asked for explicitly — even `""`, or through the older
//! annotations (`volume.beta.kubernetes.io/storage-class`, `kubernetes.io/ingress.class`) — is
//! left alone, and so is any update.

use serde_json::{json, Value};

use crate::context::Shared;
use crate::resource::ResourceInfo;

/// Where StorageClasses are stored.
pub(super) const STORAGE_CLASSES: &str = "storage.k8s.io/storageclasses";

/// Where IngressClasses are stored.
const INGRESS_CLASSES: &str = "networking.k8s.io/ingressclasses";

/// The annotations that make a StorageClass the default (`IsDefaultAnnotation`).
const DEFAULT_STORAGE_CLASS: [&str; 2] = [
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
];

/// The annotation that makes an IngressClass the default.
const DEFAULT_INGRESS_CLASS: &str = "ingressclass.kubernetes.io/is-default-class";

/// A claim's class through the older annotation (`PersistentVolumeClaimHasClass`).
pub(super) const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

/// An Ingress's class through the older annotation.
const INGRESS_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// `Admit` of both plugins on a create: the default class for a claim or an Ingress that names
/// none.
pub(crate) fn admit_create(shared: &Shared, info: &ResourceInfo, object: &mut Value) {
    let (classes, defaults, annotation): (&str, &[&str], &str) =
        match (info.custom, info.group.as_str(), info.kind.as_str()) {
            (false, "", "PersistentVolumeClaim") => {
                (STORAGE_CLASSES, &DEFAULT_STORAGE_CLASS, BETA_STORAGE_CLASS)
            }
            (false, "networking.k8s.io", "Ingress") => (
                INGRESS_CLASSES,
                &[DEFAULT_INGRESS_CLASS],
                INGRESS_CLASS_ANNOTATION,
            ),
            _ => return,
        };
    let field = match info.kind.as_str() {
        "Ingress" => "ingressClassName",
        _ => "storageClassName",
    };
    let Some(spec) = object.get("spec").filter(|s| s.is_object()) else {
        return;
    };
    if spec.get(field).is_some_and(|c| !c.is_null())
        || object["metadata"]["annotations"].get(annotation).is_some()
    {
        return;
    }
    if let Some(class) = default_class(shared, classes, defaults) {
        object["spec"][field] = json!(class);
    }
}

/// `GetDefaultClass`: of the classes annotated as the default, the newest, then the first by
/// name.
fn default_class(shared: &Shared, classes: &str, defaults: &[&str]) -> Option<String> {
    shared
        .store
        .snapshot(classes, None)
        .items
        .iter()
        .filter_map(|(_, bytes)| crate::store::json::from_slice(bytes).ok())
        .filter(|class: &Value| {
            defaults
                .iter()
                .any(|a| class["metadata"]["annotations"][*a] == "true")
        })
        .map(|class| {
            // The server writes creation times as RFC 3339 seconds in UTC: their text orders
            // as the times do.
            let text = |key: &str| {
                class["metadata"][key]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            };
            (std::cmp::Reverse(text("creationTimestamp")), text("name"))
        })
        .min()
        .map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// A server holding StorageClasses created at the given seconds (after a fixed start).
    fn server_with(classes: &[(&str, i64, Option<&str>)]) -> crate::FakeApiServer {
        let now = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(0));
        let clock = now.clone();
        let server = crate::FakeApiServer::builder()
            .clock(move || {
                let at = 1_767_225_600 + clock.load(std::sync::atomic::Ordering::SeqCst);
                jiff::Timestamp::from_second(at).expect("a time")
            })
            .build();
        for (name, created, default) in classes {
            now.store(*created, std::sync::atomic::Ordering::SeqCst);
            let mut class = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": name}, "provisioner": "example.com/csi"});
            if let Some(default) = default {
                class["metadata"]["annotations"] =
                    json!({"storageclass.kubernetes.io/is-default-class": default});
            }
            crate::http::handlers::apply_manifest(&server, class).expect("a class");
        }
        server
    }

    fn claim(spec: Value) -> Value {
        json!({"metadata": {"name": "data"}, "spec": spec})
    }

    fn claims() -> ResourceInfo {
        crate::resource::builtin_info("", "PersistentVolumeClaim")
    }

    #[rstest]
    #[case::none_asked(json!({}), Some("fast"))]
    #[case::explicit(json!({"storageClassName": "slow"}), Some("slow"))]
    #[case::explicitly_none(json!({"storageClassName": ""}), Some(""))]
    fn a_claim_without_a_class_gets_the_newest_default(
        #[case] spec: Value,
        #[case] expected: Option<&str>,
    ) {
        let server = server_with(&[
            ("older", 10, Some("true")),
            ("fast", 20, Some("true")),
            ("slow", 30, Some("false")),
        ]);
        let mut object = claim(spec);
        admit_create(&server.shared, &claims(), &mut object);
        assert_eq!(object["spec"]["storageClassName"].as_str(), expected);
    }

    #[test]
    fn the_beta_annotation_or_no_default_leaves_a_claim_alone() {
        let server = server_with(&[("fast", 10, Some("true"))]);
        let mut annotated = claim(json!({}));
        annotated["metadata"]["annotations"] = json!({BETA_STORAGE_CLASS: "gold"});
        admit_create(&server.shared, &claims(), &mut annotated);
        assert!(annotated["spec"].get("storageClassName").is_none());

        let server = server_with(&[("plain", 10, None)]);
        let mut object = claim(json!({}));
        admit_create(&server.shared, &claims(), &mut object);
        assert!(object["spec"].get("storageClassName").is_none());
    }

    #[test]
    fn same_creation_time_picks_the_first_name() {
        let server = server_with(&[("b", 10, Some("true")), ("a", 10, Some("true"))]);
        let mut object = claim(json!({}));
        admit_create(&server.shared, &claims(), &mut object);
        assert_eq!(object["spec"]["storageClassName"], "a");
    }
}
