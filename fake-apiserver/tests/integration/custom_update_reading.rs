//! A custom resource's UPDATE after its CRD changed, and at another version than the one it
//! is stored at: the schema pass applies to the whole body, including the parts the client
//! sent back as they were stored (a default the CRD gained since lands, a field it no longer
//! keeps goes), and sending the answer back changes nothing; at another version the object is
//! answered at the request's version and stored at the storage version.

use crate::http_support::{self, json as call};

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use serde_json::{json, Value};

const CRD: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.ex.com";
const WIDGET: &str = "/apis/ex.com/v1/namespaces/default/widgets/w";
const WIDGET_V2: &str = "/apis/ex.com/v2/namespaces/default/widgets/w";

/// A schema whose `spec.inner` keeps `size` and `colour` (and, with `later`, defaults
/// `colour` and no longer keeps `size`).
fn schema(later: bool) -> Value {
    let mut inner = json!({"type": "object", "properties": {
        "size": {"type": "integer"},
        "colour": {"type": "string"},
        "shape": {"type": "string"}
    }});
    if later {
        inner["properties"]["colour"]["default"] = json!("blue");
        inner["properties"]
            .as_object_mut()
            .expect("properties")
            .remove("size");
    }
    json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "inner": inner,
            "list": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "note": {"type": "string"}}}}
        }}
    }}})
}

fn crd(later: bool) -> Value {
    let version = |name: &str, storage: bool| json!({"name": name, "served": true, "storage": storage, "schema": schema(later)});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.ex.com"},
        "spec": {"group": "ex.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [version("v1", true), version("v2", false)]}
    })
}

async fn server_with_widget() -> FakeApiServer {
    let server = FakeApiServer::new();
    let (status, answer) = call(&server, Method::POST, http_support::CRDS, &crd(false)).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let widget = json!({
        "apiVersion": "ex.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"inner": {"size": 3, "shape": "round"},
            "list": [{"name": "a", "note": "x".repeat(300)}, {"name": "b"}]}
    });
    let (status, answer) = call(
        &server,
        Method::POST,
        "/apis/ex.com/v1/namespaces/default/widgets",
        &widget,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    server
}

/// The CRD changed under a stored widget: an UPDATE sending back what was read (a label
/// added) gets the new default and loses the field no longer kept; sending the answer back
/// again changes nothing.
#[tokio::test]
async fn an_update_after_a_crd_change_gets_the_new_schema_pass() {
    let server = server_with_widget().await;
    let (_, mut stored_crd) = call(&server, Method::GET, CRD, &Value::Null).await;
    stored_crd["spec"] = crd(true)["spec"].clone();
    let (status, answer) = call(&server, Method::PUT, CRD, &stored_crd).await;
    assert_eq!(status, StatusCode::OK, "{answer}");

    let (_, mut read) = call(&server, Method::GET, WIDGET, &Value::Null).await;
    // The body as a client holding the object from before the change would send it.
    read["spec"]["inner"] = json!({"size": 3, "shape": "round"});
    read["metadata"]["labels"] = json!({"l": "1"});
    let (status, updated) = call(&server, Method::PUT, WIDGET, &read).await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(
        updated["spec"]["inner"],
        json!({"colour": "blue", "shape": "round"})
    );
    assert_eq!(updated["spec"]["list"], read["spec"]["list"]);
    assert_eq!(updated["metadata"]["labels"], json!({"l": "1"}));
    let (_, again) = call(&server, Method::GET, WIDGET, &Value::Null).await;
    assert_eq!(again, updated);

    // What the store answered is what it keeps: sent back, nothing changes.
    let (status, same) = call(&server, Method::PUT, WIDGET, &updated).await;
    assert_eq!(status, StatusCode::OK, "{same}");
    assert_eq!(
        same["metadata"]["resourceVersion"],
        updated["metadata"]["resourceVersion"]
    );
}

/// At a version other than the stored one, the body is the served object (another
/// `apiVersion`): answered at that version, stored at the storage version.
#[tokio::test]
async fn an_update_at_another_version_is_stored_at_the_storage_version() {
    let server = server_with_widget().await;
    let (status, mut read) = call(&server, Method::GET, WIDGET_V2, &Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{read}");
    assert_eq!(read["apiVersion"], "ex.com/v2");
    read["spec"]["inner"]["shape"] = json!("square");
    let (status, updated) = call(&server, Method::PUT, WIDGET_V2, &read).await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(updated["apiVersion"], "ex.com/v2");
    assert_eq!(updated["spec"]["inner"]["shape"], "square");
    let (_, at_v1) = call(&server, Method::GET, WIDGET, &Value::Null).await;
    assert_eq!(at_v1["apiVersion"], "ex.com/v1");
    assert_eq!(
        at_v1["spec"]["inner"],
        json!({"size": 3, "shape": "square"})
    );
    assert_eq!(at_v1["spec"]["list"], read["spec"]["list"]);
}
