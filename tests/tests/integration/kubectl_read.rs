//! The real `kubectl` reading from the fake API server: discovery (`api-resources`,
//! `api-versions`, `version`), OpenAPI (`explain`), and `get` in every output format, with
//! selectors, errors and `-w`.

use crate::kubectl_support;

use std::time::Duration;

use fake_apiserver::resource::builtin_resources;
use kubectl_support::Cluster;
use serde_json::json;

fn configmap(name: &str, data: serde_json::Value) -> serde_json::Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "k"}},
        "data": data,
    })
}

#[test]
fn api_resources_lists_what_the_server_serves() {
    let cluster = Cluster::start();
    let run = cluster.kubectl(&["api-resources"]);
    run.ok();
    let rows = run.rows();
    assert_eq!(
        rows[0],
        ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    );
    let pods = rows.iter().find(|r| r[0] == "pods").expect("pods row");
    assert_eq!(pods[1..], ["po", "v1", "true", "Pod"]);
    let crds = rows
        .iter()
        .find(|r| r[0] == "customresourcedefinitions")
        .expect("crd row");
    assert_eq!(
        crds[1..],
        [
            "crd,crds",
            "apiextensions.k8s.io/v1",
            "false",
            "CustomResourceDefinition"
        ]
    );
    assert!(rows
        .iter()
        .any(|r| r[0] == "leases" && r[1] == "coordination.k8s.io/v1"));
    assert!(
        !rows.iter().any(|r| r[0].contains('/')),
        "subresources are not listed"
    );

    let apps = lines(
        builtin_resources()
            .iter()
            .filter(|r| r.group == "apps")
            .map(|r| format!("{}.apps", r.plural)),
    );
    assert!(apps.contains("deployments.apps\n"));
    cluster
        .kubectl(&["api-resources", "--api-group=apps", "-o", "name"])
        .ok()
        .stdout_is(&apps);
    let core_cluster_scoped = lines(
        builtin_resources()
            .iter()
            .filter(|r| r.group.is_empty() && !r.namespaced)
            .map(|r| r.plural.clone()),
    );
    assert!(core_cluster_scoped.contains("namespaces\nnodes\n"));
    cluster
        .kubectl(&[
            "api-resources",
            "--namespaced=false",
            "--api-group=",
            "-o",
            "name",
        ])
        .ok()
        .stdout_is(&core_cluster_scoped);
}

/// The items sorted, without duplicates, one per line.
fn lines(items: impl Iterator<Item = String>) -> String {
    let mut items: Vec<String> = items.collect();
    items.sort();
    items.dedup();
    items.iter().map(|i| format!("{i}\n")).collect()
}

#[test]
fn api_versions_and_server_version() {
    let cluster = Cluster::start();
    let run = cluster.kubectl(&["api-versions"]);
    run.ok();
    run.stdout_is(&lines(builtin_resources().iter().map(|r| r.api_version())));
    for expected in [
        "v1\n",
        "apps/v1\n",
        "coordination.k8s.io/v1\n",
        "apiextensions.k8s.io/v1\n",
    ] {
        assert!(run.stdout.contains(expected), "{run}");
    }
    let version = cluster.kubectl(&["version", "-o", "json"]);
    // kubectl exits 0 even when it warns about version skew.
    version.ok();
    let server = &version.json()["serverVersion"];
    assert_eq!(server["major"], "1");
    assert_eq!(server["minor"], "36");
    assert!(server["gitVersion"].as_str().unwrap().starts_with("v1.36."));
}

