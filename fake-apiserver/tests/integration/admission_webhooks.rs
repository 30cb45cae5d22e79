//! Admission webhooks against a real HTTPS webhook server on loopback (axum over the crate's
//! TLS listener, a self-signed certificate given as the configuration's `caBundle`), registered
//! and exercised through `kube::Api` as a user would.

use crate::http_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{json, Value};

/// What a webhook answers for a request (`response` without `uid`); may sleep first.
type Behaviour = Arc<dyn Fn(&str, &Value) -> Answer + Send + Sync>;

/// A webhook's answer.
struct Answer {
    response: Value,
    delay: Duration,
}

fn allow() -> Answer {
    Answer {
        response: json!({"allowed": true}),
        delay: Duration::ZERO,
    }
}

fn deny(status: Value) -> Answer {
    Answer {
        response: json!({"allowed": false, "status": status}),
        delay: Duration::ZERO,
    }
}

fn patch(ops: Value) -> Answer {
    let encoded = base64::engine::general_purpose::STANDARD.encode(ops.to_string());
    Answer {
        response: json!({"allowed": true, "patchType": "JSONPatch", "patch": encoded}),
        delay: Duration::ZERO,
    }
}

/// A webhook server on a loopback port: every path answers through the behaviour; every
/// `AdmissionReview.request` it gets is kept with its path.
struct WebhookServer {
    base: String,
    ca_bundle: String,
    seen: Arc<Mutex<Vec<(String, Value)>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    _dir: tempfile::TempDir,
}

impl WebhookServer {
    async fn start(extra_names: &[&str], behaviour: Behaviour) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        let (cert, key) = fake_apiserver::tls::self_signed_certificate(dir.path(), extra_names)
            .expect("a self-signed certificate");
        let pem = std::fs::read(&cert).expect("read the certificate");
        let tls = fake_apiserver::tls::TlsConfig::from_pem_files(&cert, &key).expect("TLS config");
        let seen: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
        let recorded = seen.clone();
        let router =
            axum::Router::new().fallback(move |uri: axum::http::Uri, body: axum::body::Bytes| {
                let recorded = recorded.clone();
                let behaviour = behaviour.clone();
                async move {
                    let review: Value = serde_json::from_slice(&body).unwrap_or_default();
                    let request = review["request"].clone();
                    let path = uri.path().to_string();
                    recorded
                        .lock()
                        .unwrap()
                        .push((path.clone(), request.clone()));
                    let answer = behaviour(&path, &request);
                    tokio::time::sleep(answer.delay).await;
                    let mut response = answer.response;
                    if response.get("uid").is_none() {
                        response["uid"] = request["uid"].clone();
                    }
                    axum::Json(json!({
                        "apiVersion": "admission.k8s.io/v1",
                        "kind": "AdmissionReview",
                        "response": response,
                    }))
                }
            });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("https://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(fake_apiserver::tls::serve_router_tls(
            router,
            listener,
            tls,
            async move {
                let _ = stopped.await;
            },
        ));
        WebhookServer {
            base,
            ca_bundle: base64::engine::general_purpose::STANDARD.encode(pem),
            seen,
            stop: Some(stop),
            _dir: dir,
        }
    }

    /// A `clientConfig` with this server's URL and path.
    fn client_config(&self, path: &str) -> Value {
        json!({"url": format!("{}{path}", self.base), "caBundle": self.ca_bundle})
    }

    /// The requests that reached `path`.
    fn requests(&self, path: &str) -> Vec<Value> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, r)| r.clone())
            .collect()
    }
}

impl Drop for WebhookServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A webhook entry for configmaps (`operations`), with `extra` fields merged in.
fn hook(name: &str, client_config: Value, operations: &[&str], extra: Value) -> Value {
    let mut hook = json!({
        "name": name,
        "clientConfig": client_config,
        "rules": [{"operations": operations, "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    });
    if let (Some(h), Some(e)) = (hook.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            h.insert(k.clone(), v.clone());
        }
    }
    hook
}

async fn validating(client: &kube::Client, name: &str, hooks: Vec<Value>) {
    let config: ValidatingWebhookConfiguration = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": hooks,
    }))
    .expect("a configuration");
    Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .create(&PostParams::default(), &config)
        .await
        .expect("the configuration is created");
}

async fn mutating(client: &kube::Client, name: &str, hooks: Vec<Value>) {
    let config: MutatingWebhookConfiguration = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": hooks,
    }))
    .expect("a configuration");
    Api::<MutatingWebhookConfiguration>::all(client.clone())
        .create(&PostParams::default(), &config)
        .await
        .expect("the configuration is created");
}

