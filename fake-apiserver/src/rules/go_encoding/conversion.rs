//! The conversions between the core `v1` types and the server's internal ones that change what
//! is stored (`pkg/apis/core/v1/conversion.go`): a real server decodes every write into the
//! internal type and encodes it back, so a field `v1` keeps twice reads the same in both places.
//!
//! `NodeSpec`: the internal type has only `podCIDRs`; `podCIDR` becomes its first entry
//! (`Convert_v1_NodeSpec_To_core_NodeSpec`: a `podCIDR` that differs from `podCIDRs[0]` wins,
//! for older clients) and comes back as `podCIDRs[0]` (`Convert_core_NodeSpec_To_v1_NodeSpec`).
//!
//! `StatefulSetSpec` (`pkg/apis/apps/v1/conversion.go`): each claim template comes back with
//! `apiVersion: v1` and `kind: PersistentVolumeClaim`, whatever was sent
//! (`Convert_apps_StatefulSetSpec_To_v1_StatefulSetSpec`, kept for clients older than 1.17).

use serde_json::{Map, Value};

/// Applies the round trip through the internal type to an object of the kind `group`/`kind`.
pub(super) fn round_trip(group: &str, kind: &str, object: &mut Value) {
    match (group, kind) {
        ("", "Node") => {
            if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
                sync_single_and_list(spec, "podCIDR", "podCIDRs");
            }
        }
        ("apps", "StatefulSet") => {
            let templates = object
                .get_mut("spec")
                .and_then(|spec| spec.get_mut("volumeClaimTemplates"))
                .and_then(Value::as_array_mut);
            for template in templates.into_iter().flatten() {
                if let Some(template) = template.as_object_mut() {
                    template.insert("apiVersion".into(), Value::from("v1"));
                    template.insert("kind".into(), Value::from("PersistentVolumeClaim"));
                }
            }
        }
        _ => {}
    }
}

/// One field kept twice in `v1`: the single value wins when it is set and differs from the
/// list's first entry (the list becomes just it), and is then the list's first entry.
fn sync_single_and_list(object: &mut Map<String, Value>, single: &str, list: &str) {
    let first = |object: &Map<String, Value>| {
        object
            .get(list)
            .and_then(Value::as_array)
            .and_then(|items| items.first())
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let one = object
        .get(single)
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !one.is_empty() && first(object).as_deref() != Some(one) {
        let one = Value::String(one.to_string());
        object.insert(list.to_string(), Value::Array(vec![one]));
    }
    if let Some(first) = first(object) {
        object.insert(single.to_string(), Value::String(first));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::single_fills_the_list(json!({"podCIDR": "10.0.0.0/24"}), json!({"podCIDR": "10.0.0.0/24", "podCIDRs": ["10.0.0.0/24"]}))]
    #[case::list_fills_the_single(json!({"podCIDRs": ["10.0.0.0/24", "fd00::/64"]}), json!({"podCIDR": "10.0.0.0/24", "podCIDRs": ["10.0.0.0/24", "fd00::/64"]}))]
    #[case::a_differing_single_wins(json!({"podCIDR": "10.1.0.0/24", "podCIDRs": ["10.0.0.0/24", "fd00::/64"]}), json!({"podCIDR": "10.1.0.0/24", "podCIDRs": ["10.1.0.0/24"]}))]
    #[case::agreeing_fields_stay(json!({"podCIDR": "10.0.0.0/24", "podCIDRs": ["10.0.0.0/24", "fd00::/64"]}), json!({"podCIDR": "10.0.0.0/24", "podCIDRs": ["10.0.0.0/24", "fd00::/64"]}))]
    #[case::neither(json!({"unschedulable": true}), json!({"unschedulable": true}))]
    fn node_pod_cidrs(#[case] spec: Value, #[case] want: Value) {
        let mut node = json!({"spec": spec});
        round_trip("", "Node", &mut node);
        assert_eq!(node["spec"], want);
    }

    #[test]
    fn other_kinds_are_untouched() {
        let mut pod = json!({"spec": {"podCIDR": "10.0.0.0/24"}});
        round_trip("", "Pod", &mut pod);
        assert_eq!(pod, json!({"spec": {"podCIDR": "10.0.0.0/24"}}));
    }

    #[test]
    fn claim_templates_come_back_typed() {
        let mut set = json!({"spec": {"volumeClaimTemplates": [
            {"metadata": {"name": "a"}},
            {"apiVersion": "v9", "kind": "Other", "metadata": {"name": "b"}}]}});
        round_trip("apps", "StatefulSet", &mut set);
        for template in set["spec"]["volumeClaimTemplates"].as_array().unwrap() {
            assert_eq!(
                (&template["apiVersion"], &template["kind"]),
                (&json!("v1"), &json!("PersistentVolumeClaim"))
            );
        }
    }
}
