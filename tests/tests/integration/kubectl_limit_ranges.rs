//! The real `kubectl` against the fake API server's `LimitRanger` admission: a LimitRange's
//! defaults on `kubectl run`, its bounds refusing `kubectl create` with the real message.

use crate::kubectl_support;

use kubectl_support::Cluster;
use serde_json::json;

#[test]
fn kubectl_run_gets_the_defaults_and_create_is_refused_past_the_bounds() {
    let cluster = Cluster::start();
    let range = cluster.write_json(
        "limits.json",
        &json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits"},
            "spec": {"limits": [{"type": "Container",
                "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "100m"},
                "max": {"cpu": "1"}}]}}),
    );
    cluster
        .kubectl(&["create", "-f", &range])
        .ok()
        .stdout_is("limitrange/limits created\n");
    cluster
        .kubectl(&["run", "web", "--image=nginx"])
        .ok()
        .stdout_is("pod/web created\n");
    let pod = cluster.must_get("v1", "pods", Some("default"), "web");
    assert_eq!(
        pod["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "500m"}, "requests": {"cpu": "100m"}})
    );
    assert_eq!(
        pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu request for container web; cpu limit for container web"
    );

    let big = cluster.write_json(
        "big.json",
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"},
            "spec": {"containers": [{"name": "app", "image": "nginx",
                "resources": {"limits": {"cpu": "2"}}}]}}),
    );
    cluster.kubectl(&["create", "-f", &big]).fails().stderr_has(
        "pods \"big\" is forbidden: maximum cpu usage per Container is 1, but limit is 2",
    );
}