fn configmap(name: &str, labels: Value) -> ConfigMap {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": {"a": "1"}
    }))
    .unwrap()
}

fn api_error(err: kube::Error) -> (u16, String, String) {
    match err {
        kube::Error::Api(s) => (s.code, s.reason, s.message),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn validating_webhook_denies_with_its_status_and_sees_the_request() {
    let hooks = WebhookServer::start(
        &[],
        Arc::new(|_, request: &Value| {
            if request["object"]["metadata"]["name"] == "bad" {
                deny(json!({"code": 403, "reason": "Forbidden", "message": "bad is not a name for a configmap"}))
            } else {
                allow()
            }
        }),
    )
    .await;
    let server = FakeApiServer::builder().seed(3).build();
    let client = server.client();
    validating(
        &client,
        "names",
        vec![hook(
            "names.example.com",
            hooks.client_config("/validate"),
            &["CREATE"],
            json!({}),
        )],
    )
    .await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let refused = api
        .create(&PostParams::default(), &configmap("bad", json!({})))
        .await
        .expect_err("the webhook denies it");
    assert_eq!(
        api_error(refused),
        (
            403,
            "Forbidden".to_string(),
            "admission webhook \"names.example.com\" denied the request: bad is not a name for a configmap".to_string()
        )
    );
    assert!(
        server
            .get_object("v1", "configmaps", Some("default"), "bad")
            .is_none(),
        "nothing was stored"
    );
    api.create(
        &PostParams {
            field_manager: Some("tester".into()),
            ..Default::default()
        },
        &configmap("good", json!({})),
    )
    .await
    .expect("the webhook allows it");

    let seen = hooks.requests("/validate");
    assert_eq!(seen.len(), 2);
    let request = &seen[1];
    assert!(!request["uid"].as_str().unwrap_or_default().is_empty());
    assert_eq!(
        request["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(
        request["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(request["operation"], "CREATE");
    assert_eq!(request["name"], "good");
    assert_eq!(request["namespace"], "default");
    assert_eq!(request["userInfo"]["username"], "system:admin");
    assert_eq!(request["object"]["kind"], "ConfigMap");
    assert_eq!(request["object"]["metadata"]["name"], "good");
    assert!(
        request["object"]["metadata"]["uid"].is_string(),
        "validation sees the final object"
    );
    assert_eq!(request["oldObject"], Value::Null);
    assert_eq!(request["dryRun"], false);
    assert_eq!(
        request["options"],
        json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "tester"})
    );
}

#[tokio::test]
async fn mutating_patch_is_stored_and_validating_webhooks_see_it() {
    let hooks = WebhookServer::start(
        &[],
        Arc::new(|path: &str, request: &Value| match path {
            "/mutate" => patch(json!([
                {"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}},
                {"op": "add", "path": "/data/added", "value": format!("by {}", request["operation"].as_str().unwrap_or_default())},
            ])),
            _ => allow(),
        }),
    )
    .await;
    let server = FakeApiServer::builder().seed(4).build();
    let client = server.client();
    mutating(
        &client,
        "labeller",
        vec![hook(
            "labeller.example.com",
            hooks.client_config("/mutate"),
            &["CREATE", "UPDATE"],
            json!({}),
        )],
    )
    .await;
    validating(
        &client,
        "observer",
        vec![hook(
            "observer.example.com",
            hooks.client_config("/validate"),
            &["CREATE", "UPDATE"],
            json!({}),
        )],
    )
    .await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let created = api
        .create(&PostParams::default(), &configmap("cm", json!(null)))
        .await
        .expect("created");
    assert_eq!(
        created
            .metadata
            .labels
            .unwrap_or_default()
            .get("mutated")
            .map(String::as_str),
        Some("yes")
    );
    let stored = server
        .get_object("v1", "configmaps", Some("default"), "cm")
        .expect("stored");
    assert_eq!(stored["data"]["added"], "by CREATE");
    let validated = hooks.requests("/validate");
    assert_eq!(
        validated[0]["object"]["metadata"]["labels"]["mutated"],
        "yes"
    );

    // An update: the webhook gets the stored object as oldObject and patches the new one.
    let patched = api
        .patch(
            "cm",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"a": "2"}})),
        )
        .await
        .expect("patched");
    assert_eq!(
        patched
            .data
            .unwrap_or_default()
            .get("added")
            .map(String::as_str),
        Some("by UPDATE")
    );
    let updates = hooks.requests("/mutate");
    let update = updates.last().expect("the mutating webhook was called");
    assert_eq!(update["operation"], "UPDATE");
    assert_eq!(update["oldObject"]["data"]["added"], "by CREATE");
    assert_eq!(update["object"]["data"]["a"], "2");
    assert_eq!(update["options"]["kind"], "UpdateOptions");
}

