//! Server-side apply through kube-rs (`Patch::Apply`) and `kubectl apply --server-side`, with two
//! and three managers on one object: create by apply, conflicts (409 with causes), force, shared
//! ownership, removal of an omitted field, keyed list merges, status apply, and the managedFields
//! every other write leaves (`kubectl label` then unlabel leaves no `kubectl-label` entry).

use crate::kubectl_support;

use fake_apiserver::FakeApiServer;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kubectl_support::Cluster;
use serde_json::{json, Value};

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app", "namespace": "default"}, "data": data})
}

fn managers(object: &Value) -> Vec<(String, String)> {
    object["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or_default().to_string(),
                e["operation"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn fields_of(object: &Value, manager: &str) -> Value {
    object["metadata"]["managedFields"]
        .as_array()
        .and_then(|es| es.iter().find(|e| e["manager"] == manager))
        .map(|e| e["fieldsV1"].clone())
        .unwrap_or(Value::Null)
}

async fn apply(
    api: &Api<ConfigMap>,
    manager: &str,
    body: Value,
    force: bool,
) -> kube::Result<Value> {
    let mut params = PatchParams::apply(manager);
    params.force = force;
    let cm = api.patch("app", &params, &Patch::Apply(body)).await?;
    Ok(serde_json::to_value(cm).unwrap())
}

#[tokio::test]
async fn two_managers_conflict_force_share_and_prune() {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");

    // Create by apply.
    let created = apply(&api, "alice", cm(json!({"a": "1", "b": "1"})), false)
        .await
        .unwrap();
    assert_eq!(created["data"], json!({"a": "1", "b": "1"}));
    assert_eq!(managers(&created), vec![("alice".into(), "Apply".into())]);
    assert_eq!(
        fields_of(&created, "alice"),
        json!({"f:data": {"f:a": {}, "f:b": {}}})
    );

    // Applying the same configuration again changes nothing, not even the resourceVersion.
    let again = apply(&api, "alice", cm(json!({"a": "1", "b": "1"})), false)
        .await
        .unwrap();
    assert_eq!(
        again["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );

    // Bob applies `a` with another value: 409 naming the field and its owner.
    let err = apply(&api, "bob", cm(json!({"a": "2"})), false)
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("expected an API error");
    };
    assert_eq!(status.code, 409);
    assert_eq!(status.reason, "Conflict");
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"alice\": .data.a"
    );
    let unchanged = serde_json::to_value(api.get("app").await.unwrap()).unwrap();
    assert_eq!(unchanged["data"]["a"], "1");

    // The same value is shared; then alice drops both keys: `a` stays (bob owns it too), `b` goes.
    let shared = apply(&api, "bob", cm(json!({"a": "1"})), false)
        .await
        .unwrap();
    assert_eq!(shared["data"], json!({"a": "1", "b": "1"}));
    assert_eq!(managers(&shared).len(), 2);
    let mut without = cm(json!({}));
    without.as_object_mut().unwrap().remove("data");
    let pruned = apply(&api, "alice", without, false).await.unwrap();
    assert_eq!(pruned["data"], json!({"a": "1"}));
    assert_eq!(managers(&pruned), vec![("bob".into(), "Apply".into())]);

    // Carol forces a new value: she owns `a` now, bob's entry is gone.
    let forced = apply(&api, "carol", cm(json!({"a": "3"})), true)
        .await
        .unwrap();
    assert_eq!(forced["data"]["a"], "3");
    assert_eq!(managers(&forced), vec![("carol".into(), "Apply".into())]);
}

#[tokio::test]
async fn updates_take_ownership_and_stale_versions_conflict() {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    apply(&api, "alice", cm(json!({"a": "1"})), false)
        .await
        .unwrap();
    // A merge patch by another manager takes `a` over.
    let patched = api
        .patch(
            "app",
            &PatchParams {
                field_manager: Some("editor".into()),
                ..Default::default()
            },
            &Patch::Merge(json!({"data": {"a": "2"}})),
        )
        .await
        .unwrap();
    let patched = serde_json::to_value(patched).unwrap();
    assert_eq!(
        fields_of(&patched, "editor"),
        json!({"f:data": {"f:a": {}}})
    );
    assert_eq!(managers(&patched), vec![("editor".into(), "Update".into())]);
    // Alice re-applies her value: the conflict names an update manager with its version.
    let kube::Error::Api(status) = apply(&api, "alice", cm(json!({"a": "1"})), false)
        .await
        .unwrap_err()
    else {
        panic!("expected an API error");
    };
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"editor\" using v1: .data.a"
    );

    // A resourceVersion in the configuration is checked like an update's.
    let mut stale = cm(json!({"a": "2"}));
    stale["metadata"]["resourceVersion"] = json!("1");
    let kube::Error::Api(status) = apply(&api, "editor2", stale, true).await.unwrap_err() else {
        panic!("expected an API error");
    };
    assert_eq!(status.code, 409);
    assert!(
        status.message.contains("the object has been modified"),
        "{}",
        status.message
    );

    // A dry run answers with the result and stores nothing.
    let mut params = PatchParams::apply("alice").force();
    params.dry_run = true;
    let dry = api
        .patch("app", &params, &Patch::Apply(cm(json!({"a": "9"}))))
        .await
        .unwrap();
    assert_eq!(dry.data.unwrap()["a"], "9");
    assert_eq!(api.get("app").await.unwrap().data.unwrap()["a"], "2");
}

fn container_names(deployment: &Value) -> Vec<String> {
    deployment["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn keyed_lists_merge_by_key_across_managers() {
    let server = FakeApiServer::new();
    let api: Api<Deployment> = Api::namespaced(server.client(), "default");
    let deployment = |containers: Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": containers}}}})
    };
    api.patch(
        "web",
        &PatchParams::apply("base"),
        &Patch::Apply(deployment(json!([{"name": "app", "image": "app:1"}]))),
    )
    .await
    .unwrap();
    // A second manager adds a sidecar: the list is merged by name, not replaced.
    let both = api
        .patch(
            "web",
            &PatchParams::apply("sidecar"),
            &Patch::Apply(deployment(json!([{"name": "proxy", "image": "proxy:1"}]))),
        )
        .await
        .unwrap();
    assert_eq!(
        container_names(&serde_json::to_value(both).unwrap()),
        ["app", "proxy"]
    );
    let both = serde_json::to_value(api.get("web").await.unwrap()).unwrap();
    let sidecar = fields_of(&both, "sidecar");
    assert!(
        sidecar
            .pointer("/f:spec/f:template/f:spec/f:containers/k:{\"name\":\"proxy\"}/f:image")
            .is_some(),
        "{sidecar}"
    );
    // The sidecar manager drops its container: only its own element goes.
    let after = api
        .patch(
            "web",
            &PatchParams::apply("sidecar"),
            &Patch::Apply(deployment(json!([]))),
        )
        .await
        .unwrap();
    assert_eq!(
        container_names(&serde_json::to_value(after).unwrap()),
        ["app"]
    );
}

#[tokio::test]
async fn status_is_applied_through_its_subresource() {
    let server = FakeApiServer::new();
    let crds: Api<DynamicObject> = Api::all_with(
        server.client(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    );
    let crd: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                    "status": {"type": "object", "properties": {
                        "conditions": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["type"],
                            // A list-map key must be required (or defaulted), as a real server insists.
                            "items": {"type": "object", "required": ["type"], "properties": {
                                "type": {"type": "string"}, "status": {"type": "string"}}}}}}}}}}]}
    }))
    .unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Widget"),
        "widgets",
    );
    let widgets: Api<DynamicObject> = Api::namespaced_with(server.client(), "default", &ar);
    let widget = |extra: Value| {
        let mut w =
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
        w.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        w
    };
    widgets
        .patch("w", &PatchParams::apply("user"), &Patch::Apply(widget(json!({"spec": {"size": 1}, "status": {"conditions": [{"type": "Ignored", "status": "True"}]}}))))
        .await
        .unwrap();
    let created = serde_json::to_value(widgets.get("w").await.unwrap()).unwrap();
    assert!(
        created.get("status").is_none(),
        "status is not written through the main endpoint"
    );
    // Two controllers each apply their own condition: the keyed list keeps both.
    for (manager, kind) in [
        ("ready-controller", "Ready"),
        ("synced-controller", "Synced"),
    ] {
        widgets
            .patch_status(
                "w",
                &PatchParams::apply(manager),
                &Patch::Apply(widget(
                    json!({"status": {"conditions": [{"type": kind, "status": "True"}]}}),
                )),
            )
            .await
            .unwrap();
    }
    let got = serde_json::to_value(widgets.get("w").await.unwrap()).unwrap();
    assert_eq!(
        got["status"]["conditions"],
        json!([{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "True"}])
    );
    assert_eq!(got["spec"]["size"], 1);
    let entry = got["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "ready-controller")
        .unwrap()
        .clone();
    assert_eq!(entry["subresource"], "status");
    assert_eq!(entry["operation"], "Apply");
}