/// kube-rs, over TCP with the generated kubeconfig, discovers what kubectl discovers.
#[test]
fn kube_rs_discovery_agrees_with_kubectl() {
    use kube::config::{KubeConfigOptions, Kubeconfig};
    use kube::core::{discovery::Scope, GroupVersionKind};

    let cluster = Cluster::start();
    let kubeconfig =
        Kubeconfig::from_yaml(&fake_apiserver::kubeconfig::kubeconfig_yaml(&cluster.url))
            .expect("kubeconfig parses");
    let discovery = cluster.block_on(async {
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .expect("kube-rs accepts the kubeconfig");
        let client = kube::Client::try_from(config).expect("client");
        kube::Discovery::new(client).run().await.expect("discovery")
    });
    let mut versions: Vec<String> = discovery
        .groups()
        .flat_map(|group| {
            group.versions().map(move |version| {
                if group.name().is_empty() {
                    version.to_string()
                } else {
                    format!("{}/{version}", group.name())
                }
            })
        })
        .collect();
    versions.sort();
    let kubectl = cluster.kubectl(&["api-versions"]);
    kubectl.ok();
    assert_eq!(versions, kubectl.stdout.lines().collect::<Vec<_>>());

    let (resource, caps) = discovery
        .resolve_gvk(&GroupVersionKind::gvk("apps", "v1", "Deployment"))
        .expect("deployments are discovered");
    assert_eq!(resource.plural, "deployments");
    assert_eq!(caps.scope, Scope::Namespaced);
    assert_eq!(
        caps.subresources
            .iter()
            .map(|(sub, _)| sub.plural.as_str())
            .collect::<Vec<_>>(),
        ["scale", "status"], // as a real server lists them
    );
    let (nodes, caps) = discovery
        .resolve_gvk(&GroupVersionKind::gvk("", "v1", "Node"))
        .expect("nodes are discovered");
    assert_eq!(nodes.plural, "nodes");
    assert_eq!(caps.scope, Scope::Cluster);
}

#[test]
fn explain_reads_the_openapi_schemas() {
    let cluster = Cluster::start();
    let run = cluster.kubectl(&["explain", "pods.spec.containers.image"]);
    run.ok();
    assert!(run.stdout.contains("KIND:       Pod"), "{run}");
    assert!(run.stdout.contains("VERSION:    v1"), "{run}");
    assert!(run.stdout.contains("FIELD: image <string>"), "{run}");
    let run = cluster.kubectl(&["explain", "deployment.spec.replicas"]);
    run.ok();
    assert!(run.stdout.contains("GROUP:      apps"), "{run}");
    assert!(run.stdout.contains("FIELD: replicas <integer>"), "{run}");
    cluster
        .kubectl(&["explain", "configmap.nosuchfield"])
        .fails()
        .stderr_has("field \"nosuchfield\" does not exist");
}

/// `--output=plaintext-openapiv2` reads `/openapi/v2`, which client-go fetches as protobuf.
#[test]
fn explain_from_openapi_v2() {
    let cluster = Cluster::start();
    let run = cluster.kubectl(&[
        "explain",
        "pods.spec.containers.image",
        "--output=plaintext-openapiv2",
    ]);
    run.ok();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[..4],
        [
            "KIND:     Pod",
            "VERSION:  v1",
            "",
            "FIELD:    image <string>"
        ],
        "{run}"
    );
    let run = cluster.kubectl(&["explain", "deployment.spec", "--output=plaintext-openapiv2"]);
    run.ok();
    assert!(run.stdout.contains("VERSION:  apps/v1"), "{run}");
    assert!(run.stdout.contains("replicas\t<integer>"), "{run}");
}

