use super::*;
use rstest::rstest;

fn encoded(group: &str, kind: &str, mut object: Value) -> Value {
    encode(group, kind, &mut object);
    object
}

/// What the real server answers for objects written without these fields, each read from the
/// Go struct tags of `k8s.io/api` 1.36.
#[rstest]
#[case::deployment_status_is_a_struct("apps", "Deployment",
    json!({"metadata": {"name": "d"}, "spec": {"template": {"metadata": {}}}}),
    json!({"metadata": {"name": "d"}, "spec": {"selector": null, "template": {"metadata": {}, "spec": {"containers": null}}, "strategy": {}}, "status": {}}))]
#[case::stateful_set_status_counts_without_omitempty("apps", "StatefulSet",
    json!({"metadata": {"name": "s"}, "spec": {}}),
    json!({"metadata": {"name": "s"}, "spec": {"selector": null, "serviceName": "", "template": {"metadata": {}, "spec": {"containers": null}}, "updateStrategy": {}},
           "status": {"replicas": 0, "availableReplicas": 0}}))]
#[case::cluster_role_rules_are_null("rbac.authorization.k8s.io", "ClusterRole",
    json!({"metadata": {"name": "r"}}),
    json!({"metadata": {"name": "r"}, "rules": null}))]
#[case::empty_omitempty_fields_go("", "ConfigMap",
    json!({"metadata": {"name": "c", "labels": {}, "finalizers": [], "generateName": ""}, "data": {}, "immutable": false}),
    json!({"metadata": {"name": "c"}, "immutable": false}))]
#[case::config_map_immutable_pointer_keeps_false("", "ConfigMap",
    json!({"metadata": {"name": "c"}, "immutable": null}),
    json!({"metadata": {"name": "c"}}))]
#[case::core_event_times_and_reporters("", "Event",
    json!({"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod"}, "reason": "R"}),
    json!({"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod"}, "reason": "R", "source": {},
           "eventTime": null, "firstTimestamp": null, "lastTimestamp": null,
           "reportingComponent": "", "reportingInstance": ""}))]
fn objects_read_as_go_encodes_them(
    #[case] group: &str,
    #[case] kind: &str,
    #[case] object: Value,
    #[case] want: Value,
) {
    assert_eq!(encoded(group, kind, object), want);
}

#[test]
fn a_node_without_status_gets_zeroed_node_info_and_daemon_endpoints() {
    let node = encoded("", "Node", json!({"metadata": {"name": "n"}}));
    assert_eq!(node["spec"], json!({}));
    assert_eq!(
        node["status"]["daemonEndpoints"],
        json!({"kubeletEndpoint": {"Port": 0}})
    );
    let info = node["status"]["nodeInfo"].as_object().unwrap();
    for key in [
        "machineID",
        "systemUUID",
        "bootID",
        "kernelVersion",
        "osImage",
        "containerRuntimeVersion",
        "kubeletVersion",
        "kubeProxyVersion",
        "operatingSystem",
        "architecture",
    ] {
        assert_eq!(info[key], "", "{key}");
    }
}

#[test]
fn pod_conditions_and_container_statuses_gain_their_zero_fields() {
    let pod = encoded(
        "",
        "Pod",
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i", "args": [], "stdin": false}], "hostNetwork": false, "nodeSelector": {}},
               "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                          "containerStatuses": [{"name": "c", "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}}}]}}),
    );
    assert_eq!(
        pod["spec"],
        json!({"containers": [{"name": "c", "image": "i", "resources": {}}]})
    );
    assert_eq!(
        pod["status"]["conditions"][0],
        json!({"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": null})
    );
    assert_eq!(
        pod["status"]["containerStatuses"][0],
        json!({"name": "c", "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}}, "lastState": {},
               "ready": false, "restartCount": 0, "image": "", "imageID": ""})
    );
}

#[test]
fn pointers_keep_their_zero_values() {
    // `*int32` replicas: 0 is a value, not "unset"; `*bool` false likewise.
    let deployment = encoded(
        "apps",
        "Deployment",
        json!({"spec": {"replicas": 0, "paused": false, "template": {"spec": {"containers": [], "automountServiceAccountToken": false}}}}),
    );
    assert_eq!(deployment["spec"]["replicas"], 0);
    assert!(
        deployment["spec"].get("paused").is_none(),
        "paused is a bool with omitempty"
    );
    assert_eq!(
        deployment["spec"]["template"]["spec"]["automountServiceAccountToken"],
        false
    );
    // `containers` has no omitempty: an empty list stays.
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"],
        json!([])
    );
}

