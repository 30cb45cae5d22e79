//! Pod updates that leave the spec as it was. A real server decodes every write in full: the
//! typed decode (unknown fields dropped with a warning, malformed quantities refused) and the
//! decode-time defaults. The fake leaves alone the parts of a body it shares with a stored
//! version known to come out of that decode unchanged (written through it), so these tests
//! store pods *not* known so (loaded from saved state, as restoring etcd would, and edited
//! there) and check that every kind of update still decodes them as a real server does, each
//! time, and that a pod written through the API keeps what its writes store.

use crate::http_support;

use axum::http::{HeaderMap, Method, Request, StatusCode};
use fake_apiserver::FakeApiServer;
use http_support::json as call;
use rstest::rstest;
use serde_json::{json, Value};

const PODS: &str = "/api/v1/namespaces/default/pods";
const POD: &str = "/api/v1/namespaces/default/pods/web";

fn pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": "web", "image": "nginx",
            "resources": {"limits": {"cpu": "1"}}}]}
    })
}

/// A server holding `web`: created through the API, then (when `edit` is given) saved,
/// edited in the saved state and loaded into a fresh server as it is.
async fn server_with(edit: Option<fn(&mut Value)>) -> FakeApiServer {
    let server = FakeApiServer::new();
    let (status, answer) = call(&server, Method::POST, PODS, &pod()).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    match edit {
        Some(edit) => http_support::reloaded_with(&server, "/pods", edit),
        None => server,
    }
}

/// The container's defaults left out.
fn without_defaults(pod: &mut Value) {
    let container = pod["spec"]["containers"][0]
        .as_object_mut()
        .expect("a container");
    container.remove("terminationMessagePath");
    container.remove("imagePullPolicy");
    pod["spec"]["containers"][0]["resources"]
        .as_object_mut()
        .expect("resources")
        .remove("requests");
}

/// A field the container type does not have.
fn with_unknown_field(pod: &mut Value) {
    pod["spec"]["containers"][0]["bogus"] = json!(1);
}

/// A limit that is not a quantity.
fn with_bad_quantity(pod: &mut Value) {
    pod["spec"]["containers"][0]["resources"]["limits"]["cpu"] = json!("lots");
}

/// One update of the pod that leaves its spec alone, by `how`: the status, the headers and the
/// answer.
async fn update(server: &FakeApiServer, how: &str, round: usize) -> (StatusCode, HeaderMap, Value) {
    let label = json!({"metadata": {"labels": {"round": round.to_string()}}});
    let (method, uri, content_type, body) = match how {
        "put" => {
            let (status, mut current) = call(server, Method::GET, POD, &Value::Null).await;
            assert_eq!(status, StatusCode::OK, "{current}");
            current["metadata"]["labels"] = label["metadata"]["labels"].clone();
            (Method::PUT, POD, "application/json", current)
        }
        "merge" => (Method::PATCH, POD, "application/merge-patch+json", label),
        "strategic" => (
            Method::PATCH,
            POD,
            "application/strategic-merge-patch+json",
            label,
        ),
        "status" => (
            Method::PATCH,
            "/api/v1/namespaces/default/pods/web/status",
            "application/merge-patch+json",
            json!({"status": {"message": format!("round {round}")}}),
        ),
        other => panic!("no update {other}"),
    };
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(axum::body::Body::from(body.to_string()))
        .expect("a request");
    let (status, headers, bytes) = http_support::send_raw(server, request).await;
    let answer = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, headers, answer)
}

fn warnings(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all("warning")
        .iter()
        .map(|w| w.to_str().unwrap_or_default().to_string())
        .collect()
}

#[rstest]
#[tokio::test]
async fn defaults_left_out_of_a_stored_pod_are_filled_by_every_update(
    #[values("put", "merge", "strategic")] how: &str,
) {
    // Filled, the spec differs from the stored one in fields a pod update may not change, so
    // a real server refuses the update, every time (this is what comes of restoring a pod
    // without its defaults).
    let server = server_with(Some(without_defaults)).await;
    for round in 0..2 {
        let (status, _, answer) = update(&server, how, round).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{how} round {round}: {answer}"
        );
        assert_eq!(answer["details"]["causes"][0]["field"], "spec", "{answer}");
    }
    // The status subresource keeps the stored spec whatever the body's decode made of it.
    for round in 0..2 {
        let (status, _, answer) = update(&server, "status", round).await;
        assert_eq!(status, StatusCode::OK, "status round {round}: {answer}");
        let container = &answer["spec"]["containers"][0];
        assert!(
            container.get("terminationMessagePath").is_none(),
            "{answer}"
        );
    }
}