#[test]
fn kubectl_server_side_apply_conflicts_and_forces() {
    let cluster = Cluster::start();
    let file = cluster.write_json("cm.json", &cm(json!({"a": "1"})));
    cluster
        .kubectl(&["apply", "--server-side", "-f", &file])
        .ok()
        .stdout_is("configmap/app serverside-applied\n");
    let applied = cluster.must_get("v1", "configmaps", Some("default"), "app");
    assert_eq!(managers(&applied), vec![("kubectl".into(), "Apply".into())]);

    let other = cluster.write_json("other.json", &cm(json!({"a": "2"})));
    cluster
        .kubectl(&[
            "apply",
            "--server-side",
            "--field-manager",
            "other",
            "-f",
            &other,
        ])
        .fails()
        .stderr_has("conflict with \"kubectl\": .data.a");
    cluster
        .kubectl(&[
            "apply",
            "--server-side",
            "--field-manager",
            "other",
            "--force-conflicts",
            "-f",
            &other,
        ])
        .ok();
    let forced = cluster.must_get("v1", "configmaps", Some("default"), "app");
    assert_eq!(forced["data"]["a"], "2");
    assert_eq!(managers(&forced), vec![("other".into(), "Apply".into())]);
}

#[test]
fn kubectl_label_then_unlabel_leaves_no_label_manager() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&["create", "configmap", "app", "--from-literal=a=1"])
        .ok();
    let created = cluster.must_get("v1", "configmaps", Some("default"), "app");
    assert_eq!(
        managers(&created),
        vec![("kubectl-create".into(), "Update".into())]
    );
    assert_eq!(
        fields_of(&created, "kubectl-create"),
        json!({"f:data": {".": {}, "f:a": {}}})
    );
    cluster.kubectl(&["label", "cm", "app", "tier=web"]).ok();
    let labelled = cluster.must_get("v1", "configmaps", Some("default"), "app");
    assert_eq!(
        fields_of(&labelled, "kubectl-label"),
        json!({"f:metadata": {"f:labels": {".": {}, "f:tier": {}}}})
    );
    cluster.kubectl(&["label", "cm", "app", "tier-"]).ok();
    let unlabelled = cluster.must_get("v1", "configmaps", Some("default"), "app");
    assert_eq!(
        managers(&unlabelled),
        vec![("kubectl-create".into(), "Update".into())]
    );
}