#[test]
fn get_in_every_output_format() {
    let cluster = Cluster::start();
    let file = cluster.write_json("k1.json", &configmap("k1", json!({"a": "1", "b": "2"})));
    cluster
        .kubectl(&["create", "-f", &file])
        .ok()
        .stdout_is("configmap/k1 created\n");
    cluster
        .kubectl(&["create", "-f", &file])
        .fails()
        .stderr_has("Error from server (AlreadyExists)")
        .stderr_has("configmaps \"k1\" already exists");
    let mut k2 = configmap("k2", json!({"x": "y"}));
    k2["metadata"]["labels"] = json!({"app": "other"});
    cluster
        .kubectl(&["create", "-f", &cluster.write_json("k2.json", &k2)])
        .ok()
        .stdout_is("configmap/k2 created\n");

    let object = cluster.kubectl(&["get", "configmap", "k1", "-o", "json"]);
    object.ok();
    let object = object.json();
    assert_eq!(object["kind"], "ConfigMap");
    assert_eq!(object["apiVersion"], "v1");
    assert_eq!(object["data"], json!({"a": "1", "b": "2"}));
    assert_eq!(
        object["metadata"]["resourceVersion"],
        cluster.must_get("v1", "configmaps", Some("default"), "k1")["metadata"]["resourceVersion"]
    );

    let yaml = cluster.kubectl(&["get", "cm", "k1", "-o", "yaml"]);
    yaml.ok();
    for line in [
        "apiVersion: v1",
        "kind: ConfigMap",
        "  name: k1",
        "  a: \"1\"",
    ] {
        assert!(
            yaml.stdout.lines().any(|l| l == line),
            "no {line:?}: {yaml}"
        );
    }

    // The namespace also holds the root CA publisher's ConfigMap, as on a cluster.
    cluster
        .kubectl(&["get", "cm", "-o", "name"])
        .ok()
        .stdout_is("configmap/k1\nconfigmap/k2\nconfigmap/kube-root-ca.crt\n");
    cluster
        .kubectl(&["get", "cm", "k1", "-o", "jsonpath={.data.b}"])
        .ok()
        .stdout_is("2");
    cluster
        .kubectl(&[
            "get",
            "cm",
            "-o",
            "custom-columns=N:.metadata.name,A:.data.a",
        ])
        .ok()
        .stdout_is(
            "N                  A\nk1                 1\nk2                 <none>\nkube-root-ca.crt   <none>\n",
        );
    cluster
        .kubectl(&["get", "cm", "-l", "app=k", "-o", "name"])
        .ok()
        .stdout_is("configmap/k1\n");
    cluster
        .kubectl(&[
            "get",
            "cm",
            "--field-selector",
            "metadata.name=k2",
            "-o",
            "name",
        ])
        .ok()
        .stdout_is("configmap/k2\n");

    // The default table comes from the server (Accept: as=Table).
    let table = cluster.kubectl(&["get", "cm"]);
    table.ok();
    let rows = table.rows();
    assert_eq!(rows[0], ["NAME", "DATA", "AGE"], "{table}");
    assert_eq!(rows[1][..2], ["k1", "2"], "{table}");
    assert_eq!(rows[2][..2], ["k2", "1"], "{table}");
    assert_eq!(rows[3][..2], ["kube-root-ca.crt", "1"], "{table}");

    cluster
        .kubectl(&["get", "cm", "nope"])
        .fails()
        .stderr_has("Error from server (NotFound): configmaps \"nope\" not found");
    cluster
        .kubectl(&["get", "nosuchthings"])
        .fails()
        .stderr_has("the server doesn't have a resource type \"nosuchthings\"");
}

/// `kubectl create configmap` (like every imperative `create` generator) posts the object encoded
/// as protobuf (`Content-Type: application/vnd.kubernetes.protobuf`), not JSON.
#[test]
fn imperative_create_posts_protobuf() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&["create", "configmap", "k2", "--from-literal=x=y"])
        .ok()
        .stdout_is("configmap/k2 created\n");
    assert_eq!(
        cluster.must_get("v1", "configmaps", Some("default"), "k2")["data"],
        json!({"x": "y"})
    );
    cluster
        .kubectl(&["create", "namespace", "team"])
        .ok()
        .stdout_is("namespace/team created\n");
    assert!(cluster.object("v1", "namespaces", None, "team").is_some());
}

#[test]
fn get_pods_wide_shows_the_pod_columns() {
    let cluster = Cluster::start();
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    });
    cluster
        .kubectl(&["create", "-f", &cluster.write_json("p.json", &pod)])
        .ok()
        .stdout_is("pod/p created\n");
    let table = cluster.kubectl(&["get", "pods"]);
    table.ok();
    let rows = table.rows();
    assert_eq!(
        rows[0],
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        "{table}"
    );
    assert_eq!(rows[1][..4], ["p", "0/1", "Pending", "0"], "{table}");
    let wide = cluster.kubectl(&["get", "pods", "-o", "wide"]);
    wide.ok();
    assert_eq!(
        wide.rows()[0],
        [
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "IP",
            "NODE",
            "NOMINATED",
            "NODE",
            "READINESS",
            "GATES"
        ],
        "{wide}"
    );
}

#[test]
fn get_watch_sees_a_change() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&[
            "create",
            "-f",
            &cluster.write_json("w.json", &configmap("w", json!({"a": "1"}))),
        ])
        .ok();
    let mut watch = cluster.kubectl_background(&[
        "get",
        "cm",
        "w",
        "-w",
        "-o",
        "jsonpath={.metadata.name}={.data.a}{\"\\n\"}",
    ]);
    watch.expect_line(|l| l == "w=1", Duration::from_secs(20));
    cluster
        .kubectl(&[
            "patch",
            "cm",
            "w",
            "--type",
            "merge",
            "-p",
            r#"{"data":{"a":"2"}}"#,
        ])
        .ok();
    watch.expect_line(|l| l == "w=2", Duration::from_secs(20));
    assert!(!watch.has_exited(), "a watch keeps running");
}

