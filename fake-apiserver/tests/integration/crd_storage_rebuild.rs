//! What a CRD change does to the objects and watches of its custom resources, as a real
//! server's rebuilt storage does it: reads decode each stored object with the schema of now
//! (a default the CRD gained shows, a field it dropped does not, and is back when a later
//! schema declares it again — the stored bytes lose nothing), watches on the old storage end
//! a second later without an error, and a watch resuming from before the change is told its
//! resourceVersion is too old. A CRD write that changes neither its spec nor its accepted
//! names changes none of this.

use std::time::Duration;

use crate::http_support::{self, json as call};

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use fake_apiserver::FakeApiServer;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

const CRD: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.ex.com";
const GADGETS: &str = "/apis/ex.com/v1/namespaces/default/gadgets";
const GADGETS_V2: &str = "/apis/ex.com/v2/namespaces/default/gadgets";

/// The schema of `spec`: `size` and `colour` at first; `later`, `colour` defaults to `blue`
/// and `size` is no longer declared.
fn schema(later: bool) -> Value {
    let mut spec = json!({"type": "object", "properties": {
        "size": {"type": "integer"},
        "colour": {"type": "string"},
    }});
    if later {
        spec["properties"]["colour"]["default"] = json!("blue");
        spec["properties"]
            .as_object_mut()
            .expect("properties")
            .remove("size");
    }
    json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}})
}

fn crd(later: bool) -> Value {
    let version = |name: &str, storage: bool| json!({"name": name, "served": true, "storage": storage, "schema": schema(later)});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.ex.com"},
        "spec": {"group": "ex.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [version("v1", true), version("v2", false)]}
    })
}

fn gadget(name: &str) -> Value {
    json!({
        "apiVersion": "ex.com/v1", "kind": "Gadget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"size": 3}
    })
}

/// A server with the first CRD and one gadget `g`; the gadget as created.
async fn server_with_gadget() -> (FakeApiServer, Value) {
    let server = FakeApiServer::new();
    let (status, answer) = call(&server, Method::POST, http_support::CRDS, &crd(false)).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let (status, created) = call(&server, Method::POST, GADGETS, &gadget("g")).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    (server, created)
}

/// Replaces the CRD's spec (`later` or not); the CRD as written.
async fn change_crd(server: &FakeApiServer, later: bool) -> Value {
    let (_, mut stored) = call(server, Method::GET, CRD, &Value::Null).await;
    stored["spec"] = crd(later)["spec"].clone();
    let (status, answer) = call(server, Method::PUT, CRD, &stored).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

fn rv(object: &Value) -> u64 {
    object["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {object}"))
}

/// An open watch's events, read as they come.
struct Watch {
    body: Body,
    buffer: Vec<u8>,
}

impl Watch {
    async fn open(server: &FakeApiServer, uri: &str) -> Watch {
        let request = Request::builder()
            .uri(uri)
            .body(Body::empty())
            .expect("a request");
        let response = server.router().oneshot(request).await.expect("an answer");
        assert_eq!(response.status(), StatusCode::OK, "{uri}");
        Watch {
            body: response.into_body(),
            buffer: Vec::new(),
        }
    }

    /// The next event, or `None` when the stream ended; panics when nothing comes in `wait`.
    async fn next(&mut self, wait: Duration) -> Option<Value> {
        loop {
            if let Some(at) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=at).collect();
                return Some(serde_json::from_slice(&line).expect("a JSON event"));
            }
            let frame = tokio::time::timeout(wait, self.body.frame())
                .await
                .expect("the watch to answer in time")?;
            if let Ok(data) = frame.expect("a frame").into_data() {
                self.buffer.extend_from_slice(&data);
            }
        }
    }
}

