//! Rules of `storage.k8s.io/v1` CSINodes, from `pkg/apis/storage/validation` (`ValidateCSINode`,
//! `validateCSINodeDriver`, `ValidateCSINodeUpdate`) as the CSINode strategy calls them
//! (`AllowLongNodeID`: node ids up to 256 bytes): each driver a CSI driver name, once, with a
//! node id and qualified topology keys (reported at the driver's path, as upstream does), a
//! non-negative allocatable count. An update validates the object twice (the strategy's call and
//! the one inside `ValidateCSINodeUpdate`, so a cause is reported twice, as upstream reports it)
//! and keeps a driver that stays registered as it was, but for its allocatable count
//! (`MutableCSINodeAllocatableCount`, on by default since 1.35).

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::rules::core::pod_spec::csi_driver_name;
use crate::rules::validation::{go_quote, is_qualified_name, Cause, FieldErrorType};

/// `csiNodeIDLongerMaxLength` (the strategy allows long node ids).
const MAX_NODE_ID: usize = 256;

/// `ValidateCSINode` after the metadata.
pub fn create_causes(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut names = BTreeSet::new();
    for (i, driver) in drivers(obj).iter().enumerate() {
        causes.extend(driver_causes(
            driver,
            &format!("spec.drivers[{i}]"),
            &mut names,
        ));
    }
    causes
}

/// The strategy's update validation: the object twice, then the drivers kept as they were.
pub fn update_causes(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = create_causes(new);
    causes.extend(create_causes(new));
    for was in drivers(old) {
        for is in drivers(new).iter().filter(|d| d["name"] == was["name"]) {
            if without_allocatable(was) != without_allocatable(is) {
                causes.push(Cause::new(
                    FieldErrorType::Invalid,
                    "spec.drivers",
                    Some(go_driver(is)),
                    "field is immutable",
                ));
            }
        }
    }
    causes
}

fn drivers(obj: &Value) -> &[Value] {
    obj["spec"]["drivers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn without_allocatable(driver: &Value) -> Value {
    let mut copy = driver.clone();
    if let Some(map) = copy.as_object_mut() {
        map.remove("allocatable");
    }
    copy
}

/// `validateCSINodeDriver`.
fn driver_causes<'a>(driver: &'a Value, path: &str, names: &mut BTreeSet<&'a str>) -> Vec<Cause> {
    let name = driver["name"].as_str().unwrap_or_default();
    let mut causes = csi_driver_name(name, &format!("{path}.name"));
    let node_id = driver["nodeID"].as_str().unwrap_or_default();
    if node_id.is_empty() {
        causes.push(Cause::required(format!("{path}.nodeID"), ""));
    }
    if node_id.len() > MAX_NODE_ID {
        causes.push(Cause::invalid_str(
            format!("{path}.nodeID"),
            node_id,
            &format!("must be {MAX_NODE_ID} characters or less"),
        ));
    }
    if let Some(count) = driver["allocatable"]["count"].as_i64().filter(|c| *c < 0) {
        causes.push(Cause::invalid(
            format!("{path}.allocatable.count"),
            &json!(count),
            "must be greater than or equal to 0",
        ));
    }
    if !names.insert(name) {
        causes.push(Cause::duplicate(format!("{path}.name"), &json!(name)));
    }
    let mut keys = BTreeSet::new();
    for key in driver["topologyKeys"].as_array().into_iter().flatten() {
        let key = key.as_str().unwrap_or_default();
        if key.is_empty() {
            causes.push(Cause::required(path, ""));
        }
        if !keys.insert(key) {
            causes.push(Cause::duplicate(path, &json!(key)));
        }
        for msg in is_qualified_name(key) {
            causes.push(Cause::invalid_str(path, key, &msg));
        }
    }
    causes
}

