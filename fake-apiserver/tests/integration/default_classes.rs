//! `DefaultStorageClass` and `DefaultIngressClass` through the API: a claim or an Ingress
//! created without a class gets the default one; one naming a class, or created before any
//! default exists, keeps what it had; an update is not defaulted.

use crate::http_support::json as call;

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use serde_json::{json, Value};

const CLAIMS: &str = "/api/v1/namespaces/default/persistentvolumeclaims";
const INGRESSES: &str = "/apis/networking.k8s.io/v1/namespaces/default/ingresses";

async fn create(server: &FakeApiServer, uri: &str, object: Value) -> Value {
    let (status, answer) = call(server, Method::POST, uri, &object).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    answer
}

fn claim(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["accessModes"] = json!(["ReadWriteOnce"]);
    spec["resources"] = json!({"requests": {"storage": "1Gi"}});
    json!({"metadata": {"name": name}, "spec": spec})
}

fn ingress(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["defaultBackend"] = json!({"service": {"name": "web", "port": {"number": 80}}});
    json!({"metadata": {"name": name}, "spec": spec})
}

#[tokio::test]
async fn claims_and_ingresses_without_a_class_get_the_default() {
    let server = FakeApiServer::new();
    let before = create(&server, CLAIMS, claim("before", json!({}))).await;
    assert!(before["spec"].get("storageClassName").is_none(), "{before}");

    create(
        &server,
        "/apis/storage.k8s.io/v1/storageclasses",
        json!({"metadata": {"name": "standard",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "example.com/csi"}),
    )
    .await;
    create(
        &server,
        "/apis/networking.k8s.io/v1/ingressclasses",
        json!({"metadata": {"name": "nginx",
            "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
            "spec": {"controller": "k8s.io/ingress-nginx"}}),
    )
    .await;

    let defaulted = create(&server, CLAIMS, claim("data", json!({}))).await;
    assert_eq!(defaulted["spec"]["storageClassName"], "standard");
    let explicit = create(
        &server,
        CLAIMS,
        claim("none", json!({"storageClassName": ""})),
    )
    .await;
    assert_eq!(explicit["spec"]["storageClassName"], "");
    let ingress_defaulted = create(&server, INGRESSES, ingress("web", json!({}))).await;
    assert_eq!(ingress_defaulted["spec"]["ingressClassName"], "nginx");
    let mut annotated = ingress("legacy", json!({}));
    annotated["metadata"]["annotations"] = json!({"kubernetes.io/ingress.class": "traefik"});
    let legacy = create(&server, INGRESSES, annotated).await;
    assert!(legacy["spec"].get("ingressClassName").is_none(), "{legacy}");

    // An update of the claim made before the default existed is not defaulted.
    let mut labelled = before.clone();
    labelled["metadata"]["labels"] = json!({"a": "b"});
    let (status, updated) =
        call(&server, Method::PUT, &format!("{CLAIMS}/before"), &labelled).await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert!(
        updated["spec"].get("storageClassName").is_none(),
        "{updated}"
    );
}