/// A port nothing listens on.
async fn closed_port() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn failure_policy_decides_for_a_webhook_that_is_down() {
    let port = closed_port().await;
    let server = FakeApiServer::new();
    let client = server.client();
    let down = |name: &str, policy: &str, ops: &[&str]| {
        hook(
            name,
            json!({"url": format!("https://127.0.0.1:{port}/check")}),
            ops,
            json!({"failurePolicy": policy}),
        )
    };
    validating(
        &client,
        "down",
        vec![
            down("ignored.example.com", "Ignore", &["CREATE"]),
            down("required.example.com", "Fail", &["UPDATE"]),
        ],
    )
    .await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    api.create(&PostParams::default(), &configmap("cm", json!({})))
        .await
        .expect("an ignored failure lets the create through");
    let (code, reason, message) = api_error(
        api.patch(
            "cm",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"a": "2"}})),
        )
        .await
        .expect_err("a failing webhook under Fail refuses the update"),
    );
    assert_eq!((code, reason.as_str()), (500, "InternalError"));
    assert_eq!(
        message,
        format!(
            "Internal error occurred: failed calling webhook \"required.example.com\": failed to call webhook: Post \"https://127.0.0.1:{port}/check?timeout=10s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    );
    let stored = server
        .get_object("v1", "configmaps", Some("default"), "cm")
        .unwrap();
    assert_eq!(
        stored["data"]["a"], "1",
        "the refused update changed nothing"
    );
}

#[tokio::test]
async fn webhooks_whose_selectors_or_rules_do_not_match_are_not_called() {
    let hooks = WebhookServer::start(&[], Arc::new(|_, _: &Value| allow())).await;
    let server = FakeApiServer::new();
    let client = server.client();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    for (name, labels) in [("watched", json!({"webhooks": "on"})), ("quiet", json!({}))] {
        let ns: Namespace =
            serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}})).unwrap();
        namespaces
            .create(&PostParams::default(), &ns)
            .await
            .unwrap();
    }
    validating(
        &client,
        "selective",
        vec![
            hook(
                "by-namespace.example.com",
                hooks.client_config("/namespace"),
                &["CREATE"],
                json!({"namespaceSelector": {"matchLabels": {"webhooks": "on"}}}),
            ),
            hook(
                "by-object.example.com",
                hooks.client_config("/object"),
                &["CREATE", "UPDATE", "DELETE"],
                json!({"objectSelector": {"matchExpressions": [{"key": "checked", "operator": "Exists"}]}}),
            ),
            hook(
                "deletes-only.example.com",
                hooks.client_config("/deletes"),
                &["DELETE"],
                json!({}),
            ),
            json!({
                "name": "secrets-only.example.com",
                "clientConfig": hooks.client_config("/secrets"),
                "rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["secrets"]}],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
            }),
        ],
    )
    .await;
    let quiet: Api<ConfigMap> = Api::namespaced(client.clone(), "quiet");
    let watched: Api<ConfigMap> = Api::namespaced(client.clone(), "watched");
    quiet
        .create(&PostParams::default(), &configmap("plain", json!({})))
        .await
        .unwrap();
    watched
        .create(&PostParams::default(), &configmap("plain", json!({})))
        .await
        .unwrap();
    quiet
        .create(
            &PostParams::default(),
            &configmap("labelled", json!({"checked": "yes"})),
        )
        .await
        .unwrap();
    // The label goes: the old object still matches the object selector.
    quiet
        .patch(
            "labelled",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"checked": null}}})),
        )
        .await
        .unwrap();
    quiet
        .delete("plain", &DeleteParams::default())
        .await
        .unwrap();

    let names = |path: &str| -> Vec<String> {
        hooks
            .requests(path)
            .iter()
            .map(|r| {
                format!(
                    "{} {}/{}",
                    r["operation"].as_str().unwrap(),
                    r["namespace"].as_str().unwrap(),
                    r["name"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(names("/namespace"), vec!["CREATE watched/plain"]);
    assert_eq!(
        names("/object"),
        vec!["CREATE quiet/labelled", "UPDATE quiet/labelled"]
    );
    assert_eq!(names("/deletes"), vec!["DELETE quiet/plain"]);
    assert_eq!(names("/secrets"), Vec::<String>::new());
    let delete = &hooks.requests("/deletes")[0];
    assert_eq!(delete["object"], Value::Null);
    assert_eq!(delete["oldObject"]["metadata"]["name"], "plain");
    assert_eq!(delete["options"]["kind"], "DeleteOptions");
}

#[tokio::test]
async fn reinvocation_calls_an_earlier_webhook_again_after_a_later_change() {
    let hooks = WebhookServer::start(
        &[],
        Arc::new(|path: &str, request: &Value| {
            let labels = &request["object"]["metadata"]["labels"];
            match path {
                // Records how many labels it saw; asks to be reinvoked.
                "/first" => patch(json!([
                    {"op": "add", "path": "/metadata/labels/first-saw", "value": labels.as_object().map_or(0, |l| l.len()).to_string()}
                ])),
                "/second" => patch(json!([{"op": "add", "path": "/metadata/labels/second", "value": "yes"}])),
                _ => allow(),
            }
        }),
    )
    .await;
    let server = FakeApiServer::new();
    let client = server.client();
    // Configurations are called in name order: "a-first" before "b-second".
    mutating(
        &client,
        "a-first",
        vec![hook(
            "first.example.com",
            hooks.client_config("/first"),
            &["CREATE"],
            json!({"reinvocationPolicy": "IfNeeded"}),
        )],
    )
    .await;
    mutating(
        &client,
        "b-second",
        vec![hook(
            "second.example.com",
            hooks.client_config("/second"),
            &["CREATE"],
            json!({}),
        )],
    )
    .await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let created = api
        .create(
            &PostParams::default(),
            &configmap("cm", json!({"app": "x"})),
        )
        .await
        .unwrap();
    let labels = created.metadata.labels.unwrap_or_default();
    assert_eq!(labels.get("second").map(String::as_str), Some("yes"));
    // First call: app only (1 label); reinvoked after "second" was added: app, first-saw, second.
    assert_eq!(labels.get("first-saw").map(String::as_str), Some("3"));
    assert_eq!(hooks.requests("/first").len(), 2);
    assert_eq!(hooks.requests("/second").len(), 1);
}

#[tokio::test]
async fn warnings_arrive_as_warning_headers() {
    let hooks = WebhookServer::start(
        &[],
        Arc::new(|_, _: &Value| Answer {
            response: json!({"allowed": true, "warnings": ["configmap \"cm\" is \"deprecated\""]}),
            delay: Duration::ZERO,
        }),
    )
    .await;
    let server = FakeApiServer::new();
    let client = server.client();
    validating(
        &client,
        "warner",
        vec![hook(
            "warner.example.com",
            hooks.client_config("/warn"),
            &["CREATE"],
            json!({}),
        )],
    )
    .await;
    let body = serde_json::to_vec(&configmap("cm", json!({}))).unwrap();
    let request = http::Request::post("/api/v1/namespaces/default/configmaps")
        .header("content-type", "application/json")
        .body(body)
        .unwrap();
    let response = client.send(request.map(Into::into)).await.unwrap();
    assert_eq!(response.status(), 201);
    let warnings: Vec<_> = response
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    assert_eq!(
        warnings,
        vec![r#"299 - "configmap \"cm\" is \"deprecated\"""#.to_string()]
    );
}

#[tokio::test]
async fn a_slow_webhook_times_out_per_its_timeout_seconds() {
    let hooks = WebhookServer::start(
        &[],
        Arc::new(|_, _: &Value| Answer {
            response: json!({"allowed": true}),
            delay: Duration::from_secs(3),
        }),
    )
    .await;
    let server = FakeApiServer::new();
    let client = server.client();
    validating(
        &client,
        "slow",
        vec![
            hook(
                "slow-ignored.example.com",
                hooks.client_config("/ignored"),
                &["CREATE"],
                json!({"timeoutSeconds": 1, "failurePolicy": "Ignore"}),
            ),
            hook(
                "slow-required.example.com",
                hooks.client_config("/required"),
                &["UPDATE"],
                json!({"timeoutSeconds": 1}),
            ),
        ],
    )
    .await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let started = std::time::Instant::now();
    api.create(&PostParams::default(), &configmap("cm", json!({})))
        .await
        .expect("a timeout under Ignore lets the create through");
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "the call was cut at 1s"
    );
    let (code, _, message) = api_error(
        api.patch(
            "cm",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"a": "2"}})),
        )
        .await
        .expect_err("a timeout under Fail refuses"),
    );
    assert_eq!(code, 500);
    assert_eq!(
        message,
        format!(
            "Internal error occurred: failed calling webhook \"slow-required.example.com\": failed to call webhook: Post \"{}/required?timeout=1s\": context deadline exceeded",
            hooks.base
        )
    );
}

