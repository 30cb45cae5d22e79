//! The real `kubectl` writing to the fake API server: client-side `apply` (three-way merge, for
//! a plain kind and for a Deployment's strategic list merge), `patch` of every type, `label`,
//! `annotate`, `replace` with a stale resourceVersion, `delete` (also `--wait` on a finalizer) and
//! `wait` for a condition and for deletion. Each outcome is checked in kubectl's output and in the
//! server's store.

use crate::kubectl_support;

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, Patch, PatchParams};
use kubectl_support::Cluster;
use serde_json::json;

const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

fn configmap(name: &str, data: serde_json::Value) -> serde_json::Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": data,
    })
}

#[test]
fn apply_twice_merges_three_ways() {
    let cluster = Cluster::start();
    let file = cluster.write_json("a.json", &configmap("app", json!({"a": "1", "b": "2"})));
    cluster
        .kubectl(&["apply", "-f", &file])
        .ok()
        .stdout_is("configmap/app created\n");
    let created = cluster.must_get("v1", "configmaps", Some("default"), "app");
    assert!(
        created["metadata"]["annotations"][LAST_APPLIED].is_string(),
        "{created}"
    );

    // Someone else adds a key; the next apply keeps it, changes `a` and drops `b`.
    cluster
        .kubectl(&[
            "patch",
            "cm",
            "app",
            "--type",
            "merge",
            "-p",
            r#"{"data":{"foreign":"x"}}"#,
        ])
        .ok();
    let file = cluster.write_json("a.json", &configmap("app", json!({"a": "10"})));
    cluster
        .kubectl(&["apply", "-f", &file])
        .ok()
        .stdout_is("configmap/app configured\n");
    let applied = cluster.must_get("v1", "configmaps", Some("default"), "app");
    assert_eq!(applied["data"], json!({"a": "10", "foreign": "x"}));

    cluster
        .kubectl(&["apply", "-f", &file])
        .ok()
        .stdout_is("configmap/app unchanged\n");
    assert_eq!(
        cluster.must_get("v1", "configmaps", Some("default"), "app")["metadata"]["resourceVersion"],
        applied["metadata"]["resourceVersion"]
    );
}

#[test]
fn apply_merges_a_deployments_containers_by_name() {
    let cluster = Cluster::start();
    let deployment = |image: &str| {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "main", "image": image}]},
                },
            },
        })
    };
    let file = cluster.write_json("d.json", &deployment("nginx:1"));
    cluster
        .kubectl(&["apply", "-f", &file])
        .ok()
        .stdout_is("deployment.apps/web created\n");
    // Another writer adds a sidecar; apply's strategic merge keeps it (merge key `name`).
    cluster
        .kubectl(&[
            "patch",
            "deployment",
            "web",
            "--type",
            "strategic",
            "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"envoy"}]}}}}"#,
        ])
        .ok()
        .stdout_is("deployment.apps/web patched\n");
    let file = cluster.write_json("d.json", &deployment("nginx:2"));
    cluster
        .kubectl(&["apply", "-f", &file])
        .ok()
        .stdout_is("deployment.apps/web configured\n");
    let stored = cluster.must_get("apps/v1", "deployments", Some("default"), "web");
    let containers: Vec<(String, String)> = stored["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["image"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // The sidecar came first when it was patched in (a strategic merge puts items the live list
    // does not order ahead of it) and keeps its place; the applied container is updated in place.
    assert_eq!(
        containers,
        [
            ("sidecar".to_string(), "envoy".to_string()),
            ("main".to_string(), "nginx:2".to_string())
        ]
    );
    assert_eq!(stored["metadata"]["generation"], 3);
}

