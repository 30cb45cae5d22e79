//! Subresources a real server serves, through kube-rs (over loopback, as a program run against a
//! cluster) and `kubectl`: `pods/eviction` with and without a PodDisruptionBudget in the way
//! (`kubectl drain`), `scale` of a Deployment and of a custom resource (`kubectl scale`),
//! `pods/log` (`kubectl logs`) with the lines a kubelet stand-in wrote, and the answers for what
//! the fake cannot reach (no node yet, no kubelet).

use crate::kubectl_support;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, EvictParams, LogParams, Patch, PatchParams, PostParams,
};
use kube::core::GroupVersionKind;
use kubectl_support::Cluster;
use serde_json::{json, Value};
use std::time::Duration;

/// A running, Ready pod labelled `app=web` on `node`, owned by nothing.
fn running_pod(name: &str, node: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {"nodeName": node, "containers": [{"name": "app", "image": "web"}]}
    })
}

fn make_running(cluster: &Cluster, name: &str) {
    let pods: Api<Pod> = Api::namespaced(cluster.tcp_client(), "default");
    cluster
        .block_on(pods.patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0,
                    "image": "web", "imageID": "", "state": {"running": {}}}]
            }})),
        ))
        .expect("pod status");
}

fn create(cluster: &Cluster, object: Value) {
    cluster
        .server
        .apply_manifest(object)
        .expect("create object");
}

fn node(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
}

fn budget(min_available: i64) -> Value {
    json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}}
    })
}

#[test]
fn eviction_is_refused_while_the_budget_allows_no_disruption() {
    let cluster = Cluster::start();
    create(&cluster, node("n1"));
    for name in ["a", "b"] {
        create(&cluster, running_pod(name, "n1"));
        make_running(&cluster, name);
    }
    create(&cluster, budget(2));
    let client = cluster.tcp_client_without_retry();
    let budgets: Api<PodDisruptionBudget> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client, "default");

    let status = cluster
        .block_on(budgets.get("web"))
        .expect("budget")
        .status
        .expect("the disruption controller wrote a status");
    assert_eq!(
        (
            status.current_healthy,
            status.desired_healthy,
            status.expected_pods
        ),
        (Some(2), Some(2), Some(2))
    );
    assert_eq!(status.disruptions_allowed, Some(0));

    let refused = cluster
        .block_on(pods.evict("a", &EvictParams::default()))
        .expect_err("the budget allows no disruption");
    let kube::Error::Api(response) = refused else {
        panic!("not an API error: {refused:?}");
    };
    assert_eq!(response.code, 429);
    assert_eq!(response.reason, "TooManyRequests");
    assert_eq!(
        response.message,
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert!(cluster.object("v1", "pods", Some("default"), "a").is_some());

    // Allow one: the first eviction goes through, the second is refused again.
    cluster
        .block_on(budgets.patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"minAvailable": 1}})),
        ))
        .expect("patch budget");
    let evicted = cluster
        .block_on(pods.evict("a", &EvictParams::default()))
        .expect("evicted");
    assert_eq!(evicted.code, 201);
    let pod = cluster.must_get("v1", "pods", Some("default"), "a");
    assert!(pod["metadata"]["deletionTimestamp"].is_string(), "{pod}");
    assert!(
        pod["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "DisruptionTarget" && c["reason"] == "EvictionByEvictionAPI"),
        "{pod}"
    );
    let budget = cluster.must_get("policy/v1", "poddisruptionbudgets", Some("default"), "web");
    assert_eq!(budget["status"]["currentHealthy"], 1, "{budget}");
    assert_eq!(budget["status"]["disruptionsAllowed"], 0, "{budget}");
    assert!(cluster
        .block_on(pods.evict("b", &EvictParams::default()))
        .is_err());
}

#[test]
fn a_pod_without_a_budget_is_evicted_with_the_eviction_delete_options() {
    let cluster = Cluster::start();
    create(&cluster, node("n1"));
    for name in ["p", "q"] {
        create(&cluster, running_pod(name, "n1"));
        make_running(&cluster, name);
    }
    let eviction = json!({
        "apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "p", "namespace": "default"},
        "deleteOptions": {"gracePeriodSeconds": 7}
    });
    let file = cluster.write_json("eviction.json", &eviction);
    cluster
        .kubectl(&[
            "create",
            "--raw",
            "/api/v1/namespaces/default/pods/p/eviction",
            "-f",
            &file,
        ])
        .ok();
    let pod = cluster.must_get("v1", "pods", Some("default"), "p");
    assert_eq!(pod["metadata"]["deletionGracePeriodSeconds"], 7, "{pod}");

    // kube-rs sends its delete options as `delete_options`, a field the server does not know:
    // the pod gets its own grace period, as from a real server.
    let pods: Api<Pod> = Api::namespaced(cluster.tcp_client(), "default");
    let params = EvictParams {
        delete_options: Some(kube::api::DeleteParams {
            grace_period_seconds: Some(7),
            ..Default::default()
        }),
        ..Default::default()
    };
    cluster.block_on(pods.evict("q", &params)).expect("evicted");
    let pod = cluster.must_get("v1", "pods", Some("default"), "q");
    assert_eq!(pod["metadata"]["deletionGracePeriodSeconds"], 30, "{pod}");

    let missing = cluster
        .block_on(pods.evict("nope", &EvictParams::default()))
        .expect_err("no such pod");
    assert!(
        matches!(missing, kube::Error::Api(ref e) if e.code == 404),
        "{missing:?}"
    );
}

