//! kube-runtime's watcher and reflector against the server: the initial list, live events, and
//! recovery when the server expires the watch (410) or drops it.

use std::time::Duration;

use fake_apiserver::hooks::RequestMatcher;
use fake_apiserver::FakeApiServer;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::runtime::{reflector, watcher, WatchStreamExt};
use serde_json::json;

fn configmap(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"a": "1"}})).unwrap()
}

async fn wait_for(store: &reflector::Store<ConfigMap>, count: usize) {
    tokio::time::timeout(Duration::from_secs(10), async {
        while store.state().len() != count {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "the cache never reached {count} objects (has {})",
            store.state().len()
        )
    });
}

#[rstest::rstest]
#[case::list_then_watch(watcher::Config::default())]
#[case::streaming_list(watcher::Config::default().streaming_lists())]
#[tokio::test]
async fn a_reflector_follows_the_server_through_expiry_and_drops(#[case] config: watcher::Config) {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    api.create(&PostParams::default(), &configmap("before"))
        .await
        .unwrap();

    // The namespace also holds the root CA publisher's `kube-root-ca.crt`, as on a cluster.
    let (store, writer) = reflector::store();
    let stream = reflector(writer, watcher(api.clone(), config)).applied_objects();
    let task = tokio::spawn(async move {
        futures::pin_mut!(stream);
        while stream.next().await.is_some() {}
    });
    wait_for(&store, 2).await;

    api.create(&PostParams::default(), &configmap("live"))
        .await
        .unwrap();
    wait_for(&store, 3).await;

    // The connection drops: the watcher re-watches from its last resourceVersion.
    server.drop_watches(RequestMatcher::default());
    api.create(&PostParams::default(), &configmap("after-drop"))
        .await
        .unwrap();
    wait_for(&store, 4).await;

    // The history is compacted while the watch is down: the re-watch gets 410 and the watcher
    // relists; an object deleted meanwhile leaves the cache.
    server.compact();
    server.drop_watches(RequestMatcher::default());
    api.delete("before", &Default::default()).await.unwrap();
    api.create(&PostParams::default(), &configmap("after-expiry"))
        .await
        .unwrap();
    wait_for(&store, 4).await;
    let mut names: Vec<String> = store
        .state()
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec!["after-drop", "after-expiry", "kube-root-ca.crt", "live"]
    );
    task.abort();
}

/// A CRD change under a running reflector: the server ends the watch, the re-watch from the
/// old resourceVersion gets 410, and the relist reads the stored object with the new schema's
/// default — which the cache only learns that way, as nothing wrote the object.
#[tokio::test]
async fn a_reflector_relists_after_its_crd_changes_and_sees_the_new_defaults() {
    use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
    use serde_json::Value;

    let server = FakeApiServer::new();
    let crd = |default: Option<&str>| {
        let mut colour = json!({"type": "string"});
        if let Some(default) = default {
            colour["default"] = json!(default);
        }
        json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.ex.com"},
            "spec": {"group": "ex.com", "scope": "Namespaced",
                "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {"colour": colour}}}}}}]}
        })
    };
    let crds: Api<DynamicObject> = Api::all_with(
        server.client(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    );
    crds.create(
        &PostParams::default(),
        &serde_json::from_value(crd(None)).unwrap(),
    )
    .await
    .unwrap();
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("ex.com", "v1", "Gadget"),
        "gadgets",
    );
    let gadgets: Api<DynamicObject> = Api::namespaced_with(server.client(), "default", &resource);
    gadgets
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": "ex.com/v1", "kind": "Gadget",
                "metadata": {"name": "g"}, "spec": {}
            }))
            .unwrap(),
        )
        .await
        .unwrap();

    let cache_writer = reflector::store::Writer::new(resource.clone());
    let cache = cache_writer.as_reader();
    let stream = reflector(
        cache_writer,
        watcher(gadgets.clone(), watcher::Config::default()),
    )
    .applied_objects();
    let task = tokio::spawn(async move {
        futures::pin_mut!(stream);
        while stream.next().await.is_some() {}
    });
    let colour = |cache: &reflector::Store<DynamicObject>| -> Option<Value> {
        cache
            .state()
            .first()
            .map(|g| g.data["spec"]["colour"].clone())
    };
    tokio::time::timeout(Duration::from_secs(10), async {
        while colour(&cache).is_none() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the gadget in the cache");
    assert_eq!(colour(&cache), Some(Value::Null));

    let mut changed: Value =
        serde_json::to_value(crds.get("gadgets.ex.com").await.unwrap()).unwrap();
    changed["spec"] = crd(Some("blue"))["spec"].clone();
    crds.replace(
        "gadgets.ex.com",
        &PostParams::default(),
        &serde_json::from_value(changed).unwrap(),
    )
    .await
    .unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        while colour(&cache) != Some(json!("blue")) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the cache kept {:?}", colour(&cache)));
    task.abort();
}