#[test]
fn patch_of_every_type_then_label_and_annotate() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&[
            "create",
            "-f",
            &cluster.write_json("p.json", &configmap("p", json!({"a": "1"}))),
        ])
        .ok();
    cluster
        .kubectl(&[
            "patch",
            "cm",
            "p",
            "--type",
            "merge",
            "-p",
            r#"{"data":{"b":"2"}}"#,
        ])
        .ok()
        .stdout_is("configmap/p patched\n");
    cluster
        .kubectl(&[
            "patch",
            "cm",
            "p",
            "--type",
            "merge",
            "-p",
            r#"{"data":{"b":"2"}}"#,
        ])
        .ok()
        .stdout_is("configmap/p patched (no change)\n");
    cluster
        .kubectl(&[
            "patch",
            "cm",
            "p",
            "--type",
            "json",
            "-p",
            r#"[{"op":"remove","path":"/data/a"}]"#,
        ])
        .ok()
        .stdout_is("configmap/p patched\n");
    cluster
        .kubectl(&[
            "patch",
            "cm",
            "p",
            "--type",
            "json",
            "-p",
            r#"[{"op":"test","path":"/data/b","value":"nope"}]"#,
        ])
        .fails()
        .stderr_has("The request is invalid");
    cluster
        .kubectl(&["patch", "cm", "p", "-p", r#"{"data":{"c":"3"}}"#])
        .ok()
        .stdout_is("configmap/p patched\n");
    assert_eq!(
        cluster.must_get("v1", "configmaps", Some("default"), "p")["data"],
        json!({"b": "2", "c": "3"})
    );
    cluster
        .kubectl(&["patch", "cm", "nope", "--type", "merge", "-p", "{}"])
        .fails()
        .stderr_has("configmaps \"nope\" not found");

    cluster
        .kubectl(&["label", "cm", "p", "tier=web"])
        .ok()
        .stdout_is("configmap/p labeled\n");
    cluster
        .kubectl(&["label", "cm", "p", "tier=db"])
        .fails()
        .stderr_has("already has a value (web)")
        .stderr_has("--overwrite is false");
    cluster
        .kubectl(&["label", "cm", "p", "tier=db", "--overwrite"])
        .ok()
        .stdout_is("configmap/p labeled\n");
    assert_eq!(
        cluster.must_get("v1", "configmaps", Some("default"), "p")["metadata"]["labels"],
        json!({"tier": "db"})
    );
    cluster
        .kubectl(&["label", "cm", "p", "tier-"])
        .ok()
        .stdout_is("configmap/p unlabeled\n");
    cluster
        .kubectl(&["annotate", "cm", "p", "note=hello"])
        .ok()
        .stdout_is("configmap/p annotated\n");
    let object = cluster.must_get("v1", "configmaps", Some("default"), "p");
    assert!(
        object["metadata"]
            .get("labels")
            .is_none_or(|l| l == &json!({})),
        "{object}"
    );
    assert_eq!(object["metadata"]["annotations"], json!({"note": "hello"}));
}

/// kubectl's default `--validate=strict` leaves validation to the server (`?fieldValidation=Strict`)
/// because the OpenAPI v3 document says the kind's PATCH takes `fieldValidation`: an unknown field
/// is refused as a real server refuses it. `--validate=false` sends `Ignore`: the field is dropped.
#[test]
fn create_with_an_unknown_field_is_refused_unless_validation_is_off() {
    let cluster = Cluster::start();
    let mut object = configmap("unk", json!({"a": "1"}));
    object["spec"] = json!({"x": 1});
    let file = cluster.write_json("unk.json", &object);
    cluster
        .kubectl(&["create", "-f", &file])
        .fails()
        .stderr_has("Error from server (BadRequest)")
        .stderr_has("ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"spec\"");
    assert!(cluster
        .object("v1", "configmaps", Some("default"), "unk")
        .is_none());
    cluster
        .kubectl(&["create", "-f", &file, "--validate=false"])
        .ok()
        .stdout_is("configmap/unk created\n");
    let stored = cluster.must_get("v1", "configmaps", Some("default"), "unk");
    assert!(stored.get("spec").is_none(), "{stored}");
    assert_eq!(stored["data"], json!({"a": "1"}));
}

#[test]
fn replace_with_a_stale_resource_version_conflicts() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&[
            "create",
            "-f",
            &cluster.write_json("r.json", &configmap("r", json!({"a": "1"}))),
        ])
        .ok();
    let first = cluster.must_get("v1", "configmaps", Some("default"), "r");
    let stale_rv = first["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    cluster
        .kubectl(&[
            "patch",
            "cm",
            "r",
            "--type",
            "merge",
            "-p",
            r#"{"data":{"a":"2"}}"#,
        ])
        .ok();

    let mut stale = configmap("r", json!({"a": "stale"}));
    stale["metadata"]["resourceVersion"] = json!(stale_rv);
    let file = cluster.write_json("stale.json", &stale);
    cluster
        .kubectl(&["replace", "-f", &file])
        .fails()
        .stderr_has("Error from server (Conflict)")
        .stderr_has("Operation cannot be fulfilled on configmaps \"r\": the object has been modified; please apply your changes to the latest version and try again");
    assert_eq!(
        cluster.must_get("v1", "configmaps", Some("default"), "r")["data"],
        json!({"a": "2"})
    );

    // With the current resourceVersion the same replace goes through.
    let current = cluster.must_get("v1", "configmaps", Some("default"), "r");
    stale["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
    let file = cluster.write_json("fresh.json", &stale);
    cluster
        .kubectl(&["replace", "-f", &file])
        .ok()
        .stdout_is("configmap/r replaced\n");
    assert_eq!(
        cluster.must_get("v1", "configmaps", Some("default"), "r")["data"],
        json!({"a": "stale"})
    );
}

#[test]
fn delete_and_delete_wait_on_a_finalizer() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&[
            "create",
            "-f",
            &cluster.write_json("gone.json", &configmap("gone", json!({"a": "1"}))),
        ])
        .ok();
    cluster
        .kubectl(&["delete", "configmap", "gone"])
        .ok()
        .stdout_is("configmap \"gone\" deleted\n");
    assert!(cluster
        .object("v1", "configmaps", Some("default"), "gone")
        .is_none());
    cluster
        .kubectl(&["delete", "configmap", "gone"])
        .fails()
        .stderr_has("configmaps \"gone\" not found");
    cluster
        .kubectl(&["delete", "configmap", "gone", "--ignore-not-found"])
        .ok()
        .stdout_is("");

    let mut held = configmap("held", json!({"a": "1"}));
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    cluster
        .kubectl(&["create", "-f", &cluster.write_json("held.json", &held)])
        .ok();
    let mut delete =
        cluster.kubectl_background(&["delete", "configmap", "held", "--wait", "--timeout=25s"]);
    delete.expect_line(
        |l| l == "configmap \"held\" deleted",
        Duration::from_secs(20),
    );
    cluster.eventually("a deletionTimestamp", Duration::from_secs(10), || {
        cluster
            .object("v1", "configmaps", Some("default"), "held")
            .is_some_and(|o| o["metadata"]["deletionTimestamp"].is_string())
    });
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        !delete.has_exited(),
        "delete --wait returned while a finalizer holds the object"
    );

    let configmaps: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
    cluster
        .block_on(configmaps.patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        ))
        .expect("remove the finalizer");
    let run = delete.finish(Duration::from_secs(25));
    run.ok();
    assert!(cluster
        .object("v1", "configmaps", Some("default"), "held")
        .is_none());
}