#[test]
fn a_null_struct_element_decodes_to_the_zero_struct() {
    let binding = encoded(
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        json!({"metadata": {"name": "b"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"}, "subjects": [null]}),
    );
    assert_eq!(binding["subjects"], json!([{"kind": "", "name": ""}]));
}

#[test]
fn unknown_kinds_and_fields_are_left_alone() {
    let custom = json!({"spec": {"anything": {}}, "status": null});
    assert_eq!(encoded("example.com", "Widget", custom.clone()), custom);
    let config_map = encoded(
        "",
        "ConfigMap",
        json!({"metadata": {"name": "c"}, "extra": {}}),
    );
    assert_eq!(config_map["extra"], json!({}));
}

#[test]
fn a_crd_schema_is_kept_as_written() {
    let schema = json!({"type": "object", "description": "", "properties": {"a": {"type": "string", "default": ""}}});
    let crd = encoded(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        json!({"spec": {"versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": schema.clone()}}]}}),
    );
    assert_eq!(
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
        schema
    );
}

#[test]
fn every_served_built_in_kind_has_a_struct() {
    // Reviews and component statuses are answered, never stored: nothing encodes them.
    for info in crate::resource::builtin_resources() {
        if info.review || info.computed {
            continue;
        }
        assert!(
            root_of(&info.group, &info.kind).is_some(),
            "{}/{} has no struct table",
            info.group,
            info.kind
        );
        let root = root_of(&info.group, &info.kind).unwrap();
        assert!(
            root.name.ends_with(&format!(".{}", info.kind)),
            "{}",
            root.name
        );
        let key = crate::store::resource_key(&info.group, &info.plural);
        assert!(
            resource_root(&key).is_some_and(|(_, kind, _)| kind == info.kind),
            "{key}"
        );
    }
}

/// [`encode_struct`] walks an object's keys in sorted order: `serde_json`'s `preserve_order`
/// (an insertion-ordered map), if a dependency ever turned it on, would break that.
#[test]
fn objects_iterate_their_keys_sorted() {
    let object = json!({"b": 1, "a": 2, "c": 3});
    let keys: Vec<&String> = object.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["a", "b", "c"]);
}

#[test]
fn zero_fields_are_written_once_in_their_place() {
    // Present, absent and dropped fields interleaved in name order (`started` is a `*bool`:
    // false is a value).
    let status = encoded(
        "",
        "Pod",
        json!({"status": {"containerStatuses": [{"allocatedResources": {}, "image": "i", "name": "c", "ready": true, "started": false}]}}),
    );
    assert_eq!(
        status["status"]["containerStatuses"][0],
        json!({"image": "i", "imageID": "", "lastState": {}, "name": "c", "ready": true, "restartCount": 0, "started": false, "state": {}})
    );
}

#[test]
fn a_stored_node_converts_its_pod_cidr() {
    let mut node = json!({"metadata": {"name": "n"}, "spec": {"podCIDR": "10.0.0.0/24"}});
    encode_stored("/nodes", &mut node);
    assert_eq!(node["spec"]["podCIDRs"], json!(["10.0.0.0/24"]));
    assert_eq!(node["status"]["nodeInfo"]["kubeletVersion"], "");
}

#[test]
fn base64_is_read_as_go_reads_it_where_the_type_is_bytes() {
    let mut secret =
        json!({"data": {"a": "aGVs\nbG8=", "b": "d29y\r\nbGQ=", "c": "YR=="}, "type": "x\ny"});
    assert_eq!(canonical_base64("", "Secret", &mut secret), Ok(true));
    assert_eq!(
        secret,
        json!({"data": {"a": "aGVsbG8=", "b": "d29ybGQ=", "c": "YQ=="}, "type": "x\ny"})
    );
    let mut webhooks =
        json!({"webhooks": [{"name": "w", "clientConfig": {"caBundle": "LS0t\nLS0t"}}]});
    assert_eq!(
        canonical_base64(
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
            &mut webhooks
        ),
        Ok(true)
    );
    assert_eq!(
        webhooks["webhooks"][0]["clientConfig"]["caBundle"],
        "LS0tLS0t"
    );
    let mut plain = json!({"data": {"a": "aGVsbG8="}});
    assert_eq!(canonical_base64("", "Secret", &mut plain), Ok(false));
    let mut broken = json!({"data": {"a": "aGVsbG8=", "b": "ab.c"}});
    assert_eq!(
        canonical_base64("", "Secret", &mut broken),
        Err("illegal base64 data at input byte 2".to_string())
    );
}

