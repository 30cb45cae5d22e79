//! Rules of `storage.k8s.io/v1` VolumeAttributesClasses, from `pkg/apis/storage/validation`
//! (`ValidateVolumeAttributesClass`, `ValidateVolumeAttributesClassUpdate`) as the strategy
//! calls them: the driver name a qualified name, at least one parameter; on update the driver
//! and the parameters are fixed and the object is validated twice (the strategy's call and the
//! one inside `ValidateVolumeAttributesClassUpdate`, so a cause is reported twice, as upstream
//! reports it).

use serde_json::Value;

use super::{parameters_causes, provisioner_causes};
use crate::rules::validation::Cause;

/// `ValidateVolumeAttributesClass` after the metadata.
pub fn create_causes(obj: &Value) -> Vec<Cause> {
    let mut causes =
        provisioner_causes(obj["driverName"].as_str().unwrap_or_default(), "driverName");
    causes.extend(parameters_causes(obj.get("parameters"), false));
    causes
}

/// The strategy's update validation.
pub fn update_causes(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = create_causes(new);
    if old["driverName"] != new["driverName"] {
        causes.push(Cause::forbidden(
            "driverName",
            "updates to driverName are forbidden.",
        ));
    }
    if !crate::rules::same_at(
        "storage.k8s.io",
        "VolumeAttributesClass",
        &["parameters"],
        old,
        new,
    ) {
        causes.push(Cause::forbidden(
            "parameters",
            "updates to parameters are forbidden.",
        ));
    }
    causes.extend(create_causes(new));
    causes
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    use crate::rules::validation::error_texts as texts;

    #[rstest]
    #[case::valid(json!({"driverName": "ebs.csi.aws.com", "parameters": {"iops": "3000"}}), vec![])]
    #[case::no_parameters(json!({"driverName": "ebs.csi.aws.com"}),
        vec!["parameters: Required value: must contain at least one key/value pair"])]
    #[case::no_driver(json!({"parameters": {"iops": "3000"}}), vec!["driverName: Required value"])]
    #[case::empty_key(json!({"driverName": "d.io", "parameters": {"": "x"}}),
        vec!["parameters: Invalid value: \"\": field can not be empty."])]
    fn creates(#[case] obj: Value, #[case] expected: Vec<&str>) {
        assert_eq!(texts(create_causes(&obj)), expected);
    }

    #[test]
    fn the_driver_and_the_parameters_are_fixed() {
        let old = json!({"driverName": "a.io", "parameters": {"iops": "3000"}});
        let new = json!({"driverName": "b.io", "parameters": {"iops": "6000"}});
        assert_eq!(
            texts(update_causes(&old, &new)),
            vec![
                "driverName: Forbidden: updates to driverName are forbidden.",
                "parameters: Forbidden: updates to parameters are forbidden."
            ]
        );
        let emptied = json!({"driverName": "a.io"});
        assert_eq!(
            texts(update_causes(&old, &emptied)),
            vec![
                "parameters: Required value: must contain at least one key/value pair",
                "parameters: Forbidden: updates to parameters are forbidden.",
                "parameters: Required value: must contain at least one key/value pair"
            ]
        );
    }
}
