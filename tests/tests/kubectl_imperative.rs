//! The real `kubectl create <generator>` against the fake API server. These generators send the
//! object as Kubernetes protobuf (`application/vnd.kubernetes.protobuf`), so each case checks
//! kubectl's message and the object the server stored from the decoded body.

mod kubectl_support;

use kubectl_support::Cluster;
use serde_json::json;

#[test]
fn create_configmap_from_literals() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&[
            "create",
            "configmap",
            "k",
            "--from-literal=a=1",
            "--from-literal=greeting=hello world",
        ])
        .ok()
        .stdout_is("configmap/k created\n");
    let stored = cluster.must_get("v1", "configmaps", Some("default"), "k");
    assert_eq!(stored["data"], json!({"a": "1", "greeting": "hello world"}));
    assert_eq!(stored["metadata"]["namespace"], "default");
    assert!(stored["metadata"]["uid"].is_string(), "{stored}");
}

#[test]
fn create_generic_secret_keeps_bytes_as_base64() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&[
            "create",
            "secret",
            "generic",
            "s",
            "--from-literal=password=hunter2",
            "--from-literal=user=admin",
        ])
        .ok()
        .stdout_is("secret/s created\n");
    let stored = cluster.must_get("v1", "secrets", Some("default"), "s");
    assert_eq!(
        stored["data"],
        json!({"password": "aHVudGVyMg==", "user": "YWRtaW4="})
    );
    assert_eq!(stored["type"], "Opaque");
}

#[test]
fn create_namespace_and_serviceaccount_in_it() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&["create", "namespace", "team-a"])
        .ok()
        .stdout_is("namespace/team-a created\n");
    let namespace = cluster.must_get("v1", "namespaces", None, "team-a");
    assert_eq!(namespace["metadata"]["name"], "team-a");

    cluster
        .kubectl(&["create", "serviceaccount", "builder", "-n", "team-a"])
        .ok()
        .stdout_is("serviceaccount/builder created\n");
    let account = cluster.must_get("v1", "serviceaccounts", Some("team-a"), "builder");
    assert_eq!(account["metadata"]["namespace"], "team-a");
    assert_eq!(account["kind"], "ServiceAccount");
}

#[test]
fn create_deployment_with_replicas_port_and_command() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&[
            "create",
            "deployment",
            "web",
            "--image=busybox:1.36",
            "--replicas=3",
            "--port=8080",
            "--",
            "sleep",
            "3600",
        ])
        .ok()
        .stdout_is("deployment.apps/web created\n");
    let stored = cluster.must_get("apps/v1", "deployments", Some("default"), "web");
    let spec = &stored["spec"];
    assert_eq!(spec["replicas"], 3, "{stored}");
    assert_eq!(spec["selector"], json!({"matchLabels": {"app": "web"}}));
    assert_eq!(
        spec["template"]["metadata"]["labels"],
        json!({"app": "web"})
    );
    assert_eq!(stored["metadata"]["labels"], json!({"app": "web"}));
    let container = &spec["template"]["spec"]["containers"][0];
    assert_eq!(container["name"], "busybox", "{stored}");
    assert_eq!(container["image"], "busybox:1.36");
    assert_eq!(container["command"], json!(["sleep", "3600"]));
    assert_eq!(container["ports"][0]["containerPort"], 8080, "{stored}");
}

#[test]
fn create_deployment_with_zero_replicas_keeps_zero() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&[
            "create",
            "deployment",
            "idle",
            "--image=nginx",
            "--replicas=0",
        ])
        .ok()
        .stdout_is("deployment.apps/idle created\n");
    let stored = cluster.must_get("apps/v1", "deployments", Some("default"), "idle");
    assert_eq!(stored["spec"]["replicas"], 0, "{stored}");
}

