//! ValidatingAdmissionPolicies through a real client: denials with the real Status, warnings,
//! params from a ConfigMap, bindings limited to labelled namespaces, matchConditions that skip
//! a policy, variables, deletes, and the failure policy.

use axum::body::Body;
use fake_apiserver::FakeApiServer;
use http::Request;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{json, Value};
use tower::ServiceExt;

fn api(server: &FakeApiServer, kind: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("admissionregistration.k8s.io", "v1", kind);
    let plural = if kind == "ValidatingAdmissionPolicy" {
        "validatingadmissionpolicies"
    } else {
        "validatingadmissionpolicybindings"
    };
    Api::all_with(
        server.client(),
        &ApiResource::from_gvk_with_plural(&gvk, plural),
    )
}

async fn install(server: &FakeApiServer, policy: Value, bindings: &[Value]) {
    let policy: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": policy["name"]}, "spec": policy["spec"]
    }))
    .expect("a policy");
    api(server, "ValidatingAdmissionPolicy")
        .create(&PostParams::default(), &policy)
        .await
        .expect("policy created");
    for b in bindings {
        let binding: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": b["name"]}, "spec": b["spec"]
        }))
        .expect("a binding");
        api(server, "ValidatingAdmissionPolicyBinding")
            .create(&PostParams::default(), &binding)
            .await
            .expect("binding created");
    }
}

fn configmap_rules(operations: &[&str]) -> Value {
    json!({"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": operations, "resources": ["configmaps"]}]})
}

fn cm(name: &str, data: Value) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": data})).expect("a ConfigMap")
}

fn refusal(err: kube::Error) -> (u16, String, String) {
    match err {
        kube::Error::Api(s) => (s.code, s.reason, s.message),
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn small_configmaps_policy(actions: &[&str]) -> (Value, Value) {
    (
        json!({"name": "small-configmaps", "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": configmap_rules(&["CREATE", "UPDATE"]),
            "validations": [{"expression": "!has(object.data) || size(object.data) <= 2", "message": "at most 2 keys"}]
        }}),
        json!({"name": "small-configmaps-binding", "spec": {
            "policyName": "small-configmaps", "validationActions": actions
        }}),
    )
}

#[tokio::test]
async fn a_deny_binding_refuses_creates_and_updates_with_the_real_status() {
    let server = FakeApiServer::new();
    let (policy, binding) = small_configmaps_policy(&["Deny"]);
    install(&server, policy, &[binding]).await;
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let err = cms
        .create(
            &PostParams::default(),
            &cm("big", json!({"a": "1", "b": "2", "c": "3"})),
        )
        .await
        .expect_err("denied");
    let want = r#"configmaps "big" is forbidden: ValidatingAdmissionPolicy 'small-configmaps' with binding 'small-configmaps-binding' denied request: at most 2 keys"#;
    assert_eq!(refusal(err), (422, "Invalid".into(), want.into()));
    cms.create(&PostParams::default(), &cm("small", json!({"a": "1"})))
        .await
        .expect("allowed");
    let grow = json!({"data": {"b": "2", "c": "3"}});
    let err = cms
        .patch("small", &PatchParams::default(), &Patch::Merge(&grow))
        .await
        .expect_err("the update is denied too");
    assert_eq!(refusal(err).2, want.replace("\"big\"", "\"small\""));
    assert!(
        server
            .get_object("v1", "configmaps", Some("default"), "big")
            .is_none(),
        "nothing stored"
    );
}

#[tokio::test]
async fn the_raw_status_carries_the_message_as_a_cause() {
    let server = FakeApiServer::new();
    let (policy, binding) = small_configmaps_policy(&["Deny"]);
    install(&server, policy, &[binding]).await;
    let (status, _, body) = raw(
        &server,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"a": "1", "b": "2", "c": "3"}}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(
        body["details"],
        json!({"name": "big", "kind": "configmaps", "causes": [{"message": "ValidatingAdmissionPolicy 'small-configmaps' with binding 'small-configmaps-binding' denied request: at most 2 keys"}]})
    );
}

