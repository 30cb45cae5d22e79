//! Metadata-only reads and writes as kube-rs makes them (`get_metadata`, `list_metadata`,
//! `watch_metadata`, `patch_metadata`, a watcher of `PartialObjectMeta`): the server answers
//! `PartialObjectMetadata` and `PartialObjectMetadataList` (`meta.k8s.io/v1`), as a real one
//! does, and a `406` for the shape that does not fit the answer.

use crate::http_support;

use std::time::Duration;

use axum::http::StatusCode;
use fake_apiserver::FakeApiServer;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::{json, Value};

fn configmap(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {"app": "x"}},
        "data": {"big": "x".repeat(1000)}}))
    .unwrap()
}

fn is_partial(types: &Option<kube::core::TypeMeta>) -> bool {
    types
        .as_ref()
        .is_some_and(|t| t.kind == "PartialObjectMetadata" && t.api_version == "meta.k8s.io/v1")
}

#[tokio::test]
async fn kube_rs_metadata_calls_get_partial_objects() {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    for name in ["a", "b"] {
        api.create(&PostParams::default(), &configmap(name))
            .await
            .unwrap();
    }

    let one = api.get_metadata("a").await.unwrap();
    assert!(is_partial(&one.types), "{:?}", one.types);
    assert_eq!(one.metadata.labels.as_ref().unwrap()["app"], "x");

    let list = api
        .list_metadata(&ListParams::default().limit(1))
        .await
        .unwrap();
    assert_eq!(list.items.len(), 1);
    assert!(list
        .metadata
        .continue_
        .as_deref()
        .is_some_and(|c| !c.is_empty()));
    assert!(list.items.iter().all(|i| is_partial(&i.types)));

    let patched = api
        .patch_metadata(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"seen": "yes"}}})),
        )
        .await
        .unwrap();
    assert!(is_partial(&patched.types));
    assert_eq!(patched.metadata.annotations.unwrap()["seen"], "yes");

    let rv = list.metadata.resource_version.unwrap();
    let mut events = api
        .watch_metadata(&WatchParams::default().timeout(2), &rv)
        .await
        .unwrap()
        .boxed();
    api.create(&PostParams::default(), &configmap("c"))
        .await
        .unwrap();
    let mut seen = Vec::new();
    while let Some(event) = events.try_next().await.unwrap() {
        if let WatchEvent::Added(o) | WatchEvent::Modified(o) = event {
            assert!(is_partial(&o.types));
            seen.push(o.metadata.name.unwrap());
            if seen.contains(&"c".to_string()) {
                break;
            }
        }
    }
    assert!(seen.contains(&"c".to_string()), "{seen:?}");

    // The runtime's watcher on `PartialObjectMeta` lists and watches the same way.
    let partial: Api<kube::core::PartialObjectMeta<ConfigMap>> =
        Api::namespaced(server.client(), "default");
    let stream = kube::runtime::watcher(partial, kube::runtime::watcher::Config::default());
    let names = tokio::time::timeout(Duration::from_secs(5), async {
        let mut stream = std::pin::pin!(stream);
        let mut names = Vec::new();
        while let Some(event) = stream.next().await {
            if let kube::runtime::watcher::Event::InitApply(o) = event.unwrap() {
                assert!(is_partial(&o.types));
                names.push(o.metadata.name.unwrap());
            } else if !names.is_empty() {
                break;
            }
        }
        names
    })
    .await
    .unwrap();
    assert_eq!(names, ["a", "b", "c", "kube-root-ca.crt"]);
}

async fn get(server: &FakeApiServer, uri: &str, accept: &str) -> (StatusCode, Value) {
    http_support::get_accepting(server, uri, accept).await
}

#[tokio::test]
async fn the_shape_must_fit_the_answer() {
    let server = FakeApiServer::new();
    let cms = "/api/v1/namespaces/default/configmaps";
    let (code, list) = get(
        &server,
        cms,
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    // `kube-root-ca.crt` is there in every namespace.
    assert!(
        list["items"].as_array().is_some_and(|i| !i.is_empty()),
        "{list}"
    );

    let (code, list) = get(
        &server,
        "/api/v1/namespaces/default/pods",
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1",
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(list["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        list["items"],
        Value::Null,
        "an empty list's items are null, as Go appends to a nil slice"
    );

    let (code, status) = get(
        &server,
        cms,
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
    )
    .await;
    assert_eq!(code, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(status["reason"], "NotAcceptable");
    assert_eq!(
        status["message"],
        "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)"
    );
    let (code, status) = get(
        &server,
        "/api/v1/namespaces/default",
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    )
    .await;
    assert_eq!(code, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(
        status["message"],
        "you requested PartialObjectMetadataList, but the requested object is not a list (*core.Namespace)"
    );
    let (code, status) = get(
        &server,
        "/api/v1/namespaces/default",
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2",
    )
    .await;
    // Another version is ruled out while the answer is negotiated (the scope's
    // `AllowsMediaTypeTransform`), before any transformation: with no other clause, nothing is
    // acceptable; with one, it is answered.
    assert_eq!(code, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(
        status["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    let (code, plain) = get(
        &server,
        "/api/v1/namespaces/default",
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2, application/json",
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(plain["kind"], "Namespace");
    // A missing object is still the 404 Status.
    let (code, status) = get(
        &server,
        &format!("{cms}/nope"),
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
    )
    .await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(status["kind"], "Status");
}