#[test]
fn wait_for_a_condition_and_for_deletion() {
    let cluster = Cluster::start();
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    });
    cluster
        .kubectl(&["create", "-f", &cluster.write_json("p.json", &pod)])
        .ok();
    cluster
        .kubectl(&["wait", "--for=condition=Ready", "pod/p", "--timeout=1s"])
        .fails()
        .stderr_has("timed out waiting for the condition");

    let waiting =
        cluster.kubectl_background(&["wait", "--for=condition=Ready", "pod/p", "--timeout=25s"]);
    std::thread::sleep(Duration::from_millis(500));
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    cluster
        .block_on(pods.patch_status(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})),
        ))
        .expect("set Ready");
    waiting
        .finish(Duration::from_secs(25))
        .ok()
        .stdout_is("pod/p condition met\n");

    cluster
        .kubectl(&[
            "create",
            "-f",
            &cluster.write_json("doomed.json", &configmap("doomed", json!({"a": "1"}))),
        ])
        .ok();
    let waiting =
        cluster.kubectl_background(&["wait", "--for=delete", "configmap/doomed", "--timeout=25s"]);
    std::thread::sleep(Duration::from_millis(500));
    let configmaps: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
    cluster
        .block_on(configmaps.delete("doomed", &Default::default()))
        .expect("delete");
    waiting
        .finish(Duration::from_secs(25))
        .ok()
        .stdout_is("configmap/doomed condition met\n");
}