#[test]
fn kubectl_drain_evicts_what_the_budget_allows() {
    let cluster = Cluster::start();
    create(&cluster, node("n1"));
    for name in ["a", "b"] {
        create(&cluster, running_pod(name, "n1"));
        make_running(&cluster, name);
    }
    create(&cluster, budget(2));
    // Blocked: kubectl retries the 429 until its timeout.
    cluster
        .kubectl(&["drain", "n1", "--force", "--grace-period=0", "--timeout=2s"])
        .fails()
        .stderr_has("Cannot evict pod as it would violate the pod's disruption budget.");
    let node = cluster.must_get("v1", "nodes", None, "n1");
    assert_eq!(
        node["spec"]["unschedulable"], true,
        "drain cordons first: {node}"
    );

    cluster
        .kubectl(&[
            "patch",
            "pdb",
            "web",
            "--type=merge",
            "-p",
            r#"{"spec":{"minAvailable":0}}"#,
        ])
        .ok();
    let run = cluster.kubectl(&[
        "drain",
        "n1",
        "--force",
        "--grace-period=0",
        "--timeout=20s",
    ]);
    run.ok();
    let output = format!("{}{}", run.stdout, run.stderr);
    assert!(output.contains("evicting pod default/a"), "{run}");
    assert!(output.contains("node/n1 drained"), "{run}");
    assert!(cluster.object("v1", "pods", Some("default"), "a").is_none());
    assert!(cluster.object("v1", "pods", Some("default"), "b").is_none());
}

#[test]
fn kubectl_scale_writes_a_deployments_replicas() {
    let cluster = Cluster::start();
    create(
        &cluster,
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "web"}]}}}
        }),
    );
    cluster
        .kubectl(&["scale", "deployment/web", "--replicas=4"])
        .ok()
        .stdout_is("deployment.apps/web scaled\n");
    let deployment = cluster.must_get("apps/v1", "deployments", Some("default"), "web");
    assert_eq!(deployment["spec"]["replicas"], 4);
    assert_eq!(deployment["metadata"]["generation"], 2);

    let deployments: Api<Deployment> = Api::namespaced(cluster.tcp_client(), "default");
    let scale = cluster
        .block_on(deployments.get_scale("web"))
        .expect("scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(4));
    assert_eq!(
        scale.status.map(|s| s.selector),
        Some(Some("app=web".into()))
    );

    // A stale resourceVersion in the Scale is a precondition that conflicts.
    let mut stale = cluster
        .block_on(deployments.get_scale("web"))
        .expect("scale");
    stale.metadata.resource_version = Some("1".into());
    let conflict = cluster
        .block_on(deployments.replace_scale("web", &PostParams::default(), &stale))
        .expect_err("stale resourceVersion");
    assert!(
        matches!(conflict, kube::Error::Api(ref e) if e.code == 409 && e.message.contains("the object has been modified")),
        "{conflict:?}"
    );
    cluster
        .kubectl(&["scale", "deployment/nope", "--replicas=2"])
        .fails()
        .stderr_has("not found");
}

fn replica_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "pools.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "pools", "singular": "pool", "kind": "Pool"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {
                    "specReplicasPath": ".spec.size",
                    "statusReplicasPath": ".status.size",
                    "labelSelectorPath": ".status.selector"}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                    "status": {"type": "object", "properties": {
                        "size": {"type": "integer"}, "selector": {"type": "string"}}}}}}
            }]
        }
    })
}

#[test]
fn custom_resources_scale_through_their_crd_paths() {
    let cluster = Cluster::start();
    let client = cluster.tcp_client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(replica_crd()).unwrap();
    cluster
        .block_on(crds.create(&PostParams::default(), &crd))
        .expect("CRD");
    create(
        &cluster,
        json!({"apiVersion": "example.com/v1", "kind": "Pool",
               "metadata": {"name": "p", "namespace": "default"}, "spec": {"size": 1}}),
    );
    cluster
        .kubectl(&["scale", "pools/p", "--replicas=3"])
        .ok()
        .stdout_is("pool.example.com/p scaled\n");
    let pool = cluster.must_get("example.com/v1", "pools", Some("default"), "p");
    assert_eq!(pool["spec"]["size"], 3);

    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Pool"),
        "pools",
    );
    let pools: Api<DynamicObject> = Api::namespaced_with(client, "default", &resource);
    let scale = cluster.block_on(pools.get_scale("p")).expect("scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(3));
    let refused = cluster
        .block_on(pools.patch_scale(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": -1}})),
        ))
        .expect_err("negative replicas");
    assert!(
        matches!(refused, kube::Error::Api(ref e) if e.code == 422 && e.message.contains("should be a non-negative integer")),
        "{refused:?}"
    );

    // Discovery lists the subresource with its kind, as kubectl and kube-rs find it.
    let resources = cluster
        .kubectl(&["get", "--raw", "/apis/example.com/v1"])
        .ok()
        .json();
    let scale = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pools/scale")
        .cloned()
        .expect("pools/scale listed");
    assert_eq!(scale["group"], "autoscaling");
    assert_eq!(scale["version"], "v1");
    assert_eq!(scale["kind"], "Scale");
}