/// A request through the router: status, `Warning` headers and body.
async fn raw(
    server: &FakeApiServer,
    method: &str,
    path: &str,
    body: Value,
) -> (u16, Vec<String>, Value) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("a request");
    let response = server.router().oneshot(request).await.expect("an answer");
    let status = response.status().as_u16();
    let warnings = response
        .headers()
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a body");
    (
        status,
        warnings,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn a_warn_binding_admits_with_a_warning_header() {
    let server = FakeApiServer::new();
    let (policy, binding) = small_configmaps_policy(&["Warn"]);
    install(&server, policy, &[binding]).await;
    let (status, warnings, _) = raw(
        &server,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"a": "1", "b": "2", "c": "3"}}),
    )
    .await;
    assert_eq!(status, 201);
    assert_eq!(
        warnings,
        vec![
            r#"299 - "Validation failed for ValidatingAdmissionPolicy 'small-configmaps' with binding 'small-configmaps-binding': at most 2 keys""#
        ]
    );
}

fn prefix_policy() -> Value {
    json!({"name": "name-prefix", "spec": {
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConstraints": configmap_rules(&["CREATE"]),
        "matchConditions": [{"name": "not-params", "expression": "!object.metadata.name.startsWith('params')"}],
        "variables": [{"name": "prefix", "expression": "params.data.prefix"}],
        "validations": [{
            "expression": "object.metadata.name.startsWith(variables.prefix)",
            "messageExpression": "'name must start with ' + variables.prefix + ', not ' + object.metadata.name",
            "reason": "Forbidden"
        }]
    }})
}

#[tokio::test]
async fn params_come_from_a_configmap() {
    let server = FakeApiServer::new();
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    cms.create(
        &PostParams::default(),
        &cm("params-prefix", json!({"prefix": "app-"})),
    )
    .await
    .expect("params");
    install(
        &server,
        prefix_policy(),
        &[json!({"name": "prefix-binding", "spec": {
            "policyName": "name-prefix", "validationActions": ["Deny"],
            "paramRef": {"name": "params-prefix", "parameterNotFoundAction": "Deny"}
        }})],
    )
    .await;
    let err = cms
        .create(&PostParams::default(), &cm("web", json!({})))
        .await
        .expect_err("denied");
    assert_eq!(
        refusal(err),
        (
            403,
            "Forbidden".into(),
            r#"configmaps "web" is forbidden: ValidatingAdmissionPolicy 'name-prefix' with binding 'prefix-binding' denied request: name must start with app-, not web"#.into()
        )
    );
    cms.create(&PostParams::default(), &cm("app-web", json!({})))
        .await
        .expect("the prefix is there");
    // The params in another namespace (the request's, as paramRef names none) are missing.
    let ns: Api<Namespace> = Api::all(server.client());
    ns.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "other"}})).expect("ns"),
    )
    .await
    .expect("namespace");
    let other: Api<ConfigMap> = Api::namespaced(server.client(), "other");
    let err = other
        .create(&PostParams::default(), &cm("app-x", json!({})))
        .await
        .expect_err("no params there");
    assert_eq!(
        refusal(err).2,
        r#"configmaps "app-x" is forbidden: ValidatingAdmissionPolicy 'name-prefix' with binding 'prefix-binding' denied request: failed to configure binding: no params found for policy binding with Deny parameterNotFoundAction"#
    );
}

#[tokio::test]
async fn a_binding_applies_only_in_namespaces_its_selector_selects() {
    let server = FakeApiServer::new();
    let ns: Api<Namespace> = Api::all(server.client());
    for (name, env) in [("prod", "prod"), ("dev", "dev")] {
        let n: Namespace =
            serde_json::from_value(json!({"metadata": {"name": name, "labels": {"env": env}}}))
                .expect("ns");
        ns.create(&PostParams::default(), &n)
            .await
            .expect("namespace");
    }
    let (policy, _) = small_configmaps_policy(&["Deny"]);
    install(
        &server,
        policy,
        &[json!({"name": "prod-only", "spec": {
            "policyName": "small-configmaps", "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchLabels": {"env": "prod"}}}
        }})],
    )
    .await;
    let big = cm("big", json!({"a": "1", "b": "2", "c": "3"}));
    let prod: Api<ConfigMap> = Api::namespaced(server.client(), "prod");
    let err = prod
        .create(&PostParams::default(), &big)
        .await
        .expect_err("denied in prod");
    assert_eq!(refusal(err).0, 422);
    let dev: Api<ConfigMap> = Api::namespaced(server.client(), "dev");
    dev.create(&PostParams::default(), &big)
        .await
        .expect("dev is not selected");
}