/// Reads decode with the present schema, at every version and in lists; the stored object
/// loses nothing: when the CRD goes back to the first schema, `size` is read again and the
/// default no longer applies.
#[tokio::test]
async fn reads_after_a_schema_change_decode_with_the_new_schema_and_lose_nothing() {
    let (server, created) = server_with_gadget().await;
    assert_eq!(created["spec"], json!({"size": 3}));
    change_crd(&server, true).await;

    let (_, read) = call(&server, Method::GET, &format!("{GADGETS}/g"), &Value::Null).await;
    assert_eq!(read["spec"], json!({"colour": "blue"}), "{read}");
    assert_eq!(
        read["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    let (_, at_v2) = call(
        &server,
        Method::GET,
        &format!("{GADGETS_V2}/g"),
        &Value::Null,
    )
    .await;
    assert_eq!(at_v2["apiVersion"], "ex.com/v2");
    assert_eq!(at_v2["spec"], json!({"colour": "blue"}), "{at_v2}");
    let (_, list) = call(&server, Method::GET, GADGETS, &Value::Null).await;
    assert_eq!(
        list["items"][0]["spec"],
        json!({"colour": "blue"}),
        "{list}"
    );
    // The in-process reads too.
    let object = server
        .get_object("ex.com/v1", "gadgets", Some("default"), "g")
        .expect("the gadget");
    assert_eq!(object["spec"], json!({"colour": "blue"}));
    let (_, listed) = server.list_objects("ex.com/v1", "gadgets", Some("default"));
    assert_eq!(listed[0]["spec"], json!({"colour": "blue"}));
    // A gadget written under the new schema reads as written.
    let (status, fresh) = call(&server, Method::POST, GADGETS, &gadget("h")).await;
    assert_eq!(status, StatusCode::CREATED, "{fresh}");
    assert_eq!(fresh["spec"], json!({"colour": "blue"}));

    change_crd(&server, false).await;
    let (_, read) = call(&server, Method::GET, &format!("{GADGETS}/g"), &Value::Null).await;
    assert_eq!(read["spec"], json!({"size": 3}), "{read}");
    let (_, read) = call(&server, Method::GET, &format!("{GADGETS}/h"), &Value::Null).await;
    assert_eq!(read["spec"], json!({"colour": "blue"}), "{read}");
}

/// A write starts from the object as read now: a label added to the object read after the
/// change stores the default, and an UPDATE sending back what the GET answered is a no-op.
#[tokio::test]
async fn a_write_after_a_schema_change_starts_from_the_decoded_object() {
    let (server, created) = server_with_gadget().await;
    change_crd(&server, true).await;
    let uri = format!("{GADGETS}/g");
    let (_, read) = call(&server, Method::GET, &uri, &Value::Null).await;
    let (status, same) = call(&server, Method::PUT, &uri, &read).await;
    assert_eq!(status, StatusCode::OK, "{same}");
    assert_eq!(
        rv(&same),
        rv(&created),
        "sending back the decoded object changes nothing"
    );

    let (status, patched) = http_support::call(
        &server,
        Method::PATCH,
        &uri,
        "application/merge-patch+json",
        br#"{"metadata":{"labels":{"l":"1"}}}"#.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(patched["spec"], json!({"colour": "blue"}));
    // Now written under the new schema: going back to the first one, `size` is gone for good.
    change_crd(&server, false).await;
    let (_, read) = call(&server, Method::GET, &uri, &Value::Null).await;
    assert_eq!(read["spec"], json!({"colour": "blue"}), "{read}");
}

/// A watch open when the CRD's spec changes ends (a second later, with no ERROR event); one
/// resuming from before the change gets `410 Expired`; one from the change on sees what
/// follows.
#[tokio::test]
async fn a_spec_change_ends_open_watches_and_expires_older_resource_versions() {
    let (server, created) = server_with_gadget().await;
    let before = rv(&created);
    let mut open = Watch::open(
        &server,
        &format!("{GADGETS}?watch=1&resourceVersion={before}"),
    )
    .await;
    let changed = change_crd(&server, true).await;
    let changed_at = rv(&changed);

    // The old storage's watch still sees a write made right after the change...
    let (_, h) = call(&server, Method::POST, GADGETS, &gadget("h")).await;
    let event = open.next(Duration::from_secs(5)).await.expect("an event");
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["metadata"]["name"], "h");
    // ... and then ends, cleanly.
    assert_eq!(open.next(Duration::from_secs(5)).await, None);

    let mut expired = Watch::open(
        &server,
        &format!("{GADGETS}?watch=1&resourceVersion={before}"),
    )
    .await;
    let event = expired
        .next(Duration::from_secs(5))
        .await
        .expect("an event");
    assert_eq!(event["type"], "ERROR", "{event}");
    assert_eq!(event["object"]["code"], 410);
    assert_eq!(event["object"]["reason"], "Expired");
    assert_eq!(
        event["object"]["message"],
        format!("too old resource version: {before} ({changed_at})")
    );
    assert_eq!(expired.next(Duration::from_secs(5)).await, None);

    let mut resumed = Watch::open(
        &server,
        &format!("{GADGETS}?watch=1&resourceVersion={changed_at}"),
    )
    .await;
    let event = resumed
        .next(Duration::from_secs(5))
        .await
        .expect("an event");
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["metadata"]["name"], "h");
    assert_eq!(rv(&event["object"]), rv(&h));
}