/// The field manager sees objects through the Go types, as the real one does
/// (`DefaultUnstructuredConverter.ToUnstructured`): an empty `omitempty` field a client sends is
/// not there, so it is owned by nobody and a write that adds only it changes nothing (no new
/// resourceVersion); a created object is compared with the kind's zero value, so a struct the
/// zero value already has (a Service's `spec`) is not owned as a whole (`f:spec` has no `.`).
#[test]
fn empty_omitempty_fields_are_owned_by_nobody_and_change_nothing() {
    let cluster = Cluster::start();
    let file = cluster.write_json(
        "cm.json",
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "app", "namespace": "default"},
            "data": {"a": "1"}, "binaryData": {}}),
    );
    cluster.kubectl(&["create", "-f", &file]).ok();
    let created = cluster.must_get("v1", "configmaps", Some("default"), "app");
    assert_eq!(
        fields_of(&created, "kubectl-create"),
        json!({"f:data": {".": {}, "f:a": {}}})
    );
    let mut same = created.clone();
    same["binaryData"] = json!({});
    let file = cluster.write_json("same.json", &same);
    cluster.kubectl(&["replace", "-f", &file]).ok();
    let replaced = cluster.must_get("v1", "configmaps", Some("default"), "app");
    assert_eq!(
        replaced["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"],
        "a write that adds only an empty omitempty field is a no-op"
    );
    assert_eq!(
        managers(&replaced),
        vec![("kubectl-create".into(), "Update".into())]
    );

    cluster
        .kubectl(&["create", "service", "clusterip", "web", "--tcp=80:8080"])
        .ok();
    let service = cluster.must_get("v1", "services", Some("default"), "web");
    let spec = &fields_of(&service, "kubectl-create")["f:spec"];
    assert!(spec.get(".").is_none(), "{spec}");
    assert_eq!(spec["f:type"], json!({}));
}

/// A create's managed fields are computed where the real create handler computes them: on the
/// decoded object (its defaults included), before the in-tree admission plugins and the kind's
/// create strategy, whose additions nobody owns. `kubectl run` owns a pod's containers and
/// defaulted spec fields but not the service account, priority, token volume and tolerations
/// admission adds; `kubectl create namespace` owns the name label (a decode-time default) but
/// not the `kubernetes` finalizer (the strategy's).
#[test]
fn a_create_owns_what_it_sent_and_its_defaults_not_what_admission_adds() {
    let cluster = Cluster::start();
    cluster.kubectl(&["run", "web", "--image=nginx"]).ok();
    let pod = cluster.must_get("v1", "pods", Some("default"), "web");
    assert_eq!(pod["spec"]["serviceAccountName"], "default");
    assert_eq!(
        fields_of(&pod, "kubectl-run"),
        json!({"f:metadata": {"f:labels": {".": {}, "f:run": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:imagePullPolicy": {},
                "f:name": {}, "f:resources": {}, "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}},
            "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {},
            "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}}})
    );
    cluster.kubectl(&["create", "namespace", "team"]).ok();
    let namespace = cluster.must_get("v1", "namespaces", None, "team");
    assert_eq!(namespace["spec"]["finalizers"], json!(["kubernetes"]));
    assert_eq!(
        fields_of(&namespace, "kubectl-create"),
        json!({"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}})
    );
}