/// A driver without its allocatable count, as `ErrorBody` prints the internal struct it compares
/// (`%#v` of a `*storage.CSINodeDriver`: internal types refuse JSON).
fn go_driver(driver: &Value) -> String {
    let keys = match driver.get("topologyKeys") {
        Some(Value::Array(keys)) => format!(
            "[]string{{{}}}",
            keys.iter()
                .map(|k| go_quote(k.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => "[]string(nil)".to_string(),
    };
    format!(
        "&storage.CSINodeDriver{{Name:{}, NodeID:{}, TopologyKeys:{keys}, Allocatable:(*storage.VolumeNodeResources)(nil)}}",
        go_quote(driver["name"].as_str().unwrap_or_default()),
        go_quote(driver["nodeID"].as_str().unwrap_or_default()),
    )
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    use crate::rules::validation::error_texts as texts;

    fn node(drivers: Value) -> Value {
        json!({"metadata": {"name": "n1"}, "spec": {"drivers": drivers}})
    }

    #[rstest]
    #[case::valid(json!([{"name": "ebs.csi.aws.com", "nodeID": "i-1", "topologyKeys": ["topology.ebs.csi.aws.com/zone"], "allocatable": {"count": 25}}]), vec![])]
    #[case::no_drivers(json!([]), vec![])]
    #[case::bad_name(json!([{"name": "Bad_Driver", "nodeID": "i"}]),
        vec!["spec.drivers[0].name: Invalid value: \"Bad_Driver\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])]
    #[case::no_node_id(json!([{"name": "d.io"}]), vec!["spec.drivers[0].nodeID: Required value"])]
    #[case::negative(json!([{"name": "d.io", "nodeID": "i", "allocatable": {"count": -1}}]),
        vec!["spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0"])]
    #[case::twice(json!([{"name": "d.io", "nodeID": "i"}, {"name": "d.io", "nodeID": "j"}]),
        vec!["spec.drivers[1].name: Duplicate value: \"d.io\""])]
    #[case::keys(json!([{"name": "d.io", "nodeID": "i", "topologyKeys": ["zone", "zone", ""]}]),
        vec!["spec.drivers[0]: Duplicate value: \"zone\"",
             "spec.drivers[0]: Required value",
             "spec.drivers[0]: Invalid value: \"\": name part must be non-empty",
             "spec.drivers[0]: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"])]
    fn creates(#[case] drivers: Value, #[case] expected: Vec<&str>) {
        assert_eq!(texts(create_causes(&node(drivers))), expected);
    }

    #[test]
    fn long_node_ids_are_allowed_up_to_256_bytes() {
        let ok = node(json!([{"name": "d.io", "nodeID": "i".repeat(256)}]));
        assert!(create_causes(&ok).is_empty());
        let long = "i".repeat(257);
        let refused = node(json!([{"name": "d.io", "nodeID": long}]));
        assert_eq!(
            texts(create_causes(&refused)),
            vec![format!(
                "spec.drivers[0].nodeID: Invalid value: \"{long}\": must be 256 characters or less"
            )]
        );
    }

    #[test]
    fn a_registered_driver_keeps_all_but_its_count() {
        let old = node(
            json!([{"name": "d.io", "nodeID": "i", "topologyKeys": ["zone"], "allocatable": {"count": 1}}]),
        );
        let counted = node(
            json!([{"name": "d.io", "nodeID": "i", "topologyKeys": ["zone"], "allocatable": {"count": 9}}]),
        );
        assert!(update_causes(&old, &counted).is_empty());
        let moved = node(json!([{"name": "d.io", "nodeID": "j", "allocatable": {"count": 1}}]));
        assert_eq!(
            texts(update_causes(&old, &moved)),
            vec!["spec.drivers: Invalid value: &storage.CSINodeDriver{Name:\"d.io\", NodeID:\"j\", TopologyKeys:[]string(nil), Allocatable:(*storage.VolumeNodeResources)(nil)}: field is immutable"]
        );
        // Another driver may come and a registered one go.
        let other = node(json!([{"name": "e.io", "nodeID": "x"}]));
        assert!(update_causes(&old, &other).is_empty());
    }

    #[test]
    fn an_update_reports_each_cause_twice() {
        let old = node(json!([]));
        let new = node(json!([{"name": "d.io"}]));
        assert_eq!(
            texts(update_causes(&old, &new)),
            vec![
                "spec.drivers[0].nodeID: Required value",
                "spec.drivers[0].nodeID: Required value"
            ]
        );
    }
}