#[tokio::test]
async fn service_webhooks_are_reached_through_the_resolver() {
    let hooks = WebhookServer::start(
        &["hooks.webhooks.svc"],
        Arc::new(|_, _: &Value| {
            deny(json!({"code": 422, "reason": "Invalid", "message": "not today"}))
        }),
    )
    .await;
    let address = hooks.base.clone();
    let server = FakeApiServer::builder()
        .webhook_service_resolver(move |service| {
            (service.namespace == "webhooks" && service.name == "hooks" && service.port == 8443)
                .then(|| address.clone())
        })
        .build();
    let client = server.client();
    validating(
        &client,
        "by-service",
        vec![hook(
            "service.example.com",
            json!({"service": {"namespace": "webhooks", "name": "hooks", "port": 8443, "path": "/svc"}, "caBundle": hooks.ca_bundle}),
            &["CREATE"],
            json!({}),
        )],
    )
    .await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let (code, reason, message) = api_error(
        api.create(&PostParams::default(), &configmap("cm", json!({})))
            .await
            .expect_err("denied"),
    );
    assert_eq!(
        (code, reason.as_str(), message.as_str()),
        (
            422,
            "Invalid",
            "admission webhook \"service.example.com\" denied the request: not today"
        )
    );
    assert_eq!(
        hooks.requests("/svc").len(),
        1,
        "the request went to the service's path"
    );
}

