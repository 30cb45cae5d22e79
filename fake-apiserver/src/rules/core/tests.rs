//! Tests of the core rules: each table lists inputs the real server accepts (no error) or
//! refuses (with its error text, `field: message`).

use rstest::rstest;
use serde_json::{json, Value};

use super::*;

use crate::rules::validation::error_texts as texts;

#[rstest]
#[case::plain("app.conf", vec![])]
#[case::env_style("KEY_NAME", vec![])]
#[case::slash("a/b", vec!["data[a/b]: Invalid value: \"a/b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"])]
#[case::dot(".", vec!["data[.]: Invalid value: \".\": must not be '.'"])]
#[case::dotdot_prefix("..a", vec!["data[..a]: Invalid value: \"..a\": must not start with '..'"])]
fn config_map_keys(#[case] key: &str, #[case] errors: Vec<&str>) {
    let cm = json!({"data": {key: "v"}});
    assert_eq!(texts(create_causes("ConfigMap", &cm)), errors);
}

#[test]
fn config_map_key_in_both_maps_and_total_size() {
    let both = json!({"data": {"a": "1"}, "binaryData": {"a": "MQ=="}});
    assert_eq!(
        texts(create_causes("ConfigMap", &both)),
        vec!["data[a]: Invalid value: \"a\": duplicate of key present in binaryData"]
    );
    // Only values count toward the limit.
    let at_limit = json!({"data": {"k": "x".repeat(MAX_SECRET_SIZE)}});
    assert!(create_causes("ConfigMap", &at_limit).is_empty());
    let over = json!({"data": {"k": "x".repeat(MAX_SECRET_SIZE + 1)}});
    assert_eq!(
        texts(create_causes("ConfigMap", &over)),
        vec!["[]: Too long: may not be more than 1048576 bytes"]
    );
}

#[rstest]
#[case::opaque(json!({"type": "Opaque", "data": {"a": "eA=="}}), vec![])]
#[case::tls_missing_key(json!({"type": "kubernetes.io/tls", "data": {"tls.crt": "eA=="}}), vec!["data[tls.key]: Required value"])]
#[case::basic_auth_empty(json!({"type": "kubernetes.io/basic-auth", "data": {}}), vec!["data[username]: Required value", "data[password]: Required value"])]
#[case::basic_auth_password_only(json!({"type": "kubernetes.io/basic-auth", "data": {"password": ""}}), vec![])]
#[case::ssh_empty(json!({"type": "kubernetes.io/ssh-auth", "data": {"ssh-privatekey": ""}}), vec!["data[ssh-privatekey]: Required value"])]
#[case::sa_token_without_annotation(json!({"type": "kubernetes.io/service-account-token"}), vec!["metadata.annotations[kubernetes.io/service-account.name]: Required value"])]
#[case::dockerconfigjson_array(json!({"type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "W10="}}), vec!["data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": json: cannot unmarshal array into Go value of type map[string]interface {}"])]
#[case::dockerconfigjson_missing(json!({"type": "kubernetes.io/dockerconfigjson", "data": {}}), vec!["data[.dockerconfigjson]: Required value"])]
#[case::bad_key(json!({"data": {"a b": "eA=="}}), vec!["data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"])]
fn secrets(#[case] secret: Value, #[case] errors: Vec<&str>) {
    assert_eq!(texts(create_causes("Secret", &secret)), errors);
}

