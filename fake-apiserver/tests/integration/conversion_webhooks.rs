//! CRD conversion webhooks against a real HTTPS webhook server on loopback: a CRD whose
//! `v1` keeps `spec.size` and whose `v2` keeps `spec.dimensions.size`, converted by a webhook
//! the test runs. Objects are stored at `v1` and served at the version each request names
//! (get, list, watch, write answers); writes at `v2` are converted before they are stored; a
//! webhook that fails or cannot be reached fails the request with the real server's message.

use crate::http_support;

use std::sync::{Arc, Mutex};

use axum::http::{Method, StatusCode};
use base64::Engine;
use fake_apiserver::FakeApiServer;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

/// How the webhook answers: converts, or fails with a message.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Convert,
    Fail,
}

/// The converting webhook: every review it gets is kept.
struct Webhook {
    url: String,
    ca_bundle: String,
    reviews: Arc<Mutex<Vec<Value>>>,
    mode: Arc<Mutex<Mode>>,
    _stop: tokio::sync::oneshot::Sender<()>,
    _dir: tempfile::TempDir,
}

/// `v1` ↔ `v2` of one widget.
fn convert(object: &Value, desired: &str) -> Value {
    let mut out = object.clone();
    out["apiVersion"] = json!(desired);
    if desired.ends_with("/v2") {
        if let Some(size) = object["spec"].get("size") {
            out["spec"] = json!({"dimensions": {"size": size}});
        }
    } else if let Some(size) = object["spec"]["dimensions"].get("size") {
        out["spec"] = json!({"size": size});
    }
    out["metadata"]["annotations"] = json!({"converted-by": "test"});
    out
}

impl Webhook {
    async fn start() -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        let (cert, key) = fake_apiserver::tls::self_signed_certificate(dir.path(), &[])
            .expect("a self-signed certificate");
        let pem = std::fs::read(&cert).expect("read the certificate");
        let tls = fake_apiserver::tls::TlsConfig::from_pem_files(&cert, &key).expect("TLS config");
        let reviews: Arc<Mutex<Vec<Value>>> = Arc::default();
        let mode = Arc::new(Mutex::new(Mode::Convert));
        let (recorded, answering) = (reviews.clone(), mode.clone());
        let router = axum::Router::new().fallback(move |body: axum::body::Bytes| {
            let recorded = recorded.clone();
            let answering = answering.clone();
            async move {
                let review: Value = serde_json::from_slice(&body).unwrap_or_default();
                recorded.lock().unwrap().push(review.clone());
                let request = &review["request"];
                let desired = request["desiredAPIVersion"].as_str().unwrap_or_default();
                let response = match *answering.lock().unwrap() {
                    Mode::Convert => json!({
                        "uid": request["uid"],
                        "result": {"status": "Success"},
                        "convertedObjects": request["objects"].as_array().unwrap()
                            .iter().map(|o| convert(o, desired)).collect::<Vec<_>>(),
                    }),
                    Mode::Fail => json!({
                        "uid": request["uid"],
                        "result": {"status": "Failure", "message": "widgets cannot be converted today"},
                    }),
                };
                axum::Json(json!({"apiVersion": review["apiVersion"], "kind": "ConversionReview", "response": response}))
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("https://{}/convert", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(fake_apiserver::tls::serve_router_tls(
            router,
            listener,
            tls,
            async move {
                let _ = stopped.await;
            },
        ));
        Webhook {
            url,
            ca_bundle: base64::engine::general_purpose::STANDARD.encode(pem),
            reviews,
            mode,
            _stop: stop,
            _dir: dir,
        }
    }

    fn reviews(&self) -> Vec<Value> {
        self.reviews.lock().unwrap().clone()
    }
}

fn crd(client_config: Value) -> Value {
    let schema =
        |spec: Value| json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.ex.com"},
        "spec": {
            "group": "ex.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "conversion": {"strategy": "Webhook", "webhook": {
                "clientConfig": client_config, "conversionReviewVersions": ["v1"]}},
            "versions": [
                {"name": "v1", "served": true, "storage": true, "schema": schema(json!(
                    {"type": "object", "properties": {"size": {"type": "integer"}}}))},
                {"name": "v2", "served": true, "storage": false,
                 "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.dimensions.size"}],
                 "schema": schema(json!(
                    {"type": "object", "properties": {"dimensions": {"type": "object",
                        "properties": {"size": {"type": "integer"}}}}}))}
            ]
        }
    })
}