/// `--dry-run=server` on every verb kubectl has for it changes nothing: kubectl sends `dryRun`
/// in the query for writes and in the DeleteOptions body for deletes (a delete used to ignore
/// the body's `dryRun` and really delete).
#[test]
fn server_dry_runs_change_nothing() {
    let cluster = Cluster::start();
    let file = cluster.write_json("kept.json", &configmap("kept", json!({"a": "1"})));
    cluster
        .kubectl(&["create", "-f", &file, "--dry-run=server"])
        .ok()
        .stdout_is("configmap/kept created (server dry run)\n");
    assert!(cluster
        .object("v1", "configmaps", Some("default"), "kept")
        .is_none());
    cluster.kubectl(&["create", "-f", &file]).ok();
    let before = cluster.must_get("v1", "configmaps", Some("default"), "kept");

    cluster
        .kubectl(&["label", "configmap", "kept", "x=y", "--dry-run=server"])
        .ok();
    cluster
        .kubectl(&[
            "patch",
            "configmap",
            "kept",
            "--type=merge",
            "-p",
            r#"{"data":{"a":"2"}}"#,
            "--dry-run=server",
        ])
        .ok();
    cluster
        .kubectl(&["delete", "configmap", "kept", "--dry-run=server"])
        .ok()
        .stdout_is("configmap \"kept\" deleted (server dry run)\n");
    cluster
        .kubectl(&["delete", "configmaps", "--all", "--dry-run=server"])
        .ok();
    assert_eq!(
        cluster.must_get("v1", "configmaps", Some("default"), "kept"),
        before
    );
}

/// `kubectl debug` adds an ephemeral container through `pods/ephemeralcontainers` (a strategic
/// merge patch of the pod); a second one with the same name is refused by the server.
#[test]
fn kubectl_debug_adds_an_ephemeral_container() {
    let cluster = Cluster::start();
    cluster.kubectl(&["run", "web", "--image=nginx"]).ok();
    cluster
        .kubectl(&[
            "debug",
            "web",
            "--image=busybox",
            "--target=web",
            "-c",
            "dbg",
            "--",
            "sleep",
            "10",
        ])
        .ok();
    let pod = cluster.must_get("v1", "pods", Some("default"), "web");
    let ephemeral = &pod["spec"]["ephemeralContainers"];
    assert_eq!(ephemeral[0]["name"], "dbg", "{pod}");
    assert_eq!(ephemeral[0]["image"], "busybox");
    assert_eq!(ephemeral[0]["targetContainerName"], "web");
    assert_eq!(ephemeral[0]["command"], json!(["sleep", "10"]));
    assert_eq!(pod["spec"]["containers"][0]["image"], "nginx");
    cluster
        .kubectl(&["debug", "web", "--image=busybox", "-c", "web"])
        .fails()
        .stderr_has("Duplicate value: \"web\"");
}