#[tokio::test]
async fn dry_runs_call_only_webhooks_without_side_effects() {
    let hooks = WebhookServer::start(&[], Arc::new(|_, _: &Value| allow())).await;
    let server = FakeApiServer::new();
    let client = server.client();
    validating(
        &client,
        "effects",
        vec![hook(
            "effects.example.com",
            hooks.client_config("/effects"),
            &["CREATE"],
            json!({"sideEffects": "NoneOnDryRun"}),
        )],
    )
    .await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    api.create(&dry, &configmap("cm", json!({})))
        .await
        .expect("a dry run goes through a webhook without side effects on dry runs");
    let seen = hooks.requests("/effects");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["dryRun"], true);
    assert_eq!(seen[0]["options"]["dryRun"], json!(["All"]));
    assert!(server
        .get_object("v1", "configmaps", Some("default"), "cm")
        .is_none());

    // A configuration kept from before v1 (v1 refuses `Some` on create) with side effects.
    let mut state = server.export_state();
    for item in state["objects"].as_array_mut().unwrap() {
        if item["object"]["metadata"]["name"] == "effects" {
            item["object"]["webhooks"][0]["sideEffects"] = json!("Some");
        }
    }
    server
        .import_state(state)
        .expect("state with the old configuration");
    let (code, reason, message) = api_error(
        api.create(&dry, &configmap("cm", json!({})))
            .await
            .expect_err("a webhook with side effects refuses dry runs"),
    );
    assert_eq!(
        (code, reason.as_str(), message.as_str()),
        (
            400,
            "BadRequest",
            "admission webhook \"effects.example.com\" does not support dry run"
        )
    );
    assert_eq!(hooks.requests("/effects").len(), 1, "it was not called");
    api.create(&PostParams::default(), &configmap("cm", json!({})))
        .await
        .expect("a real create calls it");
    assert_eq!(hooks.requests("/effects").len(), 2);
}

#[tokio::test]
async fn configurations_are_validated_as_the_real_server_does() {
    let server = FakeApiServer::new();
    let client = server.client();
    let config: ValidatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": "bad"},
        "webhooks": [{
            "name": "short",
            "clientConfig": {"url": "http://hooks.example.com/x"},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
            "sideEffects": "Some",
            "admissionReviewVersions": ["v1"],
        }],
    }))
    .unwrap();
    let (code, reason, message) = api_error(
        Api::<ValidatingWebhookConfiguration>::all(client)
            .create(&PostParams::default(), &config)
            .await
            .expect_err("invalid"),
    );
    assert_eq!((code, reason.as_str()), (422, "Invalid"));
    assert_eq!(
        message,
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"bad\" is invalid: [webhooks[0].name: Invalid value: \"short\": should be a domain with at least three segments separated by dots, webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\", webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]]"
    );
}