#[tokio::test]
async fn match_conditions_skip_a_policy() {
    let server = FakeApiServer::new();
    install(
        &server,
        json!({"name": "small-configmaps", "spec": {
            "matchConstraints": configmap_rules(&["CREATE"]),
            "matchConditions": [{"name": "not-exempt", "expression": "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)"}],
            "validations": [{"expression": "!has(object.data) || size(object.data) <= 2"}]
        }}),
        &[json!({"name": "b", "spec": {"policyName": "small-configmaps", "validationActions": ["Deny"]}})],
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let err = cms
        .create(
            &PostParams::default(),
            &cm("big", json!({"a": "1", "b": "2", "c": "3"})),
        )
        .await
        .expect_err("denied");
    assert_eq!(
        refusal(err).2,
        r#"configmaps "big" is forbidden: ValidatingAdmissionPolicy 'small-configmaps' with binding 'b' denied request: failed expression: !has(object.data) || size(object.data) <= 2"#
    );
    let exempt: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "big", "labels": {"exempt": "yes"}}, "data": {"a": "1", "b": "2", "c": "3"}
    }))
    .expect("cm");
    cms.create(&PostParams::default(), &exempt)
        .await
        .expect("the match condition skips the policy");
}

#[tokio::test]
async fn deletes_see_the_old_object_and_errors_follow_the_failure_policy() {
    let server = FakeApiServer::new();
    install(
        &server,
        json!({"name": "protected", "spec": {
            "matchConstraints": configmap_rules(&["DELETE"]),
            "validations": [{"expression": "object == null && oldObject.data.?protected.orValue('') != 'true'",
                             "message": "this ConfigMap is protected"}]
        }}),
        &[json!({"name": "protected", "spec": {"policyName": "protected", "validationActions": ["Deny"]}})],
    )
    .await;
    install(
        &server,
        json!({"name": "broken", "spec": {
            "failurePolicy": "Ignore",
            "matchConstraints": configmap_rules(&["DELETE"]),
            "validations": [{"expression": "oldObject.data.missing == 'x'"}]
        }}),
        &[json!({"name": "broken", "spec": {"policyName": "broken", "validationActions": ["Deny"]}})],
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    cms.create(
        &PostParams::default(),
        &cm("keep", json!({"protected": "true"})),
    )
    .await
    .expect("created");
    // (Not `data: {}`: Go's `omitempty` drops an empty map, and `oldObject.data` would fail.)
    cms.create(&PostParams::default(), &cm("drop", json!({"other": "x"})))
        .await
        .expect("created");
    let err = cms
        .delete("keep", &DeleteParams::default())
        .await
        .expect_err("protected");
    assert_eq!(
        refusal(err).2,
        r#"configmaps "keep" is forbidden: ValidatingAdmissionPolicy 'protected' with binding 'protected' denied request: this ConfigMap is protected"#
    );
    cms.delete("drop", &DeleteParams::default())
        .await
        .expect("not protected; the broken policy's error is ignored");

    // With failurePolicy Fail, the evaluation error denies.
    let patch = json!({"spec": {"failurePolicy": "Fail"}});
    api(&server, "ValidatingAdmissionPolicy")
        .patch("broken", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patched");
    cms.create(&PostParams::default(), &cm("drop", json!({"other": "x"})))
        .await
        .expect("created");
    let err = cms
        .delete("drop", &DeleteParams::default())
        .await
        .expect_err("the error denies");
    assert_eq!(
        refusal(err).2,
        r#"configmaps "drop" is forbidden: ValidatingAdmissionPolicy 'broken' with binding 'broken' denied request: expression 'oldObject.data.missing == 'x'' resulted in error: no such key: missing"#
    );
}

#[tokio::test]
async fn expressions_see_the_request_and_the_namespace_and_an_object_selector_limits_the_policy() {
    let server = FakeApiServer::new();
    let ns: Api<Namespace> = Api::all(server.client());
    let team: Namespace = serde_json::from_value(
        json!({"metadata": {"name": "team-a", "labels": {"owner": "alice"}}}),
    )
    .expect("ns");
    ns.create(&PostParams::default(), &team)
        .await
        .expect("namespace");
    install(
        &server,
        json!({"name": "owner", "spec": {
            "matchConstraints": {
                "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["configmaps"], "scope": "Namespaced"}],
                "objectSelector": {"matchExpressions": [{"key": "checked", "operator": "Exists"}]}
            },
            "validations": [{
                "expression": "object.metadata.labels.checked == namespaceObject.metadata.labels.owner",
                "messageExpression": "request.operation + ' by ' + request.userInfo.username + ' of ' + request.kind.kind + ' ' + request.name + ' in ' + request.namespace + ' needs checked=' + namespaceObject.metadata.labels.owner"
            }]
        }}),
        &[json!({"name": "owner", "spec": {"policyName": "owner", "validationActions": ["Deny"]}})],
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "team-a");
    let labelled = |name: &str, checked: &str| -> ConfigMap {
        serde_json::from_value(json!({"metadata": {"name": name, "labels": {"checked": checked}}}))
            .expect("cm")
    };
    let err = cms
        .create(&PostParams::default(), &labelled("c1", "bob"))
        .await
        .expect_err("denied");
    assert_eq!(
        refusal(err).2,
        r#"configmaps "c1" is forbidden: ValidatingAdmissionPolicy 'owner' with binding 'owner' denied request: CREATE by system:admin of ConfigMap c1 in team-a needs checked=alice"#
    );
    cms.create(&PostParams::default(), &labelled("c2", "alice"))
        .await
        .expect("the owner checked it");
    cms.create(&PostParams::default(), &cm("unlabelled", json!({})))
        .await
        .expect("the object selector leaves it out");
}

/// The `authorizer` variable asks the server's authorizer (RBAC here) about the requesting
/// user: a policy lets only users allowed the custom verb `approve` on configmaps set the
/// `approved` label, another checks `authorizer.requestResource` and a service account, and a
/// decision's `reason()` is RBAC's.
#[tokio::test]
async fn the_authorizer_variable_asks_rbac_about_the_requesting_user() {
    let server = FakeApiServer::builder()
        .authorization_mode(fake_apiserver::auth::AuthorizationMode::Rbac)
        .build();
    let admin = server.client();
    let rbac = |kind: &str, plural: &str| {
        let gvk = GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", kind);
        Api::<DynamicObject>::all_with(
            admin.clone(),
            &ApiResource::from_gvk_with_plural(&gvk, plural),
        )
    };
    for (name, verbs) in [
        ("cm-writer", json!(["create", "update", "get"])),
        ("cm-approver", json!(["approve"])),
    ] {
        let role: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": verbs}]
        }))
        .expect("a role");
        rbac("ClusterRole", "clusterroles")
            .create(&PostParams::default(), &role)
            .await
            .expect("role");
    }
    for (name, role, users) in [
        (
            "writers",
            "cm-writer",
            json!([{"kind": "User", "name": "alice"}, {"kind": "User", "name": "bob"}]),
        ),
        (
            "approvers",
            "cm-approver",
            json!([{"kind": "User", "name": "alice"}]),
        ),
    ] {
        let binding: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": users
        }))
        .expect("a binding");
        rbac("ClusterRoleBinding", "clusterrolebindings")
            .create(&PostParams::default(), &binding)
            .await
            .expect("binding");
    }
    install(
        &server,
        json!({"name": "approval", "spec": {
            "matchConstraints": configmap_rules(&["CREATE", "UPDATE"]),
            "validations": [
                {"expression": "!has(object.metadata.labels) || !('approved' in object.metadata.labels) || authorizer.group('').resource('configmaps').namespace(object.metadata.namespace).name(object.metadata.name).check('approve').allowed()",
                 "messageExpression": "'only approvers may approve: ' + authorizer.group('').resource('configmaps').check('approve').reason()"},
                {"expression": "authorizer.requestResource.check('create').allowed() && authorizer.path('/healthz').check('get').allowed()",
                 "message": "cannot create here"},
                {"expression": "!authorizer.serviceAccount('default', 'default').group('').resource('configmaps').check('approve').allowed()",
                 "message": "the default service account may not approve"}
            ]
        }}),
        &[json!({"name": "approval-binding", "spec": {"policyName": "approval", "validationActions": ["Deny"]}})],
    )
    .await;
    let approved = |name: &str| -> ConfigMap {
        serde_json::from_value(json!({"metadata": {"name": name, "labels": {"approved": "yes"}}}))
            .expect("a ConfigMap")
    };
    let as_alice = Api::<ConfigMap>::namespaced(server.client_as("alice", &[]), "default");
    let as_bob = Api::<ConfigMap>::namespaced(server.client_as("bob", &[]), "default");
    as_alice
        .create(&PostParams::default(), &approved("by-alice"))
        .await
        .expect("alice may approve");
    let (code, _, message) = refusal(
        as_bob
            .create(&PostParams::default(), &approved("by-bob"))
            .await
            .expect_err("bob may not"),
    );
    assert_eq!(code, 422);
    assert!(
        message.ends_with("only approvers may approve:"),
        "RBAC gives no reason when nothing allows it: {message}"
    );
    as_bob
        .create(&PostParams::default(), &cm("plain", json!({})))
        .await
        .expect("bob may create unapproved");
}