#[rstest]
#[case("a", "b")]
#[case("b", "a")]
#[case("spec", "status")]
#[case("status", "spec")]
#[case("spec", "spec")]
#[case("", "a")]
#[case("a", "")]
#[case("", "")]
#[case("api", "apiVersion")]
#[case("apiVersion", "api")]
#[case("Z", "a")]
#[case("é", "z")]
#[case("terminationMessagePath", "terminationMessagePolicy")]
#[case("terminationGracePeriodSeconds", "terminationMessagePath")]
#[case("containers", "containers")]
#[case("abcdefghi", "abcdefgh")]
fn the_field_order_shortcut_is_string_order(#[case] a: &str, #[case] b: &str) {
    assert_eq!(before(a, b), a < b);
    assert_eq!(before(b, a), b < a);
    assert_eq!(named(a, b), a == b);
}

/// `value` with each one of its maps' members changed in turn (removed, `null`, empty, or a
/// quantity or time written another way), recursively: every variant has one change.
fn variants(value: &Value) -> Vec<Value> {
    let replacements = [
        json!(null),
        json!(""),
        json!(0),
        json!(false),
        json!([]),
        json!({}),
        json!([null]),
        json!("1000m"),
        json!(1),
        json!("2024-01-01T01:00:00+01:00"),
        json!("2024-01-01T00:00:00.5Z"),
    ];
    let mut out = Vec::new();
    match value {
        Value::Object(map) => {
            for (key, member) in map {
                let mut removed = map.clone();
                removed.remove(key);
                out.push(Value::Object(removed));
                for replacement in &replacements {
                    let mut replaced = map.clone();
                    replaced.insert(key.clone(), replacement.clone());
                    out.push(Value::Object(replaced));
                }
                for inner in variants(member) {
                    let mut nested = map.clone();
                    nested.insert(key.clone(), inner);
                    out.push(Value::Object(nested));
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                for inner in variants(item) {
                    let mut nested = items.clone();
                    nested[i] = inner;
                    out.push(Value::Array(nested));
                }
            }
        }
        _ => {}
    }
    out
}

/// The encoder leaves alone what its prechecks call unchanged, and nothing else: on every
/// kind's zero object and its one-change variants, and on objects with quantities, times and
/// nested lists, encoding with the prechecks gives what encoding without them gives, and a
/// precheck calls an object unchanged exactly when encoding gives it back equal.
#[test]
fn a_precheck_changes_no_encoding() {
    let mut objects: Vec<(&str, &str, Value)> = Vec::new();
    for (group, kind, _, _) in shapes::KINDS {
        let zero = zero_object(group, kind).unwrap();
        for variant in variants(&zero) {
            objects.push((group, kind, variant));
        }
        objects.push((group, kind, zero));
    }
    let pod = json!({
        "metadata": {"name": "p", "labels": {"a": "b"}, "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": 1}},
                                 "ports": [{"containerPort": 80}], "env": [{"name": "A", "value": ""}]}],
                 "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Gi"}}]},
        "status": {"conditions": [{"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2024-01-01T00:00:00Z"}]}
    });
    let event = json!({"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod"}, "eventTime": "2024-01-01T00:00:00.000000Z",
                       "firstTimestamp": "2024-01-01T00:00:00Z", "reportingComponent": "", "reportingInstance": "", "source": {}});
    for (group, kind, object) in [("", "Pod", pod), ("", "Event", event)] {
        let mut written = object.clone();
        encode(group, kind, &mut written);
        for variant in variants(&object).into_iter().chain(variants(&written)) {
            objects.push((group, kind, variant));
        }
        objects.push((group, kind, object));
        objects.push((group, kind, written));
    }
    assert!(objects.len() > 3_000, "{}", objects.len());
    for (group, kind, object) in objects {
        let with = encoded(group, kind, object.clone());
        changes::WITHOUT_PRECHECKS.with(|off| off.set(true));
        let without = encoded(group, kind, object.clone());
        changes::WITHOUT_PRECHECKS.with(|off| off.set(false));
        assert_eq!(with, without, "{group}/{kind}: {object}");
        let root = root_of(group, kind).unwrap();
        let Value::Object(map) = &object else {
            continue;
        };
        assert_eq!(
            changes::struct_changes(root, map, &|_| false),
            without != object,
            "{group}/{kind}: {object}"
        );
    }
}
