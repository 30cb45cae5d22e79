//! Garbage collection and namespace termination as a user sees them: the real `kubectl` deleting
//! namespaces (waiting until they are gone, or watching one held `Terminating` by a finalizer
//! with the namespace controller's conditions), deleting a Deployment with
//! `--cascade=foreground` and `--cascade=orphan`, and kube-rs deleting with each propagation
//! policy along an ownership chain.

use crate::kubectl_support;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kubectl_support::Cluster;
use serde_json::{json, Value};

fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
        }
    })
}

/// A ReplicaSet owned by `owner` (blocking its deletion), held by a finalizer of its own.
fn replica_set(owner: &Value, name: &str) -> Value {
    let app = owner["metadata"]["name"].clone();
    json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": name, "namespace": "default",
            "finalizers": ["example.com/hold"],
            "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "Deployment", "name": app,
                "uid": owner["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true
            }]
        },
        "spec": {
            "selector": {"matchLabels": {"app": app}},
            "template": {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
        }
    })
}

fn release(cluster: &Cluster, args: &[&str]) {
    let mut all = vec!["patch"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--type=merge", "-p", r#"{"metadata":{"finalizers":null}}"#]);
    cluster.kubectl(&all).ok();
}

#[test]
fn kubectl_delete_namespace_waits_until_it_is_gone() {
    let cluster = Cluster::start();
    cluster.kubectl(&["create", "namespace", "team"]).ok();
    // The service-account controller and the root CA publisher furnished it.
    cluster
        .kubectl(&["get", "serviceaccounts", "-n", "team", "-o", "name"])
        .ok()
        .stdout_is("serviceaccount/default\n");
    cluster
        .kubectl(&["get", "configmaps", "-n", "team", "-o", "name"])
        .ok()
        .stdout_is("configmap/kube-root-ca.crt\n");
    cluster
        .kubectl(&[
            "create",
            "configmap",
            "app",
            "-n",
            "team",
            "--from-literal=a=1",
        ])
        .ok();
    cluster
        .kubectl(&["delete", "namespace", "team"])
        .ok()
        .stdout_is("namespace \"team\" deleted\n");
    assert!(cluster.object("v1", "namespaces", None, "team").is_none());
    assert!(cluster
        .object("v1", "configmaps", Some("team"), "app")
        .is_none());
    cluster
        .kubectl(&["get", "namespace", "team"])
        .fails()
        .stderr_has("namespaces \"team\" not found");
}

#[test]
fn a_finalizer_holds_a_namespace_terminating_with_the_real_conditions() {
    let cluster = Cluster::start();
    cluster.kubectl(&["create", "namespace", "held"]).ok();
    let held = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "held", "namespace": "held", "finalizers": ["example.com/hold"]}
    });
    let file = cluster.write_json("held.json", &held);
    cluster.kubectl(&["create", "-f", &file]).ok();
    cluster
        .kubectl(&["delete", "namespace", "held", "--wait=false"])
        .ok()
        .stdout_is("namespace \"held\" deleted\n");

    let ns = cluster
        .kubectl(&["get", "namespace", "held", "-o", "json"])
        .ok()
        .json();
    assert_eq!(ns["status"]["phase"], "Terminating");
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    let condition = |t: &str| {
        ns["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == t).cloned())
            .unwrap_or_else(|| panic!("no {t} condition in {ns}"))
    };
    let remaining = condition("NamespaceContentRemaining");
    assert_eq!(remaining["status"], "True");
    assert_eq!(remaining["reason"], "SomeResourcesRemain");
    assert_eq!(
        remaining["message"],
        "Some resources are remaining: configmaps. has 1 resource instances"
    );
    let finalizers = condition("NamespaceFinalizersRemaining");
    assert_eq!(finalizers["reason"], "SomeFinalizersRemain");
    assert_eq!(
        finalizers["message"],
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    );
    assert_eq!(
        condition("NamespaceDeletionContentFailure")["status"],
        "False"
    );
    let rows = cluster.kubectl(&["get", "namespaces", "held"]).ok().rows();
    assert!(
        rows.iter()
            .any(|r| r.first().map(String::as_str) == Some("held")
                && r.get(1).map(String::as_str) == Some("Terminating")),
        "{rows:?}"
    );

    // No new content while it terminates.
    cluster
        .kubectl(&["create", "configmap", "late", "-n", "held"])
        .fails()
        .stderr_has(
            "unable to create new content in namespace held because it is being terminated",
        );

    release(&cluster, &["configmap", "held", "-n", "held"]);
    assert!(cluster.object("v1", "namespaces", None, "held").is_none());
}