#[test]
fn kubectl_logs_shows_what_the_kubelet_stand_in_wrote() {
    let cluster = Cluster::start();
    create(&cluster, node("n1"));
    create(&cluster, running_pod("p", "n1"));
    // Bound, but no container has started: the kubelet's answer.
    cluster
        .kubectl(&["logs", "p"])
        .fails()
        .stderr_has("container \"app\" in pod \"p\" is not available");
    make_running(&cluster, "p");
    cluster.kubectl(&["logs", "p"]).ok().stdout_is("");
    cluster
        .server
        .append_pod_log("default", "p", "app", "starting\nready\nserving")
        .expect("write log");
    cluster
        .kubectl(&["logs", "p"])
        .ok()
        .stdout_is("starting\nready\nserving\n");
    cluster
        .kubectl(&["logs", "p", "--tail=1"])
        .ok()
        .stdout_is("serving\n");

    let pods: Api<Pod> = Api::namespaced(cluster.tcp_client(), "default");
    let text = cluster
        .block_on(pods.logs(
            "p",
            &LogParams {
                limit_bytes: Some(8),
                ..Default::default()
            },
        ))
        .expect("logs");
    assert_eq!(text, "starting");
    cluster
        .kubectl(&["logs", "p", "-c", "nope"])
        .fails()
        .stderr_has("container nope is not valid for pod p");
}

#[test]
fn kubectl_logs_follow_streams_lines_until_the_container_ends() {
    let cluster = Cluster::start();
    create(&cluster, node("n1"));
    create(&cluster, running_pod("p", "n1"));
    make_running(&cluster, "p");
    cluster
        .server
        .append_pod_log("default", "p", "app", "first")
        .expect("write log");
    let mut follow = cluster.kubectl_background(&["logs", "-f", "p", "--timestamps"]);
    follow.expect_line(|l| l.ends_with(" first"), Duration::from_secs(10));
    // A line written while the request is open arrives on the same answer.
    cluster
        .server
        .append_pod_log("default", "p", "app", "second")
        .expect("write log");
    follow.expect_line(|l| l.ends_with(" second"), Duration::from_secs(10));
    assert!(
        !follow.has_exited(),
        "follow ended while the container runs"
    );
    // The container ends: so does the answer, after the last line written.
    cluster
        .server
        .append_pod_log("default", "p", "app", "bye")
        .expect("write log");
    let pods: Api<Pod> = Api::namespaced(cluster.tcp_client(), "default");
    cluster
        .block_on(pods.patch_status(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {
                "phase": "Succeeded",
                "containerStatuses": [{"name": "app", "ready": false, "restartCount": 0,
                    "image": "web", "imageID": "",
                    "state": {"terminated": {"exitCode": 0, "containerID": "standin://p/app"}}}]
            }})),
        ))
        .expect("pod status");
    let run = follow.finish(Duration::from_secs(10));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.ends_with(" bye\n"), "{:?}", run.stdout);

    // Following a finished container answers its lines and ends at once.
    let text = cluster
        .block_on(pods.logs(
            "p",
            &LogParams {
                follow: true,
                limit_bytes: Some(8),
                ..Default::default()
            },
        ))
        .expect("logs");
    assert_eq!(text, "first\nse");
}

#[test]
fn a_pod_without_a_node_has_no_logs_and_cannot_be_reached() {
    let cluster = Cluster::start();
    create(
        &cluster,
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "pending", "namespace": "default"},
               "spec": {"containers": [{"name": "app", "image": "web"}]}}),
    );
    let raw = "/api/v1/namespaces/default/pods/pending/log";
    cluster.kubectl(&["get", "--raw", raw]).ok().stdout_is("");
    cluster
        .kubectl(&["exec", "pending", "--", "true"])
        .fails()
        .stderr_has("pod pending does not have a host assigned");
    cluster
        .kubectl(&[
            "get",
            "--raw",
            "/api/v1/namespaces/default/pods/pending/proxy/",
        ])
        .fails();
    cluster
        .kubectl(&[
            "get",
            "--raw",
            "/api/v1/namespaces/default/pods/pending/proxy/healthz",
        ])
        .fails()
        .stderr_has("address not allowed");
}

#[test]
fn the_pod_log_answers_no_content_before_binding() {
    let cluster = Cluster::start();
    create(
        &cluster,
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "pending", "namespace": "default"},
               "spec": {"containers": [{"name": "app", "image": "web"}]}}),
    );
    let pods: Api<Pod> = Api::namespaced(cluster.tcp_client(), "default");
    let text = cluster
        .block_on(pods.logs("pending", &LogParams::default()))
        .expect("204 is an empty log");
    assert_eq!(text, "");
}
