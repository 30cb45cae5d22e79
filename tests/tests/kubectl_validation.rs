//! The real `kubectl` against the fake API server's per-kind validation (`fake-apiserver/src/rules`):
//! what a user sees when a real API server refuses a Job, a Deployment selector change, a bare
//! finalizer, an incomplete TLS Secret or a changed node provider ID, and that valid writes of the
//! same kinds still go through (a Job gets its generated selector).

mod kubectl_support;

use kubectl_support::Cluster;
use serde_json::json;

#[test]
fn a_job_gets_a_generated_selector_and_needs_a_restart_policy() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&[
            "create",
            "job",
            "pi",
            "--image=perl",
            "--",
            "perl",
            "-e",
            "1",
        ])
        .ok()
        .stdout_is("job.batch/pi created\n");
    let job = cluster.must_get("batch/v1", "jobs", Some("default"), "pi");
    let uid = job["metadata"]["uid"].as_str().unwrap();
    assert_eq!(
        job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
        uid
    );
    assert_eq!(
        job["spec"]["template"]["metadata"]["labels"]["job-name"],
        "pi"
    );

    let file = cluster.write_json(
        "job.json",
        &json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bad", "namespace": "default"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}),
    );
    cluster.kubectl(&["apply", "-f", &file]).fails().stderr_has(
        "The Job \"bad\" is invalid: spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\"",
    );
    assert!(cluster
        .object("batch/v1", "jobs", Some("default"), "bad")
        .is_none());
}

#[test]
fn a_deployment_selector_is_immutable() {
    let cluster = Cluster::start();
    let deployment = |tier: &str| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web", "tier": tier}},
                "template": {"metadata": {"labels": {"app": "web", "tier": tier}},
                    "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
    };
    let file = cluster.write_json("d.json", &deployment("a"));
    cluster.kubectl(&["apply", "-f", &file]).ok();
    let file = cluster.write_json("d.json", &deployment("b"));
    cluster
        .kubectl(&["apply", "-f", &file])
        .fails()
        .stderr_has("spec.selector: Invalid value:")
        .stderr_has("field is immutable");

    let mismatched = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "api"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    let file = cluster.write_json("m.json", &mismatched);
    cluster.kubectl(&["apply", "-f", &file]).fails().stderr_has(
        "spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`",
    );
}

#[test]
fn built_in_kinds_want_qualified_finalizers() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&["create", "configmap", "app", "--from-literal=a=1"])
        .ok();
    cluster
        .kubectl(&["patch", "configmap", "app", "--type", "merge", "-p", r#"{"metadata":{"finalizers":["cleanup"]}}"#])
        .fails()
        .stderr_has("metadata.finalizers[0]: Invalid value: \"cleanup\": name is neither a standard finalizer name nor is it fully qualified");
    cluster
        .kubectl(&[
            "patch",
            "configmap",
            "app",
            "--type",
            "merge",
            "-p",
            r#"{"metadata":{"finalizers":["example.com/cleanup"]}}"#,
        ])
        .ok();
}

#[test]
fn secrets_and_nodes_keep_their_rules() {
    let cluster = Cluster::start();
    let tls = json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
        "metadata": {"name": "cert", "namespace": "default"}, "data": {"tls.crt": "eA=="}});
    let file = cluster.write_json("s.json", &tls);
    cluster
        .kubectl(&["apply", "-f", &file])
        .fails()
        .stderr_has("The Secret \"cert\" is invalid: data[tls.key]: Required value");

    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": {"providerID": "kwok://n1"}});
    let file = cluster.write_json("n.json", &node);
    cluster.kubectl(&["apply", "-f", &file]).ok();
    cluster
        .kubectl(&["patch", "node", "n1", "--type", "merge", "-p", r#"{"spec":{"providerID":"kwok://other"}}"#])
        .fails()
        .stderr_has("spec.providerID: Forbidden: node updates may not change providerID except from \"\" to valid");
}
