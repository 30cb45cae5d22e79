use base64::Engine;
use rstest::rstest;
use serde_json::{json, Value};

use super::*;

const EC_CSR: &str = include_str!("testdata/ec.csr");
const TAMPERED_CSR: &str = include_str!("testdata/tampered.csr");
const CERT: &str = include_str!("testdata/cert.pem");
const NOW: &str = "2026-12-03T10:00:00Z";

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn csr(spec: Value) -> Value {
    let mut base = json!({
        "metadata": {"name": "req"},
        "spec": {
            "request": b64(EC_CSR),
            "signerName": "example.com/signer",
            "usages": ["client auth"],
        },
        "status": {},
    });
    if let (Some(base_spec), Some(extra)) = (base["spec"].as_object_mut(), spec.as_object()) {
        for (k, v) in extra {
            base_spec.insert(k.clone(), v.clone());
        }
    }
    base
}

fn messages(causes: &[Cause]) -> Vec<String> {
    causes.iter().map(Cause::error_text).collect()
}

fn with_conditions(mut obj: Value, conditions: Value) -> Value {
    obj["status"]["conditions"] = conditions;
    obj
}

#[test]
fn a_well_formed_request_is_valid() {
    assert_eq!(
        messages(&create_causes("CertificateSigningRequest", &csr(json!({})))),
        Vec::<String>::new()
    );
}

#[rstest]
#[case::tampered(json!({"request": b64(TAMPERED_CSR)}), "spec.request: Invalid value: []byte{0x2d, ", ": x509: ECDSA verification failure")]
#[case::not_pem(json!({"request": b64("hi")}), "spec.request: Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST", "")]
#[case::absent(json!({"request": null}), "spec.request: Invalid value: []byte(nil): PEM block type must be CERTIFICATE REQUEST", "")]
#[case::no_usages(json!({"usages": []}), "spec.usages: Required value", "")]
#[case::unknown_usage(json!({"usages": ["client auth", "flying"]}), "spec.usages[1]: Unsupported value: \"flying\": supported values: \"any\", \"cert sign\"", "\"timestamping\"")]
#[case::duplicate_usage(json!({"usages": ["client auth", "client auth"]}), "spec.usages[1]: Duplicate value: \"client auth\"", "")]
#[case::legacy_signer(json!({"signerName": "kubernetes.io/legacy-unknown"}), "spec.signerName: Invalid value: \"kubernetes.io/legacy-unknown\": the legacy signerName is not allowed via this API version", "")]
#[case::no_signer(json!({"signerName": ""}), "spec.signerName: Required value", "")]
#[case::signer_without_path(json!({"signerName": "example.com"}), "spec.signerName: Invalid value: \"example.com\": must be a fully qualified domain and path of the form 'example.com/signer-name'", "")]
#[case::signer_single_label(json!({"signerName": "example/signer"}), "spec.signerName: Invalid value: \"example\": should be a domain with at least two segments separated by dots", "")]
#[case::signer_bad_label(json!({"signerName": "Ex.com/signer"}), "spec.signerName: Invalid value: \"Ex.com\": validating label \"Ex\": a lowercase RFC 1123 label must consist of", "")]
#[case::short_expiration(json!({"expirationSeconds": 599}), "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)", "")]
fn invalid_requests(#[case] spec: Value, #[case] starts: &str, #[case] ends: &str) {
    let found = messages(&create_causes("CertificateSigningRequest", &csr(spec)));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with(starts), "{found:?}");
    assert!(found[0].ends_with(ends), "{found:?}");
}

#[rstest]
#[case::approved_and_denied(json!([{"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}]),
    &["status.conditions[1].type: Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive"])]
#[case::false_approval(json!([{"type": "Approved", "status": "False"}]),
    &["status.conditions[0].status: Unsupported value: \"False\": supported values: \"True\""])]
#[case::no_status(json!([{"type": "Custom"}]), &["status.conditions[0].status: Required value"])]
#[case::no_type(json!([{"status": "True"}]), &["status.conditions[0].type: Required value"])]
#[case::duplicate(json!([{"type": "Custom", "status": "True"}, {"type": "Custom", "status": "False"}]),
    &["status.conditions[1].type: Duplicate value: \"Custom\""])]