const V1: &str = "/apis/ex.com/v1/namespaces/default/widgets";
const V2: &str = "/apis/ex.com/v2/namespaces/default/widgets";

async fn install(server: &FakeApiServer, client_config: Value) {
    let (code, body) = http_support::json(
        server,
        Method::POST,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &crd(client_config),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED, "{body}");
}

fn widget_v2(name: &str, size: i64) -> Value {
    json!({"apiVersion": "ex.com/v2", "kind": "Widget", "metadata": {"name": name},
        "spec": {"dimensions": {"size": size}}})
}

#[tokio::test]
async fn objects_are_converted_by_the_webhook_between_the_stored_and_the_served_version() {
    let webhook = Webhook::start().await;
    let server = FakeApiServer::new();
    install(
        &server,
        json!({"url": webhook.url, "caBundle": webhook.ca_bundle}),
    )
    .await;

    // A create at v2: converted to v1 to be stored, the stored object back to v2 for the answer.
    let (code, created) = http_support::json(&server, Method::POST, V2, &widget_v2("a", 3)).await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    assert_eq!(created["apiVersion"], "ex.com/v2");
    assert_eq!(created["spec"], json!({"dimensions": {"size": 3}}));
    let reviews = webhook.reviews();
    assert_eq!(reviews.len(), 2, "{reviews:#?}");
    assert_eq!(reviews[0]["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(reviews[0]["request"]["desiredAPIVersion"], "ex.com/v1");
    assert_eq!(reviews[1]["request"]["desiredAPIVersion"], "ex.com/v2");
    // Only labels and annotations of the answer are taken: the stored metadata is the server's.
    assert_eq!(
        created["metadata"]["annotations"],
        json!({"converted-by": "test"})
    );
    assert!(created["metadata"]["uid"]
        .as_str()
        .is_some_and(|u| !u.is_empty()));

    // Stored at v1; a read at v1 calls nobody.
    let (code, at_v1) =
        http_support::json(&server, Method::GET, &format!("{V1}/a"), &Value::Null).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(at_v1["apiVersion"], "ex.com/v1");
    assert_eq!(at_v1["spec"], json!({"size": 3}));
    assert_eq!(webhook.reviews().len(), 2);

    // A list at v2: one review for every object.
    http_support::json(&server, Method::POST, V2, &widget_v2("b", 4)).await;
    let before = webhook.reviews().len();
    let (code, list) = http_support::json(&server, Method::GET, V2, &Value::Null).await;
    assert_eq!(code, StatusCode::OK, "{list}");
    assert_eq!(list["apiVersion"], "ex.com/v2");
    let sizes: Vec<&Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["spec"]["dimensions"]["size"])
        .collect();
    assert_eq!(sizes, [&json!(3), &json!(4)]);
    let reviews = webhook.reviews();
    assert_eq!(reviews.len(), before + 1);
    assert_eq!(
        reviews[before]["request"]["objects"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    // A table at v2: the printer column reads the converted objects.
    let request = axum::http::Request::builder()
        .uri(V2)
        .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
        .body(axum::body::Body::empty())
        .unwrap();
    let response = server.router().oneshot(request).await.unwrap();
    let table: Value =
        serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes()).unwrap();
    let sizes: Vec<&Value> = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["cells"][1])
        .collect();
    assert_eq!(sizes, [&json!(3), &json!(4)], "{table}");

    // A merge patch at v2 applies to the v2 object and is stored at v1.
    let (code, patched) = http_support::call(
        &server,
        Method::PATCH,
        &format!("{V2}/a"),
        "application/merge-patch+json",
        br#"{"spec":{"dimensions":{"size":9}}}"#.to_vec(),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{patched}");
    assert_eq!(patched["spec"], json!({"dimensions": {"size": 9}}));
    let (_, at_v1) =
        http_support::json(&server, Method::GET, &format!("{V1}/a"), &Value::Null).await;
    assert_eq!(at_v1["spec"], json!({"size": 9}));

    // A watch at v2 gets its events converted.
    let request = axum::http::Request::builder()
        .uri(format!("{V2}?watch=1&timeoutSeconds=1"))
        .body(axum::body::Body::empty())
        .unwrap();
    let response = server.router().oneshot(request).await.unwrap();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let events: Vec<Value> = body
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events
        .iter()
        .all(|e| e["object"]["apiVersion"] == "ex.com/v2"
            && e["object"]["spec"]["dimensions"].is_object()));
}

#[tokio::test]
async fn a_failing_or_unreachable_webhook_fails_the_request_with_the_real_message() {
    let webhook = Webhook::start().await;
    let server = FakeApiServer::new();
    install(
        &server,
        json!({"url": webhook.url, "caBundle": webhook.ca_bundle}),
    )
    .await;
    // Written at v1: no conversion needed.
    let (code, _) = http_support::json(
        &server,
        Method::POST,
        V1,
        &json!({"apiVersion": "ex.com/v1", "kind": "Widget", "metadata": {"name": "a"}, "spec": {"size": 1}}),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);

    *webhook.mode.lock().unwrap() = Mode::Fail;
    let (code, status) =
        http_support::json(&server, Method::GET, &format!("{V2}/a"), &Value::Null).await;
    assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        status["message"],
        "conversion webhook for ex.com/v1, Kind=Widget returned invalid response: widgets cannot be converted today"
    );
    assert!(status.get("reason").is_none(), "{status}");
    // A write that needs the webhook before it is stored writes nothing.
    let (code, status) = http_support::json(&server, Method::POST, V2, &widget_v2("b", 2)).await;
    assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        status["message"],
        "conversion webhook for ex.com/v2, Kind=Widget returned invalid response: widgets cannot be converted today"
    );
    assert!(server
        .get_object("ex.com/v1", "widgets", Some("default"), "b")
        .is_none());

    // A webhook nobody listens on.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = closed.local_addr().unwrap();
    drop(closed);
    let server = FakeApiServer::new();
    install(
        &server,
        json!({"url": format!("https://{address}/convert"), "caBundle": webhook.ca_bundle}),
    )
    .await;
    let (code, status) = http_support::json(&server, Method::POST, V2, &widget_v2("c", 2)).await;
    assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        status["message"],
        format!(
            "conversion webhook for ex.com/v2, Kind=Widget failed: Post \"https://{address}/convert?timeout=30s\": dial tcp {address}: connect: connection refused"
        )
    );
}