/// The real `kubectl` against a server on loopback: `kubectl apply` of an object a webhook
/// refuses prints the webhook's message as a real cluster's kubectl does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_shows_the_webhook_denial() {
    let hooks = WebhookServer::start(
        &[],
        Arc::new(|_, _: &Value| {
            deny(json!({"code": 403, "reason": "Forbidden", "message": "configmaps need an owner label"}))
        }),
    )
    .await;
    let server = FakeApiServer::new();
    validating(
        &server.client(),
        "owners",
        vec![hook(
            "owners.example.com",
            hooks.client_config("/owners"),
            &["CREATE", "UPDATE"],
            json!({}),
        )],
    )
    .await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.clone().serve(listener, async move {
        let _ = stopped.await;
    }));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        fake_apiserver::kubeconfig::kubeconfig_yaml(&url),
    )
    .unwrap();
    let manifest = dir.path().join("cm.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: unowned\n  namespace: default\ndata:\n  a: \"1\"\n",
    )
    .unwrap();
    let mut command = std::process::Command::new("kubectl");
    command
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("apply")
        .arg("-f")
        .arg(&manifest)
        .env("HOME", dir.path())
        .stdin(std::process::Stdio::null());
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::task::spawn_blocking(move || command.output()),
    )
    .await
    .expect("kubectl finished in time")
    .unwrap()
    .expect("kubectl runs");
    let _ = stop.send(());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert_eq!(
        stderr.trim(),
        format!(
            "Error from server (Forbidden): error when creating \"{}\": admission webhook \"owners.example.com\" denied the request: configmaps need an owner label",
            manifest.display()
        )
    );
    assert!(server
        .get_object("v1", "configmaps", Some("default"), "unowned")
        .is_none());
}

/// A namespace with content deleted under a webhook on namespaces: the webhook sees the
/// user's CREATE and DELETE (not the namespace controller's own writes), and the deletion is
/// answered.
#[tokio::test]
async fn deleting_a_namespace_calls_its_webhook_once() {
    let hooks = WebhookServer::start(&[], Arc::new(|_, _: &Value| allow())).await;
    let server = FakeApiServer::new();
    let client = server.client();
    validating(
        &client,
        "namespaces",
        vec![json!({
            "name": "namespaces.example.com",
            "clientConfig": hooks.client_config("/ns"),
            "rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["namespaces", "namespaces/finalize"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        })],
    )
    .await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "team"}})).unwrap();
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    Api::<ConfigMap>::namespaced(client.clone(), "team")
        .create(&PostParams::default(), &configmap("cm", json!({})))
        .await
        .unwrap();
    namespaces
        .delete("team", &DeleteParams::default())
        .await
        .expect("the namespace deletion is answered");
    let operations: Vec<String> = hooks
        .requests("/ns")
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["operation"].as_str().unwrap(),
                r["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(operations, vec!["CREATE team", "DELETE team"]);
}

#[tokio::test]
async fn bad_answers_are_call_failures_and_deletes_cannot_be_patched() {
    let hooks = WebhookServer::start(
        &[],
        Arc::new(|path: &str, _: &Value| match path {
            // Answers for another request.
            "/wrong-uid" => Answer {
                response: json!({"allowed": true, "uid": "not-the-request"}),
                delay: Duration::ZERO,
            },
            _ => patch(json!([{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}])),
        }),
    )
    .await;
    let server = FakeApiServer::new();
    let client = server.client();
    mutating(
        &client,
        "odd",
        vec![
            hook(
                "patches-deletes.example.com",
                hooks.client_config("/patch"),
                &["DELETE"],
                json!({}),
            ),
            hook(
                "wrong-uid.example.com",
                hooks.client_config("/wrong-uid"),
                &["UPDATE"],
                json!({}),
            ),
        ],
    )
    .await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    api.create(&PostParams::default(), &configmap("cm", json!({})))
        .await
        .unwrap();
    let (code, _, message) = api_error(
        api.patch(
            "cm",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"a": "2"}})),
        )
        .await
        .expect_err("an answer for another uid is a failed call"),
    );
    assert_eq!(code, 500);
    assert!(
        message.starts_with("Internal error occurred: failed calling webhook \"wrong-uid.example.com\": received invalid webhook response: expected response.uid="),
        "{message}"
    );
    let (code, _, message) = api_error(
        api.delete("cm", &DeleteParams::default())
            .await
            .expect_err("a patch on a delete is refused"),
    );
    assert_eq!(
        (code, message.as_str()),
        (500, "Internal error occurred: admission webhook \"patches-deletes.example.com\" attempted to modify the object, which is not supported for this operation")
    );
    assert!(server
        .get_object("v1", "configmaps", Some("default"), "cm")
        .is_some());
}