#[case::unknown_custom(json!([{"type": "Custom", "status": "Maybe"}]),
    &["status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\""])]
fn approval_conditions(#[case] conditions: Value, #[case] expected: &[&str]) {
    let old = csr(json!({}));
    let new = with_conditions(old.clone(), conditions);
    let found = messages(&update_causes(
        "CertificateSigningRequest",
        &old,
        &new,
        Target::Approval,
    ));
    assert_eq!(found, expected);
}

#[test]
fn only_approval_adds_approval_conditions() {
    let old = csr(json!({}));
    let new = with_conditions(old.clone(), json!([{"type": "Approved", "status": "True"}]));
    assert!(update_causes("CertificateSigningRequest", &old, &new, Target::Approval).is_empty());
    assert_eq!(
        messages(&update_causes(
            "CertificateSigningRequest",
            &old,
            &new,
            Target::Status
        )),
        ["status.conditions: Forbidden: updates may not add a condition of type \"Approved\""]
    );
}

#[test]
fn no_endpoint_removes_a_decision() {
    let old = with_conditions(
        csr(json!({})),
        json!([{"type": "Failed", "status": "True"}]),
    );
    let new = with_conditions(old.clone(), json!([]));
    for target in [Target::Main, Target::Status, Target::Approval] {
        assert_eq!(
            messages(&update_causes("CertificateSigningRequest", &old, &new, target)),
            ["status.conditions: Forbidden: updates may not remove a condition of type \"Failed\""]
        );
    }
}

#[test]
fn the_certificate_is_set_once_and_only_through_status() {
    let old = with_conditions(
        csr(json!({})),
        json!([{"type": "Approved", "status": "True"}]),
    );
    let mut issued = old.clone();
    issued["status"]["certificate"] = json!(b64(CERT));
    assert!(update_causes("CertificateSigningRequest", &old, &issued, Target::Status).is_empty());
    assert_eq!(
        messages(&update_causes(
            "CertificateSigningRequest",
            &old,
            &issued,
            Target::Approval
        )),
        ["status.certificate: Forbidden: updates may not set certificate content"]
    );
    let mut reissued = issued.clone();
    reissued["status"]["certificate"] = json!(b64(&format!("{CERT}{CERT}")));
    assert_eq!(
        messages(&update_causes(
            "CertificateSigningRequest",
            &issued,
            &reissued,
            Target::Status
        )),
        ["status.certificate: Forbidden: updates may not modify existing certificate content"]
    );
    let mut garbage = old.clone();
    garbage["status"]["certificate"] = json!(b64("not a certificate"));
    assert_eq!(
        messages(&update_causes("CertificateSigningRequest", &old, &garbage, Target::Status)),
        ["status.certificate: Invalid value: \"<certificate data>\": must contain at least one CERTIFICATE PEM block"]
    );
}

#[test]
fn problems_already_stored_are_tolerated() {
    // A stored request with a legacy signer and a duplicate usage may still be approved.
    let old = csr(json!({"signerName": LEGACY_UNKNOWN_SIGNER, "usages": ["any", "any", "odd"]}));
    let new = with_conditions(old.clone(), json!([{"type": "Approved", "status": "True"}]));
    assert!(update_causes("CertificateSigningRequest", &old, &new, Target::Approval).is_empty());
    // The same request is refused when created.
    assert_eq!(create_causes("CertificateSigningRequest", &old).len(), 3);
}

#[test]
fn create_records_the_requesting_user_and_resets_the_status() {
    let mut obj = csr(json!({"username": "mallory", "groups": ["system:masters"], "uid": "x"}));
    obj["status"] = json!({"conditions": [{"type": "Approved", "status": "True"}]});
    let groups = vec!["dev".to_string(), "system:authenticated".to_string()];
    let extra = [("scopes".to_string(), vec!["a".to_string()])].into();
    prepare_create(
        &mut obj,
        Some(Requestor {
            name: "alice",
            uid: "u-1",
            groups: &groups,
            extra: &extra,
        }),
    );
    assert_eq!(obj["spec"]["username"], "alice");
    assert_eq!(obj["spec"]["uid"], "u-1");
    assert_eq!(
        obj["spec"]["groups"],
        json!(["dev", "system:authenticated"])
    );
    assert_eq!(obj["spec"]["extra"], json!({"scopes": ["a"]}));
    assert_eq!(obj["status"], json!({}));
    let mut anonymous = csr(json!({"username": "mallory"}));
    prepare_create(&mut anonymous, None);
    assert!(anonymous["spec"].get("username").is_none());
}