#[tokio::test]
async fn the_servers_own_writes_leave_converted_objects_as_stored() {
    // v2 listed first, objects stored at v1: the garbage collector orphans a dependent (a
    // metadata write on the stored object) without calling the webhook.
    let webhook = Webhook::start().await;
    let server = FakeApiServer::new();
    let mut definition = crd(json!({"url": webhook.url, "caBundle": webhook.ca_bundle}));
    definition["spec"]["versions"]
        .as_array_mut()
        .unwrap()
        .reverse();
    let (code, body) = http_support::json(
        &server,
        Method::POST,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &definition,
    )
    .await;
    assert_eq!(code, StatusCode::CREATED, "{body}");
    let (_, owner) = http_support::json(
        &server,
        Method::POST,
        "/api/v1/namespaces/default/configmaps",
        &json!({"metadata": {"name": "owner"}}),
    )
    .await;
    let reference = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
        "uid": owner["metadata"]["uid"]}]);
    let (code, _) = http_support::json(
        &server,
        Method::POST,
        V1,
        &json!({"apiVersion": "ex.com/v1", "kind": "Widget",
            "metadata": {"name": "a", "ownerReferences": reference}, "spec": {"size": 1}}),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, _) = http_support::json(
        &server,
        Method::DELETE,
        "/api/v1/namespaces/default/configmaps/owner",
        &json!({"propagationPolicy": "Orphan"}),
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    // Orphaned: the collector's update takes the reference off, the object stays at v1.
    let mut orphaned = false;
    for _ in 0..300 {
        let widget = server.get_object("ex.com/v1", "widgets", Some("default"), "a");
        if widget
            .as_ref()
            .is_some_and(|w| w["metadata"].get("ownerReferences").is_none())
        {
            assert_eq!(widget.unwrap()["apiVersion"], "ex.com/v1");
            orphaned = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(orphaned, "the garbage collector orphaned the dependent");
    assert!(webhook.reviews().is_empty(), "{:?}", webhook.reviews());
}
