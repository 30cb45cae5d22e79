//! What moves `metadata.generation` and what a real server writes back, seen through kube-rs:
//! each kind's strategy compares the spec as its Go type (`apiequality.Semantic.DeepEqual`: a
//! nil and an empty list are equal, quantities compare by value), a few kinds compare more or
//! differently (`registry/<group>/<kind>/strategy.go`), and quantities and times are written in
//! their canonical forms. A controller that writes the same object every reconcile in another
//! spelling (`tolerations: []`, `cpu: 1000m`) causes no new revision and no new generation on a
//! real server, so it must not here either.

use crate::kubectl_support;

use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, PostParams};
use kubectl_support::Cluster;
use serde_json::{json, Value};

/// The API of a namespaced (in `default`) or cluster-scoped kind, as dynamic objects.
fn api(
    cluster: &Cluster,
    api_version: &str,
    kind: &str,
    plural: &str,
    namespaced: bool,
) -> Api<DynamicObject> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    if namespaced {
        Api::namespaced_with(cluster.tcp_client(), "default", &resource)
    } else {
        Api::all_with(cluster.tcp_client(), &resource)
    }
}

fn create(cluster: &Cluster, api: &Api<DynamicObject>, object: Value) -> Value {
    let object: DynamicObject = serde_json::from_value(object).expect("object");
    let created = cluster
        .block_on(api.create(&PostParams::default(), &object))
        .expect("create");
    serde_json::to_value(created).expect("json")
}

/// Replaces the stored object with what `edit` makes of it (resourceVersion kept).
fn replace(
    cluster: &Cluster,
    api: &Api<DynamicObject>,
    name: &str,
    edit: impl FnOnce(&mut Value),
) -> Value {
    let replaced = try_replace(cluster, api, name, edit).expect("replace");
    serde_json::to_value(replaced).expect("json")
}

/// [`replace`] that must be refused with a message containing `phrase`.
#[track_caller]
fn replace_refused(
    cluster: &Cluster,
    api: &Api<DynamicObject>,
    name: &str,
    edit: impl FnOnce(&mut Value),
    phrase: &str,
) {
    let refused = try_replace(cluster, api, name, edit).expect_err("a refused replace");
    assert!(refused.to_string().contains(phrase), "{refused}");
}

fn try_replace(
    cluster: &Cluster,
    api: &Api<DynamicObject>,
    name: &str,
    edit: impl FnOnce(&mut Value),
) -> Result<DynamicObject, kube::Error> {
    let stored = cluster.block_on(api.get(name)).expect("get");
    let mut object = serde_json::to_value(stored).expect("json");
    edit(&mut object);
    let object: DynamicObject = serde_json::from_value(object).expect("object");
    cluster.block_on(api.replace(name, &PostParams::default(), &object))
}

fn revision_and_generation(object: &Value) -> (String, i64) {
    (
        object["metadata"]["resourceVersion"]
            .as_str()
            .expect("resourceVersion")
            .to_string(),
        object["metadata"]["generation"].as_i64().unwrap_or(0),
    )
}

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
           "spec": {"selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"containers": [{"name": "app", "image": "web:1.0",
                                     "resources": {"limits": {"cpu": "1", "memory": "512Mi"}}}]}}}})
}