#[test]
fn create_role_and_rolebinding() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&[
            "create",
            "role",
            "reader",
            "--verb=get,list",
            "--resource=pods",
            "--resource-name=web-0",
        ])
        .ok()
        .stdout_is("role.rbac.authorization.k8s.io/reader created\n");
    let role = cluster.must_get(
        "rbac.authorization.k8s.io/v1",
        "roles",
        Some("default"),
        "reader",
    );
    assert_eq!(
        role["rules"],
        json!([{
            "verbs": ["get", "list"],
            "apiGroups": [""],
            "resources": ["pods"],
            "resourceNames": ["web-0"],
        }])
    );

    cluster
        .kubectl(&[
            "create",
            "rolebinding",
            "readers",
            "--role=reader",
            "--serviceaccount=default:builder",
        ])
        .ok()
        .stdout_is("rolebinding.rbac.authorization.k8s.io/readers created\n");
    let binding = cluster.must_get(
        "rbac.authorization.k8s.io/v1",
        "rolebindings",
        Some("default"),
        "readers",
    );
    assert_eq!(
        binding["roleRef"],
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"})
    );
    assert_eq!(
        binding["subjects"],
        json!([{"kind": "ServiceAccount", "name": "builder", "namespace": "default"}])
    );
}

#[test]
fn create_clusterrole_and_clusterrolebinding() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&[
            "create",
            "clusterrole",
            "node-reader",
            "--verb=get,watch",
            "--resource=nodes",
        ])
        .ok()
        .stdout_is("clusterrole.rbac.authorization.k8s.io/node-reader created\n");
    let role = cluster.must_get(
        "rbac.authorization.k8s.io/v1",
        "clusterroles",
        None,
        "node-reader",
    );
    assert_eq!(role["rules"][0]["verbs"], json!(["get", "watch"]), "{role}");
    assert_eq!(role["rules"][0]["resources"], json!(["nodes"]), "{role}");

    cluster
        .kubectl(&[
            "create",
            "clusterrolebinding",
            "node-readers",
            "--clusterrole=node-reader",
            "--user=alice",
            "--group=ops",
        ])
        .ok()
        .stdout_is("clusterrolebinding.rbac.authorization.k8s.io/node-readers created\n");
    let binding = cluster.must_get(
        "rbac.authorization.k8s.io/v1",
        "clusterrolebindings",
        None,
        "node-readers",
    );
    assert_eq!(
        binding["roleRef"],
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "node-reader"})
    );
    assert_eq!(
        binding["subjects"],
        json!([
            {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"},
            {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "ops"},
        ])
    );
}

#[test]
fn create_clusterip_service_with_target_port() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&["create", "service", "clusterip", "web", "--tcp=80:8080"])
        .ok()
        .stdout_is("service/web created\n");
    let stored = cluster.must_get("v1", "services", Some("default"), "web");
    let port = &stored["spec"]["ports"][0];
    assert_eq!(port["port"], 80, "{stored}");
    assert_eq!(port["targetPort"], 8080, "{stored}");
    assert_eq!(port["protocol"], "TCP", "{stored}");
    assert_eq!(
        stored["spec"]["selector"],
        json!({"app": "web"}),
        "{stored}"
    );
    assert_eq!(stored["spec"]["type"], "ClusterIP", "{stored}");
}

#[test]
fn created_object_reads_back_through_kubectl() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&["create", "configmap", "k", "--from-literal=a=1"])
        .ok();
    let read = cluster
        .kubectl(&["get", "configmap", "k", "-o", "json"])
        .ok()
        .json();
    assert_eq!(read["data"], json!({"a": "1"}));
    assert_eq!(read["metadata"]["name"], "k");
}

#[test]
fn a_kind_without_a_protobuf_table_fails_with_unsupported_media_type() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&["create", "quota", "q", "--hard=pods=2"])
        .fails()
        .stderr_has("no kind \"ResourceQuota\" is registered for version \"v1\"");
    assert!(cluster
        .object("v1", "resourcequotas", Some("default"), "q")
        .is_none());
}
