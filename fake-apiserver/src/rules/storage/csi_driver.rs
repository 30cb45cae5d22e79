//! Rules of `storage.k8s.io/v1` CSIDrivers, from `pkg/apis/storage/validation`
//! (`ValidateCSIDriver`, `validateCSIDriverSpec`, `ValidateCSIDriverUpdate`) and the CSIDriver
//! strategy (`pkg/registry/storage/csidriver`): the spec's booleans are required (the v1
//! defaulter always sets them), the file-system group policy and lifecycle modes are known
//! values, token request audiences are unique with expirations between ten minutes and 2^32
//! seconds, `serviceAccountTokenInSecrets` needs token requests; on update `attachRequired` and
//! `volumeLifecycleModes` are fixed. (A spec change moves the generation, though the create
//! leaves it as sent: `registry::generation`.)

use serde_json::{json, Map, Value};

use crate::rules::validation::Cause;

/// `supportedFSGroupPolicy`, sorted as `sets.String.List` gives it.
const FS_GROUP_POLICIES: [&str; 3] = ["File", "None", "ReadWriteOnceWithFSType"];

/// `validateTokenRequests`: ten minutes.
const MIN_TOKEN_EXPIRATION: i64 = 600;
/// `validateTokenRequests`: 2^32 seconds.
const MAX_TOKEN_EXPIRATION: i64 = 1 << 32;

/// `SetDefaults_CSIDriver` (with `SELinuxMountReadWriteOncePod` on, as in 1.36).
pub fn defaults(spec: &mut Map<String, Value>) {
    for (key, value) in [
        ("attachRequired", json!(true)),
        ("podInfoOnMount", json!(false)),
        ("storageCapacity", json!(false)),
        ("fsGroupPolicy", json!("ReadWriteOnceWithFSType")),
        ("requiresRepublish", json!(false)),
        ("seLinuxMount", json!(false)),
    ] {
        if spec.get(key).is_none_or(Value::is_null) {
            spec.insert(key.into(), value);
        }
    }
    let no_modes = spec
        .get("volumeLifecycleModes")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if no_modes {
        spec.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
    }
}

/// `ValidateCSIDriver` after the metadata.
pub fn create_causes(obj: &Value) -> Vec<Cause> {
    spec_causes(&obj["spec"])
}

/// `ValidateCSIDriverUpdate` after the metadata: the spec again, then the fixed fields (at the
/// paths upstream names, `spec.attachedRequired` included).
pub fn update_causes(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = spec_causes(&new["spec"]);
    for (key, path) in [
        ("attachRequired", "spec.attachedRequired"),
        ("volumeLifecycleModes", "spec.volumeLifecycleModes"),
    ] {
        let (was, is) = (&old["spec"][key], &new["spec"][key]);
        if was != is {
            causes.push(Cause::invalid(path, is, "field is immutable"));
        }
    }
    causes
}

/// `validateCSIDriverSpec`.
fn spec_causes(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (key, path) in [
        ("attachRequired", "spec.attachedRequired"),
        ("podInfoOnMount", "spec.podInfoOnMount"),
        ("storageCapacity", "spec.storageCapacity"),
    ] {
        if spec[key].is_null() {
            causes.push(Cause::required(path, ""));
        }
    }
    if let Some(policy) = spec.get("fsGroupPolicy").filter(|v| !v.is_null()) {
        if !policy
            .as_str()
            .is_some_and(|p| FS_GROUP_POLICIES.contains(&p))
        {
            causes.push(Cause::not_supported(
                "spec.fsGroupPolicy",
                policy,
                &FS_GROUP_POLICIES.map(String::from),
            ));
        }
    }
    causes.extend(token_requests(spec));
    for mode in spec["volumeLifecycleModes"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if !matches!(mode.as_str(), Some("Persistent" | "Ephemeral")) {
            causes.push(Cause::not_supported(
                "spec.volumeLifecycleModes",
                mode,
                &["Persistent".into(), "Ephemeral".into()],
            ));
        }
    }
    if spec["seLinuxMount"].is_null() {
        causes.push(Cause::required("spec.seLinuxMount", ""));
    }
    if let Some(period) = spec["nodeAllocatableUpdatePeriodSeconds"].as_i64() {
        if period < 10 {
            causes.push(Cause::invalid(
                "spec.nodeAllocatableUpdatePeriodSeconds",
                &json!(period),
                "must be greater than or equal to 10 seconds",
            ));
        }
    }
    if let Some(in_secrets) = spec["serviceAccountTokenInSecrets"].as_bool() {
        let no_requests = spec["tokenRequests"].as_array().is_none_or(Vec::is_empty);
        if no_requests {
            causes.push(Cause::invalid(
                "spec.serviceAccountTokenInSecrets",
                &json!(in_secrets),
                "serviceAccountTokenInSecrets is set but no tokenRequests are specified",
            ));
        }
    }
    causes
}