#[test]
fn secret_type_is_immutable() {
    let old = json!({"type": "Opaque"});
    let new = json!({"type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}});
    assert_eq!(
        texts(update_causes("Secret", &old, &new, Target::Main, false)),
        vec!["type: Invalid value: \"kubernetes.io/tls\": field is immutable"]
    );
}

fn pod(spec: Value) -> Value {
    json!({"metadata": {"name": "p"}, "spec": spec})
}

#[rstest]
#[case::ok(json!({"containers": [{"name": "app", "image": "nginx"}]}), vec![])]
#[case::no_containers(json!({}), vec!["spec.containers: Required value"])]
#[case::no_image(json!({"containers": [{"name": "app"}]}), vec!["spec.containers[0].image: Required value"])]
#[case::no_name(json!({"containers": [{"image": "nginx"}]}), vec!["spec.containers[0].name: Required value"])]
#[case::duplicate_name(json!({"containers": [{"name": "a", "image": "x"}, {"name": "a", "image": "y"}]}), vec!["spec.containers[1].name: Duplicate value: \"a\""])]
#[case::restart_policy(json!({"restartPolicy": "Sometimes", "containers": [{"name": "a", "image": "x"}]}), vec!["spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\""])]
#[case::deadline_zero(json!({"activeDeadlineSeconds": 0, "containers": [{"name": "a", "image": "x"}]}), vec!["spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"])]
#[case::toleration_without_key(json!({"tolerations": [{"operator": "Equal", "value": "v"}], "containers": [{"name": "a", "image": "x"}]}), vec!["spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\""])]
#[case::toleration_seconds_needs_noexecute(json!({"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}], "containers": [{"name": "a", "image": "x"}]}), vec!["spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"])]
#[case::toleration_effect(json!({"tolerations": [{"key": "k", "operator": "Exists", "effect": "Never"}], "containers": [{"name": "a", "image": "x"}]}), vec!["spec.tolerations[0].effect: Unsupported value: \"Never\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""])]
fn pod_specs(#[case] spec: Value, #[case] errors: Vec<&str>) {
    assert_eq!(texts(create_causes("Pod", &pod(spec))), errors);
}

fn running_pod() -> Value {
    pod(json!({"activeDeadlineSeconds": 100,
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}],
        "containers": [{"name": "app", "image": "nginx:1", "env": [{"name": "A"}]}]}))
}

#[rstest]
#[case::image("/spec/containers/0/image", json!("nginx:2"), vec![])]
#[case::lower_deadline("/spec/activeDeadlineSeconds", json!(50), vec![])]
#[case::raise_deadline("/spec/activeDeadlineSeconds", json!(200), vec!["spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value"])]
#[case::negative_deadline("/spec/activeDeadlineSeconds", json!(-1), vec!["spec.activeDeadlineSeconds: Invalid value: -1: must be between 1 and 2147483647, inclusive", "spec.activeDeadlineSeconds: Invalid value: -1: must be between 0 and 2147483647, inclusive"])]
#[case::toleration_seconds("/spec/tolerations/0/tolerationSeconds", json!(30), vec![])]
#[case::toleration_changed("/spec/tolerations/0/key", json!("other"), vec!["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"])]
// Reported twice, as upstream does: by `validateContainersOnlyForPod` and by
// `ValidateContainerUpdates`.
#[case::image_space("/spec/containers/0/image", json!(" nginx"), vec!["spec.containers[0].image: Invalid value: \" nginx\": must not have leading or trailing whitespace", "spec.containers[0].image: Invalid value: \" nginx\": must not have leading or trailing whitespace"])]
#[case::image_emptied("/spec/containers/0/image", json!(""), vec!["spec.containers[0].image: Required value", "spec.containers[0].image: Required value"])]
#[case::env("/spec/containers/0/env/0/name", json!("B"), vec!["spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"])]
fn pod_updates(#[case] pointer: &str, #[case] value: Value, #[case] errors: Vec<&str>) {
    let old = running_pod();
    let mut new = old.clone();
    *new.pointer_mut(pointer).unwrap() = value;
    assert_eq!(
        texts(update_causes("Pod", &old, &new, Target::Main, false)),
        errors
    );
}

