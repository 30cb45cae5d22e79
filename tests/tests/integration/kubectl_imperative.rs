//! The real `kubectl create <generator>` against the fake API server. These generators send the
//! object as Kubernetes protobuf (`application/vnd.kubernetes.protobuf`), so each case checks
//! kubectl's message and the object the server stored from the decoded body.

use crate::kubectl_support;

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
fn create_job_and_cronjob() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&["create", "job", "once", "--image=busybox", "--", "date"])
        .ok()
        .stdout_is("job.batch/once created\n");
    let job = cluster.must_get("batch/v1", "jobs", Some("default"), "once");
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never", "{job}");
    assert_eq!(pod["containers"][0]["image"], "busybox", "{job}");
    assert_eq!(pod["containers"][0]["command"], json!(["date"]), "{job}");

    cluster
        .kubectl(&[
            "create",
            "cronjob",
            "nightly",
            "--image=busybox",
            "--schedule=0 3 * * *",
            "--restart=OnFailure",
        ])
        .ok()
        .stdout_is("cronjob.batch/nightly created\n");
    let cron = cluster.must_get("batch/v1", "cronjobs", Some("default"), "nightly");
    assert_eq!(cron["spec"]["schedule"], "0 3 * * *", "{cron}");
    assert_eq!(
        cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"], "OnFailure",
        "{cron}"
    );
}

#[test]
fn create_pdb_priorityclass_quota_and_ingress() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&[
            "create",
            "poddisruptionbudget",
            "web",
            "--selector=app=web",
            "--min-available=50%",
        ])
        .ok()
        .stdout_is("poddisruptionbudget.policy/web created\n");
    let pdb = cluster.must_get("policy/v1", "poddisruptionbudgets", Some("default"), "web");
    assert_eq!(pdb["spec"]["minAvailable"], "50%", "{pdb}");
    assert_eq!(
        pdb["spec"]["selector"],
        json!({"matchLabels": {"app": "web"}})
    );

    cluster
        .kubectl(&[
            "create",
            "priorityclass",
            "low",
            "--value=0",
            "--description=batch work",
        ])
        .ok()
        .stdout_is("priorityclass.scheduling.k8s.io/low created\n");
    let class = cluster.must_get("scheduling.k8s.io/v1", "priorityclasses", None, "low");
    assert_eq!(class["value"], 0, "{class}");
    assert_eq!(class["description"], "batch work", "{class}");

    cluster
        .kubectl(&["create", "quota", "q", "--hard=pods=2,requests.cpu=1500m"])
        .ok()
        .stdout_is("resourcequota/q created\n");
    let quota = cluster.must_get("v1", "resourcequotas", Some("default"), "q");
    assert_eq!(
        quota["spec"]["hard"],
        json!({"pods": "2", "requests.cpu": "1500m"}),
        "{quota}"
    );

    cluster
        .kubectl(&[
            "create",
            "ingress",
            "web",
            "--class=nginx",
            "--rule=a.example.com/=svc:80",
        ])
        .ok()
        .stdout_is("ingress.networking.k8s.io/web created\n");
    let ingress = cluster.must_get("networking.k8s.io/v1", "ingresses", Some("default"), "web");
    assert_eq!(ingress["spec"]["ingressClassName"], "nginx", "{ingress}");
    let rule = &ingress["spec"]["rules"][0];
    assert_eq!(rule["host"], "a.example.com", "{ingress}");
    assert_eq!(
        rule["http"]["paths"][0]["backend"],
        json!({"service": {"name": "svc", "port": {"number": 80}}}),
        "{ingress}"
    );
}

