//! CRD `x-kubernetes-validations` through a real client: rules refuse custom resources with the
//! field errors a real server gives, transition rules see `oldSelf` only on update, ratcheting
//! lets an unchanged invalid value through with a warning, and a rule that does not compile
//! refuses the CRD.

use fake_apiserver::FakeApiServer;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::core::{DynamicObject, GroupVersionKind};
use kube::discovery::ApiResource;
use rstest::rstest;
use serde_json::{json, Value};

fn crd(spec_schema: Value) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "x-kubernetes-validations": [
                        {"rule": "self.metadata.name.startsWith('w')", "message": "name must start with w"}
                    ],
                    "properties": {
                        "spec": spec_schema,
                        "status": {"type": "object", "properties": {"count": {"type": "integer"}},
                            "x-kubernetes-validations": [{"rule": "self.count >= 0"}]}
                    }
                }}
            }]
        }
    }))
    .expect("a CRD")
}

fn widget_schema() -> Value {
    json!({
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.replicas >= self.minReplicas", "message": "replicas must be at least minReplicas"},
            {"rule": "self.name.size() <= 5", "messageExpression": "'name ' + self.name + ' is too long'"},
            {"rule": "self.name != 'forbidden'", "reason": "FieldValueForbidden", "fieldPath": ".name", "message": "this name is forbidden"},
            {"rule": "!has(self.tags) || self.tags.all(t, t.matches('^[a-z]+$'))"}
        ],
        "properties": {
            "replicas": {"type": "integer"},
            "minReplicas": {"type": "integer"},
            "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "immutable": {"type": "string", "x-kubernetes-validations": [
                {"rule": "self == oldSelf", "message": "is immutable"}
            ]},
            "counter": {"type": "integer", "x-kubernetes-validations": [
                {"rule": "oldSelf.hasValue() ? self >= oldSelf.value() : self < 10",
                 "message": "must start below 10 and never decrease", "optionalOldSelf": true}
            ]}
        },
        "required": ["replicas", "minReplicas", "name"]
    })
}

async fn setup() -> (FakeApiServer, Api<DynamicObject>) {
    let server = FakeApiServer::new();
    let crds: Api<CustomResourceDefinition> = Api::all(server.client());
    crds.create(&PostParams::default(), &crd(widget_schema()))
        .await
        .expect("the CRD is accepted");
    let gvk = GroupVersionKind::gvk("example.com", "v1", "Widget");
    let ar = ApiResource::from_gvk_with_plural(&gvk, "widgets");
    let widgets = Api::namespaced_with(server.client(), "default", &ar);
    (server, widgets)
}

fn widget(name: &str, spec: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": name}, "spec": spec
    }))
    .expect("a widget")
}