/// `kubectl patch --subresource resize` (in-place pod resize): CPU and memory change in place
/// and the pod's generation moves; anything else, a removed request or a change of QoS class is
/// refused with the real messages, and the main endpoint still refuses resource changes.
#[test]
fn pods_are_resized_in_place_through_the_resize_subresource() {
    let cluster = Cluster::start();
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "resized", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx",
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m"}}}]}
    });
    let file = cluster.write_json("pod.json", &pod);
    cluster.kubectl(&["create", "-f", &file]).ok();
    let resize = |resources: serde_json::Value| {
        let patch = json!({"spec": {"containers": [{"name": "c", "resources": resources}]}});
        cluster.kubectl(&[
            "patch",
            "pod",
            "resized",
            "--subresource",
            "resize",
            "--patch",
            &patch.to_string(),
        ])
    };
    resize(json!({"limits": {"cpu": "300m"}}))
        .ok()
        .stdout_is("pod/resized patched\n");
    let stored = cluster
        .kubectl(&["get", "pod", "resized", "-o", "json"])
        .ok()
        .json();
    assert_eq!(
        stored["spec"]["containers"][0]["resources"],
        json!({"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "300m"}})
    );
    assert_eq!(stored["metadata"]["generation"], 2);

    resize(json!({"limits": {"ephemeral-storage": "1Gi"}}))
        .fails()
        .stderr_has("The Pod \"resized\" is invalid: spec: Forbidden: only cpu and memory resources are mutable");
    // (A CPU request would come back from its limit: decoding defaults requests from limits.)
    resize(json!({"requests": {"memory": null}}))
        .fails()
        .stderr_has(
            "spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed",
        );
    resize(json!({"requests": {"cpu": "300m", "memory": "64Mi"}, "limits": {"cpu": "300m", "memory": "64Mi"}}))
        .fails()
        .stderr_has("spec: Invalid value: \"Burstable\": Pod QOS Class may not change as a result of resizing");
    // Through the main endpoint, resources stay immutable.
    cluster
        .kubectl(&[
            "patch",
            "pod",
            "resized",
            "--patch",
            r#"{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"400m"}}}]}}"#,
        ])
        .fails()
        .stderr_has("pod updates may not change fields other than");
    let unchanged = cluster
        .kubectl(&[
            "get",
            "pod",
            "resized",
            "-o",
            "jsonpath={.spec.containers[0].resources.limits.cpu} {.metadata.generation}",
        ])
        .ok()
        .stdout
        .clone();
    assert_eq!(unchanged, "300m 2");
}

/// Warnings as the strategies give them, printed by kubectl: a Service's on create and on every
/// update (`GetWarningsForService`); a pod's on create only (the pod strategy gives none on
/// update).
#[test]
fn writes_warn_as_the_kinds_strategy_does() {
    let cluster = Cluster::start();
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"ports": [{"port": 80}], "externalIPs": ["192.0.2.4"],
            "trafficDistribution": "PreferClose"}});
    let file = cluster.write_json("service.json", &service);
    let deprecated =
        "Warning: spec.externalIPs is deprecated and may no longer be implemented in some clusters";
    let prefer_close =
        "Warning: spec.trafficDistribution: \"PreferClose\" is deprecated; use \"PreferSameZone\"";
    cluster
        .kubectl(&["apply", "-f", &file])
        .ok()
        .stderr_has(deprecated)
        .stderr_has(prefer_close);
    cluster
        .kubectl(&["label", "service", "web", "tier=front"])
        .ok()
        .stderr_has(deprecated);

    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"nodeSelector": {"beta.kubernetes.io/os": "linux"},
            "containers": [{"name": "c", "image": "nginx"}]}});
    let file = cluster.write_json("pod.json", &pod);
    let node_label = "Warning: spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14";
    cluster
        .kubectl(&["create", "-f", &file])
        .ok()
        .stderr_has(node_label);
    let relabelled = cluster.kubectl(&["label", "pod", "p", "tier=front"]);
    assert!(!relabelled.ok().stderr.contains("Warning"), "{relabelled}");
}