#[test]
fn kubectl_cascade_foreground_keeps_the_owner_until_its_dependents_are_gone() {
    let cluster = Cluster::start();
    let file = cluster.write_json("d.json", &deployment("web"));
    cluster.kubectl(&["create", "-f", &file]).ok();
    let owner = cluster.must_get("apps/v1", "deployments", Some("default"), "web");
    let file = cluster.write_json("rs.json", &replica_set(&owner, "web-1"));
    cluster.kubectl(&["create", "-f", &file]).ok();

    cluster
        .kubectl(&[
            "delete",
            "deployment",
            "web",
            "--cascade=foreground",
            "--wait=false",
        ])
        .ok();
    let waiting = cluster.must_get("apps/v1", "deployments", Some("default"), "web");
    assert_eq!(
        waiting["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    assert!(waiting["metadata"]["deletionTimestamp"].is_string());
    let rs = cluster.must_get("apps/v1", "replicasets", Some("default"), "web-1");
    assert!(
        rs["metadata"]["deletionTimestamp"].is_string(),
        "the collector deleted the blocking dependent: {rs}"
    );

    release(&cluster, &["replicaset", "web-1"]);
    assert!(cluster
        .object("apps/v1", "replicasets", Some("default"), "web-1")
        .is_none());
    assert!(cluster
        .object("apps/v1", "deployments", Some("default"), "web")
        .is_none());
}

#[test]
fn kubectl_cascade_orphan_leaves_the_dependents_without_their_owner() {
    let cluster = Cluster::start();
    let file = cluster.write_json("d.json", &deployment("api"));
    cluster.kubectl(&["create", "-f", &file]).ok();
    let owner = cluster.must_get("apps/v1", "deployments", Some("default"), "api");
    let mut rs = replica_set(&owner, "api-1");
    rs["metadata"]["finalizers"] = json!([]);
    let file = cluster.write_json("rs.json", &rs);
    cluster.kubectl(&["create", "-f", &file]).ok();

    cluster
        .kubectl(&["delete", "deployment", "api", "--cascade=orphan"])
        .ok()
        .stdout_is("deployment.apps \"api\" deleted\n");
    assert!(cluster
        .object("apps/v1", "deployments", Some("default"), "api")
        .is_none());
    let orphan = cluster.must_get("apps/v1", "replicasets", Some("default"), "api-1");
    assert!(
        orphan["metadata"].get("ownerReferences").is_none(),
        "{orphan}"
    );

    // The default cascade (background) collects dependents once the owner is gone.
    let file = cluster.write_json("d2.json", &deployment("api"));
    cluster.kubectl(&["create", "-f", &file]).ok();
    let owner = cluster.must_get("apps/v1", "deployments", Some("default"), "api");
    let mut rs = replica_set(&owner, "api-2");
    rs["metadata"]["finalizers"] = json!([]);
    let file = cluster.write_json("rs2.json", &rs);
    cluster.kubectl(&["create", "-f", &file]).ok();
    cluster.kubectl(&["delete", "deployment", "api"]).ok();
    assert!(cluster
        .object("apps/v1", "replicasets", Some("default"), "api-2")
        .is_none());
}

#[test]
fn kube_rs_deletes_along_an_ownership_chain_with_each_policy() {
    let cluster = Cluster::start();
    let client = cluster.client();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let make = |name: &str, owner: Option<&ConfigMap>, finalizer: bool| {
        let mut cm = json!({"metadata": {"name": name}});
        if let Some(owner) = owner {
            cm["metadata"]["ownerReferences"] = json!([{
                "apiVersion": "v1", "kind": "ConfigMap",
                "name": owner.metadata.name, "uid": owner.metadata.uid, "blockOwnerDeletion": true
            }]);
        }
        if finalizer {
            cm["metadata"]["finalizers"] = json!(["example.com/hold"]);
        }
        let cm: ConfigMap = serde_json::from_value(cm).unwrap();
        cluster
            .block_on(api.create(&PostParams::default(), &cm))
            .unwrap()
    };

    // Foreground down a chain: the root waits for the middle, which waits for the held leaf.
    let root = make("root", None, false);
    let middle = make("middle", Some(&root), false);
    make("leaf", Some(&middle), true);
    cluster
        .block_on(api.delete("root", &DeleteParams::foreground()))
        .unwrap();
    for name in ["root", "middle", "leaf"] {
        let cm = cluster.must_get("v1", "configmaps", Some("default"), name);
        assert!(
            cm["metadata"]["deletionTimestamp"].is_string(),
            "{name}: {cm}"
        );
    }
    let root_uid = root.metadata.uid.clone().unwrap();
    let gone = await_condition(api.clone(), "root", conditions::is_deleted(&root_uid));
    release(&cluster, &["configmap", "leaf"]);
    cluster.block_on(gone).unwrap();
    assert!(cluster
        .object("v1", "configmaps", Some("default"), "middle")
        .is_none());

    // Orphan: the child stays, without the reference.
    let parent = make("parent", None, false);
    make("child", Some(&parent), false);
    cluster
        .block_on(api.delete("parent", &DeleteParams::orphan()))
        .unwrap();
    let child = cluster.must_get("v1", "configmaps", Some("default"), "child");
    assert!(
        child["metadata"].get("ownerReferences").is_none(),
        "{child}"
    );

    // Background: the child goes after the parent.
    let parent = make("parent2", None, false);
    make("child2", Some(&parent), false);
    cluster
        .block_on(api.delete("parent2", &DeleteParams::background()))
        .unwrap();
    assert!(cluster
        .object("v1", "configmaps", Some("default"), "child2")
        .is_none());
}
