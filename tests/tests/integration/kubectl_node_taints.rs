//! The real `kubectl` against `TaintNodesByCondition` and the node lifecycle controller's
//! tainting pass: a Node registered NotReady shows the `not-ready` taint until it is Ready,
//! and `kubectl cordon` / `uncordon` add and remove the `unschedulable` taint.

use crate::kubectl_support;

use kubectl_support::Cluster;
use serde_json::json;

fn taint_keys(cluster: &Cluster) -> String {
    let run = cluster.kubectl(&["get", "node", "n1", "-o", "jsonpath={.spec.taints[*].key}"]);
    run.ok();
    run.stdout.clone()
}

#[test]
fn a_not_ready_node_is_tainted_until_ready_and_cordon_taints_it() {
    let cluster = Cluster::start();
    let node = cluster.write_json(
        "node.json",
        &json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]}}),
    );
    cluster
        .kubectl(&["create", "-f", &node])
        .ok()
        .stdout_is("node/n1 created\n");
    assert_eq!(taint_keys(&cluster), "node.kubernetes.io/not-ready");

    cluster
        .kubectl(&[
            "patch", "node", "n1", "--subresource=status", "--type=merge", "-p",
            r#"{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}}"#,
        ])
        .ok();
    assert_eq!(taint_keys(&cluster), "");

    cluster
        .kubectl(&["cordon", "n1"])
        .ok()
        .stdout_is("node/n1 cordoned\n");
    assert_eq!(taint_keys(&cluster), "node.kubernetes.io/unschedulable");
    cluster
        .kubectl(&["uncordon", "n1"])
        .ok()
        .stdout_is("node/n1 uncordoned\n");
    assert_eq!(taint_keys(&cluster), "");
}
