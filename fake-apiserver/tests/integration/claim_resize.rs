//! `PersistentVolumeClaimResize` through the API: a bound claim grows only through a
//! StorageClass that allows expansion.

use crate::http_support::json as call;

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use serde_json::{json, Value};

const CLAIMS: &str = "/api/v1/namespaces/default/persistentvolumeclaims";

async fn bound_claim(server: &FakeApiServer, name: &str, class: &str) -> Value {
    let (status, created) = call(
        server,
        Method::POST,
        CLAIMS,
        &json!({"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"],
            "storageClassName": class, "resources": {"requests": {"storage": "1Gi"}}}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let mut bound = created;
    bound["status"] = json!({"phase": "Bound", "capacity": {"storage": "1Gi"}});
    let (status, bound) = call(
        server,
        Method::PUT,
        &format!("{CLAIMS}/{name}/status"),
        &bound,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{bound}");
    bound
}

#[tokio::test]
async fn a_bound_claim_grows_only_through_an_expandable_class() {
    let server = FakeApiServer::new();
    for (name, expandable) in [("fast", true), ("fixed", false)] {
        let (status, answer) = call(
            &server,
            Method::POST,
            "/apis/storage.k8s.io/v1/storageclasses",
            &json!({"metadata": {"name": name}, "provisioner": "example.com/csi",
                "allowVolumeExpansion": expandable}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{answer}");
    }
    for (claim, class, grows) in [("a", "fast", true), ("b", "fixed", false)] {
        let mut grown = bound_claim(&server, claim, class).await;
        grown["spec"]["resources"]["requests"]["storage"] = json!("5Gi");
        let (status, answer) =
            call(&server, Method::PUT, &format!("{CLAIMS}/{claim}"), &grown).await;
        if grows {
            assert_eq!(status, StatusCode::OK, "{answer}");
            assert_eq!(answer["spec"]["resources"]["requests"]["storage"], "5Gi");
        } else {
            assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
            assert_eq!(
                answer["message"],
                "persistentvolumeclaims \"b\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"
            );
        }
    }
}