/// `kubectl get` and `kubectl get -o wide` print the server's Table, with the columns (and the
/// wide ones) `printers.go` gives a Job, a Service and a Deployment.
#[test]
fn get_wide_shows_the_printer_columns_of_jobs_services_and_deployments() {
    let cluster = Cluster::start();
    let template = json!({
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx"}]},
    });
    let job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "pi", "image": "busybox"}]}}},
    });
    let service = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    });
    let deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}}, "template": template},
    });
    for (file, object) in [
        ("job.json", &job),
        ("svc.json", &service),
        ("deploy.json", &deployment),
    ] {
        cluster
            .kubectl(&["create", "-f", &cluster.write_json(file, object)])
            .ok();
    }

    // (kind, its headers, the wide headers `-o wide` adds after them).
    let cases: [(&str, &[&str], &[&str]); 3] = [
        (
            "jobs",
            &["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"],
            &["CONTAINERS", "IMAGES", "SELECTOR"],
        ),
        (
            "services",
            &[
                "NAME",
                "TYPE",
                "CLUSTER-IP",
                "EXTERNAL-IP",
                "PORT(S)",
                "AGE",
            ],
            &["SELECTOR"],
        ),
        (
            "deployments",
            &["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
            &["CONTAINERS", "IMAGES", "SELECTOR"],
        ),
    ];
    for (kind, headers, wide_headers) in cases {
        let table = cluster.kubectl(&["get", kind]);
        table.ok();
        assert_eq!(table.rows()[0], headers, "{table}");
        let wide = cluster.kubectl(&["get", kind, "-o", "wide"]);
        wide.ok();
        let all: Vec<&str> = headers.iter().chain(wide_headers).copied().collect();
        assert_eq!(wide.rows()[0], all, "{wide}");
    }

    let row = |kind: &str, name: &str| -> Vec<String> {
        let wide = cluster.kubectl(&["get", kind, name, "-o", "wide"]);
        wide.ok();
        wide.rows().remove(1)
    };
    let job = row("jobs", "pi");
    assert_eq!(job[0], "pi");
    assert_eq!(job[2], "0/1", "{job:?}");
    assert_eq!(job[job.len() - 3..job.len() - 1], ["pi", "busybox"]);
    assert!(
        job[job.len() - 1].starts_with("batch.kubernetes.io/controller-uid="),
        "{job:?}"
    );
    let service = row("services", "web");
    assert_eq!(service[1], "ClusterIP", "{service:?}");
    assert_eq!(service[3..5], ["<none>", "80/TCP"], "{service:?}");
    assert_eq!(service[6], "app=web", "{service:?}");
    let deployment = row("deployments", "web");
    assert_eq!(deployment[1], "0/0", "{deployment:?}");
    assert_eq!(
        deployment[5..],
        ["web", "nginx", "app=web"],
        "{deployment:?}"
    );
}

/// What `kubectl get -o json` shows is what Go's encoder writes for the versioned struct: a
/// struct-valued field always (a new Deployment's `status: {}`, a Node's zeroed `nodeInfo`, a pod
/// condition's `lastProbeTime: null`), a field without `omitempty` always (`rules: null`), and
/// an empty `omitempty` field never (`data: {}`, `hostNetwork: false`).
#[test]
fn objects_read_back_as_the_real_server_encodes_them() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&["create", "deployment", "web", "--image=nginx"])
        .ok();
    let deployment = cluster
        .kubectl(&["get", "deployment", "web", "-o", "json"])
        .ok()
        .json();
    assert_eq!(deployment["status"], json!({}));

    let file = cluster.write_json(
        "objects.json",
        &json!({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "aggregated"},
             "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}, "data": {}},
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
             "spec": {"hostNetwork": false, "containers": [{"name": "c", "image": "nginx", "args": []}]}},
        ]}),
    );
    cluster.kubectl(&["create", "-f", &file]).ok();
    let node = cluster
        .kubectl(&["get", "node", "n1", "-o", "json"])
        .ok()
        .json();
    assert_eq!(
        node["status"]["daemonEndpoints"],
        json!({"kubeletEndpoint": {"Port": 0}})
    );
    assert_eq!(node["status"]["nodeInfo"]["kubeletVersion"], "");
    let aggregated = cluster
        .kubectl(&["get", "clusterrole", "aggregated", "-o", "json"])
        .ok()
        .json();
    assert_eq!(aggregated["rules"], json!(null));
    assert!(aggregated.as_object().unwrap().contains_key("rules"));
    let config_map = cluster
        .kubectl(&["get", "configmap", "c", "-o", "json"])
        .ok()
        .json();
    assert!(config_map.get("data").is_none(), "{config_map}");
    let pod = cluster
        .kubectl(&["get", "pod", "p", "-o", "json"])
        .ok()
        .json();
    assert!(pod["spec"].get("hostNetwork").is_none());
    assert!(pod["spec"]["containers"][0].get("args").is_none());

    // A status written without condition times reads back with them as `null`.
    let status = cluster.write_json(
        "status.json",
        &json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
    );
    cluster
        .kubectl(&[
            "patch",
            "pod",
            "p",
            "--subresource=status",
            "--type=merge",
            "--patch-file",
            &status,
        ])
        .ok();
    let pod = cluster
        .kubectl(&["get", "pod", "p", "-o", "json"])
        .ok()
        .json();
    let ready = &pod["status"]["conditions"][0];
    assert_eq!(ready["type"], "Ready");
    assert!(ready.as_object().unwrap().contains_key("lastProbeTime"));
    assert_eq!(ready["lastProbeTime"], json!(null));
}