/// `auditAnnotations` are evaluated though there is no audit log: a `valueExpression` that
/// fails denies the request under `failurePolicy: Fail` and one that gives neither a string nor
/// null denies it whatever the failure policy, both even for a binding that only warns; a
/// string or null passes.
#[tokio::test]
async fn audit_annotation_errors_deny_whatever_the_binding_s_actions() {
    let server = FakeApiServer::new();
    let policy = |name: &str, failure: &str, value: &str| {
        json!({"name": name, "spec": {
            "failurePolicy": failure,
            "matchConstraints": configmap_rules(&["CREATE"]),
            "auditAnnotations": [{"key": "note", "valueExpression": value}]
        }})
    };
    let binding = |name: &str| json!({"name": format!("{name}-binding"), "spec": {"policyName": name, "validationActions": ["Warn"]}});
    install(
        &server,
        policy("fine", "Fail", "has(object.data) ? 'with data' : null"),
        &[binding("fine")],
    )
    .await;
    let configmaps: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    configmaps
        .create(&PostParams::default(), &cm("a", json!({})))
        .await
        .expect("a string or null passes");
    install(
        &server,
        policy("typed", "Ignore", "size(object.metadata.name)"),
        &[binding("typed")],
    )
    .await;
    let (code, _, message) = refusal(
        configmaps
            .create(&PostParams::default(), &cm("b", json!({})))
            .await
            .expect_err("an int is refused"),
    );
    assert_eq!(code, 422);
    assert!(
        message.ends_with("ValidatingAdmissionPolicy 'typed' with binding 'typed-binding' denied request: valueExpression 'size(object.metadata.name)' resulted in unsupported return type: int. Return type must be either string or null."),
        "{message}"
    );
    api(&server, "ValidatingAdmissionPolicyBinding")
        .delete("typed-binding", &DeleteParams::default())
        .await
        .expect("binding deleted");
    install(
        &server,
        policy("failing", "Fail", "object.data.missing"),
        &[binding("failing")],
    )
    .await;
    let (_, _, message) = refusal(
        configmaps
            .create(&PostParams::default(), &cm("c", json!({})))
            .await
            .expect_err("an error is refused under Fail"),
    );
    assert!(
        message.contains("denied request: expression 'object.data.missing' resulted in error: no such key: missing"),
        "{message}"
    );
}