#[tokio::test]
async fn delete_collection_asks_about_every_object_and_stops_at_a_denial() {
    let hooks = WebhookServer::start(
        &[],
        Arc::new(|_, request: &Value| {
            if request["oldObject"]["metadata"]["name"] == "keep" {
                deny(json!({"code": 403, "reason": "Forbidden", "message": "keep stays"}))
            } else {
                allow()
            }
        }),
    )
    .await;
    let server = FakeApiServer::new();
    let client = server.client();
    validating(
        &client,
        "keeper",
        vec![hook(
            "keeper.example.com",
            hooks.client_config("/keep"),
            &["DELETE"],
            json!({}),
        )],
    )
    .await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    for name in ["a", "b", "keep"] {
        api.create(
            &PostParams::default(),
            &configmap(name, json!({"set": "x"})),
        )
        .await
        .unwrap();
    }
    let (code, _, message) = api_error(
        api.delete_collection(
            &DeleteParams::default(),
            &kube::api::ListParams::default().labels("set=x"),
        )
        .await
        .expect_err("one object may not go"),
    );
    assert_eq!(
        (code, message.as_str()),
        (
            403,
            "admission webhook \"keeper.example.com\" denied the request: keep stays"
        )
    );
    let asked: Vec<String> = hooks
        .requests("/keep")
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        asked,
        vec!["a", "b", "keep"],
        "each object was asked about once"
    );
    for (name, present) in [("a", false), ("b", false), ("keep", true)] {
        assert_eq!(
            server
                .get_object("v1", "configmaps", Some("default"), name)
                .is_some(),
            present,
            "{name}"
        );
    }
}

#[tokio::test]
async fn evictions_go_through_webhooks_as_eviction_objects() {
    let hooks = WebhookServer::start(
        &[],
        Arc::new(|_, _: &Value| {
            deny(json!({"code": 429, "reason": "TooManyRequests", "message": "not during business hours"}))
        }),
    )
    .await;
    let server = FakeApiServer::new();
    let client = server.client();
    validating(
        &client,
        "evictions",
        vec![json!({
            "name": "evictions.example.com",
            "clientConfig": hooks.client_config("/evict"),
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/eviction"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        })],
    )
    .await;
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client, "default");
    let pod = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "web", "image": "nginx"}]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod)
        .await
        .expect("pod creates are not this webhook's");
    let (code, reason, message) = api_error(
        pods.evict("web", &kube::api::EvictParams::default())
            .await
            .expect_err("the webhook refuses the eviction"),
    );
    assert_eq!(
        (code, reason.as_str(), message.as_str()),
        (
            429,
            "TooManyRequests",
            "admission webhook \"evictions.example.com\" denied the request: not during business hours"
        )
    );
    assert!(server
        .get_object("v1", "pods", Some("default"), "web")
        .is_some());
    let seen = hooks.requests("/evict");
    assert_eq!(seen.len(), 1, "pod creation did not call it");
    let request = &seen[0];
    assert_eq!(
        request["kind"],
        json!({"group": "policy", "version": "v1", "kind": "Eviction"})
    );
    assert_eq!(
        request["resource"],
        json!({"group": "", "version": "v1", "resource": "pods"})
    );
    assert_eq!(request["subResource"], "eviction");
    assert_eq!(request["operation"], "CREATE");
    assert_eq!(request["name"], "web");
    assert_eq!(request["object"]["kind"], "Eviction");
}

#[tokio::test]
async fn match_conditions_decide_whether_a_webhook_is_called() {
    let hooks = WebhookServer::start(&[], Arc::new(|_, _: &Value| allow())).await;
    let server = FakeApiServer::new();
    let client = server.client();
    validating(
        &client,
        "conditional",
        vec![
            hook(
                "named.example.com",
                hooks.client_config("/named"),
                &["CREATE", "UPDATE"],
                json!({"matchConditions": [
                    {"name": "checked-only", "expression": "object.metadata.name.startsWith('checked-')"},
                    {"name": "creates-only", "expression": "request.operation == 'CREATE'"},
                    // The authorizer is declared for webhooks' conditions too.
                    {"name": "may-create", "expression": "authorizer.requestResource.check('create').allowed() && authorizer.path('/healthz').check('get').allowed()"},
                ]}),
            ),
            hook(
                "broken-ignored.example.com",
                hooks.client_config("/broken-ignored"),
                &["CREATE"],
                json!({"failurePolicy": "Ignore",
                       "matchConditions": [{"name": "missing", "expression": "object.data.nope == 'x'"}]}),
            ),
        ],
    )
    .await;
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for name in ["checked-a", "plain"] {
        configmaps
            .create(&PostParams::default(), &configmap(name, json!({})))
            .await
            .unwrap();
    }
    configmaps
        .patch(
            "checked-a",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"b": "2"}})),
        )
        .await
        .unwrap();
    let called: Vec<String> = hooks
        .requests("/named")
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["operation"].as_str().unwrap(),
                r["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(called, vec!["CREATE checked-a"]);
    // An evaluation error under Ignore skips the webhook and lets the request through.
    assert!(hooks.requests("/broken-ignored").is_empty());

    // Under Fail (the default) the same error refuses the request without calling the webhook.
    validating(
        &client,
        "failing",
        vec![hook(
            "broken.example.com",
            hooks.client_config("/broken"),
            &["CREATE"],
            json!({"matchConditions": [{"name": "missing", "expression": "object.data.nope == 'x'"}]}),
        )],
    )
    .await;
    let err = configmaps
        .create(&PostParams::default(), &configmap("third", json!({})))
        .await
        .unwrap_err();
    let (code, reason, message) = api_error(err);
    assert_eq!((code, reason.as_str()), (403, "Forbidden"));
    assert!(
        message.starts_with("configmaps \"third\" is forbidden: expression 'object.data.nope == 'x'' resulted in error: "),
        "{message}"
    );
    assert!(hooks.requests("/broken").is_empty());
}