#[test]
fn create_docker_registry_secret_and_other_service_types() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&[
            "create",
            "secret",
            "docker-registry",
            "reg",
            "--docker-server=r.example.com",
            "--docker-username=u",
            "--docker-password=p",
        ])
        .ok()
        .stdout_is("secret/reg created\n");
    let secret = cluster.must_get("v1", "secrets", Some("default"), "reg");
    assert_eq!(secret["type"], "kubernetes.io/dockerconfigjson");
    assert!(secret["data"][".dockerconfigjson"].is_string(), "{secret}");

    cluster
        .kubectl(&[
            "create",
            "service",
            "nodeport",
            "np",
            "--tcp=80:8080",
            "--node-port=30080",
        ])
        .ok()
        .stdout_is("service/np created\n");
    let nodeport = cluster.must_get("v1", "services", Some("default"), "np");
    assert_eq!(nodeport["spec"]["type"], "NodePort", "{nodeport}");
    assert_eq!(
        nodeport["spec"]["ports"][0]["nodePort"], 30080,
        "{nodeport}"
    );

    cluster
        .kubectl(&[
            "create",
            "service",
            "externalname",
            "ext",
            "--external-name=db.example.com",
        ])
        .ok()
        .stdout_is("service/ext created\n");
    let external = cluster.must_get("v1", "services", Some("default"), "ext");
    assert_eq!(external["spec"]["type"], "ExternalName", "{external}");
    assert_eq!(
        external["spec"]["externalName"], "db.example.com",
        "{external}"
    );
}

/// A protobuf body for a kind the decoder has no table for is refused with 415 and a message
/// naming the kind (sent by hand: every `kubectl create` generator is covered).
#[test]
fn a_kind_without_a_protobuf_table_is_unsupported_media_type() {
    use std::io::{Read, Write};

    let cluster = Cluster::start();
    let type_meta = [
        &[0x0a, 17][..],
        b"storage.k8s.io/v1",
        &[0x12, 12],
        b"StorageClass",
    ]
    .concat();
    let mut body = b"k8s\x00".to_vec();
    body.extend([0x0a, type_meta.len() as u8]);
    body.extend(&type_meta);
    body.extend([0x12, 0x00]);

    let address = cluster.url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).expect("connect");
    write!(
        stream,
        "POST /apis/storage.k8s.io/v1/storageclasses HTTP/1.1\r\nHost: {address}\r\n\
         Content-Type: application/vnd.kubernetes.protobuf\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )
    .expect("write head");
    stream.write_all(&body).expect("write body");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read response");

    assert!(response.starts_with("HTTP/1.1 415"), "{response}");
    assert!(
        response.contains("\"reason\":\"UnsupportedMediaType\""),
        "{response}"
    );
    assert!(
        response.contains(
            r#"no kind \"StorageClass\" is registered for version \"storage.k8s.io/v1\""#
        ),
        "{response}"
    );
}

