//! The server's semantics as kube-rs sees them, in-process and over TCP.

use std::time::Duration;

use fake_apiserver::FakeApiServer;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::core::{DynamicObject, GroupVersionKind};
use kube::discovery::ApiResource;
use serde_json::json;

fn configmap(name: &str, data: &str) -> ConfigMap {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "x"}},
        "data": {"a": data}
    }))
    .unwrap()
}

fn status_code(err: kube::Error) -> (u16, String) {
    match err {
        kube::Error::Api(s) => (s.code, s.reason),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn create_get_update_conflict() {
    let server = FakeApiServer::builder().seed(1).build();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let created = api
        .create(&PostParams::default(), &configmap("a", "1"))
        .await
        .unwrap();
    let rv: u64 = created
        .metadata
        .resource_version
        .clone()
        .unwrap()
        .parse()
        .unwrap();
    assert!(created.metadata.uid.is_some());
    assert!(created.metadata.creation_timestamp.is_some());
    assert_eq!(
        created.metadata.generation, None,
        "configmaps have no generation"
    );

    let mut stale = created.clone();
    let mut fresh = created.clone();
    fresh.data = Some([("a".to_string(), "2".to_string())].into());
    let updated = api
        .replace("a", &PostParams::default(), &fresh)
        .await
        .unwrap();
    let rv2: u64 = updated
        .metadata
        .resource_version
        .clone()
        .unwrap()
        .parse()
        .unwrap();
    assert!(rv2 > rv);

    stale.data = Some([("a".to_string(), "3".to_string())].into());
    let (code, reason) = status_code(
        api.replace("a", &PostParams::default(), &stale)
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (409, "Conflict"));

    // A write that changes nothing keeps the resourceVersion.
    let same = api
        .replace("a", &PostParams::default(), &updated)
        .await
        .unwrap();
    assert_eq!(
        same.metadata.resource_version,
        updated.metadata.resource_version
    );

    let (code, reason) = status_code(
        api.create(&PostParams::default(), &configmap("a", "1"))
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (409, "AlreadyExists"));
    let (code, _) = status_code(api.get("nope").await.unwrap_err());
    assert_eq!(code, 404);
    let missing_ns: Api<ConfigMap> = Api::namespaced(server.client(), "absent");
    let (code, _) = status_code(
        missing_ns
            .create(&PostParams::default(), &configmap("a", "1"))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 404);
    let (code, reason) = status_code(
        api.create(&PostParams::default(), &configmap("Bad_Name", "1"))
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (422, "Invalid"));
}

#[tokio::test]
async fn generate_name_is_seeded() {
    let names = |seed| async move {
        let server = FakeApiServer::builder().seed(seed).build();
        let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
        let mut cm = configmap("", "1");
        cm.metadata.name = None;
        cm.metadata.generate_name = Some("gen-".into());
        api.create(&PostParams::default(), &cm)
            .await
            .unwrap()
            .metadata
            .name
            .unwrap()
    };
    let a = names(7).await;
    assert!(a.starts_with("gen-") && a.len() == 9, "{a}");
    assert_eq!(a, names(7).await);
    assert_ne!(a, names(8).await);
}

/// A generated name already taken is retried with another suffix (the real registry's
/// `createWithGenerateNameRetry`), not refused: a second server with the same seed is made to
/// hold the first name the create draws.
#[tokio::test]
async fn a_generated_name_already_taken_is_retried_with_another() {
    let generated = |cm: ConfigMap| cm.metadata.name.unwrap_or_default();
    let mut gen = configmap("", "1");
    gen.metadata.name = None;
    gen.metadata.generate_name = Some("gen-".into());
    let first_draw = {
        let server = FakeApiServer::builder().seed(11).build();
        let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
        // The same draws from the seeded source as the explicit create below.
        api.create(&PostParams::default(), &configmap("other", "1"))
            .await
            .unwrap();
        generated(api.create(&PostParams::default(), &gen).await.unwrap())
    };
    let server = FakeApiServer::builder().seed(11).build();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    api.create(&PostParams::default(), &configmap(&first_draw, "taken"))
        .await
        .unwrap();
    let created = api.create(&PostParams::default(), &gen).await.unwrap();
    let name = generated(created.clone());
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");
    assert_ne!(name, first_draw, "the taken name was not retried");
    assert_eq!(created.data.unwrap()["a"], "1");
    let taken = api.get(&first_draw).await.unwrap();
    assert_eq!(taken.data.unwrap()["a"], "taken", "the holder is untouched");
    // A dry run retries the same way and stores nothing.
    let before = api.list(&Default::default()).await.unwrap().items.len();
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let previewed = generated(api.create(&dry, &gen).await.unwrap());
    assert!(previewed.starts_with("gen-"), "{previewed}");
    assert_eq!(
        api.list(&Default::default()).await.unwrap().items.len(),
        before
    );
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let mut cm = configmap("held", "1");
    cm.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    api.create(&PostParams::default(), &cm).await.unwrap();
    let deleted = api.delete("held", &DeleteParams::default()).await.unwrap();
    let marked = deleted
        .left()
        .expect("the object stays while a finalizer holds it");
    assert!(marked.metadata.deletion_timestamp.is_some());

    // No new finalizers on a deleting object.
    let patch = json!({"metadata": {"finalizers": ["example.com/hold", "example.com/new"]}});
    let (code, _) = status_code(
        api.patch("held", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 422);

    let patch = json!({"metadata": {"finalizers": null}});
    api.patch("held", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let (code, _) = status_code(api.get("held").await.unwrap_err());
    assert_eq!(code, 404);
}

#[tokio::test]
async fn bound_pods_terminate_gracefully_and_unbound_go_at_once() {
    let server = FakeApiServer::new();
    let api: Api<Pod> = Api::namespaced(server.client(), "default");
    let pod = |name: &str, node: Option<&str>| -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]}
        }))
        .unwrap()
    };
    api.create(&PostParams::default(), &pod("bound", Some("n1")))
        .await
        .unwrap();
    api.create(&PostParams::default(), &pod("free", None))
        .await
        .unwrap();
    api.delete("free", &DeleteParams::default()).await.unwrap();
    assert_eq!(status_code(api.get("free").await.unwrap_err()).0, 404);

    api.delete("bound", &DeleteParams::default()).await.unwrap();
    let terminating = api.get("bound").await.unwrap();
    assert_eq!(terminating.metadata.deletion_grace_period_seconds, Some(30));
    assert_eq!(terminating.metadata.generation, Some(2));
    api.delete(
        "bound",
        &DeleteParams {
            grace_period_seconds: Some(0),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(status_code(api.get("bound").await.unwrap_err()).0, 404);
}

#[tokio::test]
async fn pods_are_bound_through_the_binding_subresource() {
    let server = FakeApiServer::new();
    let api: Api<Pod> = Api::namespaced(server.client(), "default");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}
    }))
    .unwrap();
    api.create(&PostParams::default(), &pod).await.unwrap();
    let binding = json!({
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": "p"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}
    });
    let _: kube::core::Status = api
        .create_subresource("binding", "p", &PostParams::default(), &binding)
        .await
        .unwrap();
    assert_eq!(
        api.get("p")
            .await
            .unwrap()
            .spec
            .unwrap()
            .node_name
            .as_deref(),
        Some("n1")
    );
    let again = api
        .create_subresource::<_, kube::core::Status>(
            "binding",
            "p",
            &PostParams::default(),
            &binding,
        )
        .await
        .unwrap_err();
    assert_eq!(status_code(again).0, 409);
    // The spec itself cannot move the pod.
    let patch = json!({"spec": {"nodeName": "n2"}});
    let err = api
        .patch("p", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap_err();
    assert_eq!(status_code(err).0, 422);
}