#[test]
fn the_same_spec_in_another_spelling_is_no_new_revision_nor_generation() {
    let cluster = Cluster::start();
    let deployments = api(&cluster, "apps/v1", "Deployment", "deployments", true);
    let created = create(&cluster, &deployments, deployment("web"));
    let before = revision_and_generation(&created);
    assert_eq!(before.1, 1);
    let again = replace(&cluster, &deployments, "web", |d| {
        let pod = &mut d["spec"]["template"]["spec"];
        pod["tolerations"] = json!([]);
        pod["nodeSelector"] = json!({});
        pod["containers"][0]["env"] = json!([]);
        pod["containers"][0]["resources"]["limits"] = json!({"cpu": "1000m", "memory": "0.5Gi"});
        d["metadata"]["annotations"] = json!({});
    });
    assert_eq!(revision_and_generation(&again), before, "{again:#}");
    assert_eq!(
        again["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"],
        json!({"cpu": "1", "memory": "512Mi"})
    );
    let changed = replace(&cluster, &deployments, "web", |d| {
        d["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] =
            json!("1500m");
    });
    let after = revision_and_generation(&changed);
    assert_ne!(after.0, before.0);
    assert_eq!(after.1, 2, "a different quantity is a spec change");
}

#[test]
fn a_deployments_annotations_start_a_new_generation_and_its_labels_do_not() {
    let cluster = Cluster::start();
    let deployments = api(&cluster, "apps/v1", "Deployment", "deployments", true);
    create(&cluster, &deployments, deployment("web"));
    let labelled = replace(&cluster, &deployments, "web", |d| {
        d["metadata"]["labels"] = json!({"tier": "front"});
    });
    assert_eq!(revision_and_generation(&labelled).1, 1);
    let annotated = replace(&cluster, &deployments, "web", |d| {
        d["metadata"]["annotations"] = json!({"team": "web"});
    });
    assert_eq!(
        revision_and_generation(&annotated).1,
        2,
        "annotations are copied to the replica sets"
    );
    // A ReplicaSet's strategy looks at its spec only.
    let replica_sets = api(&cluster, "apps/v1", "ReplicaSet", "replicasets", true);
    let mut rs = deployment("web-1");
    rs["kind"] = json!("ReplicaSet");
    create(&cluster, &replica_sets, rs);
    let annotated = replace(&cluster, &replica_sets, "web-1", |r| {
        r["metadata"]["annotations"] = json!({"team": "web"});
    });
    assert_eq!(revision_and_generation(&annotated).1, 1);
}

#[test]
fn network_policies_and_webhook_configurations_tell_an_empty_list_from_none() {
    let cluster = Cluster::start();
    let policies = api(
        &cluster,
        "networking.k8s.io/v1",
        "NetworkPolicy",
        "networkpolicies",
        true,
    );
    create(
        &cluster,
        &policies,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
               "metadata": {"name": "deny"}, "spec": {"podSelector": {}}}),
    );
    // `reflect.DeepEqual`: `ingress: []` is not the nil list the stored policy has.
    let emptied = replace(&cluster, &policies, "deny", |p| {
        p["spec"]["ingress"] = json!([])
    });
    assert_eq!(revision_and_generation(&emptied).1, 2);
    assert!(
        emptied["spec"].get("ingress").is_none(),
        "and it is not written: {emptied:#}"
    );
    let same = replace(&cluster, &policies, "deny", |p| {
        p["spec"]["ingress"] = Value::Null
    });
    assert_eq!(
        revision_and_generation(&same),
        revision_and_generation(&emptied)
    );

    let webhooks = api(
        &cluster,
        "admissionregistration.k8s.io/v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
    );
    create(
        &cluster,
        &webhooks,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
               "metadata": {"name": "none"}}),
    );
    let emptied = replace(&cluster, &webhooks, "none", |w| w["webhooks"] = json!([]));
    assert_eq!(revision_and_generation(&emptied).1, 2);
}

#[test]
fn kinds_that_start_at_one_and_what_moves_them() {
    let cluster = Cluster::start();
    let classes = api(
        &cluster,
        "scheduling.k8s.io/v1",
        "PriorityClass",
        "priorityclasses",
        false,
    );
    let created = create(
        &cluster,
        &classes,
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
               "metadata": {"name": "high", "generation": 7}, "value": 1000}),
    );
    assert_eq!(revision_and_generation(&created).1, 1);
    let described = replace(&cluster, &classes, "high", |c| {
        c["description"] = json!("for the web tier")
    });
    assert_eq!(
        revision_and_generation(&described).1,
        1,
        "a PriorityClass never moves it"
    );

    let ingress_classes = api(
        &cluster,
        "networking.k8s.io/v1",
        "IngressClass",
        "ingressclasses",
        false,
    );
    let created = create(
        &cluster,
        &ingress_classes,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
               "metadata": {"name": "nginx"}, "spec": {"controller": "example.com/nginx"}}),
    );
    assert_eq!(revision_and_generation(&created).1, 1);
    let changed = replace(&cluster, &ingress_classes, "nginx", |c| {
        c["spec"]["parameters"] =
            json!({"apiGroup": "example.com", "kind": "Params", "name": "p", "scope": "Cluster"})
    });
    assert_eq!(revision_and_generation(&changed).1, 2);

    let slices = api(
        &cluster,
        "discovery.k8s.io/v1",
        "EndpointSlice",
        "endpointslices",
        true,
    );
    let created = create(
        &cluster,
        &slices,
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
               "metadata": {"name": "web-1"}, "addressType": "IPv4", "endpoints": []}),
    );
    assert_eq!(revision_and_generation(&created).1, 1);
    let labelled = replace(&cluster, &slices, "web-1", |s| {
        s["metadata"]["labels"] = json!({"kubernetes.io/service-name": "web"})
    });
    assert_eq!(
        revision_and_generation(&labelled).1,
        2,
        "labels count for an EndpointSlice"
    );
    let annotated = replace(&cluster, &slices, "web-1", |s| {
        s["metadata"]["annotations"] = json!({"note": "x"})
    });
    assert_eq!(revision_and_generation(&annotated).1, 2);

    // A kind whose strategy leaves the generation alone keeps the client's.
    let config_maps = api(&cluster, "v1", "ConfigMap", "configmaps", true);
    let created = create(
        &cluster,
        &config_maps,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "settings", "generation": 3, "finalizers": ["example.com/keep"]}}),
    );
    assert_eq!(revision_and_generation(&created).1, 3);
    cluster
        .block_on(config_maps.delete("settings", &DeleteParams::default()))
        .expect("delete");
    let deleting = cluster.must_get("v1", "configmaps", Some("default"), "settings");
    assert_eq!(
        deleting["metadata"]["generation"], 4,
        "marking it deleting moves any generation above 0"
    );
}

