//! Tests of the apps rules: accepted and refused workloads with the real error texts.

use rstest::rstest;
use serde_json::{json, Value};

use super::*;

use crate::rules::validation::error_texts as texts;

/// Sets `value` at a JSON pointer, creating the objects on the way.
fn set(doc: &mut Value, pointer: &str, value: Value) {
    let mut at = doc;
    for part in pointer.trim_start_matches('/').split('/') {
        at = &mut at[part];
    }
    *at = value;
}

fn deployment() -> Value {
    json!({"metadata": {"name": "web"}, "spec": {"replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
}

#[rstest]
#[case::ok("/spec/replicas", json!(3), vec![])]
#[case::negative_replicas("/spec/replicas", json!(-1), vec!["spec.replicas: Invalid value: -1: must be greater than or equal to 0"])]
#[case::no_selector("/spec/selector", Value::Null, vec!["spec.selector: Required value"])]
#[case::empty_selector("/spec/selector", json!({}), vec!["spec.selector: Invalid value: {}: empty selector is invalid for deployment"])]
#[case::mismatch("/spec/template/metadata/labels", json!({"app": "api"}), vec!["spec.template.metadata.labels: Invalid value: {\"app\":\"api\"}: `selector` does not match template `labels`"])]
#[case::restart("/spec/template/spec/restartPolicy", json!("Never"), vec!["spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\""])]
#[case::recreate_with_rolling("/spec/strategy", json!({"type": "Recreate", "rollingUpdate": {}}), vec!["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"])]
#[case::deadline("/spec/progressDeadlineSeconds", json!(0), vec!["spec.progressDeadlineSeconds: Invalid value: 0: must be greater than minReadySeconds"])]
#[case::no_containers("/spec/template/spec/containers", json!([]), vec!["spec.template.spec.containers: Required value"])]
fn deployments(#[case] pointer: &str, #[case] value: Value, #[case] errors: Vec<&str>) {
    let mut d = deployment();
    set(&mut d, pointer, value);
    assert_eq!(texts(create_causes("Deployment", &d)), errors);
}

#[rstest]
#[case::deployment("Deployment")]
#[case::replica_set("ReplicaSet")]
#[case::daemon_set("DaemonSet")]
fn selectors_are_immutable(#[case] kind: &str) {
    let old = deployment();
    let mut new = old.clone();
    new["spec"]["selector"]["matchLabels"]["tier"] = json!("front");
    new["spec"]["template"]["metadata"]["labels"]["tier"] = json!("front");
    let causes = update_causes(kind, &old, &new, Target::Main);
    assert_eq!(
        texts(causes).last().map(String::as_str),
        Some(
        "spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"web\",\"tier\":\"front\"}}: field is immutable")
    );
}

#[test]
fn statefulset_selector_change_is_a_forbidden_spec_change() {
    let old = deployment();
    let mut new = old.clone();
    new["spec"]["selector"]["matchLabels"]["tier"] = json!("front");
    new["spec"]["template"]["metadata"]["labels"]["tier"] = json!("front");
    let fields: Vec<String> = update_causes("StatefulSet", &old, &new, Target::Main)
        .into_iter()
        .map(|c| c.field)
        .collect();
    assert_eq!(fields, vec!["spec"]);
}

/// The DaemonSet strategy validates the new object twice (`ValidateDaemonSet` and
/// `ValidateDaemonSetUpdate`), so each spec error is reported twice.
#[test]
fn daemonset_update_reports_spec_errors_twice() {
    let old = deployment();
    let mut new = old.clone();
    new["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
    assert_eq!(
        update_causes("DaemonSet", &old, &new, Target::Main).len(),
        2
    );
}

#[test]
fn statefulset_updates_keep_the_rest_of_the_spec() {
    let mut old = deployment();
    old["spec"]["serviceName"] = json!("web");
    let mut scaled = old.clone();
    scaled["spec"]["replicas"] = json!(5);
    assert!(update_causes("StatefulSet", &old, &scaled, Target::Main).is_empty());
    let mut renamed = old.clone();
    renamed["spec"]["serviceName"] = json!("other");
    assert_eq!(
        texts(update_causes("StatefulSet", &old, &renamed, Target::Main)),
        vec!["spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"]
    );
}

#[test]
fn statefulset_and_daemonset_specific_rules() {
    let mut s = deployment();
    s["spec"]["podManagementPolicy"] = json!("Random");
    s["spec"]["selector"] = json!({});
    assert_eq!(
        texts(create_causes("StatefulSet", &s)),
        vec![
            "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
            "spec.selector: Invalid value: {}: empty selector is invalid for statefulset",
        ]
    );
    let mut d = deployment();
    d["spec"]["template"]["spec"]["activeDeadlineSeconds"] = json!(5);
    assert_eq!(
        texts(create_causes("DaemonSet", &d)),
        vec!["spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in DaemonSet is not Supported"]
    );
}

#[test]
fn status_counts() {
    let new = json!({"status": {"replicas": 1, "readyReplicas": 2}});
    assert_eq!(
        texts(update_causes(
            "Deployment",
            &json!({}),
            &new,
            Target::Status
        )),
        vec!["status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas"]
    );
}

#[rstest]
#[case::defaults(json!({}), vec![])]
#[case::both_zero(json!({"maxSurge": 0, "maxUnavailable": 0}),
    vec!["spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0"])]
#[case::over_100(json!({"maxUnavailable": "150%"}),
    vec!["spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%"])]
#[case::negative_surge(json!({"maxSurge": -1}),
    vec!["spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or equal to 0"])]
fn deployment_rolling_updates(#[case] rolling_update: Value, #[case] errors: Vec<&str>) {
    let texts: Vec<String> = rolling_update_deployment(&rolling_update)
        .iter()
        .map(Cause::error_text)
        .collect();
    assert_eq!(texts, errors);
}

#[rstest]
#[case::defaults(json!({}), vec![])]
#[case::surge_only(json!({"maxUnavailable": 0, "maxSurge": 1}), vec![])]
#[case::both(json!({"maxUnavailable": 1, "maxSurge": "10%"}),
    vec!["spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"10%\"}: may not be set when maxUnavailable is non-zero"])]
#[case::neither(json!({"maxUnavailable": 0}),
    vec!["spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"])]
fn daemon_set_rolling_updates(#[case] rolling_update: Value, #[case] errors: Vec<&str>) {
    let texts: Vec<String> = rolling_update_daemon_set(&rolling_update)
        .iter()
        .map(Cause::error_text)
        .collect();
    assert_eq!(texts, errors);
}
