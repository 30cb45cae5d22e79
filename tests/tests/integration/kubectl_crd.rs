//! The real `kubectl` with custom resources: a CRD created with kubectl becomes discoverable at
//! once, its objects are created, listed with the CRD's printer columns, found by short name,
//! patched (merge yes, strategic no, as on a real server), waited on, explained, and go away with
//! the CRD.

use crate::kubectl_support;

use std::time::Duration;

use kubectl_support::Cluster;
use serde_json::json;

const GROUP: &str = "k.conformance.example.com";

fn widget_crd() -> serde_json::Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": ["wdg"]},
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
                    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
                ],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "description": "What the widget should look like.",
                            "properties": {
                                "color": {"type": "string", "description": "The widget's colour."},
                                "size": {"type": "integer"}
                            }
                        },
                        "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
                    }
                }}
            }]
        }
    })
}

fn widget(name: &str, color: &str, size: i64) -> serde_json::Value {
    json!({
        "apiVersion": format!("{GROUP}/v1"),
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"color": color, "size": size},
    })
}

#[test]
fn crd_then_custom_resources_with_printer_columns() {
    let cluster = Cluster::start();
    let crd_name = format!("widgets.{GROUP}");
    cluster
        .kubectl(&[
            "create",
            "-f",
            &cluster.write_json("crd.json", &widget_crd()),
        ])
        .ok()
        .stdout_is(&format!(
            "customresourcedefinition.apiextensions.k8s.io/{crd_name} created\n"
        ));
    cluster
        .kubectl(&[
            "wait",
            "--for=condition=Established",
            &format!("crd/{crd_name}"),
            "--timeout=15s",
        ])
        .ok()
        .stdout_is(&format!(
            "customresourcedefinition.apiextensions.k8s.io/{crd_name} condition met\n"
        ));

    cluster
        .kubectl(&[
            "create",
            "-f",
            &cluster.write_json("w1.json", &widget("w1", "teal", 5)),
        ])
        .ok()
        .stdout_is(&format!("widget.{GROUP}/w1 created\n"));
    cluster
        .kubectl(&[
            "apply",
            "-f",
            &cluster.write_json("w2.json", &widget("w2", "red", 7)),
        ])
        .ok()
        .stdout_is(&format!("widget.{GROUP}/w2 created\n"));
    let stored = cluster.must_get(&format!("{GROUP}/v1"), "widgets", Some("default"), "w1");
    assert_eq!(stored["spec"], json!({"color": "teal", "size": 5}));

    let table = cluster.kubectl(&["get", "widgets"]);
    table.ok();
    let rows = table.rows();
    assert_eq!(rows[0], ["NAME", "COLOR", "SIZE", "AGE"], "{table}");
    assert_eq!(rows[1][..3], ["w1", "teal", "5"], "{table}");
    assert_eq!(rows[2][..3], ["w2", "red", "7"], "{table}");

    cluster
        .kubectl(&["get", "wdg", "-o", "name"])
        .ok()
        .stdout_is(&format!("widget.{GROUP}/w1\nwidget.{GROUP}/w2\n"));
    let resources = cluster.kubectl(&["api-resources", &format!("--api-group={GROUP}")]);
    resources.ok();
    assert_eq!(
        resources.rows()[1],
        ["widgets", "wdg", &format!("{GROUP}/v1"), "true", "Widget"],
        "{resources}"
    );

    // Explain reads the CRD's schema from OpenAPI v3.
    let explain = cluster.kubectl(&["explain", "widgets.spec.color"]);
    explain.ok();
    assert!(
        explain.stdout.contains("FIELD: color <string>"),
        "{explain}"
    );
    assert!(explain.stdout.contains("The widget's colour."), "{explain}");

    cluster
        .kubectl(&[
            "patch",
            "widget",
            "w1",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"size":6}}"#,
        ])
        .ok()
        .stdout_is(&format!("widget.{GROUP}/w1 patched\n"));
    cluster
        .kubectl(&["patch", "widget", "w1", "-p", r#"{"spec":{"size":7}}"#])
        .fails()
        .stderr_has("application/strategic-merge-patch+json is not supported by")
        .stderr_has("the body of the request was in an unknown format");
    assert_eq!(
        cluster.must_get(&format!("{GROUP}/v1"), "widgets", Some("default"), "w1")["spec"]["size"],
        6
    );

    // Client-side apply of a custom resource uses a JSON merge patch.
    cluster
        .kubectl(&[
            "apply",
            "-f",
            &cluster.write_json("w2.json", &widget("w2", "blue", 7)),
        ])
        .ok()
        .stdout_is(&format!("widget.{GROUP}/w2 configured\n"));
    assert_eq!(
        cluster.must_get(&format!("{GROUP}/v1"), "widgets", Some("default"), "w2")["spec"]["color"],
        "blue"
    );

    cluster
        .kubectl(&[
            "wait",
            "--for=jsonpath={.status.phase}=Done",
            "widget/w1",
            "--timeout=1s",
        ])
        .fails()
        .stderr_has("timed out waiting for the condition");
    cluster
        .kubectl(&[
            "patch",
            "widget",
            "w1",
            "--subresource=status",
            "--type",
            "merge",
            "-p",
            r#"{"status":{"phase":"Done"}}"#,
        ])
        .ok()
        .stdout_is(&format!("widget.{GROUP}/w1 patched\n"));
    cluster
        .kubectl(&[
            "wait",
            "--for=jsonpath={.status.phase}=Done",
            "widget/w1",
            "--timeout=10s",
        ])
        .ok()
        .stdout_is(&format!("widget.{GROUP}/w1 condition met\n"));

    cluster
        .kubectl(&["delete", "crd", &crd_name, "--timeout=20s"])
        .ok()
        .stdout_is(&format!(
            "customresourcedefinition.apiextensions.k8s.io \"{crd_name}\" deleted\n"
        ));
    cluster.eventually(
        "the CRD and its objects to go",
        Duration::from_secs(10),
        || {
            cluster
                .object(
                    "apiextensions.k8s.io/v1",
                    "customresourcedefinitions",
                    None,
                    &crd_name,
                )
                .is_none()
                && cluster
                    .object(&format!("{GROUP}/v1"), "widgets", Some("default"), "w1")
                    .is_none()
        },
    );
    // kubectl still has `widgets` in its discovery cache, so it asks and is told 404.
    cluster
        .kubectl(&["get", "widgets"])
        .fails()
        .stderr_has("Error from server (NotFound)")
        .stderr_has("the server could not find the requested resource");
    // Fresh discovery no longer lists the group.
    cluster
        .kubectl(&[
            "api-resources",
            &format!("--api-group={GROUP}"),
            "-o",
            "name",
        ])
        .ok()
        .stdout_is("");
}

/// A CRD and an object of its kind in one file: kubectl creates the CRD, then (as against a real
/// server) cannot map the kind it had not discovered. Getting there needs `/openapi/v2` in
/// protobuf: the v3 documents do not know the kind yet, so kubectl validates the object against
/// v2, finds no schema and goes on.
#[test]
fn crd_and_object_in_one_file_needs_the_crd_first() {
    let cluster = Cluster::start();
    let crd_name = format!("widgets.{GROUP}");
    let both = format!(
        "{}---\n{}",
        serde_yaml::to_string(&widget_crd()).unwrap(),
        serde_yaml::to_string(&widget("w1", "teal", 5)).unwrap()
    );
    let file = cluster.write("both.yaml", &both);
    let run = cluster.kubectl(&["apply", "-f", &file]);
    run.fails()
        .stderr_has(&format!(
            "resource mapping not found for name: \"w1\" namespace: \"default\" from \"{file}\": no matches for kind \"Widget\" in version \"{GROUP}/v1\""
        ))
        .stderr_has("ensure CRDs are installed first");
    assert_eq!(
        run.stdout,
        format!("customresourcedefinition.apiextensions.k8s.io/{crd_name} created\n")
    );
    // Applying again finds the kind.
    cluster
        .kubectl(&["apply", "-f", &file])
        .ok()
        .stdout_is(&format!(
            "customresourcedefinition.apiextensions.k8s.io/{crd_name} unchanged\nwidget.{GROUP}/w1 created\n"
        ));
    assert!(cluster
        .object(&format!("{GROUP}/v1"), "widgets", Some("default"), "w1")
        .is_some());
}

/// A CRD version marked `deprecated` warns on every request to it, with the CRD's own
/// `deprecationWarning` or, without one, the real server's default naming the newest version
/// still served and not deprecated.
#[test]
fn deprecated_crd_versions_warn() {
    let cluster = Cluster::start();
    let mut crd = widget_crd();
    let v1 = crd["spec"]["versions"][0].clone();
    let older = |name: &str, warning: Option<&str>| {
        let mut v = v1.clone();
        v["name"] = json!(name);
        v["storage"] = json!(false);
        v["deprecated"] = json!(true);
        if let Some(w) = warning {
            v["deprecationWarning"] = json!(w);
        }
        v
    };
    crd["spec"]["versions"] = json!([
        v1,
        older("v1beta1", None),
        older("v1alpha1", Some("v1alpha1 widgets go away next release"))
    ]);
    let file = cluster.write_json("crd.json", &crd);
    cluster.kubectl(&["create", "-f", &file]).ok();
    let get = |version: &str| {
        let mut run = None;
        for _ in 0..50 {
            let r = cluster.kubectl(&["get", &format!("widgets.{version}.{GROUP}")]);
            if r.code == Some(0) {
                run = Some(r);
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        run.expect("the version is served")
    };
    get("v1beta1").stderr_has(&format!(
        "Warning: {GROUP}/v1beta1 Widget is deprecated; use {GROUP}/v1 Widget"
    ));
    get("v1alpha1").stderr_has("Warning: v1alpha1 widgets go away next release");
    let current = get("v1");
    assert!(!current.stderr.contains("Warning"), "{current}");
}

/// A CRD with two served versions (conversion `None`): every object is stored at the storage
/// version and served at the version each request names — get, list, watch and the answers of
/// writes — with each version's schema pruning what it does not declare; switching the storage
/// version leaves older objects at theirs until they are written again.
#[test]
fn multi_version_crds_are_stored_at_the_storage_version_and_served_at_every_version() {
    let cluster = Cluster::start();
    let mut crd = widget_crd();
    let mut beta = crd["spec"]["versions"][0].clone();
    beta["name"] = json!("v1beta1");
    beta["storage"] = json!(false);
    // v1beta1 knows `replicas`, which v1 does not; v1 knows `size`, which v1beta1 does not.
    beta["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"] =
        json!({"color": {"type": "string"}, "replicas": {"type": "integer"}});
    crd["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .push(beta);
    let file = cluster.write_json("crd.json", &crd);
    cluster.kubectl(&["create", "-f", &file]).ok();
    let resource = |version: &str| format!("widgets.{version}.{GROUP}");
    cluster.eventually("v1beta1 is served", Duration::from_secs(5), || {
        cluster.kubectl(&["get", &resource("v1beta1")]).code == Some(0)
    });
    let mut events = cluster.server.subscribe();

    let mut beta_widget = widget("w", "red", 3);
    beta_widget["apiVersion"] = json!(format!("{GROUP}/v1beta1"));
    beta_widget["spec"] = json!({"color": "red", "replicas": 2});
    let file = cluster.write_json("w.json", &beta_widget);
    let created = cluster
        .kubectl(&["create", "-f", &file, "-o", "json"])
        .ok()
        .json();
    assert_eq!(created["apiVersion"], format!("{GROUP}/v1beta1"));
    // Stored at v1, whose schema has no `replicas`: the None conversion loses it.
    assert_eq!(created["spec"], json!({"color": "red"}));
    let stored = cluster
        .server
        .event_object(&events.try_recv().expect("the create's event"))
        .expect("stored object");
    assert_eq!(stored["apiVersion"], format!("{GROUP}/v1"));

    let at = |version: &str| {
        cluster
            .kubectl(&["get", &resource(version), "w", "-o", "json"])
            .ok()
            .json()
    };
    assert_eq!(at("v1")["apiVersion"], format!("{GROUP}/v1"));
    assert_eq!(at("v1beta1")["apiVersion"], format!("{GROUP}/v1beta1"));
    let list = cluster
        .kubectl(&[
            "get",
            "--raw",
            &format!("/apis/{GROUP}/v1beta1/namespaces/default/widgets"),
        ])
        .ok()
        .json();
    assert_eq!(list["apiVersion"], format!("{GROUP}/v1beta1"));
    assert_eq!(list["items"][0]["apiVersion"], format!("{GROUP}/v1beta1"));
    let watch = cluster
        .kubectl(&[
            "get",
            "--raw",
            &format!("/apis/{GROUP}/v1beta1/namespaces/default/widgets?watch=1&timeoutSeconds=1"),
        ])
        .ok()
        .stdout
        .clone();
    let first: serde_json::Value =
        serde_json::from_str(watch.lines().next().expect("an event")).expect("event JSON");
    assert_eq!(first["object"]["apiVersion"], format!("{GROUP}/v1beta1"));

    // A write at v1 sets a field v1beta1 does not declare: kept in storage, pruned from v1beta1
    // reads, and kept through a v1beta1 write (the stored v1 object is the one patched).
    let patched = cluster
        .kubectl(&[
            "patch",
            &resource("v1"),
            "w",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"size":5}}"#,
            "-o",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(patched["spec"], json!({"color": "red", "size": 5}));
    assert_eq!(at("v1beta1")["spec"], json!({"color": "red"}));
    let patched = cluster
        .kubectl(&[
            "patch",
            &resource("v1beta1"),
            "w",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"color":"blue"}}"#,
            "-o",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(patched["apiVersion"], format!("{GROUP}/v1beta1"));
    assert_eq!(patched["spec"], json!({"color": "blue"}));
    assert_eq!(
        at("v1")["spec"],
        json!({"color": "blue"}),
        "a v1beta1 write replaces what v1beta1 does not see"
    );

    // v1beta1 becomes the storage version: the old object stays at v1 until written again.
    let mut crd = cluster
        .kubectl(&["get", "crd", &format!("widgets.{GROUP}"), "-o", "json"])
        .ok()
        .json();
    crd["spec"]["versions"][0]["storage"] = json!(false);
    crd["spec"]["versions"][1]["storage"] = json!(true);
    let file = cluster.write_json("crd2.json", &crd);
    cluster.kubectl(&["replace", "-f", &file]).ok();
    let stored_versions = cluster
        .kubectl(&[
            "get",
            "crd",
            &format!("widgets.{GROUP}"),
            "-o",
            "jsonpath={.status.storedVersions}",
        ])
        .ok()
        .stdout
        .clone();
    assert_eq!(stored_versions, r#"["v1","v1beta1"]"#);
    let _ = events.try_recv();
    let file = cluster.write_json("w2.json", &widget("w2", "green", 1));
    cluster.kubectl(&["create", "-f", &file]).ok();
    let stored = loop {
        let event = events.try_recv().expect("the second create's event");
        if event.name == "w2" {
            break cluster.server.event_object(&event).expect("stored object");
        }
    };
    assert_eq!(stored["apiVersion"], format!("{GROUP}/v1beta1"));
    assert_eq!(
        stored["spec"],
        json!({"color": "green"}),
        "pruned by the v1beta1 schema"
    );
    assert_eq!(at("v1")["apiVersion"], format!("{GROUP}/v1"));
}

/// A CRD's `pattern`, `format` and `anyOf` are enforced as the apiextensions server enforces
/// them: `kubectl apply` of an object that breaks them is refused with every cause, and one
/// that keeps them is created.
#[test]
fn schema_patterns_formats_and_compositions_are_enforced() {
    let cluster = Cluster::start();
    let mut crd = widget_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"] = json!({
        "color": {"type": "string", "pattern": "^[a-z]+$"},
        "size": {"type": "integer"},
        "since": {"type": "string", "format": "date-time"},
        "quota": {"type": "string", "anyOf": [{"enum": ["unlimited"]}, {"pattern": "^[0-9]+Gi$"}]}
    });
    let file = cluster.write_json("crd.json", &crd);
    cluster.kubectl(&["apply", "-f", &file]).ok();
    let mut bad = widget("w1", "Teal", 5);
    bad["spec"]["since"] = json!("last tuesday");
    bad["spec"]["quota"] = json!("lots");
    let bad_file = cluster.write_json("bad.json", &bad);
    cluster
        .kubectl(&["apply", "-f", &bad_file])
        .fails()
        .stderr_has("spec.color: Invalid value: \"Teal\": spec.color in body should match '^[a-z]+$'")
        .stderr_has("spec.since: Invalid value: \"last tuesday\": spec.since in body must be of type date-time: \"last tuesday\"")
        .stderr_has("\"spec.quota\" must validate at least one schema (anyOf)");
    assert!(cluster
        .object(&format!("{GROUP}/v1"), "widgets", Some("default"), "w1")
        .is_none());
    let mut good = widget("w1", "teal", 5);
    good["spec"]["since"] = json!("2026-12-04T08:00:00Z");
    good["spec"]["quota"] = json!("20Gi");
    let good_file = cluster.write_json("good.json", &good);
    cluster.kubectl(&["apply", "-f", &good_file]).ok();
}

/// A CRD's `pattern` is a Go regular expression and reads as Go reads it: `\d` is ASCII, `\_`
/// is an underscore, and a pattern Go cannot compile is accepted in the CRD but then refuses
/// every value with Go's parse error (kube-openapi's `..., but pattern is invalid: ...`).
#[test]
fn schema_patterns_are_go_regular_expressions() {
    let cluster = Cluster::start();
    let mut crd = widget_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"] = json!({
        "color": {"type": "string", "pattern": "^\\d+\\_[a-z]+$"},
        "size": {"type": "integer"},
        "shape": {"type": "string", "pattern": "a{2}{3}"}
    });
    let file = cluster.write_json("crd.json", &crd);
    cluster.kubectl(&["apply", "-f", &file]).ok();
    let arabic = cluster.write_json("arabic.json", &widget("w1", "\u{663}_teal", 5));
    cluster
        .kubectl(&["apply", "-f", &arabic])
        .fails()
        .stderr_has("spec.color in body should match '^\\d+\\_[a-z]+$'");
    let ascii = cluster.write_json("ascii.json", &widget("w1", "3_teal", 5));
    cluster.kubectl(&["apply", "-f", &ascii]).ok();
    let mut shaped = widget("w2", "3_teal", 5);
    shaped["spec"]["shape"] = json!("aaaaaa");
    let shaped = cluster.write_json("shaped.json", &shaped);
    cluster
        .kubectl(&["apply", "-f", &shaped])
        .fails()
        .stderr_has(
        "spec.shape in body should match 'a{2}{3}, but pattern is invalid: error parsing regexp: \
         invalid nested repetition operator: `{2}{3}`'",
    );
}

/// A schema tightened after objects were written ratchets (`CRDValidationRatcheting`): an
/// object that breaks the new rule can still be labelled or have other fields changed, but the
/// offending value cannot be changed to another one that breaks it.
#[test]
fn a_tightened_schema_ratchets_values_that_do_not_change() {
    let cluster = Cluster::start();
    let file = cluster.write_json("crd.json", &widget_crd());
    cluster.kubectl(&["apply", "-f", &file]).ok();
    let object = cluster.write_json("w1.json", &widget("w1", "Teal", 5));
    cluster.kubectl(&["apply", "-f", &object]).ok();
    let mut tightened = widget_crd();
    tightened["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["properties"]["color"]["pattern"] = json!("^[a-z]+$");
    let file = cluster.write_json("tightened.json", &tightened);
    cluster.kubectl(&["apply", "-f", &file]).ok();
    let widget_name = format!("widgets.{GROUP}/w1");
    cluster.kubectl(&["label", &widget_name, "tier=gold"]).ok();
    cluster
        .kubectl(&[
            "patch",
            &widget_name,
            "--type=merge",
            "-p",
            r#"{"spec":{"size":6}}"#,
        ])
        .ok();
    cluster
        .kubectl(&[
            "patch",
            &widget_name,
            "--type=merge",
            "-p",
            r#"{"spec":{"color":"Cyan"}}"#,
        ])
        .fails()
        .stderr_has("spec.color in body should match '^[a-z]+$'");
    cluster
        .kubectl(&[
            "patch",
            &widget_name,
            "--type=merge",
            "-p",
            r#"{"spec":{"color":"cyan"}}"#,
        ])
        .ok();
}

/// `kubectl apply` of a changed CRD: widgets stored before read with the new schema (the
/// default it gained shows in `kubectl get`, the field it dropped does not), and a re-apply of
/// the first CRD brings the dropped field back: the stored widget lost nothing.
#[test]
fn a_changed_crd_is_read_through_at_once() {
    let cluster = Cluster::start();
    let file = cluster.write_json("crd.json", &widget_crd());
    cluster.kubectl(&["apply", "-f", &file]).ok();
    let object = cluster.write_json("w1.json", &widget("w1", "teal", 5));
    cluster.kubectl(&["apply", "-f", &object]).ok();
    let mut changed = widget_crd();
    let spec = &mut changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
        ["spec"]["properties"];
    spec["shape"] = json!({"type": "string", "default": "round"});
    spec.as_object_mut().expect("properties").remove("size");
    let changed_file = cluster.write_json("changed.json", &changed);
    cluster.kubectl(&["apply", "-f", &changed_file]).ok();
    let widget_name = format!("widgets.{GROUP}/w1");
    let read = cluster
        .kubectl(&["get", &widget_name, "-o", "json"])
        .ok()
        .json();
    assert_eq!(read["spec"], json!({"color": "teal", "shape": "round"}));
    cluster.kubectl(&["apply", "-f", &file]).ok();
    let read = cluster
        .kubectl(&["get", &widget_name, "-o", "json"])
        .ok()
        .json();
    assert_eq!(read["spec"], json!({"color": "teal", "size": 5}));
}

/// CRD rules may use the Kubernetes `quantity`, `ip` and `cidr` CEL libraries: objects are
/// judged by them (before, every object of such a CRD was refused with `no such attribute`).
#[test]
fn crd_rules_use_the_quantity_ip_and_cidr_libraries() {
    let cluster = Cluster::start();
    let mut crd = widget_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = json!({
        "type": "object",
        "properties": {
            "color": {"type": "string"}, "size": {"type": "integer"},
            "memory": {"type": "string"}, "address": {"type": "string"}
        },
        "x-kubernetes-validations": [
            {"rule": "!has(self.memory) || quantity(self.memory).isGreaterThan(quantity('1Gi'))",
             "message": "memory must be above 1Gi"},
            {"rule": "!has(self.address) || (isIP(self.address) && cidr('10.0.0.0/8').containsIP(self.address))",
             "message": "address must be in 10.0.0.0/8"}
        ]
    });
    let file = cluster.write_json("crd.json", &crd);
    cluster.kubectl(&["apply", "-f", &file]).ok();
    let mut good = widget("w1", "teal", 5);
    good["spec"]["memory"] = json!("2Gi");
    good["spec"]["address"] = json!("10.1.2.3");
    let good_file = cluster.write_json("good.json", &good);
    cluster.kubectl(&["apply", "-f", &good_file]).ok();
    let mut bad = widget("w2", "teal", 5);
    bad["spec"]["memory"] = json!("512Mi");
    bad["spec"]["address"] = json!("192.168.0.1");
    let bad_file = cluster.write_json("bad.json", &bad);
    cluster
        .kubectl(&["apply", "-f", &bad_file])
        .fails()
        .stderr_has("memory must be above 1Gi")
        .stderr_has("address must be in 10.0.0.0/8");
}

/// A CRD rule validates with the Kubernetes `format` library, and its `messageExpression`
/// reports the format's own messages.
#[test]
fn crd_rules_use_the_format_library() {
    let cluster = Cluster::start();
    let mut crd = widget_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = json!({
        "type": "object",
        "properties": {
            "color": {"type": "string"}, "size": {"type": "integer"}, "target": {"type": "string"}
        },
        "x-kubernetes-validations": [
            {"rule": "!has(self.target) || !format.dns1123Label().validate(self.target).hasValue()",
             "messageExpression": "'target: ' + format.dns1123Label().validate(self.target).value().join(', ')"}
        ]
    });
    let file = cluster.write_json("crd.json", &crd);
    cluster.kubectl(&["apply", "-f", &file]).ok();
    let mut good = widget("w1", "teal", 5);
    good["spec"]["target"] = json!("web-1");
    let good_file = cluster.write_json("good.json", &good);
    cluster.kubectl(&["apply", "-f", &good_file]).ok();
    let mut bad = widget("w2", "teal", 5);
    bad["spec"]["target"] = json!("Web_1");
    let bad_file = cluster.write_json("bad.json", &bad);
    cluster
        .kubectl(&["apply", "-f", &bad_file])
        .fails()
        .stderr_has(
            "target: a lowercase RFC 1123 label must consist of lower case alphanumeric characters",
        );
}

/// A CRD whose conversion webhook `caBundle` cannot be used is not established
/// (`InvalidCABundle`): its objects are served, but discovery does not list it, so `kubectl`
/// does not know the type, until the bundle is fixed.
#[test]
fn an_invalid_conversion_ca_bundle_keeps_a_crd_out_of_discovery() {
    let cluster = Cluster::start();
    let mut crd = widget_crd();
    crd["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"url": "https://hooks.example.com/convert", "caBundle": "bm90IGEgY2VydGlmaWNhdGU="}}});
    let file = cluster.write_json("crd.json", &crd);
    cluster.kubectl(&["apply", "-f", &file]).ok();
    let name = format!("widgets.{GROUP}");
    cluster
        .kubectl(&[
            "get",
            "crd",
            &name,
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Established\")].reason}",
        ])
        .ok()
        .stdout_is("InvalidCABundle");
    let listed = cluster.kubectl(&["api-resources", "--api-group", GROUP]);
    assert!(!listed.ok().stdout.contains("widgets"), "{listed}");
    // Served all the same, at its path.
    let served = cluster.kubectl(&[
        "get",
        "--raw",
        &format!("/apis/{GROUP}/v1/namespaces/default/widgets"),
    ]);
    assert!(served.ok().stdout.contains("\"items\":[]"), "{served}");
}