#[test]
fn quantities_and_times_are_written_as_the_go_types_write_them() {
    let cluster = Cluster::start();
    let pods = api(&cluster, "v1", "Pod", "pods", true);
    let created = create(
        &cluster,
        &pods,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app"},
               "spec": {"containers": [{"name": "app", "image": "app:1",
                   "resources": {"limits": {"cpu": "+1", "memory": "1.5Gi", "example.com/gpu": "2000m"},
                                 "requests": {"cpu": "0.5", "memory": 1024, "example.com/gpu": "2"}}}]}}),
    );
    let resources = &created["spec"]["containers"][0]["resources"];
    assert_eq!(
        resources["limits"],
        json!({"cpu": "+1", "memory": "1536Mi", "example.com/gpu": "2"}),
        "a canonical-looking text is kept as sent (`+1`), the rest canonical"
    );
    assert_eq!(
        resources["requests"],
        json!({"cpu": "500m", "memory": "1024", "example.com/gpu": "2"})
    );

    let leases = api(&cluster, "coordination.k8s.io/v1", "Lease", "leases", true);
    let created = create(
        &cluster,
        &leases,
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "leader"},
               "spec": {"holderIdentity": "a", "renewTime": "2026-01-01T01:00:00.123456+01:00"}}),
    );
    assert_eq!(created["spec"]["renewTime"], "2026-01-01T00:00:00.123456Z");
    let events = api(&cluster, "v1", "Event", "events", true);
    let created = create(
        &cluster,
        &events,
        json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1"},
               "involvedObject": {"kind": "Pod", "name": "app", "namespace": "default"},
               "reason": "Started", "message": "started",
               "firstTimestamp": "2026-01-01T01:00:00+01:00", "lastTimestamp": "2026-01-01T00:00:00.5Z"}),
    );
    assert_eq!(
        (&created["firstTimestamp"], &created["lastTimestamp"]),
        (
            &json!("2026-01-01T00:00:00Z"),
            &json!("2026-01-01T00:00:00Z")
        )
    );
}

#[test]
fn a_pod_replaced_in_another_spelling_is_accepted_and_unchanged() {
    let cluster = Cluster::start();
    let pods = api(&cluster, "v1", "Pod", "pods", true);
    let created = create(
        &cluster,
        &pods,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app"},
               "spec": {"containers": [{"name": "app", "image": "app:1",
                   "resources": {"limits": {"cpu": "1", "memory": "512Mi"}}}]}}),
    );
    // `ValidatePodUpdate` compares the specs with `Semantic.DeepEqual`.
    let again = replace(&cluster, &pods, "app", |p| {
        p["spec"]["containers"][0]["env"] = json!([]);
        p["spec"]["containers"][0]["resources"]["limits"]["cpu"] = json!("1000m");
        p["spec"]["nodeSelector"] = json!({});
    });
    assert_eq!(
        revision_and_generation(&again),
        revision_and_generation(&created)
    );
    // A real change of an immutable field is still refused.
    replace_refused(
        &cluster,
        &pods,
        "app",
        |p| p["spec"]["containers"][0]["resources"]["limits"]["cpu"] = json!("2"),
        "pod updates may not change fields",
    );
}