#[tokio::test]
async fn access_reviews_are_allowed_and_not_stored() {
    use k8s_openapi::api::authorization::v1::SelfSubjectAccessReview;
    let server = FakeApiServer::new();
    let api: Api<SelfSubjectAccessReview> = Api::all(server.client());
    let review: SelfSubjectAccessReview = serde_json::from_value(json!({
        "spec": {"resourceAttributes": {"verb": "delete", "resource": "pods", "namespace": "default"}}
    }))
    .unwrap();
    let answered = api.create(&PostParams::default(), &review).await.unwrap();
    assert!(answered.status.unwrap().allowed);
    let (code, reason) = status_code(api.list(&ListParams::default()).await.unwrap_err());
    assert_eq!((code, reason.as_str()), (405, "MethodNotAllowed"));
}

#[tokio::test]
async fn lists_select_and_page_consistently() {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    for i in 0..7 {
        let mut cm = configmap(&format!("cm{i}"), "1");
        cm.metadata.labels = Some(
            [(
                "parity".to_string(),
                (if i % 2 == 0 { "even" } else { "odd" }).to_string(),
            )]
            .into(),
        );
        api.create(&PostParams::default(), &cm).await.unwrap();
    }
    let even = api
        .list(&ListParams::default().labels("parity=even"))
        .await
        .unwrap();
    assert_eq!(even.items.len(), 4);
    let notin = api
        .list(&ListParams::default().labels("parity notin (even)"))
        .await
        .unwrap();
    // `notin` also selects objects without the label: the three odd ones and, as in every
    // namespace of a real cluster, the root CA publisher's `kube-root-ca.crt`.
    let names: Vec<_> = notin
        .items
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["cm1", "cm3", "cm5", "kube-root-ca.crt"]);
    let by_name = api
        .list(&ListParams::default().fields("metadata.name=cm3"))
        .await
        .unwrap();
    assert_eq!(by_name.items.len(), 1);

    let page1 = api.list(&ListParams::default().limit(3)).await.unwrap();
    assert_eq!(page1.items.len(), 3);
    let token = page1.metadata.continue_.clone().unwrap();
    // Changes after the first page do not show in later pages.
    api.create(&PostParams::default(), &configmap("cm3a", "1"))
        .await
        .unwrap();
    let page2 = api
        .list(&ListParams::default().limit(3).continue_token(&token))
        .await
        .unwrap();
    let names: Vec<_> = page2
        .items
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, vec!["cm3", "cm4", "cm5"]);
    assert_eq!(
        page1.metadata.resource_version,
        page2.metadata.resource_version
    );

    let (code, _) = status_code(
        api.list(&ListParams::default().fields("spec.nope=x"))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 400);
    let (code, _) = status_code(
        api.list(&ListParams::default().labels("a in ("))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 400);
}