/// The code, message and causes (`field: message`) of a refusal.
fn refusal(err: kube::Error) -> (u16, String) {
    match err {
        kube::Error::Api(s) => (s.code, s.message),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[rstest]
#[case::valid("w1", json!({"replicas": 2, "minReplicas": 1, "name": "a", "tags": ["x"]}), None)]
#[case::message("w1", json!({"replicas": 1, "minReplicas": 2, "name": "a"}),
    Some(r#"Widget.example.com "w1" is invalid: spec: Invalid value: "object": replicas must be at least minReplicas"#))]
#[case::message_expression("w1", json!({"replicas": 1, "minReplicas": 1, "name": "toolong"}),
    Some(r#"Widget.example.com "w1" is invalid: spec: Invalid value: "object": name toolong is too long"#))]
#[case::reason_and_field_path("w1", json!({"replicas": 1, "minReplicas": 1, "name": "forbidden"}),
    Some(r#"Widget.example.com "w1" is invalid: [spec: Invalid value: "object": name forbidden is too long, spec.name: Forbidden: this name is forbidden]"#))]
#[case::default_message("w1", json!({"replicas": 1, "minReplicas": 1, "name": "a", "tags": ["X"]}),
    Some(r#"Widget.example.com "w1" is invalid: spec: Invalid value: "object": failed rule: !has(self.tags) || self.tags.all(t, t.matches('^[a-z]+$'))"#))]
#[case::root_rule("x1", json!({"replicas": 1, "minReplicas": 1, "name": "a"}),
    Some(r#"Widget.example.com "x1" is invalid: <nil>: Invalid value: "object": name must start with w"#))]
#[case::blocked_by_schema_errors("w1", json!({"replicas": 1, "name": "a"}),
    Some(r#"Widget.example.com "w1" is invalid: [spec.minReplicas: Required value, <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]"#))]
#[case::optional_old_self_on_create("w1", json!({"replicas": 1, "minReplicas": 1, "name": "a", "counter": 12}),
    Some(r#"Widget.example.com "w1" is invalid: spec.counter: Invalid value: "integer": must start below 10 and never decrease"#))]
#[tokio::test]
async fn rules_accept_or_refuse_a_custom_resource(
    #[case] name: &str,
    #[case] spec: Value,
    #[case] refused: Option<&str>,
) {
    let (_server, widgets) = setup().await;
    let result = widgets
        .create(&PostParams::default(), &widget(name, spec))
        .await;
    match (result, refused) {
        (Ok(_), None) => {}
        (Ok(created), Some(want)) => panic!("created {created:?}, expected: {want}"),
        (Err(e), None) => panic!("refused: {e}"),
        (Err(e), Some(want)) => assert_eq!(refusal(e), (422, want.to_string())),
    }
}

#[tokio::test]
async fn a_refusal_carries_the_causes_with_the_field_and_reason() {
    let (_server, widgets) = setup().await;
    let spec = json!({"replicas": 1, "minReplicas": 1, "name": "forbidden"});
    let err = widgets
        .create(&PostParams::default(), &widget("w1", spec))
        .await
        .expect_err("refused");
    let kube::Error::Api(status) = err else {
        panic!("expected an API error")
    };
    assert_eq!(status.reason, "Invalid");
    let causes = status.details.expect("details").causes;
    let fields: Vec<(&str, &str, &str)> = causes
        .iter()
        .map(|c| (c.reason.as_str(), c.field.as_str(), c.message.as_str()))
        .collect();
    assert_eq!(
        fields,
        vec![
            (
                "FieldValueInvalid",
                "spec",
                r#"Invalid value: "object": name forbidden is too long"#
            ),
            (
                "FieldValueForbidden",
                "spec.name",
                "Forbidden: this name is forbidden"
            ),
        ]
    );
}

#[tokio::test]
async fn transition_rules_run_on_update_only() {
    let (_server, widgets) = setup().await;
    let spec =
        json!({"replicas": 1, "minReplicas": 1, "name": "a", "immutable": "one", "counter": 5});
    widgets
        .create(&PostParams::default(), &widget("w1", spec))
        .await
        .expect("no oldSelf on create: the transition rule does not run");
    let change = json!({"spec": {"immutable": "two"}});
    let err = widgets
        .patch("w1", &PatchParams::default(), &Patch::Merge(&change))
        .await
        .expect_err("immutable");
    assert_eq!(
        refusal(err),
        (
            422,
            r#"Widget.example.com "w1" is invalid: spec.immutable: Invalid value: "string": is immutable"#
                .to_string()
        )
    );
    let decrease = json!({"spec": {"counter": 4}});
    let err = widgets
        .patch("w1", &PatchParams::default(), &Patch::Merge(&decrease))
        .await
        .expect_err("never decreases");
    assert_eq!(
        refusal(err).1,
        r#"Widget.example.com "w1" is invalid: spec.counter: Invalid value: "integer": must start below 10 and never decrease"#
    );
    let increase = json!({"spec": {"counter": 50, "immutable": "one"}});
    widgets
        .patch("w1", &PatchParams::default(), &Patch::Merge(&increase))
        .await
        .expect("growing past 10 on update is fine");
}

#[tokio::test]
async fn status_writes_are_checked_against_the_status_rules() {
    let (_server, widgets) = setup().await;
    let spec = json!({"replicas": 1, "minReplicas": 1, "name": "a"});
    widgets
        .create(&PostParams::default(), &widget("w1", spec))
        .await
        .expect("created");
    let status = json!({"status": {"count": -1}});
    let err = widgets
        .patch_status("w1", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect_err("count must not be negative");
    assert_eq!(
        refusal(err).1,
        r#"Widget.example.com "w1" is invalid: status: Invalid value: "object": failed rule: self.count >= 0"#
    );
}

fn broken_crd(rule: Value) -> CustomResourceDefinition {
    crd(
        json!({"type": "object", "properties": {"replicas": {"type": "integer"}},
        "x-kubernetes-validations": [rule]}),
    )
}

#[rstest]
#[case::syntax(json!({"rule": "self.replicas >"}), r#"apiextensions.ValidationRule{Rule:"self.replicas >", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:16: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}
 | self.replicas >
 | ...............^"#)]
#[case::undefined_field(json!({"rule": "self.replica > 0"}), r#"apiextensions.ValidationRule{Rule:"self.replica > 0", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: undefined field 'replica'
 | self.replica > 0
 | ....^"#)]
#[case::undeclared(json!({"rule": "replicas > 0"}), r#"apiextensions.ValidationRule{Rule:"replicas > 0", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:1: undeclared reference to 'replicas' (in container '')
 | replicas > 0
 | ^"#)]
#[case::not_bool(json!({"rule": "'yes'"}), r#"apiextensions.ValidationRule{Rule:"'yes'", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: cel expression must evaluate to a bool"#)]
#[tokio::test]
async fn a_crd_with_a_rule_that_does_not_compile_is_refused(
    #[case] rule: Value,
    #[case] detail: &str,
) {
    let server = FakeApiServer::new();
    let crds: Api<CustomResourceDefinition> = Api::all(server.client());
    let err = crds
        .create(&PostParams::default(), &broken_crd(rule))
        .await
        .expect_err("refused");
    assert_eq!(
        refusal(err),
        (
            422,
            format!(
                r#"CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {detail}"#
            )
        )
    );
}

/// A PATCH through the router: status and `Warning` headers.
async fn raw_patch(server: &FakeApiServer, path: &str, body: Value) -> (u16, Vec<String>) {
    use tower::ServiceExt;
    let request = http::Request::builder()
        .method("PATCH")
        .uri(path)
        .header("content-type", "application/merge-patch+json")
        .body(axum::body::Body::from(body.to_string()))
        .expect("a request");
    let response = server.router().oneshot(request).await.expect("an answer");
    let warnings = response
        .headers()
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect();
    (response.status().as_u16(), warnings)
}

#[tokio::test]
async fn an_unchanged_invalid_value_is_ratcheted_to_a_warning() {
    let (server, widgets) = setup().await;
    for (name, spec_name) in [("w1", "abc"), ("w2", "x")] {
        let spec = json!({"replicas": 1, "minReplicas": 1, "name": spec_name});
        widgets
            .create(&PostParams::default(), &widget(name, spec))
            .await
            .expect("created");
    }
    // The CRD tightens `name` after the fact.
    let mut schema = widget_schema();
    schema["properties"]["name"]["x-kubernetes-validations"] =
        json!([{"rule": "self != 'abc'", "message": "abc is reserved"}]);
    let tightened = serde_json::to_value(crd(schema)).expect("json");
    let crds: Api<CustomResourceDefinition> = Api::all(server.client());
    crds.patch(
        "widgets.example.com",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"versions": tightened["spec"]["versions"]}})),
    )
    .await
    .expect("the CRD is updated");
    let path = "/apis/example.com/v1/namespaces/default/widgets";
    let (code, warnings) = raw_patch(
        &server,
        &format!("{path}/w1"),
        json!({"spec": {"replicas": 2}}),
    )
    .await;
    assert_eq!(code, 200, "the unchanged name is let through");
    assert_eq!(
        warnings,
        vec![r#"299 - "spec.name: Invalid value: \"string\": abc is reserved""#]
    );
    let (code, _) = raw_patch(
        &server,
        &format!("{path}/w2"),
        json!({"spec": {"name": "abc"}}),
    )
    .await;
    assert_eq!(code, 422, "a changed value gets the rule");
}