#[rstest]
#[tokio::test]
async fn an_unknown_field_in_a_stored_pod_is_dropped_with_a_warning_by_the_next_update(
    #[values("put", "merge", "strategic", "status")] how: &str,
) {
    let server = server_with(Some(with_unknown_field)).await;
    let (status, headers, answer) = update(&server, how, 0).await;
    assert_eq!(status, StatusCode::OK, "{how}: {answer}");
    assert!(
        warnings(&headers)
            .iter()
            .any(|w| w.contains(r#"unknown field \"spec.containers[0].bogus\""#)),
        "{how}: {:?}",
        warnings(&headers)
    );
    if how == "status" {
        // (The status subresource stores the spec as it was stored.)
        return;
    }
    assert!(answer["spec"]["containers"][0].get("bogus").is_none());
    // Dropped from the store too: the next update has nothing to warn about.
    let (status, headers, answer) = update(&server, how, 1).await;
    assert_eq!(status, StatusCode::OK, "{how}: {answer}");
    assert_eq!(warnings(&headers), Vec::<String>::new());
}

#[rstest]
#[tokio::test]
async fn a_malformed_quantity_in_a_stored_pod_fails_every_update(
    #[values("put", "merge", "strategic", "status")] how: &str,
) {
    let server = server_with(Some(with_bad_quantity)).await;
    for round in 0..2 {
        let (status, _, answer) = update(&server, how, round).await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "{how} round {round}: {answer}"
        );
        let message = answer["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression"),
            "{message}"
        );
    }
}

#[rstest]
#[tokio::test]
async fn updates_of_a_pod_written_through_the_api_keep_its_spec(
    #[values("put", "merge", "strategic", "status")] how: &str,
) {
    let server = server_with(None).await;
    let (_, created) = call(&server, Method::GET, POD, &Value::Null).await;
    for round in 0..3 {
        let (status, headers, answer) = update(&server, how, round).await;
        assert_eq!(status, StatusCode::OK, "{how} round {round}: {answer}");
        assert_eq!(answer["spec"], created["spec"], "{how} round {round}");
        assert_eq!(warnings(&headers), Vec::<String>::new());
    }
}

/// `value` without the `null` members of its maps, as a typed client (k8s-openapi) writes back
/// what it read.
fn without_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(without_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(without_nulls),
        _ => {}
    }
}

/// A client that leaves out the nulls the server wrote (`lastProbeTime: null` in each pod
/// condition, Go's encoding of a zero time) writes back what it read: leaving them out changes
/// nothing, and a change beside them is stored as with them; a condition time it leaves out
/// that was *not* null is cleared.
#[tokio::test]
async fn a_put_that_leaves_out_the_nulls_it_read_is_the_same_put() {
    let server = server_with(None).await;
    let status_uri = format!("{POD}/status");
    let (status, mut current) = call(&server, Method::GET, POD, &Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{current}");
    current["status"]["conditions"] = json!([
        {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:06Z"},
        {"type": "PodScheduled", "status": "True", "lastProbeTime": "2026-01-01T00:00:01Z",
         "lastTransitionTime": "2026-01-01T00:00:01Z"}
    ]);
    let (status, written) = call(&server, Method::PUT, &status_uri, &current).await;
    assert_eq!(status, StatusCode::OK, "{written}");
    assert_eq!(
        written["status"]["conditions"][0]["lastProbeTime"],
        Value::Null
    );
    assert!(written["status"]["conditions"][0]
        .as_object()
        .is_some_and(|c| c.contains_key("lastProbeTime")));

    // Sent back without its nulls, unchanged: nothing is written.
    let mut typed = written.clone();
    without_nulls(&mut typed);
    for uri in [POD, status_uri.as_str()] {
        let (status, answer) = call(&server, Method::PUT, uri, &typed).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(answer, written, "{uri}");
    }

    // A label changed beside them: written, the nulls kept; sent back either way, unchanged.
    let mut typed = written.clone();
    typed["metadata"]["labels"] = json!({"round": "1"});
    without_nulls(&mut typed);
    let (status, answer) = call(&server, Method::PUT, POD, &typed).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["metadata"]["labels"], json!({"round": "1"}));
    assert_eq!(answer["status"], written["status"]);
    assert_ne!(
        answer["metadata"]["resourceVersion"],
        written["metadata"]["resourceVersion"]
    );
    let mut typed = answer.clone();
    without_nulls(&mut typed);
    for body in [&answer, &typed] {
        let (status, again) = call(&server, Method::PUT, POD, body).await;
        assert_eq!(status, StatusCode::OK, "{again}");
        assert_eq!(&again, &answer);
    }

    // A time that was set and is left out is cleared (Go's zero, written as null).
    let mut cleared = answer.clone();
    without_nulls(&mut cleared);
    cleared["status"]["conditions"][1]
        .as_object_mut()
        .expect("a condition")
        .remove("lastProbeTime");
    let (status, answer) = call(&server, Method::PUT, &status_uri, &cleared).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["status"]["conditions"][1]["lastProbeTime"],
        Value::Null
    );
    assert_eq!(
        answer["status"]["conditions"][1]["lastTransitionTime"],
        "2026-01-01T00:00:01Z"
    );
}