#[tokio::test]
async fn watch_resumes_and_expires() {
    let server = FakeApiServer::builder().history(5).build();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    api.create(&PostParams::default(), &configmap("w0", "1"))
        .await
        .unwrap();
    let list = api.list(&ListParams::default()).await.unwrap();
    let rv = list.metadata.resource_version.unwrap();
    api.create(&PostParams::default(), &configmap("w1", "1"))
        .await
        .unwrap();
    api.delete("w0", &DeleteParams::default()).await.unwrap();

    let mut stream = api
        .watch(&WatchParams::default().timeout(1), &rv)
        .await
        .unwrap()
        .boxed();
    let mut seen = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(5), stream.try_next())
        .await
        .unwrap()
        .unwrap()
    {
        match event {
            WatchEvent::Added(cm) => seen.push(format!("ADDED:{}", cm.metadata.name.unwrap())),
            WatchEvent::Deleted(cm) => seen.push(format!("DELETED:{}", cm.metadata.name.unwrap())),
            WatchEvent::Modified(cm) => {
                seen.push(format!("MODIFIED:{}", cm.metadata.name.unwrap()))
            }
            _ => {}
        }
    }
    assert_eq!(seen, vec!["ADDED:w1", "DELETED:w0"]);

    for i in 0..10 {
        api.create(&PostParams::default(), &configmap(&format!("x{i}"), "1"))
            .await
            .unwrap();
    }
    let mut stream = api
        .watch(&WatchParams::default().timeout(1), &rv)
        .await
        .unwrap()
        .boxed();
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Error(e)) => assert_eq!(e.code, 410),
        other => panic!("expected 410, got {other:?}"),
    }
}