#[test]
fn the_main_endpoint_changes_neither_spec_nor_status() {
    let old = with_conditions(
        csr(json!({})),
        json!([{"type": "Approved", "status": "True"}]),
    );
    let mut new = csr(json!({"usages": ["server auth"]}));
    new["metadata"]["labels"] = json!({"a": "b"});
    prepare_update(&old, &mut new, Target::Main, NOW);
    assert_eq!(new["spec"], old["spec"]);
    assert_eq!(new["status"], old["status"]);
    assert_eq!(new["metadata"]["labels"], json!({"a": "b"}));
}

#[test]
fn status_writes_keep_the_stored_decision_and_stamp_new_conditions() {
    let old = with_conditions(
        csr(json!({})),
        json!([{"type": "Approved", "status": "True", "reason": "Ok", "lastUpdateTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}]),
    );
    let mut new = with_conditions(
        csr(json!({"usages": ["server auth"]})),
        json!([{"type": "Approved", "status": "True", "reason": "Changed"}, {"type": "Failed", "status": "True"}]),
    );
    prepare_update(&old, &mut new, Target::Status, NOW);
    assert_eq!(new["spec"], old["spec"]);
    let conditions = new["status"]["conditions"].as_array().unwrap();
    assert_eq!(conditions[0], old["status"]["conditions"][0]);
    assert_eq!(conditions[1]["lastUpdateTime"], NOW);
    assert_eq!(conditions[1]["lastTransitionTime"], NOW);
}

#[test]
fn approval_writes_take_only_the_conditions() {
    let mut old = with_conditions(
        csr(json!({})),
        json!([{"type": "Custom", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "lastUpdateTime": "2026-01-01T00:00:00Z"}]),
    );
    old["status"]["certificate"] = json!(b64(CERT));
    let mut new = with_conditions(
        csr(json!({"signerName": "other.com/x"})),
        json!([{"type": "Custom", "status": "True"}, {"type": "Approved", "status": "True"}]),
    );
    prepare_update(&old, &mut new, Target::Approval, NOW);
    assert_eq!(new["spec"], old["spec"]);
    assert_eq!(new["status"]["certificate"], old["status"]["certificate"]);
    let conditions = new["status"]["conditions"].as_array().unwrap();
    // The same type and status keeps its transition time; the update time is new.
    assert_eq!(conditions[0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
    assert_eq!(conditions[0]["lastUpdateTime"], NOW);
    assert_eq!(conditions[1]["lastTransitionTime"], NOW);
}

#[rstest]
#[case::pending(json!({}), "Pending")]
#[case::approved(json!({"conditions": [{"type": "Approved"}]}), "Approved")]
#[case::denied_wins(json!({"conditions": [{"type": "Approved"}, {"type": "Denied"}]}), "Denied")]
#[case::failed(json!({"conditions": [{"type": "Approved"}, {"type": "Failed"}]}), "Approved,Failed")]
#[case::issued(json!({"conditions": [{"type": "Approved"}], "certificate": "AAEC"}), "Approved,Issued")]
fn printed_conditions(#[case] status: Value, #[case] expected: &str) {
    assert_eq!(printed_condition(&json!({"status": status})), expected);
}

#[test]
fn malformed_objects_never_panic() {
    for obj in [
        json!(null),
        json!({}),
        json!({"spec": 1, "status": "x"}),
        json!({"status": {"conditions": [1, "x"]}}),
    ] {
        create_causes("CertificateSigningRequest", &obj);
        update_causes("CertificateSigningRequest", &obj, &obj, Target::Status);
        let mut new = obj.clone();
        prepare_update(&obj, &mut new, Target::Approval, NOW);
        printed_condition(&obj);
    }
}
