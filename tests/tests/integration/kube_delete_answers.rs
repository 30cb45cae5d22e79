//! What `Api::delete` and `Api::delete_collection` decode against the fake server, over loopback
//! as a kube-rs program run against a cluster: custom resources and most built-in kinds answer an
//! immediate delete with a `Status` naming the object (`Either::Right`), the registries that
//! return the deleted object (pods, services, ...) and any delete that only marks the object
//! answer the object (`Either::Left`), and a deletecollection answers the selected objects as
//! they were listed.

use crate::kubectl_support;

use k8s_openapi::api::core::v1::{ConfigMap, Pod, Service};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, PostParams};
use kube::core::GroupVersionKind;
use kubectl_support::Cluster;
use serde_json::json;

fn widget_crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
            }]
        }
    }))
    .expect("CRD")
}

fn widgets(cluster: &Cluster) -> Api<DynamicObject> {
    let client = cluster.tcp_client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    cluster
        .block_on(crds.create(&PostParams::default(), &widget_crd()))
        .expect("create CRD");
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Widget"),
        "widgets",
    );
    Api::namespaced_with(client, "default", &resource)
}

fn widget(name: &str, finalizers: &[&str]) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "labels": {"set": "a"}, "finalizers": finalizers},
        "spec": {"size": 1}
    }))
    .expect("widget")
}

#[test]
fn deleting_a_custom_resource_answers_a_status_naming_it() {
    let cluster = Cluster::start();
    let api = widgets(&cluster);
    let created = cluster
        .block_on(api.create(&PostParams::default(), &widget("w", &[])))
        .expect("create");
    let answer = cluster
        .block_on(api.delete("w", &DeleteParams::default()))
        .expect("delete");
    let status = answer.right().expect("a Status, not the object");
    assert_eq!(
        status.status,
        Some(kube::core::response::StatusSummary::Success)
    );
    let details = status.details.expect("details");
    assert_eq!(details.name, "w");
    assert_eq!(details.group, "example.com");
    assert_eq!(details.kind, "widgets");
    assert_eq!(Some(details.uid), created.metadata.uid);
    assert!(cluster
        .object("example.com/v1", "widgets", Some("default"), "w")
        .is_none());
}

#[test]
fn deleting_a_custom_resource_held_by_a_finalizer_answers_the_marked_object() {
    let cluster = Cluster::start();
    let api = widgets(&cluster);
    cluster
        .block_on(api.create(
            &PostParams::default(),
            &widget("held", &["example.com/hold"]),
        ))
        .expect("create");
    let answer = cluster
        .block_on(api.delete("held", &DeleteParams::default()))
        .expect("delete");
    let object = answer.left().expect("the object, not a Status");
    assert!(object.metadata.deletion_timestamp.is_some());
    assert_eq!(object.metadata.generation, Some(2));
}

#[test]
fn built_in_kinds_answer_by_their_registry() {
    let cluster = Cluster::start();
    let client = cluster.tcp_client();
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let services: Api<Service> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client, "default");
    cluster.block_on(async {
        let cm: ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": "cm"}, "data": {"a": "1"}})).unwrap();
        configmaps.create(&PostParams::default(), &cm).await.expect("configmap");
        let svc: Service = serde_json::from_value(
            json!({"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}}),
        )
        .unwrap();
        services.create(&PostParams::default(), &svc).await.expect("service");
        let pod: Pod = serde_json::from_value(
            json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}),
        )
        .unwrap();
        pods.create(&PostParams::default(), &pod).await.expect("pod");

        let status = configmaps
            .delete("cm", &DeleteParams::default())
            .await
            .expect("delete configmap")
            .right()
            .expect("configmaps answer a Status");
        let details = status.details.expect("details");
        assert_eq!((details.name.as_str(), details.kind.as_str()), ("cm", "configmaps"));

        let svc = services
            .delete("svc", &DeleteParams::default())
            .await
            .expect("delete service")
            .left()
            .expect("services answer the deleted object (ReturnDeletedObject)");
        assert_eq!(svc.metadata.name.as_deref(), Some("svc"));

        let pod = pods
            .delete("p", &DeleteParams::default())
            .await
            .expect("delete pod")
            .left()
            .expect("pods answer the deleted object");
        assert_eq!(pod.metadata.deletion_grace_period_seconds, Some(0));
    });
}

#[test]
fn deletecollection_answers_the_objects_as_listed() {
    let cluster = Cluster::start();
    let api = widgets(&cluster);
    cluster.block_on(async {
        for (name, finalizers) in [("a", &[][..]), ("b", &["example.com/hold"][..])] {
            api.create(&PostParams::default(), &widget(name, finalizers))
                .await
                .expect("create");
        }
        let mut other = widget("c", &[]);
        other.metadata.labels = Some([("set".to_string(), "b".to_string())].into());
        api.create(&PostParams::default(), &other)
            .await
            .expect("create");

        let list = api
            .delete_collection(
                &DeleteParams::default(),
                &ListParams::default().labels("set=a"),
            )
            .await
            .expect("deletecollection")
            .left()
            .expect("a list");
        let names: Vec<_> = list
            .items
            .iter()
            .filter_map(|w| w.metadata.name.clone())
            .collect();
        assert_eq!(names, ["a", "b"]);
        // As listed: the held one is not shown marked.
        assert!(list
            .items
            .iter()
            .all(|w| w.metadata.deletion_timestamp.is_none()));
    });
    assert!(cluster
        .object("example.com/v1", "widgets", Some("default"), "a")
        .is_none());
    let held = cluster.must_get("example.com/v1", "widgets", Some("default"), "b");
    assert!(held["metadata"]["deletionTimestamp"].is_string(), "{held}");
    assert!(cluster
        .object("example.com/v1", "widgets", Some("default"), "c")
        .is_some());
}

#[test]
fn kubectl_delete_of_a_custom_resource_reports_it_deleted() {
    let cluster = Cluster::start();
    let api = widgets(&cluster);
    cluster
        .block_on(api.create(&PostParams::default(), &widget("w", &[])))
        .expect("create");
    cluster
        .kubectl(&["delete", "widgets", "w"])
        .ok()
        .stdout_is("widget.example.com \"w\" deleted\n");
}