#[test]
fn pod_update_rules_for_lists_and_removed_deadline() {
    let old = running_pod();
    let mut added = old.clone();
    added["spec"]["tolerations"]
        .as_array_mut()
        .unwrap()
        .push(json!({"key": "x", "operator": "Exists"}));
    assert!(update_causes("Pod", &old, &added, Target::Main, false).is_empty());
    let mut removed = old.clone();
    removed["spec"]
        .as_object_mut()
        .unwrap()
        .remove("activeDeadlineSeconds");
    assert_eq!(
        texts(update_causes("Pod", &old, &removed, Target::Main, false)),
        vec!["spec.activeDeadlineSeconds: Invalid value: \"null\": must not update from a positive integer to nil value"]
    );
    let mut more = old.clone();
    more["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "b", "image": "x"}));
    assert_eq!(
        texts(update_causes("Pod", &old, &more, Target::Main, false)),
        vec!["spec.containers: Forbidden: pod updates may not add or remove containers"]
    );
}

#[rstest]
#[case::ok(json!({"taints": [{"key": "a", "effect": "NoSchedule"}], "podCIDRs": ["10.0.0.0/24", "fd00::/64"]}), vec![])]
#[case::no_effect(json!({"taints": [{"key": "a"}]}), vec!["metadata.taints[0].effect: Required value", "metadata.taints[0].effect: Unsupported value: \"\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""])]
#[case::duplicate(json!({"taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "value": "b", "effect": "NoSchedule"}]}), vec!["metadata.taints[1]: Duplicate value: {\"effect\":\"NoSchedule\",\"key\":\"a\",\"value\":\"b\"}: taints must be unique by key and effect pair"])]
#[case::bad_cidr(json!({"podCIDRs": ["10.0.0.0"]}), vec!["spec.podCIDRs[0]: Invalid value: \"10.0.0.0\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"])]
#[case::two_v4(json!({"podCIDRs": ["10.0.0.0/24", "10.1.0.0/24"]}), vec!["spec.podCIDRs: Invalid value: [\"10.0.0.0/24\",\"10.1.0.0/24\"]: may specify no more than one CIDR for each IP family"])]
fn nodes(#[case] spec: Value, #[case] errors: Vec<&str>) {
    assert_eq!(texts(create_causes("Node", &json!({"spec": spec}))), errors);
}

#[rstest]
#[case::set_provider("", "aws:///i-1", vec![])]
#[case::keep_provider("aws:///i-1", "aws:///i-1", vec![])]
#[case::change_provider("aws:///i-1", "aws:///i-2", vec!["spec.providerID: Forbidden: node updates may not change providerID except from \"\" to valid"])]
fn node_provider_id_is_set_once(#[case] old: &str, #[case] new: &str, #[case] errors: Vec<&str>) {
    let old = json!({"spec": {"providerID": old}});
    let new = json!({"spec": {"providerID": new}});
    assert_eq!(
        texts(update_causes("Node", &old, &new, Target::Main, false)),
        errors
    );
}

#[test]
fn node_pod_cidrs_are_set_once() {
    let old = json!({"spec": {"podCIDRs": ["10.0.0.0/24"]}});
    let new = json!({"spec": {"podCIDRs": ["10.0.1.0/24"]}});
    assert_eq!(
        texts(update_causes("Node", &old, &new, Target::Status, false)),
        vec!["spec.podCIDRs: Forbidden: node updates may not change podCIDR except from \"\" to valid"]
    );
    assert!(update_causes("Node", &json!({"spec": {}}), &new, Target::Main, false).is_empty());
}

#[rstest]
#[case::standard("kubernetes", vec![])]
#[case::qualified("example.com/x", vec![])]
#[case::bare("cleanup", vec!["spec.finalizers: Invalid value: \"cleanup\": name is neither a standard finalizer name nor is it fully qualified"])]
fn namespace_spec_finalizers(#[case] finalizer: &str, #[case] errors: Vec<&str>) {
    let ns = json!({"spec": {"finalizers": [finalizer]}});
    assert_eq!(texts(create_causes("Namespace", &ns)), errors);
}

#[rstest]
#[case::ok(json!({"ports": [{"port": 80}]}), vec![])]
#[case::headless(json!({"clusterIP": "None"}), vec![])]
#[case::external_name(json!({"type": "ExternalName", "externalName": "db.example.com"}), vec![])]
#[case::no_ports(json!({}), vec!["spec.ports: Required value"])]
#[case::port_zero(json!({"ports": [{"port": 0}]}), vec!["spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"])]
#[case::unnamed_pair(json!({"ports": [{"name": "http", "port": 80}, {"port": 443}]}), vec!["spec.ports[1].name: Required value"])]
#[case::same_names(json!({"ports": [{"name": "http", "port": 80}, {"name": "http", "port": 81}]}), vec!["spec.ports[1].name: Duplicate value: \"http\""])]
#[case::protocol(json!({"ports": [{"port": 80, "protocol": "HTTP"}]}), vec!["spec.ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\""])]
#[case::type_(json!({"type": "Internal", "ports": [{"port": 80}]}), vec!["spec.type: Unsupported value: \"Internal\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\""])]
fn services(#[case] spec: Value, #[case] errors: Vec<&str>) {
    assert_eq!(
        texts(create_causes("Service", &json!({"spec": spec}))),
        errors
    );
}

#[rstest]
#[case::running(json!({"phase": "Running", "qosClass": "BestEffort", "podIP": "10.0.0.5"}), vec![])]
#[case::bad_ip(json!({"qosClass": "BestEffort", "podIP": "10.0.0.500"}),
    vec!["status.podIPs[0]: Invalid value: \"10.0.0.500\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"])]
