//! The real `kubectl` against the fake API server's per-kind validation (`fake-apiserver/src/rules`):
//! what a user sees when a real API server refuses a Job, a Deployment selector change, a bare
//! finalizer, an incomplete TLS Secret or a changed node provider ID, and that valid writes of the
//! same kinds still go through (a Job gets its generated selector); pod specs (resources, volume
//! mounts), Services (node ports, a fixed cluster IP), PodDisruptionBudgets, PriorityClasses and the
//! namespaces that may not be deleted.

use crate::kubectl_support;

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
        "The Job \"bad\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"",
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

#[test]
fn pod_specs_are_checked_as_a_real_server_checks_them() {
    let cluster = Cluster::start();
    let pod = |container: serde_json::Value| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [container]}})
    };
    let over = pod(json!({"name": "c", "image": "busybox",
        "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}));
    let file = cluster.write_json("over.json", &over);
    cluster.kubectl(&["apply", "-f", &file]).fails().stderr_has(
        "The Pod \"p\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1",
    );
    let mount = pod(json!({"name": "c", "image": "busybox",
        "volumeMounts": [{"name": "data", "mountPath": "/data"}]}));
    let file = cluster.write_json("mount.json", &mount);
    cluster.kubectl(&["apply", "-f", &file]).fails().stderr_has(
        "The Pod \"p\" is invalid: spec.containers[0].volumeMounts[0].name: Not found: \"data\"",
    );
    let quantity = pod(json!({"name": "c", "image": "busybox",
        "resources": {"limits": {"memory": "lots"}}}));
    let file = cluster.write_json("quantity.json", &quantity);
    cluster
        .kubectl(&["apply", "-f", &file])
        .fails()
        .stderr_has("quantities must match the regular expression");
    assert!(cluster.object("v1", "pods", Some("default"), "p").is_none());
    let fine = pod(json!({"name": "c", "image": "busybox",
        "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}}));
    let file = cluster.write_json("fine.json", &fine);
    cluster.kubectl(&["apply", "-f", &file]).ok();
}

#[test]
fn services_get_a_cluster_ip_that_stays_and_node_ports_in_range() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&["create", "service", "clusterip", "web", "--tcp=80:8080"])
        .ok();
    let svc = cluster.must_get("v1", "services", Some("default"), "web");
    let ip = svc["spec"]["clusterIP"].as_str().unwrap().to_string();
    assert!(ip.starts_with("10.9"), "{ip}");
    assert_eq!(svc["spec"]["clusterIPs"], json!([ip]));
    cluster
        .kubectl(&[
            "patch",
            "service",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"clusterIP":"10.96.7.7"}}"#,
        ])
        .fails()
        .stderr_has(
            "spec.clusterIPs[0]: Invalid value: []string{\"10.96.7.7\"}: may not change once set",
        );

    let node_port = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "np", "namespace": "default"},
        "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]}});
    let file = cluster.write_json("np.json", &node_port);
    cluster.kubectl(&["apply", "-f", &file]).fails().stderr_has(
        "spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767",
    );
}

#[test]
fn budgets_priority_classes_and_immortal_namespaces() {
    let cluster = Cluster::start();
    let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "b", "namespace": "default"},
        "spec": {"minAvailable": 1, "maxUnavailable": 1, "selector": {"matchLabels": {"app": "a"}}}});
    let file = cluster.write_json("pdb.json", &pdb);
    cluster
        .kubectl(&["apply", "-f", &file])
        .fails()
        .stderr_has("minAvailable and maxUnavailable cannot be both set");
    let pc = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "huge"}, "value": 2_000_000_000});
    let file = cluster.write_json("pc.json", &pc);
    cluster.kubectl(&["apply", "-f", &file]).fails().stderr_has(
        "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
    );
    cluster
        .kubectl(&["delete", "namespace", "default"])
        .fails()
        .stderr_has("namespaces \"default\" is forbidden: this namespace may not be deleted");
}

