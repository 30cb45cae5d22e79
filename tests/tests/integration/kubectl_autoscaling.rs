//! The real `kubectl` with HorizontalPodAutoscalers: `kubectl autoscale` (an `autoscaling/v1`
//! object sent as protobuf), charts' `autoscaling/v2` objects with their defaults, the table,
//! the v1 view of v2 objects and writes through it, and the validation a v1.36 server applies.

use crate::kubectl_support;

use kubectl_support::Cluster;
use serde_json::json;

fn hpa(name: &str, spec: serde_json::Value) -> serde_json::Value {
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": "default"}, "spec": spec})
}

#[test]
fn autoscalers_are_served_at_v2_and_v1_with_their_defaults_and_table() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&["create", "deployment", "web", "--image=nginx"])
        .ok();
    cluster
        .kubectl(&[
            "autoscale",
            "deployment",
            "web",
            "--max=5",
            "--cpu-percent=70",
        ])
        .ok();
    let rows = cluster.kubectl(&["get", "hpa"]).ok().rows();
    assert_eq!(
        rows[0],
        [
            "NAME",
            "REFERENCE",
            "TARGETS",
            "MINPODS",
            "MAXPODS",
            "REPLICAS",
            "AGE"
        ]
    );
    // (`rows` splits on spaces, and the target has one.)
    assert_eq!(
        rows[1][..7],
        [
            "web",
            "Deployment/web",
            "cpu:",
            "<unknown>/70%",
            "1",
            "5",
            "0"
        ]
    );
    let v2 = cluster
        .kubectl(&["get", "hpa", "web", "-o", "json"])
        .ok()
        .json();
    assert_eq!(v2["apiVersion"], "autoscaling/v2");
    assert_eq!(
        v2["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}])
    );
    // A create resets the status to the zero status, whose two fields have no `omitempty`.
    assert_eq!(
        v2["status"],
        json!({"currentMetrics": null, "desiredReplicas": 0})
    );

    // A v2 object with a behaviour: the missing rules come from the defaults.
    let chart = hpa(
        "api",
        json!({"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 4,
            "metrics": [{"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}}],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}),
    );
    let file = cluster.write_json("api.json", &chart);
    cluster.kubectl(&["apply", "-f", &file]).ok();
    let spec = cluster
        .kubectl(&["get", "hpa", "api", "-o", "json"])
        .ok()
        .json()["spec"]
        .clone();
    assert_eq!(spec["minReplicas"], 1);
    assert_eq!(
        spec["behavior"],
        json!({
            "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15}]},
            "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": [
                {"type": "Percent", "value": 100, "periodSeconds": 15}]}
        })
    );

    // The v1 view: no CPU target, the memory metric and the behaviour in annotations.
    let v1 = cluster
        .kubectl(&[
            "get",
            "horizontalpodautoscalers.v1.autoscaling",
            "api",
            "-o",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    assert!(v1["spec"].get("targetCPUUtilizationPercentage").is_none());
    let annotations = &v1["metadata"]["annotations"];
    assert_eq!(
        annotations["autoscaling.alpha.kubernetes.io/metrics"],
        r#"[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}}]"#
    );
    assert!(annotations["autoscaling.alpha.kubernetes.io/behavior"]
        .as_str()
        .is_some_and(|b| b.starts_with(r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"#)));
    // A v1 write sets the CPU target and keeps what only v2 shows.
    cluster
        .kubectl(&[
            "patch",
            "horizontalpodautoscalers.v1.autoscaling",
            "api",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"targetCPUUtilizationPercentage":50}}"#,
        ])
        .ok();
    let spec = cluster
        .kubectl(&["get", "hpa", "api", "-o", "json"])
        .ok()
        .json()["spec"]
        .clone();
    assert_eq!(
        spec["metrics"],
        json!([
            {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}},
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}
        ])
    );
    assert_eq!(
        spec["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
        60
    );
    // The table is the same at both versions (the printers read the internal object).
    let v2_table = cluster.kubectl(&["get", "hpa", "api"]).ok().stdout.clone();
    assert!(
        v2_table.contains("memory: <unknown>/100Mi, cpu: <unknown>/50%"),
        "{v2_table}"
    );
    let v1_table = cluster
        .kubectl(&["get", "horizontalpodautoscalers.v1.autoscaling", "api"])
        .ok()
        .stdout
        .clone();
    // Two reads a moment apart may straddle a second: the AGE column is left out.
    assert_eq!(without_age(&v1_table), without_age(&v2_table));
    let annotations = cluster
        .kubectl(&["get", "hpa", "api", "-o", "json"])
        .ok()
        .json()["metadata"]["annotations"]
        .clone();
    assert!(
        annotations
            .get("autoscaling.alpha.kubernetes.io/metrics")
            .is_none(),
        "the round-tripping annotations are not stored: {annotations}"
    );

    // The status subresource keeps the spec and checks the counters.
    cluster
        .kubectl(&[
            "patch",
            "hpa",
            "api",
            "--subresource",
            "status",
            "--type",
            "merge",
            "-p",
            r#"{"status":{"currentReplicas":2,"desiredReplicas":3},"spec":{"maxReplicas":9}}"#,
        ])
        .ok();
    let stored = cluster
        .kubectl(&["get", "hpa", "api", "-o", "json"])
        .ok()
        .json();
    assert_eq!(stored["status"]["currentReplicas"], 2);
    assert_eq!(stored["spec"]["maxReplicas"], 4);
    cluster
        .kubectl(&[
            "patch",
            "hpa",
            "api",
            "--subresource",
            "status",
            "--type",
            "merge",
            "-p",
            r#"{"status":{"currentReplicas":-1}}"#,
        ])
        .fails()
        .stderr_has(
            "status.currentReplicas: Invalid value: -1: must be greater than or equal to 0",
        );
}

#[test]
fn autoscalers_are_validated_as_a_v1_36_server_does() {
    let cluster = Cluster::start();
    let create = |name: &str, spec: serde_json::Value| {
        let file = cluster.write_json(&format!("{name}.json"), &hpa(name, spec));
        cluster.kubectl(&["create", "-f", &file])
    };
    create(
        "zero",
        json!({"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 0, "maxReplicas": 0,
            "metrics": [{"type": "Pods"}, {"type": "Bogus"}]}),
    )
    .fails()
    .stderr_has("spec.minReplicas: Invalid value: 0: must be greater than or equal to 1")
    .stderr_has("spec.maxReplicas: Invalid value: 0: must be greater than 0")
    .stderr_has("spec.scaleTargetRef.apiVersion: Invalid value: \"\": apiVersion must specify API group")
    .stderr_has("spec.metrics[0].pods: Required value: must populate information for the given metric source")
    .stderr_has("spec.metrics[1].type: Unsupported value: \"Bogus\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"")
    .stderr_has("spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas");
    create(
        "rules",
        json!({"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 3, "maxReplicas": 2,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50, "averageValue": "1"}}},
                        // Only the first source present (in Go's field order) is validated.
                        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageValue": "1"}},
                         "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1"}}}],
            "behavior": {"scaleUp": {"stabilizationWindowSeconds": 4000, "selectPolicy": "Fastest",
                "policies": [{"type": "Pods", "value": 0, "periodSeconds": 3600}], "tolerance": "-0.1"}}}),
    )
    .fails()
    .stderr_has("spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`")
    .stderr_has("spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization")
    .stderr_has("spec.metrics[1].pods: Forbidden: must populate the given metric source only")
    .stderr_has("spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600")
    .stderr_has("spec.behavior.scaleUp.selectPolicy: Unsupported value: \"Fastest\": supported values: \"Disabled\", \"Max\", \"Min\"")
    .stderr_has("spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero")
    .stderr_has("spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 3600: must be less than or equal to 1800")
    .stderr_has("spec.behavior.scaleUp.tolerance: Invalid value: \"-0.1\": must be greater than or equal to 0");
    // A quantity that does not parse is refused by the decoder, before any rule.
    create(
        "quantity",
        json!({"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 2,
            "metrics": [{"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "lots"}}}]}),
    )
    .fails()
    .stderr_has("HorizontalPodAutoscaler in version \"v2\" cannot be handled as a HorizontalPodAutoscaler: quantities must match the regular expression");
    // A ReplicationController is the one target without a group.
    create(
        "rc",
        json!({"scaleTargetRef": {"apiVersion": "v1", "kind": "ReplicationController", "name": "old"}, "maxReplicas": 2}),
    )
    .ok();
}

/// A table without its last column (`AGE`, which the time between two reads may change).
fn without_age(table: &str) -> Vec<&str> {
    table
        .lines()
        .map(|line| {
            line.trim_end()
                .rsplit_once(char::is_whitespace)
                .map_or(line, |(rest, _)| rest.trim_end())
        })
        .collect()
}