/// `validateTokenRequests`: one request per audience (a repeated one is reported and not
/// checked further), expirations within bounds.
fn token_requests(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut audiences = std::collections::BTreeSet::new();
    for (i, request) in spec["tokenRequests"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let audience = request["audience"].as_str().unwrap_or_default();
        if !audiences.insert(audience) {
            causes.push(Cause::duplicate(
                format!("spec.tokenRequests[{i}].audience"),
                &json!(audience),
            ));
            continue;
        }
        let Some(seconds) = request["expirationSeconds"].as_i64() else {
            continue;
        };
        let path = format!("spec.tokenRequests[{i}].expirationSeconds");
        if seconds < MIN_TOKEN_EXPIRATION {
            causes.push(Cause::invalid(
                path.clone(),
                &json!(seconds),
                "may not specify a duration less than 10 minutes",
            ));
        }
        if seconds > MAX_TOKEN_EXPIRATION {
            causes.push(Cause::invalid(
                path,
                &json!(seconds),
                "may not specify a duration larger than 2^32 seconds",
            ));
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    use crate::rules::validation::error_texts as texts;

    fn defaulted(spec: Value) -> Value {
        let mut spec = spec.as_object().cloned().unwrap_or_default();
        defaults(&mut spec);
        json!({"metadata": {"name": "csi.example.com"}, "spec": spec})
    }

    #[test]
    fn the_defaults_fill_every_unset_field() {
        assert_eq!(
            defaulted(json!({}))["spec"],
            json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
                   "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": false,
                   "seLinuxMount": false, "volumeLifecycleModes": ["Persistent"]})
        );
        let kept =
            defaulted(json!({"attachRequired": false, "volumeLifecycleModes": ["Ephemeral"]}));
        assert_eq!(kept["spec"]["attachRequired"], false);
        assert_eq!(kept["spec"]["volumeLifecycleModes"], json!(["Ephemeral"]));
    }

    #[rstest]
    #[case::valid(json!({}), vec![])]
    #[case::policy(json!({"fsGroupPolicy": "Always"}),
        vec!["spec.fsGroupPolicy: Unsupported value: \"Always\": supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\""])]
    #[case::mode(json!({"volumeLifecycleModes": ["Persistent", "Inline"]}),
        vec!["spec.volumeLifecycleModes: Unsupported value: \"Inline\": supported values: \"Persistent\", \"Ephemeral\""])]
    #[case::short_token(json!({"tokenRequests": [{"audience": "a", "expirationSeconds": 60}]}),
        vec!["spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"])]
    #[case::long_token(json!({"tokenRequests": [{"audience": "a", "expirationSeconds": 4294967297_i64}]}),
        vec!["spec.tokenRequests[0].expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds"])]
    #[case::same_audience(json!({"tokenRequests": [{"audience": ""}, {"audience": "", "expirationSeconds": 1}]}),
        vec!["spec.tokenRequests[1].audience: Duplicate value: \"\""])]
    #[case::period(json!({"nodeAllocatableUpdatePeriodSeconds": 5}),
        vec!["spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: 5: must be greater than or equal to 10 seconds"])]
    #[case::secrets_without_requests(json!({"serviceAccountTokenInSecrets": true}),
        vec!["spec.serviceAccountTokenInSecrets: Invalid value: true: serviceAccountTokenInSecrets is set but no tokenRequests are specified"])]
    #[case::secrets_with_requests(json!({"serviceAccountTokenInSecrets": true, "tokenRequests": [{"audience": "a"}]}), vec![])]
    fn creates(#[case] spec: Value, #[case] expected: Vec<&str>) {
        assert_eq!(texts(create_causes(&defaulted(spec))), expected);
    }

    #[test]
    fn the_booleans_are_required_without_the_defaulter() {
        let bare = json!({"spec": {}});
        assert_eq!(
            texts(create_causes(&bare)),
            vec![
                "spec.attachedRequired: Required value",
                "spec.podInfoOnMount: Required value",
                "spec.storageCapacity: Required value",
                "spec.seLinuxMount: Required value"
            ]
        );
    }

    #[test]
    fn attach_required_and_modes_are_fixed() {
        let old = defaulted(json!({}));
        let new =
            defaulted(json!({"attachRequired": false, "volumeLifecycleModes": ["Ephemeral"]}));
        assert_eq!(
            texts(update_causes(&old, &new)),
            vec![
                "spec.attachedRequired: Invalid value: false: field is immutable",
                "spec.volumeLifecycleModes: Invalid value: [\"Ephemeral\"]: field is immutable"
            ]
        );
        let mutable = defaulted(json!({"podInfoOnMount": true, "storageCapacity": true}));
        assert!(update_causes(&old, &mutable).is_empty());
    }
}