/// Every field kubectl would put in the JSON form of the object (`--dry-run=client -o json`)
/// arrives in the stored object with the same value: the protobuf body decodes to what the JSON
/// body would have said. `null`s (the zero `creationTimestamp`) and the top-level `status` (which
/// a create ignores) are left out of the comparison.
#[rstest::rstest]
#[case(&["configmap", "k", "--from-literal=a=1", "--from-literal=b="], "v1", "configmaps", true, "k")]
#[case(&["secret", "generic", "s", "--from-literal=p=hunter2", "--type=example.com/x"], "v1", "secrets", true, "s")]
#[case(&["namespace", "team-a"], "v1", "namespaces", false, "team-a")]
#[case(&["serviceaccount", "builder"], "v1", "serviceaccounts", true, "builder")]
#[case(&["deployment", "web", "--image=nginx:1.27", "--image=busybox", "--replicas=2", "--port=80"], "apps/v1", "deployments", true, "web")]
#[case(&["job", "once", "--image=busybox", "--", "sh", "-c", "date"], "batch/v1", "jobs", true, "once")]
#[case(&["cronjob", "nightly", "--image=busybox", "--schedule=0 3 * * *"], "batch/v1", "cronjobs", true, "nightly")]
#[case(&["role", "r", "--verb=get", "--verb=list", "--resource=pods,deployments.apps"], "rbac.authorization.k8s.io/v1", "roles", true, "r")]
#[case(&["clusterrole", "agg", "--aggregation-rule=rbac.example.com/agg=true"], "rbac.authorization.k8s.io/v1", "clusterroles", false, "agg")]
#[case(&["rolebinding", "rb", "--clusterrole=view", "--user=alice", "--serviceaccount=default:builder"], "rbac.authorization.k8s.io/v1", "rolebindings", true, "rb")]
#[case(&["clusterrolebinding", "crb", "--clusterrole=view", "--group=ops"], "rbac.authorization.k8s.io/v1", "clusterrolebindings", false, "crb")]
#[case(&["service", "clusterip", "web", "--tcp=80:8080", "--tcp=443:https"], "v1", "services", true, "web")]
#[case(&["service", "nodeport", "np", "--tcp=80:8080"], "v1", "services", true, "np")]
#[case(&["service", "loadbalancer", "lb", "--tcp=80"], "v1", "services", true, "lb")]
#[case(&["service", "externalname", "ext", "--external-name=db.example.com"], "v1", "services", true, "ext")]
#[case(&["poddisruptionbudget", "pdb", "--selector=app=web", "--max-unavailable=1"], "policy/v1", "poddisruptionbudgets", true, "pdb")]
#[case(&["priorityclass", "high", "--value=1000", "--global-default=false", "--preemption-policy=Never"], "scheduling.k8s.io/v1", "priorityclasses", false, "high")]
#[case(&["quota", "q", "--hard=pods=2,services=1", "--scopes=NotBestEffort"], "v1", "resourcequotas", true, "q")]
#[case(&["ingress", "ing", "--rule=a.example.com/api*=svc:http,tls=cert", "--default-backend=def:80"], "networking.k8s.io/v1", "ingresses", true, "ing")]
fn stored_object_holds_everything_the_json_form_says(
    #[case] generator: &[&str],
    #[case] api_version: &str,
    #[case] plural: &str,
    #[case] namespaced: bool,
    #[case] name: &str,
) {
    let cluster = Cluster::start();
    let args: Vec<&str> = std::iter::once("create")
        .chain(generator.iter().copied())
        .collect();
    // Flags go before a `--` that starts a container command.
    let command_at = args.iter().position(|a| *a == "--").unwrap_or(args.len());
    let mut dry_run = args.clone();
    dry_run.splice(command_at..command_at, ["--dry-run=client", "-o", "json"]);
    let json_form = cluster.kubectl(&dry_run).ok().json();
    cluster.kubectl(&args).ok();
    let namespace = namespaced.then_some("default");
    let stored = cluster.must_get(api_version, plural, namespace, name);
    let mut expected = json_form.clone();
    if let Some(object) = expected.as_object_mut() {
        object.remove("status");
    }
    assert_holds(&stored, &expected, "");
}

/// Asserts that `actual` has every non-null value of `expected`, recursively.
#[track_caller]
fn assert_holds(actual: &serde_json::Value, expected: &serde_json::Value, path: &str) {
    use serde_json::Value;
    match expected {
        Value::Null => {}
        Value::Object(fields) => {
            for (key, value) in fields {
                if value.is_null() {
                    continue;
                }
                let inner = actual.get(key).unwrap_or_else(|| {
                    panic!("{path}/{key} missing; expected {value}; stored {actual}")
                });
                assert_holds(inner, value, &format!("{path}/{key}"));
            }
        }
        Value::Array(items) => {
            let actual_items = actual
                .as_array()
                .unwrap_or_else(|| panic!("{path} is {actual}, expected an array"));
            assert_eq!(
                actual_items.len(),
                items.len(),
                "{path}: {actual} vs {expected}"
            );
            for (index, (a, e)) in actual_items.iter().zip(items).enumerate() {
                assert_holds(a, e, &format!("{path}/{index}"));
            }
        }
        scalar => assert_eq!(actual, scalar, "at {path}"),
    }
}
