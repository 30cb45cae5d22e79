//! The controllers against an in-process server, request by request through its router: each
//! propagation policy, chains, dangling and invalid references, namespace termination, the
//! service-account controller, and the manual drive.

use axum::body::Body;
use http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

use super::{ControllerConfig, Drive, Work};
use crate::FakeApiServer;

struct Answer {
    code: StatusCode,
    warnings: Vec<String>,
    body: Value,
}

async fn send(server: &FakeApiServer, method: Method, path: &str, body: Option<Value>) -> Answer {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(match body {
            Some(b) => Body::from(serde_json::to_vec(&b).unwrap()),
            None => Body::empty(),
        })
        .unwrap();
    let response = server.router().oneshot(request).await.unwrap();
    let code = response.status();
    let warnings = response
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Answer {
        code,
        warnings,
        body,
    }
}

async fn create(server: &FakeApiServer, path: &str, body: Value) -> Value {
    let answer = send(server, Method::POST, path, Some(body)).await;
    assert_eq!(answer.code, StatusCode::CREATED, "{}", answer.body);
    answer.body
}

async fn namespace(server: &FakeApiServer, name: &str) {
    create(
        server,
        "/api/v1/namespaces",
        json!({"metadata": {"name": name}}),
    )
    .await;
}

fn cm_path(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

fn owner_ref(owner: &Value, block: bool) -> Value {
    json!({
        "apiVersion": owner["apiVersion"], "kind": owner["kind"],
        "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
        "blockOwnerDeletion": block,
    })
}

async fn configmap(server: &FakeApiServer, ns: &str, name: &str, owners: Vec<Value>) -> Value {
    create(
        server,
        &cm_path(ns),
        json!({"metadata": {"name": name, "ownerReferences": owners}}),
    )
    .await
}

fn exists(server: &FakeApiServer, plural: &str, ns: Option<&str>, name: &str) -> bool {
    server.get_object("v1", plural, ns, name).is_some()
}

#[tokio::test]
async fn background_deletion_collects_dependents_and_chains() {
    let server = FakeApiServer::builder().seed(1).build();
    namespace(&server, "gc").await;
    let a = configmap(&server, "gc", "a", vec![]).await;
    let b = configmap(&server, "gc", "b", vec![owner_ref(&a, false)]).await;
    configmap(&server, "gc", "c", vec![owner_ref(&b, false)]).await;
    let deleted = send(
        &server,
        Method::DELETE,
        &format!("{}/a", cm_path("gc")),
        None,
    )
    .await;
    assert_eq!(deleted.code, StatusCode::OK);
    for name in ["a", "b", "c"] {
        assert!(!exists(&server, "configmaps", Some("gc"), name), "{name}");
    }
}

#[tokio::test]
async fn a_cluster_scoped_owner_owns_namespaced_dependents() {
    let server = FakeApiServer::builder().seed(2).build();
    namespace(&server, "gc").await;
    let node = create(
        &server,
        "/api/v1/nodes",
        json!({"metadata": {"name": "n1"}}),
    )
    .await;
    configmap(&server, "gc", "on-node", vec![owner_ref(&node, false)]).await;
    send(&server, Method::DELETE, "/api/v1/nodes/n1", None).await;
    assert!(!exists(&server, "configmaps", Some("gc"), "on-node"));
}

#[tokio::test]
async fn an_owner_with_another_uid_counts_as_absent() {
    let server = FakeApiServer::builder().seed(3).build();
    namespace(&server, "gc").await;
    let owner = configmap(&server, "gc", "owner", vec![]).await;
    let mut stale = owner_ref(&owner, false);
    stale["uid"] = json!("00000000-0000-0000-0000-000000000000");
    let answer = send(
        &server,
        Method::POST,
        &cm_path("gc"),
        Some(json!({"metadata": {"name": "stale", "ownerReferences": [stale]}})),
    )
    .await;
    assert_eq!(answer.code, StatusCode::CREATED);
    assert!(!exists(&server, "configmaps", Some("gc"), "stale"));
    assert!(exists(&server, "configmaps", Some("gc"), "owner"));
    // One live owner keeps a dependent; the dangling reference is dropped from it.
    let mut dangling = owner_ref(&owner, false);
    dangling["name"] = json!("gone");
    dangling["uid"] = json!("11111111-1111-1111-1111-111111111111");
    configmap(
        &server,
        "gc",
        "kept",
        vec![owner_ref(&owner, false), dangling],
    )
    .await;
    let kept = server
        .get_object("v1", "configmaps", Some("gc"), "kept")
        .unwrap();
    assert_eq!(
        kept["metadata"]["ownerReferences"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn foreground_deletion_waits_for_blocking_dependents() {
    let server = FakeApiServer::builder().seed(4).build();
    namespace(&server, "gc").await;
    let owner = configmap(&server, "gc", "owner", vec![]).await;
    create(
        &server,
        &cm_path("gc"),
        json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"], "ownerReferences": [owner_ref(&owner, true)]}}),
    )
    .await;
    let answer = send(
        &server,
        Method::DELETE,
        &format!("{}/owner", cm_path("gc")),
        Some(json!({"propagationPolicy": "Foreground"})),
    )
    .await;
    assert_eq!(answer.code, StatusCode::OK);
    assert_eq!(
        answer.body["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    let owner_now = server
        .get_object("v1", "configmaps", Some("gc"), "owner")
        .expect("the owner waits for its dependent");
    assert_eq!(
        owner_now["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    let held = server
        .get_object("v1", "configmaps", Some("gc"), "held")
        .unwrap();
    assert!(held["metadata"]["deletionTimestamp"].is_string());

    // The dependent's own finalizer goes: the dependent goes, then the owner.
    let mut release = held.clone();
    release["metadata"]["finalizers"] = json!([]);
    let answer = send(
        &server,
        Method::PUT,
        &format!("{}/held", cm_path("gc")),
        Some(release),
    )
    .await;
    assert_eq!(answer.code, StatusCode::OK, "{}", answer.body);
    assert!(!exists(&server, "configmaps", Some("gc"), "held"));
    assert!(!exists(&server, "configmaps", Some("gc"), "owner"));
}

#[tokio::test]
async fn foreground_deletion_collects_non_blocking_dependents_while_it_waits() {
    let server = FakeApiServer::builder().seed(15).build();
    namespace(&server, "gc").await;
    let owner = configmap(&server, "gc", "owner", vec![]).await;
    create(
        &server,
        &cm_path("gc"),
        json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"], "ownerReferences": [owner_ref(&owner, true)]}}),
    )
    .await;
    configmap(&server, "gc", "loose", vec![owner_ref(&owner, false)]).await;
    let answer = send(
        &server,
        Method::DELETE,
        &format!("{}/owner?propagationPolicy=Foreground", cm_path("gc")),
        None,
    )
    .await;
    assert_eq!(answer.code, StatusCode::OK);
    // The owner waits for `held` only; `loose` does not hold it, but goes all the same.
    assert!(exists(&server, "configmaps", Some("gc"), "owner"));
    assert!(!exists(&server, "configmaps", Some("gc"), "loose"));
}

#[tokio::test]
async fn a_dependent_whose_own_dependent_deletes_in_the_foreground_stops_blocking() {
    // a <- b <- c <- d: d holds c with a finalizer, c deletes in the foreground. When a is then
    // deleted in the foreground, b (waiting owner a, deleting dependent c) could wait in a
    // cycle: the collector makes b's references non-blocking, then deletes b in the foreground.
    let server = FakeApiServer::builder().seed(16).build();
    namespace(&server, "gc").await;
    let a = configmap(&server, "gc", "a", vec![]).await;
    let b = configmap(&server, "gc", "b", vec![owner_ref(&a, true)]).await;
    let c = configmap(&server, "gc", "c", vec![owner_ref(&b, true)]).await;
    create(
        &server,
        &cm_path("gc"),
        json!({"metadata": {"name": "d", "finalizers": ["example.com/hold"], "ownerReferences": [owner_ref(&c, true)]}}),
    )
    .await;
    for (name, code) in [("c", StatusCode::OK), ("a", StatusCode::OK)] {
        let answer = send(
            &server,
            Method::DELETE,
            &format!("{}/{name}?propagationPolicy=Foreground", cm_path("gc")),
            None,
        )
        .await;
        assert_eq!(answer.code, code, "{}", answer.body);
    }
    // a waits for nothing now; b waits (in the foreground) for c, which waits for d.
    assert!(!exists(&server, "configmaps", Some("gc"), "a"));
    let b_now = server
        .get_object("v1", "configmaps", Some("gc"), "b")
        .expect("b waits for c");
    assert_eq!(
        b_now["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    assert_eq!(
        b_now["metadata"]["ownerReferences"][0]["blockOwnerDeletion"],
        false
    );
    // The unblocking patch is the collector's: it owns the (atomic) reference now.
    let a_key = format!(
        "k:{{\"uid\":\"{}\"}}",
        a["metadata"]["uid"].as_str().unwrap()
    );
    let entry = b_now["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["manager"] == "kube-controller-manager")
        .expect("the collector's entry")
        .clone();
    assert!(
        entry["fieldsV1"]["f:metadata"]["f:ownerReferences"]
            .get(&a_key)
            .is_some(),
        "{entry}"
    );
    // d lets go: the whole chain goes.
    let mut d = server
        .get_object("v1", "configmaps", Some("gc"), "d")
        .unwrap();
    d["metadata"]["finalizers"] = json!([]);
    let answer = send(
        &server,
        Method::PUT,
        &format!("{}/d", cm_path("gc")),
        Some(d),
    )
    .await;
    assert_eq!(answer.code, StatusCode::OK, "{}", answer.body);
    for name in ["b", "c", "d"] {
        assert!(!exists(&server, "configmaps", Some("gc"), name), "{name}");
    }
}

#[tokio::test]
async fn orphan_deletion_removes_the_owner_from_its_dependents() {
    let server = FakeApiServer::builder().seed(5).build();
    namespace(&server, "gc").await;
    let owner = configmap(&server, "gc", "owner", vec![]).await;
    let other = configmap(&server, "gc", "other", vec![]).await;
    configmap(
        &server,
        "gc",
        "dep",
        vec![owner_ref(&owner, true), owner_ref(&other, false)],
    )
    .await;
    let answer = send(
        &server,
        Method::DELETE,
        &format!("{}/owner?propagationPolicy=Orphan", cm_path("gc")),
        None,
    )
    .await;
    assert_eq!(answer.code, StatusCode::OK);
    assert_eq!(answer.body["metadata"]["finalizers"], json!(["orphan"]));
    assert!(!exists(&server, "configmaps", Some("gc"), "owner"));
    let dep = server
        .get_object("v1", "configmaps", Some("gc"), "dep")
        .unwrap();
    assert_eq!(
        dep["metadata"]["ownerReferences"],
        json!([owner_ref(&other, false)])
    );
    // The collector's patch only removes a reference: the creator stops owning it, and the
    // collector owns nothing (a manager whose field set is empty has no entry).
    let managed = dep["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(managed.len(), 1, "{managed:?}");
    // An empty manager name is not written (`omitempty` on `ManagedFieldsEntry.manager`).
    assert!(managed[0].get("manager").is_none(), "{managed:?}");
    let refs = &managed[0]["fieldsV1"]["f:metadata"]["f:ownerReferences"];
    let other_key = format!(
        "k:{{\"uid\":\"{}\"}}",
        other["metadata"]["uid"].as_str().unwrap()
    );
    let owner_key = format!(
        "k:{{\"uid\":\"{}\"}}",
        owner["metadata"]["uid"].as_str().unwrap()
    );
    assert!(refs.get(&other_key).is_some(), "{refs}");
    assert!(refs.get(&owner_key).is_none(), "{refs}");
}

#[tokio::test]
async fn jobs_orphan_their_pods_by_default_and_say_so() {
    let server = FakeApiServer::builder().seed(6).build();
    namespace(&server, "gc").await;
    let job = create(
        &server,
        "/apis/batch/v1/namespaces/gc/jobs",
        json!({"metadata": {"name": "j"}, "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}),
    )
    .await;
    create(
        &server,
        "/api/v1/namespaces/gc/pods",
        json!({"metadata": {"name": "j-pod", "ownerReferences": [owner_ref(&job, true)]}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}),
    )
    .await;
    let answer = send(
        &server,
        Method::DELETE,
        "/apis/batch/v1/namespaces/gc/jobs/j",
        None,
    )
    .await;
    assert_eq!(answer.code, StatusCode::OK);
    assert!(
        answer
            .warnings
            .iter()
            .any(|w| w.contains("child pods are preserved by default when jobs are deleted")),
        "{:?}",
        answer.warnings
    );
    assert!(server
        .get_object("batch/v1", "jobs", Some("gc"), "j")
        .is_none());
    let pod = server
        .get_object("v1", "pods", Some("gc"), "j-pod")
        .expect("the pod is orphaned, not deleted");
    assert!(pod["metadata"].get("ownerReferences").is_none(), "{pod}");
}

#[tokio::test]
async fn deployments_collect_their_replica_sets_by_default() {
    let server = FakeApiServer::builder().seed(7).build();
    namespace(&server, "gc").await;
    let template = json!({"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    let deployment = create(
        &server,
        "/apis/apps/v1/namespaces/gc/deployments",
        json!({"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": template}}),
    )
    .await;
    create(
        &server,
        "/apis/apps/v1/namespaces/gc/replicasets",
        json!({"metadata": {"name": "d-1", "ownerReferences": [owner_ref(&deployment, true)]}, "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": template}}),
    )
    .await;
    let answer = send(
        &server,
        Method::DELETE,
        "/apis/apps/v1/namespaces/gc/deployments/d",
        None,
    )
    .await;
    assert!(answer.warnings.is_empty(), "{:?}", answer.warnings);
    assert!(server
        .get_object("apps/v1", "replicasets", Some("gc"), "d-1")
        .is_none());
}

#[tokio::test]
async fn an_owner_in_another_namespace_is_reported_and_absent() {
    let server = FakeApiServer::builder().seed(8).build();
    namespace(&server, "one").await;
    namespace(&server, "two").await;
    let owner = configmap(&server, "one", "owner", vec![]).await;
    configmap(&server, "two", "owner", vec![]).await;
    configmap(&server, "two", "misplaced", vec![owner_ref(&owner, false)]).await;
    assert!(!exists(&server, "configmaps", Some("two"), "misplaced"));
    let (_, events) = server.list_objects("v1", "events", Some("two"));
    let event = events
        .iter()
        .find(|e| e["reason"] == "OwnerRefInvalidNamespace")
        .expect("a warning event");
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["involvedObject"]["name"], "misplaced");
    assert_eq!(event["source"]["component"], "garbage-collector-controller");
    assert_eq!(
        event["message"],
        format!(
            "ownerRef [v1/ConfigMap, namespace: two, name: owner, uid: {}] does not exist in namespace \"two\"",
            owner["metadata"]["uid"].as_str().unwrap()
        )
    );
}

#[tokio::test]
async fn a_cluster_scoped_dependent_of_a_namespaced_kind_is_left_alone() {
    let server = FakeApiServer::builder().seed(9).build();
    namespace(&server, "gc").await;
    let owner = configmap(&server, "gc", "owner", vec![]).await;
    create(
        &server,
        "/api/v1/nodes",
        json!({"metadata": {"name": "n1", "ownerReferences": [owner_ref(&owner, false)]}}),
    )
    .await;
    // The graph builder reports the reference (the owner exists, in a namespace the Node cannot
    // be in), once, in `default`.
    let (_, events) = server.list_objects("v1", "events", Some("default"));
    let reported: Vec<&Value> = events
        .iter()
        .filter(|e| e["reason"] == "OwnerRefInvalidNamespace")
        .collect();
    assert_eq!(reported.len(), 1, "{events:?}");
    assert_eq!(reported[0]["involvedObject"]["kind"], "Node");
    assert!(reported[0]["involvedObject"].get("namespace").is_none());
    assert_eq!(
        reported[0]["message"],
        format!(
            "ownerRef [v1/ConfigMap, namespace: , name: owner, uid: {}] does not exist in namespace \"\"",
            owner["metadata"]["uid"].as_str().unwrap()
        )
    );
    send(
        &server,
        Method::DELETE,
        &format!("{}/owner", cm_path("gc")),
        None,
    )
    .await;
    assert!(exists(&server, "nodes", None, "n1"));
}

#[tokio::test]
async fn a_namespace_stays_terminating_while_a_finalizer_holds_its_content() {
    let server = FakeApiServer::builder().seed(10).build();
    namespace(&server, "team").await;
    create(
        &server,
        &cm_path("team"),
        json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}),
    )
    .await;
    configmap(&server, "team", "free", vec![]).await;
    let answer = send(&server, Method::DELETE, "/api/v1/namespaces/team", None).await;
    assert_eq!(answer.code, StatusCode::OK);
    assert_eq!(answer.body["status"]["phase"], "Terminating");
    assert!(answer.body["metadata"]
        .get("deletionGracePeriodSeconds")
        .is_none());

    let ns = server.get_object("v1", "namespaces", None, "team").unwrap();
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    let conditions = ns["status"]["conditions"].as_array().unwrap();
    let by_type = |t: &str| conditions.iter().find(|c| c["type"] == t).unwrap().clone();
    assert_eq!(by_type("NamespaceContentRemaining")["status"], "True");
    assert_eq!(
        by_type("NamespaceContentRemaining")["message"],
        "Some resources are remaining: configmaps. has 1 resource instances"
    );
    assert_eq!(
        by_type("NamespaceFinalizersRemaining")["message"],
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    );
    assert_eq!(
        by_type("NamespaceDeletionContentFailure")["status"],
        "False"
    );
    // The namespace controller's status writes are its own, on the status subresource.
    let entry = ns["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["manager"] == "kube-controller-manager")
        .expect("the controller's entry")
        .clone();
    assert_eq!(entry["operation"], "Update");
    assert_eq!(entry["subresource"], "status");
    assert!(
        entry["fieldsV1"]["f:status"]["f:conditions"].is_object(),
        "{entry}"
    );
    assert!(!exists(&server, "configmaps", Some("team"), "free"));
    assert!(!exists(
        &server,
        "configmaps",
        Some("team"),
        "kube-root-ca.crt"
    ));
    assert!(!exists(&server, "serviceaccounts", Some("team"), "default"));

    // New content is refused while the namespace terminates.
    let refused = send(
        &server,
        Method::POST,
        &cm_path("team"),
        Some(json!({"metadata": {"name": "late"}})),
    )
    .await;
    assert_eq!(refused.code, StatusCode::FORBIDDEN);
    assert_eq!(
        refused.body["details"]["causes"][0],
        json!({"reason": "NamespaceTerminating", "message": "namespace team is being terminated", "field": "metadata.namespace"})
    );

    let mut held = server
        .get_object("v1", "configmaps", Some("team"), "held")
        .unwrap();
    held["metadata"]["finalizers"] = json!([]);
    let answer = send(
        &server,
        Method::PUT,
        &format!("{}/held", cm_path("team")),
        Some(held),
    )
    .await;
    assert_eq!(answer.code, StatusCode::OK, "{}", answer.body);
    assert!(server
        .get_object("v1", "namespaces", None, "team")
        .is_none());
}

#[tokio::test]
async fn the_finalize_subresource_releases_a_namespace() {
    let server = FakeApiServer::builder().seed(11).bare().build();
    namespace(&server, "bare").await;
    assert!(!exists(&server, "serviceaccounts", Some("bare"), "default"));
    configmap(&server, "bare", "left", vec![]).await;
    send(&server, Method::DELETE, "/api/v1/namespaces/bare", None).await;
    let ns = server.get_object("v1", "namespaces", None, "bare").unwrap();
    assert_eq!(ns["status"]["phase"], "Terminating");
    assert!(
        ns["status"].get("conditions").is_none(),
        "no controller ran"
    );

    let get = send(
        &server,
        Method::GET,
        "/api/v1/namespaces/bare/finalize",
        None,
    )
    .await;
    assert_eq!(get.code, StatusCode::METHOD_NOT_ALLOWED);
    let mut bad = ns.clone();
    bad["spec"]["finalizers"] = json!(["nope"]);
    let refused = send(
        &server,
        Method::PUT,
        "/api/v1/namespaces/bare/finalize",
        Some(bad),
    )
    .await;
    assert_eq!(refused.code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused.body["message"],
        "Namespace \"bare\" is invalid: spec.finalizers[0]: Invalid value: \"nope\": name is neither a standard finalizer name nor is it fully qualified"
    );

    let mut finalized = ns.clone();
    finalized["spec"]["finalizers"] = json!([]);
    let answer = send(
        &server,
        Method::PUT,
        "/api/v1/namespaces/bare/finalize",
        Some(finalized),
    )
    .await;
    assert_eq!(answer.code, StatusCode::OK, "{}", answer.body);
    assert!(server
        .get_object("v1", "namespaces", None, "bare")
        .is_none());
}

#[tokio::test]
async fn every_active_namespace_gets_its_service_account_and_root_ca() {
    let server = FakeApiServer::builder().seed(12).build();
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        assert!(
            exists(&server, "serviceaccounts", Some(ns), "default"),
            "{ns}"
        );
        assert!(
            exists(&server, "configmaps", Some(ns), "kube-root-ca.crt"),
            "{ns}"
        );
    }
    namespace(&server, "fresh").await;
    let ca = server
        .get_object("v1", "configmaps", Some("fresh"), "kube-root-ca.crt")
        .unwrap();
    assert!(ca["data"]["ca.crt"]
        .as_str()
        .unwrap()
        .starts_with("-----BEGIN CERTIFICATE-----"));
    assert_eq!(
        ca["metadata"]["annotations"]["kubernetes.io/description"],
        super::service_accounts::DESCRIPTION
    );
    // Deleted or changed, they come back.
    send(
        &server,
        Method::DELETE,
        "/api/v1/namespaces/fresh/serviceaccounts/default",
        None,
    )
    .await;
    assert!(exists(&server, "serviceaccounts", Some("fresh"), "default"));
    let mut changed = ca.clone();
    changed["data"] = json!({"ca.crt": "tampered"});
    send(
        &server,
        Method::PUT,
        "/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt",
        Some(changed),
    )
    .await;
    let restored = server
        .get_object("v1", "configmaps", Some("fresh"), "kube-root-ca.crt")
        .unwrap();
    assert_eq!(restored["data"], ca["data"]);
}

#[tokio::test]
async fn a_manual_drive_waits_for_its_steps() {
    let config = ControllerConfig::all().with_drive(Drive::Manual);
    let server = FakeApiServer::builder()
        .seed(13)
        .controllers(config)
        .build();
    while server.step_controllers().is_some() {}
    namespace(&server, "gc").await;
    let owner = configmap(&server, "gc", "owner", vec![]).await;
    configmap(&server, "gc", "dep", vec![owner_ref(&owner, false)]).await;
    while server.step_controllers().is_some() {}
    send(
        &server,
        Method::DELETE,
        &format!("{}/owner", cm_path("gc")),
        None,
    )
    .await;
    assert!(exists(&server, "configmaps", Some("gc"), "dep"), "not yet");
    let queued = server.controllers().queued();
    assert!(
        queued
            .iter()
            .any(|w| matches!(w, Work::OwnerGone { uid } if uid == owner["metadata"]["uid"].as_str().unwrap())),
        "{queued:?}"
    );
    let mut steps = 0;
    while server.step_controllers().is_some() {
        steps += 1;
    }
    assert!(steps >= 2, "owner gone, then the dependent collected");
    assert!(!exists(&server, "configmaps", Some("gc"), "dep"));
}

#[tokio::test]
async fn bad_propagation_policies_are_refused() {
    let server = FakeApiServer::builder().seed(14).build();
    configmap(&server, "default", "x", vec![]).await;
    let answer = send(
        &server,
        Method::DELETE,
        "/api/v1/namespaces/default/configmaps/x?propagationPolicy=Sideways",
        None,
    )
    .await;
    assert_eq!(answer.code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(answer.body["reason"], "Invalid");
    assert!(exists(&server, "configmaps", Some("default"), "x"));
}
