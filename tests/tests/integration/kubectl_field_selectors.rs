//! The real `kubectl get --field-selector` against the fake API server: the labels each
//! built-in kind's field label conversion accepts, the values the registry's field set holds,
//! and each conversion's own refusal (kube-apiserver 1.36: `pkg/apis/batch/v1/conversion.go`,
//! `pkg/apis/core/v1/conversion.go`, `runtime.DefaultMetaV1FieldSelectorConversion`).

use crate::kubectl_support;

use kubectl_support::Cluster;
use serde_json::json;

fn job(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox"}],
        }}},
    })
}

#[test]
fn jobs_select_on_status_successful_and_refuse_other_labels() {
    let cluster = Cluster::start();
    for name in ["done", "running"] {
        let file = cluster.write_json(&format!("{name}.json"), &job(name));
        cluster.kubectl(&["create", "-f", &file]).ok();
    }
    cluster
        .kubectl(&[
            "patch",
            "job",
            "done",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"succeeded":1}}"#,
        ])
        .ok();

    // JobToSelectableFields: status.successful is status.succeeded printed as a number, 0
    // when the Job has none.
    let select = |selector: &str| {
        cluster
            .kubectl(&["get", "jobs", "--field-selector", selector, "-o", "name"])
            .ok()
            .stdout
            .clone()
    };
    let done = cluster.must_get("batch/v1", "jobs", Some("default"), "done");
    assert_eq!(done["status"]["succeeded"], 1, "{done}");
    assert_eq!(select("status.successful=1"), "job.batch/done\n", "{done}");
    assert_eq!(select("status.successful=0"), "job.batch/running\n");
    assert_eq!(select("status.successful!=1"), "job.batch/running\n");
    assert_eq!(
        select("status.successful=1,metadata.name=running"),
        "",
        "every term must hold"
    );

    // batch/v1's conversion words its refusal with the quoted label and `batchv1.Job`.
    cluster
        .kubectl(&["get", "jobs", "--field-selector", "status.succeeded=1"])
        .fails()
        .stderr_has("Error from server (BadRequest)")
        .stderr_has(": field label \"status.succeeded\" not supported for batchv1.Job\n");
    // CronJobs have no conversion of their own: the default, metadata-only one.
    cluster
        .kubectl(&["get", "cronjobs", "--field-selector", "status.successful=1"])
        .fails()
        .stderr_has("Error from server (BadRequest)")
        .stderr_has(
            ": \"status.successful\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"\n",
        );
}

#[test]
fn core_kinds_refuse_with_their_own_wording() {
    let cluster = Cluster::start();
    // Services select on spec.type and spec.clusterIP (AddFieldLabelConversionsForService).
    let svc = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"type": "NodePort", "ports": [{"port": 80}]},
    });
    let file = cluster.write_json("svc.json", &svc);
    cluster.kubectl(&["create", "-f", &file]).ok();
    cluster
        .kubectl(&[
            "get",
            "svc",
            "--field-selector",
            "spec.type=NodePort",
            "-o",
            "name",
        ])
        .ok()
        .stdout_is("service/web\n");
    cluster
        .kubectl(&[
            "get",
            "svc",
            "--field-selector",
            "spec.type=ClusterIP",
            "-o",
            "name",
        ])
        .ok()
        // The API server's own `kubernetes` Service is the ClusterIP one here.
        .stdout_is("service/kubernetes\n");
    cluster
        .kubectl(&["get", "svc", "--field-selector", "spec.ports=80"])
        .fails()
        .stderr_has("Error from server (BadRequest)")
        .stderr_has(": field label not supported: spec.ports\n");
    // ReplicaSets' registry has status.replicas in its field set, but apps/v1 registers no
    // conversion, so the label never gets that far.
    cluster
        .kubectl(&["get", "rs", "--field-selector", "status.replicas=1"])
        .fails()
        .stderr_has("Error from server (BadRequest)")
        .stderr_has(
            ": \"status.replicas\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"\n",
        );
}
