//! The `PodSecurity` admission plugin through the API: a namespace's enforce level refuses pods
//! with the real `403`, its warn level (and an enforce level, which raises it) warns about pods
//! and workload templates, label values that do not parse are a `422`, and making a
//! namespace's enforce level stricter warns about the pods already in it.

use crate::http_support::{self, json as call, json_with_warnings};

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use serde_json::{json, Value};

const NAMESPACES: &str = "/api/v1/namespaces";

/// The message of a plain container under `restricted:latest`.
const RESTRICTED_APP: &str = "allowPrivilegeEscalation != false (container \"app\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"app\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"app\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \"app\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")";

async fn namespace(server: &FakeApiServer, name: &str, labels: Value) {
    let (status, answer) = call(
        server,
        Method::POST,
        NAMESPACES,
        &json!({"metadata": {"name": name, "labels": labels}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
}

fn pods(namespace: &str) -> String {
    format!("{NAMESPACES}/{namespace}/pods")
}

fn plain_pod(name: &str) -> Value {
    json!({"metadata": {"name": name}, "spec": {"containers": [{"name": "app", "image": "nginx"}]}})
}

fn restricted_pod(name: &str) -> Value {
    json!({"metadata": {"name": name}, "spec": {
        "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "app", "image": "nginx", "securityContext": {
            "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]}})
}

fn warning(text: &str) -> String {
    format!(
        "299 - \"{}\"",
        text.replace('\\', "\\\\").replace('"', "\\\"")
    )
}

async fn label_namespace(
    server: &FakeApiServer,
    name: &str,
    labels: Value,
) -> (StatusCode, Vec<String>, Value) {
    let request = axum::http::Request::builder()
        .method(Method::PATCH)
        .uri(format!("{NAMESPACES}/{name}"))
        .header("content-type", "application/merge-patch+json")
        .body(axum::body::Body::from(
            json!({"metadata": {"labels": labels}}).to_string(),
        ))
        .expect("a request");
    http_support::send_with_warnings(server, request).await
}

#[tokio::test]
async fn an_enforced_level_refuses_a_pod_with_the_real_status() {
    let server = FakeApiServer::new();
    namespace(
        &server,
        "locked",
        json!({"pod-security.kubernetes.io/enforce": "restricted"}),
    )
    .await;
    let (status, warnings, body) =
        json_with_warnings(&server, Method::POST, &pods("locked"), &plain_pod("web")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("pods \"web\" is forbidden: violates PodSecurity \"restricted:latest\": {RESTRICTED_APP}"),
            "reason": "Forbidden", "details": {"name": "web", "kind": "pods"}, "code": 403})
    );
    // Nothing was stored.
    let (status, _) = call(
        &server,
        Method::GET,
        &format!("{}/web", pods("locked")),
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A pod meeting the standard goes in, without warnings.
    let (status, warnings, created) = json_with_warnings(
        &server,
        Method::POST,
        &pods("locked"),
        &restricted_pod("ok"),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert!(warnings.is_empty(), "{warnings:?}");

    // Namespaces without labels (the default policy, privileged) take anything.
    let mut privileged = plain_pod("root");
    privileged["spec"]["hostNetwork"] = json!(true);
    let (status, warnings, _) =
        json_with_warnings(&server, Method::POST, &pods("default"), &privileged).await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(warnings.is_empty(), "{warnings:?}");
}

/// A generated name is the one the refusal names (validating admission sees the object with
/// its name).
#[tokio::test]
async fn a_refused_generated_name_pod_is_named_and_baseline_names_only_its_checks() {
    let server = FakeApiServer::new();
    namespace(
        &server,
        "base",
        json!({"pod-security.kubernetes.io/enforce": "baseline"}),
    )
    .await;
    let pod = json!({"metadata": {"generateName": "web-"}, "spec": {
        "hostPID": true,
        "containers": [{"name": "app", "image": "nginx", "securityContext": {"privileged": true}}]}});
    let (status, _, body) = json_with_warnings(&server, Method::POST, &pods("base"), &pod).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    let name = body["details"]["name"].as_str().unwrap_or_default();
    assert!(name.starts_with("web-") && name.len() == 9, "{body}");
    assert_eq!(
        message,
        format!("pods \"{name}\" is forbidden: violates PodSecurity \"baseline:latest\": host namespaces (hostPID=true), privileged (container \"app\" must not set securityContext.privileged=true)")
    );
    // Baseline does not ask for what restricted does.
    let (status, _, body) =
        json_with_warnings(&server, Method::POST, &pods("base"), &plain_pod("plain")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn a_warn_level_admits_with_a_warning() {
    let server = FakeApiServer::new();
    namespace(&server, "watched", json!({"pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/warn-version": "v1.30"})).await;
    let (status, warnings, _) =
        json_with_warnings(&server, Method::POST, &pods("watched"), &plain_pod("web")).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(
        warnings,
        [warning(&format!(
            "would violate PodSecurity \"restricted:v1.30\": {RESTRICTED_APP}"
        ))]
    );
}

/// An old version leaves out checks added after it: `allowPrivilegeEscalation` came in 1.8,
/// the restricted capabilities check in 1.22.
#[tokio::test]
async fn an_enforced_version_applies_the_checks_of_that_version() {
    let server = FakeApiServer::new();
    namespace(
        &server,
        "old",
        json!({
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "v1.7"}),
    )
    .await;
    let mut pod = plain_pod("web");
    pod["spec"]["securityContext"] = json!({"runAsNonRoot": true});
    let (status, _, body) = json_with_warnings(&server, Method::POST, &pods("old"), &pod).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // The same pod under the newest version.
    label_namespace(
        &server,
        "old",
        json!({"pod-security.kubernetes.io/enforce-version": "latest"}),
    )
    .await;
    pod["metadata"]["name"] = json!("web2");
    let (status, _, body) = json_with_warnings(&server, Method::POST, &pods("old"), &pod).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("allowPrivilegeEscalation != false"),
        "{body}"
    );
}

/// Workloads are never refused; their template is warned about under the enforce level (which
/// raises the warn level) — and not at all where nothing is warned or audited.
#[tokio::test]
async fn a_workload_template_is_warned_about_not_refused() {
    let server = FakeApiServer::new();
    namespace(
        &server,
        "locked",
        json!({"pod-security.kubernetes.io/enforce": "restricted"}),
    )
    .await;
    let deployment = json!({"metadata": {"name": "web"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}});
    let (status, warnings, body) = json_with_warnings(
        &server,
        Method::POST,
        "/apis/apps/v1/namespaces/locked/deployments",
        &deployment,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        warnings,
        [warning(&format!(
            "would violate PodSecurity \"restricted:latest\": {RESTRICTED_APP}"
        ))]
    );
    let cronjob = json!({"metadata": {"name": "tick"}, "spec": {"schedule": "* * * * *",
        "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "app", "image": "nginx"}]}}}}}});
    let (status, warnings, body) = json_with_warnings(
        &server,
        Method::POST,
        "/apis/batch/v1/namespaces/locked/cronjobs",
        &cronjob,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(warnings.len(), 1, "{warnings:?}");

    // An update of the template is looked at again; one that fixes it is quiet.
    let mut fixed = restricted_pod("ignored");
    fixed["metadata"] = json!({"labels": {"app": "web"}});
    let request = axum::http::Request::builder()
        .method(Method::PATCH)
        .uri("/apis/apps/v1/namespaces/locked/deployments/web")
        .header("content-type", "application/json-patch+json")
        .body(axum::body::Body::from(
            json!([{"op": "replace", "path": "/spec/template", "value": fixed}]).to_string(),
        ))
        .expect("a request");
    let (status, headers, _) = http_support::send_raw(&server, request).await;
    assert_eq!(status, StatusCode::OK);
    assert!(headers.get("warning").is_none(), "{headers:?}");
}

#[tokio::test]
async fn a_namespace_label_that_does_not_parse_is_invalid() {
    let server = FakeApiServer::new();
    let (status, body) = call(
        &server,
        Method::POST,
        NAMESPACES,
        &json!({"metadata": {"name": "bad", "labels": {
            "pod-security.kubernetes.io/enforce": "strict",
            "pod-security.kubernetes.io/warn-version": "1.30"}}}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Namespace \"bad\" is invalid: [metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": must be one of privileged, baseline, restricted, metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: \"1.30\": must be \"latest\" or \"v1.x\"]",
            "reason": "Invalid", "details": {"name": "bad", "kind": "Namespace", "causes": [
                {"reason": "FieldValueInvalid", "message": "Invalid value: \"strict\": must be one of privileged, baseline, restricted", "field": "metadata.labels[pod-security.kubernetes.io/enforce]"},
                {"reason": "FieldValueInvalid", "message": "Invalid value: \"1.30\": must be \"latest\" or \"v1.x\"", "field": "metadata.labels[pod-security.kubernetes.io/warn-version]"}]},
            "code": 422})
    );
    // An update adding such a label is refused too.
    namespace(&server, "good", json!({})).await;
    let (status, _, body) = label_namespace(
        &server,
        "good",
        json!({"pod-security.kubernetes.io/audit": "loose"}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
}

#[tokio::test]
async fn a_stricter_enforce_level_warns_about_existing_pods() {
    let server = FakeApiServer::new();
    namespace(&server, "team", json!({})).await;
    for name in ["c", "a", "b"] {
        let (status, _) = call(&server, Method::POST, &pods("team"), &plain_pod(name)).await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let mut root = plain_pod("root");
    root["spec"]["hostNetwork"] = json!(true);
    call(&server, Method::POST, &pods("team"), &root).await;
    call(
        &server,
        Method::POST,
        &pods("team"),
        &restricted_pod("fine"),
    )
    .await;

    let (status, warnings, body) = label_namespace(
        &server,
        "team",
        json!({"pod-security.kubernetes.io/enforce": "restricted"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        warnings,
        [
            warning("existing pods in namespace \"team\" violate the new PodSecurity enforce level \"restricted:latest\""),
            warning("a (and 2 other pods): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"),
            warning("root: host namespaces, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"),
        ]
    );
    // The pods stay; relaxing the level (or writing the same one) says nothing.
    let (status, warnings, _) = label_namespace(
        &server,
        "team",
        json!({"pod-security.kubernetes.io/enforce": "baseline"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(warnings.is_empty(), "{warnings:?}");
}

/// Pods admitted before the level was enforced may still be updated, as long as the update
/// changes nothing an update could make worse (here a label); a new image is checked.
#[tokio::test]
async fn only_significant_pod_updates_are_checked() {
    let server = FakeApiServer::new();
    namespace(&server, "team", json!({})).await;
    call(&server, Method::POST, &pods("team"), &plain_pod("web")).await;
    label_namespace(
        &server,
        "team",
        json!({"pod-security.kubernetes.io/enforce": "restricted"}),
    )
    .await;

    let patch = |patch: Value| {
        let server = server.clone();
        async move {
            http_support::call(
                &server,
                Method::PATCH,
                &format!("{}/web", pods("team")),
                "application/json-patch+json",
                patch.to_string().into_bytes(),
            )
            .await
        }
    };
    let (status, body) =
        patch(json!([{"op": "add", "path": "/metadata/labels", "value": {"tier": "front"}}])).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) =
        patch(json!([{"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:2"}]))
            .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(
        body["message"],
        format!("pods \"web\" is forbidden: violates PodSecurity \"restricted:latest\": {RESTRICTED_APP}")
    );
}

/// An ephemeral container is a pod update the plugin looks at (through the
/// `ephemeralcontainers` subresource): a privileged debug container is refused where baseline is
/// enforced; the `status` subresource is not looked at.
#[tokio::test]
async fn an_ephemeral_container_is_checked_and_status_is_not() {
    let server = FakeApiServer::new();
    namespace(
        &server,
        "base",
        json!({"pod-security.kubernetes.io/enforce": "baseline"}),
    )
    .await;
    let (status, _) = call(&server, Method::POST, &pods("base"), &plain_pod("web")).await;
    assert_eq!(status, StatusCode::CREATED);
    let debug = |privileged: bool| {
        json!({"spec": {"ephemeralContainers": [{"name": "debug", "image": "busybox",
            "terminationMessagePolicy": "File",
            "securityContext": {"privileged": privileged}}]}})
    };
    let uri = format!("{}/web/ephemeralcontainers", pods("base"));
    let (status, body) = http_support::call(
        &server,
        Method::PATCH,
        &uri,
        "application/strategic-merge-patch+json",
        debug(true).to_string().into_bytes(),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(
        body["message"],
        "pods \"web\" is forbidden: violates PodSecurity \"baseline:latest\": privileged (container \"debug\" must not set securityContext.privileged=true)"
    );
    let (status, body) = http_support::call(
        &server,
        Method::PATCH,
        &uri,
        "application/strategic-merge-patch+json",
        debug(false).to_string().into_bytes(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // A status write is never looked at, even of a pod that would not be admitted now.
    label_namespace(
        &server,
        "base",
        json!({"pod-security.kubernetes.io/enforce": "restricted"}),
    )
    .await;
    let (status, body) = http_support::call(
        &server,
        Method::PATCH,
        &format!("{}/web/status", pods("base")),
        "application/merge-patch+json",
        json!({"status": {"phase": "Running"}})
            .to_string()
            .into_bytes(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// A configured server (`PodSecurityConfiguration`): namespaces without labels enforce the
/// configured default; exempt namespaces, users and runtime classes are not checked; a policy
/// given to an exempt namespace is ignored with a warning.
#[tokio::test]
async fn the_configured_defaults_and_exemptions_apply() {
    let configuration = fake_apiserver::admission::PodSecurityConfiguration::from_value(&json!({
        "apiVersion": "pod-security.admission.config.k8s.io/v1",
        "kind": "PodSecurityConfiguration",
        "defaults": {"enforce": "baseline", "warn": "restricted"},
        "exemptions": {"namespaces": ["ops"], "usernames": ["ci-bot"], "runtimeClasses": ["kata"]},
    }))
    .expect("a valid configuration");
    let server = FakeApiServer::builder()
        .pod_security_configuration(configuration)
        .build();
    let mut host = plain_pod("host");
    host["spec"]["hostNetwork"] = json!(true);

    // The default applies to an unlabelled namespace: baseline enforced, restricted warned.
    let (status, _, body) =
        json_with_warnings(&server, Method::POST, &pods("default"), &host).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(
        body["message"],
        "pods \"host\" is forbidden: violates PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true)"
    );
    let (status, warnings, _) =
        json_with_warnings(&server, Method::POST, &pods("default"), &plain_pod("plain")).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(
        warnings,
        [warning(&format!(
            "would violate PodSecurity \"restricted:latest\": {RESTRICTED_APP}"
        ))]
    );

    // An exempt namespace: its own policy is ignored, with a warning, and nothing is checked.
    let (status, warnings, _) = json_with_warnings(
        &server,
        Method::POST,
        NAMESPACES,
        &json!({"metadata": {"name": "ops", "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(
        warnings,
        [warning("namespace \"ops\" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored")]
    );
    let (status, warnings, body) =
        json_with_warnings(&server, Method::POST, &pods("ops"), &host).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert!(warnings.is_empty(), "{warnings:?}");

    // An exempt runtime class.
    let (status, body) = call(
        &server,
        Method::POST,
        "/apis/node.k8s.io/v1/runtimeclasses",
        &json!({"metadata": {"name": "kata"}, "handler": "kata"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut sandboxed = host.clone();
    sandboxed["metadata"]["name"] = json!("sandboxed");
    sandboxed["spec"]["runtimeClassName"] = json!("kata");
    let (status, _, body) =
        json_with_warnings(&server, Method::POST, &pods("default"), &sandboxed).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // An exempt user (impersonated).
    let mut by_bot = host.clone();
    by_bot["metadata"]["name"] = json!("by-bot");
    let request = axum::http::Request::builder()
        .method(Method::POST)
        .uri(pods("default"))
        .header("content-type", "application/json")
        .header("impersonate-user", "ci-bot")
        .body(axum::body::Body::from(by_bot.to_string()))
        .expect("a request");
    let (status, _, bytes) = http_support::send_raw(&server, request).await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&bytes)
    );
}