/// Labels and status conditions of the CRD are not its storage: watches stay open and resume
/// from before the write.
#[tokio::test]
async fn a_crd_write_that_keeps_spec_and_names_keeps_the_watches() {
    let (server, created) = server_with_gadget().await;
    let before = rv(&created);
    let mut open = Watch::open(
        &server,
        &format!("{GADGETS}?watch=1&resourceVersion={before}"),
    )
    .await;
    let (_, mut stored) = call(&server, Method::GET, CRD, &Value::Null).await;
    stored["metadata"]["labels"] = json!({"team": "a"});
    let (status, answer) = call(&server, Method::PUT, CRD, &stored).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    // Longer than the teardown delay.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    call(&server, Method::POST, GADGETS, &gadget("h")).await;
    let event = open.next(Duration::from_secs(5)).await.expect("an event");
    assert_eq!(event["object"]["metadata"]["name"], "h", "{event}");

    let mut resumed = Watch::open(
        &server,
        &format!("{GADGETS}?watch=1&resourceVersion={before}"),
    )
    .await;
    let event = resumed
        .next(Duration::from_secs(5))
        .await
        .expect("an event");
    assert_eq!(event["type"], "ADDED", "{event}");
    assert_eq!(event["object"]["metadata"]["name"], "h");
}

/// Deleting the CRD ends the watches of its resources once its objects are gone.
#[tokio::test]
async fn a_deleted_crd_ends_its_watches() {
    let (server, created) = server_with_gadget().await;
    let mut open = Watch::open(
        &server,
        &format!("{GADGETS}?watch=1&resourceVersion={}", rv(&created)),
    )
    .await;
    let (status, answer) = call(&server, Method::DELETE, CRD, &Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let mut seen = Vec::new();
    while let Some(event) = open.next(Duration::from_secs(10)).await {
        seen.push(event);
    }
    assert!(
        seen.iter().all(|e| e["type"] == "DELETED"),
        "the gadget goes, then the stream ends: {seen:?}"
    );
}

/// A field selector on a selectable field looks at the object as a read decodes it: a gadget
/// written before `colour` had a default is selected by the default's value.
#[tokio::test]
async fn a_field_selector_sees_the_new_default() {
    let server = FakeApiServer::new();
    let with_selectable = |later: bool| {
        let mut crd = crd(later);
        for version in crd["spec"]["versions"].as_array_mut().expect("versions") {
            version["selectableFields"] = json!([{"jsonPath": ".spec.colour"}]);
        }
        crd
    };
    let (status, answer) = call(
        &server,
        Method::POST,
        http_support::CRDS,
        &with_selectable(false),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let (status, answer) = call(&server, Method::POST, GADGETS, &gadget("g")).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let selected = |server: FakeApiServer| async move {
        let (status, list) = call(
            &server,
            Method::GET,
            &format!("{GADGETS}?fieldSelector=spec.colour%3Dblue"),
            &Value::Null,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{list}");
        list["items"]
            .as_array()
            .map(|items| items.len())
            .unwrap_or_default()
    };
    assert_eq!(selected(server.clone()).await, 0);
    let (_, mut stored) = call(&server, Method::GET, CRD, &Value::Null).await;
    stored["spec"] = with_selectable(true)["spec"].clone();
    let (status, answer) = call(&server, Method::PUT, CRD, &stored).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(selected(server.clone()).await, 1);
}