/// A webhook registered for one version of a resource served at several (`matchPolicy:
/// Equivalent`) is sent the object converted to its version, and its patch, made against that
/// version, is converted back: a v2-only webhook on HPAs created at `autoscaling/v1` (what
/// `kubectl autoscale` sends), and a v1-only one on HPAs created at v2.
#[tokio::test]
async fn webhooks_get_objects_at_their_own_version_of_the_resource() {
    let hooks = WebhookServer::start(
        &[],
        Arc::new(|path: &str, request: &Value| match path {
            // Sees v2: raises maxReplicas through the v2 shape.
            "/v2" => patch(json!([{"op": "replace", "path": "/spec/maxReplicas", "value": 7}])),
            // Sees v1: sets the CPU target through the v1 field.
            "/v1" if request["object"]["spec"].get("maxReplicas").is_some() => patch(json!([
                {"op": "add", "path": "/spec/targetCPUUtilizationPercentage", "value": 55}
            ])),
            _ => allow(),
        }),
    )
    .await;
    let server = FakeApiServer::builder().seed(9).build();
    let client = server.client();
    let rule = |version: &str| {
        json!([{"operations": ["CREATE"], "apiGroups": ["autoscaling"], "apiVersions": [version],
                "resources": ["horizontalpodautoscalers"]}])
    };
    mutating(
        &client,
        "versions",
        vec![
            hook(
                "v2.example.com",
                hooks.client_config("/v2"),
                &["CREATE"],
                json!({"rules": rule("v2")}),
            ),
            hook(
                "v1.example.com",
                hooks.client_config("/v1"),
                &["CREATE"],
                json!({"rules": rule("v1")}),
            ),
        ],
    )
    .await;
    let target = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"});
    let (code, created) = http_support::json(
        &server,
        axum::http::Method::POST,
        "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers",
        &json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "from-v1"},
            "spec": {"scaleTargetRef": target, "maxReplicas": 3, "targetCPUUtilizationPercentage": 70}}),
    )
    .await;
    assert_eq!(code, axum::http::StatusCode::CREATED, "{created}");
    let v2_request = &hooks.requests("/v2")[0];
    assert_eq!(v2_request["kind"]["version"], "v2");
    assert_eq!(v2_request["requestKind"]["version"], "v1");
    assert_eq!(v2_request["object"]["apiVersion"], "autoscaling/v2");
    assert_eq!(
        v2_request["object"]["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        70
    );
    let v1_request = &hooks.requests("/v1")[0];
    assert_eq!(
        v1_request["object"]["spec"]["targetCPUUtilizationPercentage"],
        70
    );
    assert!(v1_request["object"]["spec"].get("metrics").is_none());
    let stored = server
        .get_object(
            "autoscaling/v2",
            "horizontalpodautoscalers",
            Some("default"),
            "from-v1",
        )
        .unwrap();
    assert_eq!(stored["spec"]["maxReplicas"], 7);
    assert_eq!(
        stored["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 55}}}])
    );

    // Created at v2: the v1 webhook sees the v1 shape and its field lands in the v2 metrics.
    let (code, created) = http_support::json(
        &server,
        axum::http::Method::POST,
        "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
        &json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "from-v2"},
            "spec": {"scaleTargetRef": target, "maxReplicas": 3}}),
    )
    .await;
    assert_eq!(code, axum::http::StatusCode::CREATED, "{created}");
    assert_eq!(created["spec"]["maxReplicas"], 7);
    assert_eq!(
        created["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        55
    );
}