#[tokio::test]
async fn custom_resources_are_served_from_crds() {
    let server = FakeApiServer::new();
    let crds: Api<CustomResourceDefinition> = Api::all(server.client());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "color": {"type": "string"},
                        "size": {"type": "integer", "default": 3}
                    }},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }}}
            }]
        }
    }))
    .unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    let gvk = GroupVersionKind::gvk("example.com", "v1", "Widget");
    let ar = ApiResource::from_gvk_with_plural(&gvk, "widgets");
    let widgets: Api<DynamicObject> = Api::namespaced_with(server.client(), "default", &ar);
    let w: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1"},
        "spec": {"color": "red", "unknown": true},
        "status": {"phase": "ignored"}
    }))
    .unwrap();
    let created = widgets.create(&PostParams::default(), &w).await.unwrap();
    assert_eq!(
        created.data["spec"],
        json!({"color": "red", "size": 3}),
        "defaulted and pruned"
    );
    assert_eq!(
        created.data.get("status"),
        None,
        "status is not settable on create"
    );
    assert_eq!(created.metadata.generation, Some(1));

    // Status writes never bump the generation; spec writes do.
    let mut with_status = created.clone();
    with_status.data["status"] = json!({"phase": "Ready"});
    let after_status = widgets
        .replace_status("w1", &PostParams::default(), &with_status)
        .await
        .unwrap();
    assert_eq!(after_status.metadata.generation, Some(1));
    assert_eq!(after_status.data["status"]["phase"], "Ready");
    let patch = json!({"spec": {"color": "blue"}});
    let after_spec = widgets
        .patch("w1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(after_spec.metadata.generation, Some(2));

    // A custom resource needs a resourceVersion to be updated.
    let mut unconditional = after_spec.clone();
    unconditional.metadata.resource_version = None;
    let (code, _) = status_code(
        widgets
            .replace("w1", &PostParams::default(), &unconditional)
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 422);

    // Strategic merge is not available for custom resources.
    let (code, _) = status_code(
        widgets
            .patch("w1", &PatchParams::default(), &Patch::Strategic(&patch))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 415);

    crds.delete("widgets.example.com", &DeleteParams::default())
        .await
        .unwrap();
    let (code, _) = status_code(widgets.get("w1").await.unwrap_err());
    assert_eq!(code, 404);
}

#[tokio::test]
async fn namespaces_terminate_with_their_content() {
    let server = FakeApiServer::new();
    let namespaces: Api<Namespace> = Api::all(server.client());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "team"}})).unwrap();
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "team");
    api.create(&PostParams::default(), &configmap("a", "1"))
        .await
        .unwrap();
    namespaces
        .delete("team", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(
        status_code(namespaces.get("team").await.unwrap_err()).0,
        404
    );
    assert_eq!(status_code(api.get("a").await.unwrap_err()).0, 404);
}

#[tokio::test]
async fn the_same_semantics_over_tcp() {
    let server = FakeApiServer::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.clone().serve(listener, std::future::pending()));
    let config = kube::Config::new(format!("http://{addr}").parse().unwrap());
    let client = kube::Client::try_from(config).unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let created = api
        .create(&PostParams::default(), &configmap("tcp", "1"))
        .await
        .unwrap();
    let mut stale = created.clone();
    let mut changed = created.clone();
    changed.data = Some(
        [
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), "2".to_string()),
        ]
        .into(),
    );
    api.replace("tcp", &PostParams::default(), &changed)
        .await
        .unwrap();
    stale.data = Some([("a".to_string(), "9".to_string())].into());
    let (code, _) = status_code(
        api.replace("tcp", &PostParams::default(), &stale)
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 409);
    assert_eq!(
        server
            .get_object("v1", "configmaps", Some("default"), "tcp")
            .unwrap()["data"]["a"],
        "1"
    );
}

