//! The real `kubectl` against the fake API server's APIServices (`apiregistration.k8s.io/v1`):
//! the server registers its own group versions at start, a CRD's served versions get theirs
//! while a CRD serves them (put back when deleted), local APIServices are available at once,
//! a client's APIService is validated as the aggregator validates it, and `/status` changes
//! only the status.

use crate::kubectl_support;

use kubectl_support::Cluster;
use serde_json::{json, Value};

fn api_service(cluster: &Cluster, name: &str) -> Option<Value> {
    cluster.object("apiregistration.k8s.io/v1", "apiservices", None, name)
}

fn crd(versions: &[(&str, bool)]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .enumerate()
        .map(|(i, (name, served))| {
            json!({"name": name, "served": served, "storage": i == 0,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
        })
        .collect();
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.stable.example.com"},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": versions}})
}

#[test]
fn the_servers_group_versions_are_registered_and_available() {
    let cluster = Cluster::start();
    let rows = cluster.kubectl(&["get", "apiservices"]).ok().rows();
    assert_eq!(rows[0], ["NAME", "SERVICE", "AVAILABLE", "AGE"]);
    let names: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
    for expected in [
        "v1.",
        "v1.apps",
        "v2.autoscaling",
        "v1.certificates.k8s.io",
        "v1.apiextensions.k8s.io",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    assert!(
        rows[1..].iter().all(|r| r[1] == "Local" && r[2] == "True"),
        "{rows:?}"
    );
    let core = api_service(&cluster, "v1.").expect("the core group's APIService");
    assert_eq!(
        core["spec"],
        // (An empty group is left out, as Go's `omitempty` leaves it.)
        json!({"version": "v1", "groupPriorityMinimum": 18000, "versionPriority": 1})
    );
    assert_eq!(
        core["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"],
        "onstart"
    );
    assert_eq!(core["status"]["conditions"][0]["reason"], "Local");
    cluster
        .kubectl(&[
            "api-resources",
            "--api-group=apiregistration.k8s.io",
            "-o",
            "name",
        ])
        .ok()
        .stdout_is("apiservices.apiregistration.k8s.io\n");
}

#[test]
fn a_crds_served_versions_have_apiservices_while_it_serves_them() {
    let cluster = Cluster::start();
    let file = cluster.write_json("crd.json", &crd(&[("v1", true), ("v1beta1", true)]));
    cluster.kubectl(&["apply", "-f", &file]).ok();
    let v1 = api_service(&cluster, "v1.stable.example.com").expect("v1's APIService");
    assert_eq!(
        v1["spec"],
        json!({"group": "stable.example.com", "version": "v1", "groupPriorityMinimum": 1000, "versionPriority": 100})
    );
    assert_eq!(
        v1["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"],
        "true"
    );
    assert!(api_service(&cluster, "v1beta1.stable.example.com").is_some());

    // A deleted one comes back while the CRD serves its version.
    cluster
        .kubectl(&["delete", "apiservice", "v1.stable.example.com"])
        .ok();
    let back = api_service(&cluster, "v1.stable.example.com").expect("put back");
    assert_ne!(back["metadata"]["uid"], v1["metadata"]["uid"]);

    // A version no longer served loses its APIService; the CRD's deletion takes the rest.
    let file = cluster.write_json("crd.json", &crd(&[("v1", true), ("v1beta1", false)]));
    cluster.kubectl(&["apply", "-f", &file]).ok();
    assert!(api_service(&cluster, "v1beta1.stable.example.com").is_none());
    cluster
        .kubectl(&["delete", "crd", "widgets.stable.example.com"])
        .ok();
    cluster.eventually(
        "the CRD's APIService gone",
        std::time::Duration::from_secs(10),
        || api_service(&cluster, "v1.stable.example.com").is_none(),
    );
    assert!(api_service(&cluster, "v1.apps").is_some());
}

#[test]
fn client_apiservices_are_validated_and_status_writes_change_only_the_status() {
    let cluster = Cluster::start();
    let service = |name: &str, spec: Value| {
        json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": name}, "spec": spec})
    };
    let file = cluster.write_json(
        "bad.json",
        &service("v1.other.io", json!({"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100})),
    );
    cluster.kubectl(&["create", "-f", &file]).fails().stderr_has(
        "metadata.name: Invalid value: \"v1.other.io\": must be `spec.version+\".\"+spec.group`: \"v1beta1.metrics.k8s.io\"",
    );
    let remote = service(
        "v1beta1.metrics.k8s.io",
        json!({"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100,
            "versionPriority": 100, "insecureSkipTLSVerify": true,
            "service": {"namespace": "kube-system", "name": "metrics-server"}}),
    );
    let file = cluster.write_json("remote.json", &remote);
    cluster.kubectl(&["create", "-f", &file]).ok();
    let rows = cluster
        .kubectl(&["get", "apiservice", "v1beta1.metrics.k8s.io"])
        .ok()
        .rows();
    assert_eq!(rows[1][1..3], ["kube-system/metrics-server", "Unknown"]);

    // What a remote availability check reports; labels sent with it are not taken.
    let mut reported = cluster
        .kubectl(&["get", "apiservice", "v1beta1.metrics.k8s.io", "-o", "json"])
        .ok()
        .json();
    reported["metadata"]["labels"] = json!({"sneaky": "yes"});
    reported["spec"]["groupPriorityMinimum"] = json!(5);
    reported["status"] = json!({"conditions": [{"type": "Available", "status": "False",
        "reason": "ServiceNotFound", "message": "service/metrics-server in \"kube-system\" is not present",
        "lastTransitionTime": "2026-12-03T00:00:00Z"}]});
    let file = cluster.write_json("status.json", &reported);
    cluster
        .kubectl(&["replace", "--subresource=status", "-f", &file])
        .ok();
    let rows = cluster
        .kubectl(&["get", "apiservice", "v1beta1.metrics.k8s.io"])
        .ok()
        .rows();
    assert_eq!(rows[1][2..4], ["False", "(ServiceNotFound)"]);
    let stored = api_service(&cluster, "v1beta1.metrics.k8s.io").unwrap();
    assert!(stored["metadata"].get("labels").is_none(), "{stored}");
    assert_eq!(stored["spec"]["groupPriorityMinimum"], 100);
}