#[test]
fn claim_requests_in_another_unit_are_the_same_request() {
    let cluster = Cluster::start();
    let claims = api(
        &cluster,
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        true,
    );
    let created = create(
        &cluster,
        &claims,
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
               "spec": {"accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}}}}),
    );
    // An unbound claim's spec is immutable: compared with `Semantic.DeepEqual`.
    let again = replace(&cluster, &claims, "data", |c| {
        c["spec"]["resources"]["requests"]["storage"] = json!("1024Mi");
    });
    assert_eq!(
        again["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    assert_eq!(again["spec"]["resources"]["requests"]["storage"], "1Gi");

    let sets = api(&cluster, "apps/v1", "StatefulSet", "statefulsets", true);
    let mut set = deployment("db");
    set["kind"] = json!("StatefulSet");
    set["spec"]["serviceName"] = json!("db");
    set["spec"]["volumeClaimTemplates"] = json!([{"metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]);
    let created = create(&cluster, &sets, set);
    let again = replace(&cluster, &sets, "db", |s| {
        s["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] =
            json!("1024Mi");
    });
    assert_eq!(
        revision_and_generation(&again),
        revision_and_generation(&created)
    );
    replace_refused(
        &cluster,
        &sets,
        "db",
        |s| {
            s["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] =
                json!("2Gi")
        },
        "updates to statefulset spec for fields other than",
    );
}

#[test]
fn a_daemon_set_carries_its_template_generation_and_claim_templates_are_typed() {
    let cluster = Cluster::start();
    let sets = api(&cluster, "apps/v1", "DaemonSet", "daemonsets", true);
    let mut set = deployment("agent");
    set["kind"] = json!("DaemonSet");
    let created = create(&cluster, &sets, set);
    let annotation = |o: &Value| {
        o["metadata"]["annotations"]["deprecated.daemonset.template.generation"].clone()
    };
    assert_eq!(annotation(&created), "1", "{created:#}");
    // The client's value is ignored on update: the stored one, one more for a new template.
    let rolled = replace(&cluster, &sets, "agent", |s| {
        s["metadata"]["annotations"]["deprecated.daemonset.template.generation"] = json!("9");
        s["spec"]["template"]["spec"]["containers"][0]["image"] = json!("web:2.0");
    });
    assert_eq!(
        (annotation(&rolled), revision_and_generation(&rolled).1),
        (json!("2"), 2)
    );
    let slower = replace(&cluster, &sets, "agent", |s| {
        s["spec"]["minReadySeconds"] = json!(5)
    });
    assert_eq!(
        (annotation(&slower), revision_and_generation(&slower).1),
        (json!("2"), 3)
    );
    replace_refused(
        &cluster,
        &sets,
        "agent",
        |s| s["metadata"]["annotations"]["deprecated.daemonset.template.generation"] = json!("x"),
        "strconv.ParseInt: parsing \"x\": invalid syntax",
    );

    let stateful = api(&cluster, "apps/v1", "StatefulSet", "statefulsets", true);
    let mut set = deployment("db");
    set["kind"] = json!("StatefulSet");
    set["spec"]["volumeClaimTemplates"] = json!([{"metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]);
    let created = create(&cluster, &stateful, set);
    let template = &created["spec"]["volumeClaimTemplates"][0];
    assert_eq!(
        (&template["apiVersion"], &template["kind"]),
        (&json!("v1"), &json!("PersistentVolumeClaim"))
    );
}

#[test]
fn an_update_that_changes_no_template_is_not_warned_about_it_again() {
    let cluster = Cluster::start();
    let mut web = deployment("web");
    web["spec"]["template"]["spec"]["nodeSelector"] = json!({"beta.kubernetes.io/os": "linux"});
    let file = cluster.write_json("web.json", &web);
    cluster
        .kubectl(&["create", "-f", &file])
        .ok()
        .stderr_has("deprecated since v1.14");
    let mut stored = cluster.must_get("apps/v1", "deployments", Some("default"), "web");
    stored["spec"]["template"]["spec"]["tolerations"] = json!([]);
    let file = cluster.write_json("web-again.json", &stored);
    let replaced = cluster.kubectl(&["replace", "-f", &file]);
    replaced.ok();
    assert!(
        !replaced.stderr.contains("deprecated since"),
        "the same template is not warned about: {}",
        replaced.stderr
    );
}

#[test]
fn wrapped_base64_decodes_as_go_decodes_it_and_comes_back_on_one_line() {
    let cluster = Cluster::start();
    // A YAML block keeps the line breaks `base64` wraps its output with; Go's decoder skips them.
    let file = cluster.write(
        "secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\ndata:\n  tls.crt: |\n    aGVsbG8g\n    d29ybGQ=\n",
    );
    cluster.kubectl(&["apply", "-f", &file]).ok();
    let secret = cluster.must_get("v1", "secrets", Some("default"), "tls");
    assert_eq!(secret["data"]["tls.crt"], "aGVsbG8gd29ybGQ=");
    let file = cluster.write(
        "broken.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: broken\ndata:\n  key: |\n    not base64!\n",
    );
    cluster
        .kubectl(&["apply", "-f", &file])
        .fails()
        .stderr_has("cannot be handled as a Secret");
}
