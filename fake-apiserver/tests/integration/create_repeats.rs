//! Creates of alike bodies, one after another, as a controller creating from a template sends
//! them. The server keeps the last create body of each resource with its parse and decode, and
//! the creator's field set of the last objects created (per thread); what each create answers
//! must be what the first create of that body answered, warnings included, and a body that
//! differs where it counts gets its own answer.

use crate::http_support;

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use http_support::json_with_warnings as call;
use serde_json::{json, Value};

const PODS: &str = "/api/v1/namespaces/default/pods";

/// A pod from a template: a generated name, a label, and a field the container type does not
/// have (dropped with a warning).
fn templated() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"generateName": "web-", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx", "bogus": 1,
            "resources": {"limits": {"cpu": "1"}}}]}
    })
}

/// What a create answered, without what differs from one object to the next (its name, uid,
/// revision, the generated suffix of its token volume) and the times.
fn comparable(mut pod: Value) -> Value {
    let meta = pod["metadata"].as_object_mut().expect("metadata");
    for generated in ["name", "uid", "resourceVersion", "creationTimestamp"] {
        assert!(meta.remove(generated).is_some(), "{generated} is set");
    }
    for entry in meta["managedFields"].as_array_mut().expect("managedFields") {
        entry.as_object_mut().expect("an entry").remove("time");
    }
    let token_volume = pod["spec"]["volumes"][0]["name"]
        .as_str()
        .map(str::to_string);
    let text = pod.to_string();
    match token_volume {
        Some(name) => serde_json::from_str(&text.replace(&name, "kube-api-access")).expect("JSON"),
        None => pod,
    }
}

#[tokio::test]
async fn the_same_body_again_answers_what_it_answered_first() {
    let server = FakeApiServer::new();
    let (status, first_warnings, first) = call(&server, Method::POST, PODS, &templated()).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    assert_eq!(first_warnings.len(), 1, "{first_warnings:?}");
    assert!(first_warnings[0].contains("bogus"), "{first_warnings:?}");
    assert!(first["spec"]["containers"][0].get("bogus").is_none());
    let first = comparable(first);
    let mut names = Vec::new();
    for _ in 0..3 {
        let (status, warnings, again) = call(&server, Method::POST, PODS, &templated()).await;
        assert_eq!(status, StatusCode::CREATED, "{again}");
        assert_eq!(warnings, first_warnings, "the decode's warning, every time");
        names.push(again["metadata"]["name"].clone());
        assert_eq!(comparable(again), first);
    }
    names.dedup();
    assert_eq!(names.len(), 3, "each create is its own object: {names:?}");
}

#[tokio::test]
async fn a_refused_body_is_refused_again() {
    let server = FakeApiServer::new();
    let strict = format!("{PODS}?fieldValidation=Strict");
    for _ in 0..2 {
        let (status, _, answer) = call(&server, Method::POST, &strict, &templated()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(
            answer["message"]
                .as_str()
                .unwrap_or_default()
                .contains("bogus"),
            "{answer}"
        );
    }
    let (status, warnings, answer) = call(&server, Method::POST, PODS, &templated()).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let (status, _, answer) = call(&server, Method::POST, &strict, &templated()).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "strict after a kept decode: {answer}"
    );
}

/// The creator's `fieldsV1` of a created pod.
fn owned(pod: &Value) -> Value {
    pod["metadata"]["managedFields"][0]["fieldsV1"].clone()
}

#[tokio::test]
async fn bodies_that_differ_where_it_counts_get_their_own_fields() {
    let server = FakeApiServer::new();
    let create = |edit: fn(&mut Value)| {
        let mut body = templated();
        edit(&mut body);
        let server = server.clone();
        async move {
            let (status, _, answer) = call(&server, Method::POST, PODS, &body).await;
            assert_eq!(status, StatusCode::CREATED, "{answer}");
            answer
        }
    };
    let first = create(|_| {}).await;
    // Another generated name and label value: the same fields.
    let renamed = create(|pod| {
        pod["metadata"] = json!({"generateName": "other-", "labels": {"app": "other"}});
    })
    .await;
    assert!(renamed["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .starts_with("other-"));
    assert_eq!(renamed["metadata"]["labels"]["app"], "other");
    assert_eq!(owned(&renamed), owned(&first));
    // A name instead of a generated one: `generateName` is a field the creator owns.
    let named =
        create(|pod| pod["metadata"] = json!({"name": "named", "labels": {"app": "a"}})).await;
    assert_eq!(named["metadata"]["name"], "named");
    assert!(owned(&first)["f:metadata"].get("f:generateName").is_some());
    assert!(owned(&named)["f:metadata"].get("f:generateName").is_none());
    // Another label key, another container field, another image: each as it is.
    let relabelled = create(|pod| pod["metadata"]["labels"] = json!({"tier": "web"})).await;
    assert_eq!(
        owned(&relabelled)["f:metadata"]["f:labels"],
        json!({".": {}, "f:tier": {}})
    );
    let with_port = create(|pod| {
        pod["spec"]["containers"][0]["ports"] = json!([{"containerPort": 80}]);
    })
    .await;
    assert!(
        owned(&with_port)["f:spec"]["f:containers"]["k:{\"name\":\"web\"}"]
            .get("f:ports")
            .is_some()
    );
    assert!(
        owned(&first)["f:spec"]["f:containers"]["k:{\"name\":\"web\"}"]
            .get("f:ports")
            .is_none()
    );
    let reimaged = create(|pod| pod["spec"]["containers"][0]["image"] = json!("httpd")).await;
    assert_eq!(reimaged["spec"]["containers"][0]["image"], "httpd");
    assert_eq!(owned(&reimaged), owned(&first));
}