/// `componentstatuses` are served as a real server serves them (read-only, computed on each
/// request), and deprecated built-ins carry the real server's deprecation warning, which
/// kubectl prints: `v1 ComponentStatus` (deprecated since 1.19) and `v1 Endpoints` (since
/// 1.33, replaced by EndpointSlices).
#[test]
fn component_statuses_and_the_warnings_of_deprecated_resources() {
    let cluster = Cluster::start();
    let run = cluster.kubectl(&["get", "componentstatuses"]);
    run.ok()
        .stderr_has("Warning: v1 ComponentStatus is deprecated in v1.19+");
    let unreachable = "Get \"https://127.0.0.1:10259/healthz\": dial tcp 127.0.0.1:10259: connect: connection refused";
    let mut scheduler = vec!["scheduler", "Unhealthy"];
    scheduler.extend(unreachable.split_whitespace());
    assert_eq!(
        run.rows(),
        [
            vec!["NAME", "STATUS", "MESSAGE", "ERROR"],
            vec!["controller-manager", "Healthy", "ok"],
            vec!["etcd-0", "Healthy", "ok"],
            scheduler,
        ]
    );
    // By short name, one at a time, and an unknown component as the real storage's plain error.
    let etcd = cluster
        .kubectl(&["get", "cs", "etcd-0", "-o", "json"])
        .ok()
        .json();
    assert_eq!(
        etcd,
        json!({"kind": "ComponentStatus", "apiVersion": "v1", "metadata": {"name": "etcd-0"},
               "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]})
    );
    cluster
        .kubectl(&["get", "cs", "kubelet"])
        .fails()
        .stderr_has("Component not found: kubelet");
    // Read-only: neither deleted nor watched.
    cluster
        .kubectl(&["delete", "cs", "etcd-0"])
        .fails()
        .stderr_has("the server does not allow this method on the requested resource");
    let names = cluster
        .kubectl(&[
            "api-resources",
            "--namespaced=false",
            "--api-group=",
            "-o",
            "name",
        ])
        .ok()
        .stdout
        .clone();
    assert!(names.lines().any(|l| l == "componentstatuses"), "{names}");

    // Endpoints warn on every request; EndpointSlices do not.
    cluster.kubectl(&["get", "endpoints"]).ok().stderr_has(
        "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice",
    );
    let slices = cluster.kubectl(&["get", "endpointslices"]);
    assert!(!slices.ok().stderr.contains("deprecated"), "{slices}");
}

/// `kubectl get --sort-by` on a field outside the metadata asks the Table's rows to carry the
/// whole object (`includeObject=Object`): sorted as asked, not an empty answer.
#[test]
fn get_sorts_by_fields_outside_the_metadata() {
    let cluster = Cluster::start();
    for (name, order) in [("b", "2"), ("a", "3"), ("c", "1")] {
        let file = cluster.write_json(
            &format!("{name}.json"),
            &configmap(name, json!({"order": order})),
        );
        cluster.kubectl(&["create", "-f", &file]).ok();
    }
    let rows = cluster
        .kubectl(&["get", "cm", "-l", "app=k", "--sort-by=.data.order"])
        .ok()
        .rows();
    let names: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["c", "b", "a"]);
    cluster
        .kubectl(&[
            "get",
            "--raw",
            "/api/v1/namespaces/default/configmaps?includeObject=Everything",
        ])
        .ok();
}