/// The Priority admission plugin, as every real server runs it: the system classes exist from
/// the start, a pod's priority and preemption policy come from its class (or the global
/// default), an unknown class or a priority set by hand is refused, only one class may be the
/// global default, and an update that leaves the priority out keeps it.
#[test]
fn pods_get_their_priority_from_their_priority_class() {
    let cluster = Cluster::start();
    let classes = cluster.kubectl(&["get", "priorityclasses", "-o", "name"]);
    assert_eq!(
        classes.ok().stdout,
        "priorityclass.scheduling.k8s.io/system-cluster-critical\npriorityclass.scheduling.k8s.io/system-node-critical\n"
    );
    let pod = |name: &str, spec: serde_json::Value| {
        let mut spec = spec;
        spec["containers"] = json!([{"name": "c", "image": "nginx"}]);
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec})
    };
    let create = |name: &str, spec: serde_json::Value| {
        let file = cluster.write_json(&format!("{name}.json"), &pod(name, spec));
        cluster.kubectl(&["create", "-f", &file])
    };
    let priority = |name: &str| {
        cluster
            .kubectl(&[
                "get",
                "pod",
                name,
                "-o",
                "jsonpath={.spec.priority} {.spec.preemptionPolicy} {.spec.priorityClassName}",
            ])
            .ok()
            .stdout
            .clone()
    };
    create("plain", json!({})).ok();
    assert_eq!(priority("plain"), "0 PreemptLowerPriority ");
    create(
        "critical",
        json!({"priorityClassName": "system-node-critical"}),
    )
    .ok();
    assert_eq!(
        priority("critical"),
        "2000001000 PreemptLowerPriority system-node-critical"
    );
    create("unknown", json!({"priorityClassName": "gold"}))
        .fails()
        .stderr_has("pods \"unknown\" is forbidden: no PriorityClass with name gold was found");
    create("by-hand", json!({"priority": 7}))
        .fails()
        .stderr_has("pods \"by-hand\" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name");

    // A global default applies to pods naming no class, with its preemption policy.
    cluster
        .kubectl(&[
            "create",
            "priorityclass",
            "batch",
            "--value=100",
            "--global-default",
            "--preemption-policy=Never",
        ])
        .ok();
    cluster
        .kubectl(&["create", "priorityclass", "other", "--value=50", "--global-default"])
        .fails()
        .stderr_has("priorityclasses.scheduling.k8s.io \"other\" is forbidden: PriorityClass batch is already marked as default. Only one default can exist");
    // A patch that would make a second default is checked on the patched object; the default
    // itself may be patched.
    cluster
        .kubectl(&["create", "priorityclass", "other", "--value=50"])
        .ok();
    cluster
        .kubectl(&["patch", "priorityclass", "other", "-p", r#"{"globalDefault": true}"#])
        .fails()
        .stderr_has("priorityclasses.scheduling.k8s.io \"other\" is forbidden: PriorityClass batch is already marked as default. Only one default can exist");
    cluster
        .kubectl(&[
            "patch",
            "priorityclass",
            "batch",
            "-p",
            r#"{"description": "batch jobs"}"#,
        ])
        .ok();
    create("defaulted", json!({})).ok();
    assert_eq!(priority("defaulted"), "100 Never batch");
    create("says-otherwise", json!({"preemptionPolicy": "PreemptLowerPriority"}))
        .fails()
        .stderr_has("the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name");

    // A replace built without the priority fields keeps them.
    let mut stored = cluster
        .kubectl(&["get", "pod", "defaulted", "-o", "json"])
        .ok()
        .json();
    let spec = stored["spec"].as_object_mut().unwrap();
    spec.remove("priority");
    spec.remove("preemptionPolicy");
    stored["metadata"]["labels"] = json!({"replaced": "yes"});
    let file = cluster.write_json("replace.json", &stored);
    cluster.kubectl(&["replace", "-f", &file]).ok();
    assert_eq!(priority("defaulted"), "100 Never batch");
}

/// RuntimeClasses are served (`node.k8s.io/v1`, with their table and rules) and the
/// RuntimeClass admission plugin applies them to new pods: the class's overhead and scheduling
/// constraints land in the pod, a missing class, a conflicting node selector or an overhead
/// without a class is refused.
#[test]
fn pods_take_overhead_and_scheduling_from_their_runtime_class() {
    let cluster = Cluster::start();
    let class = json!({
        "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
        "metadata": {"name": "kata"}, "handler": "kata",
        "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        "scheduling": {"nodeSelector": {"sandbox": "kata"},
                        "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]},
    });
    let file = cluster.write_json("kata.json", &class);
    cluster.kubectl(&["create", "-f", &file]).ok();
    let rows = cluster.kubectl(&["get", "runtimeclasses"]).ok().rows();
    assert_eq!(rows[0][..2], ["NAME", "HANDLER"]);
    assert_eq!(rows[1][..2], ["kata", "kata"]);
    cluster
        .kubectl(&[
            "patch",
            "runtimeclass",
            "kata",
            "-p",
            r#"{"handler": "runc"}"#,
        ])
        .fails()
        .stderr_has("handler: Invalid value: \"runc\": field is immutable");

    let create = |name: &str, spec: serde_json::Value| {
        let mut spec = spec;
        spec["containers"] = json!([{"name": "c", "image": "nginx"}]);
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec});
        let file = cluster.write_json(&format!("{name}.json"), &pod);
        cluster.kubectl(&["create", "-f", &file])
    };
    create(
        "sandboxed",
        json!({"runtimeClassName": "kata", "nodeSelector": {"zone": "a"}}),
    )
    .ok();
    let spec = cluster
        .kubectl(&["get", "pod", "sandboxed", "-o", "json"])
        .ok()
        .json()["spec"]
        .clone();
    assert_eq!(spec["overhead"], json!({"cpu": "250m", "memory": "120Mi"}));
    assert_eq!(
        spec["nodeSelector"],
        json!({"sandbox": "kata", "zone": "a"})
    );
    let tolerations = spec["tolerations"].as_array().unwrap();
    assert!(
        tolerations
            .contains(&json!({"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"})),
        "{tolerations:?}"
    );

    create("missing", json!({"runtimeClassName": "gvisor"}))
        .fails()
        .stderr_has(
            "pods \"missing\" is forbidden: pod rejected: RuntimeClass \"gvisor\" not found",
        );
    create("conflict", json!({"runtimeClassName": "kata", "nodeSelector": {"sandbox": "none"}}))
        .fails()
        .stderr_has("pods \"conflict\" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = kata; pod.spec.nodeSelector[sandbox] = none");
    create(
        "other-overhead",
        json!({"runtimeClassName": "kata", "overhead": {"cpu": "1"}}),
    )
    .fails()
    .stderr_has("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
    create(
        "same-overhead",
        json!({"runtimeClassName": "kata", "overhead": {"cpu": "0.25", "memory": "120Mi"}}),
    )
    .ok();
    create("no-class", json!({"overhead": {"cpu": "1"}}))
        .fails()
        .stderr_has("pods \"no-class\" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead");
}