#[case::single_ip_wins(json!({"qosClass": "BestEffort", "podIP": "not-an-ip", "podIPs": [{"ip": "10.0.0.5"}]}),
    vec!["status.podIPs[0]: Invalid value: \"not-an-ip\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"])]
#[case::qos_left_out(json!({"phase": "Failed"}), vec![])]
#[case::qos(json!({"qosClass": "Guaranteed"}),
    vec!["status.qosClass: Invalid value: \"Guaranteed\": field is immutable"])]
#[case::condition(json!({"qosClass": "BestEffort", "conditions": [{"type": "my condition", "status": "True"}]}),
    vec!["metadata.conditions[0].Type: Invalid value: \"my condition\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"])]
#[case::host_ips_one_family(json!({"qosClass": "BestEffort", "hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}),
    vec!["status.hostIPs: Invalid value: [{\"ip\":\"10.0.0.1\"},{\"ip\":\"10.0.0.2\"}]: may specify no more than one IP for each IP family"])]
fn pod_status_updates(#[case] status: Value, #[case] errors: Vec<&str>) {
    let old = json!({"spec": {"restartPolicy": "Always"}, "status": {"phase": "Pending", "qosClass": "BestEffort"}});
    let new = json!({"spec": {"restartPolicy": "Always"}, "status": status});
    assert_eq!(
        texts(update_causes("Pod", &old, &new, Target::Status, false)),
        errors
    );
}

#[test]
fn a_finished_container_of_a_never_restarting_pod_stays_finished() {
    let old = json!({"spec": {"restartPolicy": "Never"}, "status": {"qosClass": "BestEffort",
        "containerStatuses": [{"name": "c", "state": {"terminated": {"exitCode": 0}}}]}});
    let new = json!({"spec": {"restartPolicy": "Never"}, "status": {"qosClass": "BestEffort",
        "containerStatuses": [{"name": "c", "state": {"running": {}}}]}});
    assert_eq!(
        texts(update_causes("Pod", &old, &new, Target::Status, false)),
        vec!["status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state"]
    );
}

#[test]
fn a_pod_template_has_no_ephemeral_containers() {
    let template = json!({"metadata": {"labels": {"app": "a"}},
        "spec": {"containers": [{"name": "c", "image": "i", "imagePullPolicy": "Always",
            "terminationMessagePolicy": "File"}],
            "ephemeralContainers": [{"name": "e", "image": "busybox", "imagePullPolicy": "Always",
            "terminationMessagePolicy": "File"}],
            "restartPolicy": "Always", "dnsPolicy": "ClusterFirst"}});
    assert_eq!(
        texts(pod_template(&template, "spec.template")),
        vec!["spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template"]
    );
}

/// `ValidatePodEphemeralContainersUpdate` compares each existing ephemeral container with
/// `Semantic.DeepEqual`: `env: []` for no `env` is the same container.
#[rstest]
#[case::same_in_another_spelling(json!({"name": "dbg", "image": "busybox", "env": [], "resources": {}}), vec![])]
#[case::changed(json!({"name": "dbg", "image": "busybox:2"}), vec!["spec.ephemeralContainers: Forbidden: existing ephemeral containers \"dbg\" may not be changed\n"])]
fn existing_ephemeral_containers_compare_as_the_go_type(
    #[case] now: Value,
    #[case] expected: Vec<&str>,
) {
    let pod = |ephemeral: Value| {
        json!({"metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "image": "app", "imagePullPolicy": "Always",
                                        "terminationMessagePolicy": "File"}],
                        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
                        "ephemeralContainers": [ephemeral]}})
    };
    let old = pod(json!({"name": "dbg", "image": "busybox"}));
    let new = pod(now);
    let causes: Vec<String> = texts(pod_ephemeral_containers_update(&old, &new))
        .into_iter()
        .filter(|t| t.contains("ephemeralContainers: Forbidden: existing"))
        .collect();
    assert_eq!(causes, expected);
}