/// The core kinds' defaulters, as a client reads their results back: a Secret's type, a Node's
/// allocatable resources, a claim's first phase and volume mode, a pod's requests from its
/// limits and its QoS class.
#[tokio::test]
async fn core_kinds_come_back_defaulted() {
    use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Secret};
    let server = FakeApiServer::builder().seed(1).build();
    let client = server.client();
    let post = &PostParams::default();
    let secret: Secret =
        serde_json::from_value(json!({"metadata": {"name": "s"}, "stringData": {"a": "b"}}))
            .unwrap();
    let secret = Api::<Secret>::namespaced(client.clone(), "default")
        .create(post, &secret)
        .await
        .unwrap();
    assert_eq!(secret.type_.as_deref(), Some("Opaque"));

    // Registered NotReady, as a kubelet registers (with no Ready condition the node lifecycle
    // controller would take the admission's not-ready taint off at once, a newer revision).
    let node: Node = serde_json::from_value(json!({"metadata": {"name": "n"},
        "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "False"}]}}))
    .unwrap();
    let nodes = Api::<Node>::all(client.clone());
    let node = nodes.create(post, &node).await.unwrap();
    let status = node.status.clone().unwrap();
    assert_eq!(status.allocatable, status.capacity);
    // A status write that leaves allocatable out gets it from capacity again.
    let mut status_only = node.clone();
    status_only.status = serde_json::from_value(json!({"capacity": {"cpu": "8"}})).unwrap();
    let node = nodes.replace_status("n", post, &status_only).await.unwrap();
    let allocatable = node.status.unwrap().allocatable.unwrap();
    assert_eq!(allocatable.get("cpu").map(|q| q.0.as_str()), Some("8"));

    let claim: PersistentVolumeClaim = serde_json::from_value(json!({"metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Bound"}}))
    .unwrap();
    let claim = Api::<PersistentVolumeClaim>::namespaced(client.clone(), "default")
        .create(post, &claim)
        .await
        .unwrap();
    assert_eq!(
        claim.status.unwrap().phase.as_deref(),
        Some("Pending"),
        "the status a client sends on create is reset, then defaulted"
    );
    assert_eq!(
        claim.spec.unwrap().volume_mode.as_deref(),
        Some("Filesystem")
    );

    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "image": "nginx:1.27", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}))
    .unwrap();
    let pod = Api::<Pod>::namespaced(client, "default")
        .create(post, &pod)
        .await
        .unwrap();
    let requests = pod.spec.unwrap().containers[0]
        .resources
        .clone()
        .unwrap()
        .requests
        .unwrap();
    assert_eq!(requests.get("memory").map(|q| q.0.as_str()), Some("1Gi"));
    assert_eq!(pod.status.unwrap().qos_class.as_deref(), Some("Guaranteed"));
}

/// `get_object` gives the current version after every write (served from the store's parse
/// cache once a write has put it there), and `has_object` says whether there is one, for a
/// known resource only.
#[tokio::test]
async fn get_object_and_has_object_follow_every_write() {
    let server = FakeApiServer::builder().seed(1).build();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let get = || server.get_object("v1", "configmaps", Some("default"), "cached");
    let has = || server.has_object("v1", "configmaps", Some("default"), "cached");
    assert!(!has());
    assert!(get().is_none());
    api.create(&PostParams::default(), &configmap("cached", "1"))
        .await
        .unwrap();
    assert!(has());
    let stored = get().unwrap();
    assert_eq!(stored["kind"], "ConfigMap");
    assert_eq!(stored["apiVersion"], "v1");
    assert_eq!(stored["data"]["a"], "1");
    for value in ["2", "3"] {
        let patch = json!({"data": {"a": value}});
        api.patch("cached", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
        let stored = get().unwrap();
        assert_eq!(stored["data"]["a"], value);
        assert_eq!(
            stored["metadata"]["resourceVersion"],
            server.revision().to_string()
        );
    }
    assert!(!server.has_object("v1", "configmaps", Some("other"), "cached"));
    assert!(!server.has_object("v1", "widgets", Some("default"), "cached"));
    api.delete("cached", &DeleteParams::default())
        .await
        .unwrap();
    assert!(!has());
    assert!(get().is_none());
}
