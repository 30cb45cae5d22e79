//! A model-based test of the server's data integrity.
//!
//! Several concurrent clients send seeded random sequences of creates, reads, updates (with and
//! without a resourceVersion precondition), merge and JSON patches, deletes (with and without a
//! precondition) and finalizer changes to a small set of ConfigMaps, while watches with label
//! selectors start from several resourceVersions and are dropped and resumed at random. A
//! reference model then checks, from what the clients were told and what the watches delivered:
//!
//! - an unfiltered watch from the start delivers one event for every revision, in order, with no
//!   gap: that is the commit log;
//! - every acknowledged write is in the log at the resourceVersion it was acknowledged with, with
//!   exactly the object the client was sent, and every log entry is explained by exactly one
//!   acknowledged write (or the deletion an update released);
//! - each write's result is the operation applied to the state just before it: no update is
//!   lost, a precondition holds at the revision that committed the write, and a refusal (404 or
//!   409; nothing else is allowed) is justified by the state at some revision while it was in
//!   flight, as is every read;
//! - every filtered watch (from a given resourceVersion, or a streaming list) delivers exactly the
//!   committed changes of its selection, in revision order, across drops;
//! - a list at resourceVersion R (`resourceVersionMatch=Exact`, paged) equals the replay of the
//!   log up to R.
//!
//! `MODEL_SEEDS` (default 3) sets how many seeds run; `MODEL_SEED` runs just one.

use std::collections::HashMap;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request};
use axum::Router;
use fake_apiserver::hooks::RequestMatcher;
use fake_apiserver::FakeApiServer;
use http_body_util::BodyExt;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use tower::ServiceExt;

const NAMESPACES: [&str; 2] = ["m1", "m2"];
const NAMES: usize = 5;
const CLIENTS: usize = 5;
const OPS_PER_CLIENT: usize = 120;
const WATCHERS: usize = 8;
const HOLD: &str = "model.test/hold";

type Key = (String, String);

/// The server over its router, in process.
#[derive(Clone)]
struct Http(Router);

impl Http {
    async fn send(
        &self,
        method: Method,
        uri: &str,
        content_type: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let body = body
            .map(|b| serde_json::to_vec(b).unwrap())
            .unwrap_or_default();
        let request = Request::builder()
            .method(method)
            .uri(uri)
            .header("content-type", content_type)
            .body(Body::from(body))
            .unwrap();
        let response = self.0.clone().oneshot(request).await.unwrap();
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }
}

fn collection(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

fn object_uri((ns, name): &Key) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps/{name}")
}

fn rv_of(object: &Value) -> u64 {
    object["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {object}"))
}

fn key_of(object: &Value) -> Key {
    (
        object["metadata"]["namespace"]
            .as_str()
            .unwrap()
            .to_string(),
        object["metadata"]["name"].as_str().unwrap().to_string(),
    )
}

/// What the operations act on, and what the model compares.
#[derive(Debug, Clone, PartialEq)]
struct Content {
    labels: Value,
    data: Value,
    finalizers: Vec<String>,
    deleting: bool,
}

fn content(object: &Value) -> Content {
    let map_or_empty = |v: &Value| {
        if v.is_object() {
            v.clone()
        } else {
            json!({})
        }
    };
    Content {
        labels: map_or_empty(&object["metadata"]["labels"]),
        data: map_or_empty(&object["data"]),
        finalizers: object["metadata"]["finalizers"]
            .as_array()
            .map(|f| {
                f.iter()
                    .map(|s| s.as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default(),
        deleting: !object["metadata"]["deletionTimestamp"].is_null(),
    }
}

/// The part of an object a patch may touch, as a document to patch.
fn document(c: &Content) -> Value {
    json!({"metadata": {"labels": c.labels, "finalizers": c.finalizers}, "data": c.data})
}

/// One request a client sent.
#[derive(Debug, Clone)]
enum Op {
    Get,
    Create {
        body: Value,
    },
    Update {
        body: Value,
        precondition: Option<u64>,
    },
    MergePatch {
        patch: Value,
        precondition: Option<u64>,
    },
    JsonPatch {
        patch: Value,
    },
    Delete {
        precondition: Option<u64>,
    },
}

/// A request and its answer, with the revisions before it was sent and after it was answered.
#[derive(Debug, Clone)]
struct Record {
    /// Which client sent it (shown in failure reports).
    #[allow(dead_code)]
    client: usize,
    key: Key,
    op: Op,
    before: u64,
    after: u64,
    status: u16,
    response: Value,
}

/// A stored object at some revision.
#[derive(Debug, Clone)]
struct State {
    rv: u64,
    object: Value,
    content: Content,
}

/// What an operation does to a state.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Refused(u16),
    NoOp,
    Read,
    Added(Content),
    Modified(Content),
    /// Deleted at once (a delete of an object without finalizers).
    Deleted,
    /// An update released the object (deleting, its last finalizer gone): answered with this
    /// content, then deleted.
    Finalized(Content),
}

fn after_write(mut next: Content, prev: &Content) -> Outcome {
    next.deleting = prev.deleting;
    if next.deleting && next.finalizers.is_empty() {
        Outcome::Finalized(next)
    } else {
        Outcome::Modified(next)
    }
}

fn outcome(op: &Op, prev: Option<&State>) -> Outcome {
    let Some(prev) = prev else {
        return match op {
            Op::Create { body } => Outcome::Added(content(body)),
            _ => Outcome::Refused(404),
        };
    };
    match op {
        Op::Get => Outcome::Read,
        Op::Create { .. } => Outcome::Refused(409),
        Op::Update { precondition, .. }
        | Op::MergePatch { precondition, .. }
        | Op::Delete { precondition }
            if precondition.is_some_and(|rv| rv != prev.rv) =>
        {
            Outcome::Refused(409)
        }
        Op::Update { body, .. } => after_write(content(body), &prev.content),
        Op::MergePatch { patch, .. } => {
            let mut doc = document(&prev.content);
            json_patch::merge(&mut doc, patch);
            after_write(content(&doc), &prev.content)
        }
        Op::JsonPatch { patch } => {
            let mut doc = document(&prev.content);
            let patch: json_patch::Patch = serde_json::from_value(patch.clone()).unwrap();
            json_patch::patch(&mut doc, &patch).unwrap();
            after_write(content(&doc), &prev.content)
        }
        Op::Delete { .. } => {
            if prev.content.finalizers.is_empty() {
                Outcome::Deleted
            } else if prev.content.deleting {
                Outcome::NoOp
            } else {
                let mut next = prev.content.clone();
                next.deleting = true;
                Outcome::Modified(next)
            }
        }
    }
}

/// Runs one client's seeded sequence of operations.
async fn client(
    server: FakeApiServer,
    http: Http,
    index: usize,
    seed: u64,
    keys: Vec<Key>,
) -> Vec<Record> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (index as u64 + 1).wrapping_mul(0x9e37_79b9));
    let mut records = Vec::new();
    // The last object this client read, per key (for updates and preconditions).
    let mut seen: HashMap<Key, Value> = HashMap::new();
    let me = format!("c{index}");
    for n in 0..OPS_PER_CLIENT {
        let key = keys[rng.random_range(0..keys.len())].clone();
        let op_id = format!("{index}-{n}");
        let team = ["a", "b", "c"][rng.random_range(0..3)];
        let read = seen.get(&key).cloned();
        let fresh_rv =
            |rng: &mut ChaCha8Rng| read.as_ref().filter(|_| rng.random_bool(0.5)).map(rv_of);
        let choice = rng.random_range(0..100);
        let op = match choice {
            0..15 => Op::Get,
            15..35 => {
                let mut labels = json!({"team": team});
                if rng.random_bool(0.5) {
                    labels["tier"] = json!(["x", "y"][rng.random_range(0..2)]);
                }
                let mut body = json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": key.1, "labels": labels},
                    "data": {"created": op_id},
                });
                if rng.random_bool(0.4) {
                    body["metadata"]["finalizers"] = json!([HOLD]);
                }
                Op::Create { body }
            }
            35..55 => {
                let Some(read) = read.clone() else {
                    let record = run(&server, &http, index, &key, Op::Get).await;
                    if record.status == 200 {
                        seen.insert(key.clone(), record.response.clone());
                    }
                    records.push(record);
                    continue;
                };
                let mut c = content(&read);
                c.data[&me] = json!(op_id);
                c.labels["team"] = json!(team);
                if rng.random_bool(0.3) {
                    c.finalizers = if c.finalizers.is_empty() {
                        vec![HOLD.to_string()]
                    } else {
                        Vec::new()
                    };
                }
                let precondition = rng.random_bool(0.6).then(|| rv_of(&read));
                let mut metadata = json!({"name": key.1, "labels": c.labels});
                if !c.finalizers.is_empty() {
                    metadata["finalizers"] = json!(c.finalizers);
                }
                if let Some(rv) = precondition {
                    metadata["resourceVersion"] = json!(rv.to_string());
                }
                let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": c.data});
                Op::Update { body, precondition }
            }
            55..72 => {
                let mut patch =
                    json!({"data": {&me: op_id}, "metadata": {"labels": {"team": team}}});
                match rng.random_range(0..6) {
                    0 => patch["metadata"]["labels"]["tier"] = json!("x"),
                    1 => patch["metadata"]["labels"]["tier"] = Value::Null,
                    2 => patch["metadata"]["finalizers"] = json!([HOLD]),
                    3 => patch["metadata"]["finalizers"] = Value::Null,
                    _ => {}
                }
                let precondition = fresh_rv(&mut rng);
                if let Some(rv) = precondition {
                    patch["metadata"]["resourceVersion"] = json!(rv.to_string());
                }
                Op::MergePatch {
                    patch,
                    precondition,
                }
            }
            72..82 => {
                let mut patch =
                    vec![json!({"op": "add", "path": format!("/data/{me}"), "value": op_id})];
                if rng.random_bool(0.5) {
                    patch
                        .push(json!({"op": "add", "path": "/metadata/labels/team", "value": team}));
                }
                Op::JsonPatch {
                    patch: Value::Array(patch),
                }
            }
            _ => Op::Delete {
                precondition: fresh_rv(&mut rng),
            },
        };
        let record = run(&server, &http, index, &key, op).await;
        if record.status == 200 && record.response["kind"] == "ConfigMap" {
            seen.insert(key.clone(), record.response.clone());
        }
        records.push(record);
        if rng.random_bool(0.2) {
            tokio::task::yield_now().await;
        }
    }
    records
}

/// Sends one operation and records it.
async fn run(server: &FakeApiServer, http: &Http, client: usize, key: &Key, op: Op) -> Record {
    let uri = object_uri(key);
    let before = server.revision();
    let (status, response) = match &op {
        Op::Get => http.send(Method::GET, &uri, "application/json", None).await,
        Op::Create { body } => {
            http.send(
                Method::POST,
                &collection(&key.0),
                "application/json",
                Some(body),
            )
            .await
        }
        Op::Update { body, .. } => {
            http.send(Method::PUT, &uri, "application/json", Some(body))
                .await
        }
        Op::MergePatch { patch, .. } => {
            http.send(
                Method::PATCH,
                &uri,
                "application/merge-patch+json",
                Some(patch),
            )
            .await
        }
        Op::JsonPatch { patch } => {
            http.send(
                Method::PATCH,
                &uri,
                "application/json-patch+json",
                Some(patch),
            )
            .await
        }
        Op::Delete { precondition } => {
            let body = precondition.map(|rv| {
                json!({"kind": "DeleteOptions", "apiVersion": "v1",
                       "preconditions": {"resourceVersion": rv.to_string()}})
            });
            http.send(Method::DELETE, &uri, "application/json", body.as_ref())
                .await
        }
    };
    let after = server.revision();
    Record {
        client,
        key: key.clone(),
        op,
        before,
        after,
        status,
        response,
    }
}

/// One watch event as delivered.
#[derive(Debug, Clone, PartialEq)]
struct Delivered {
    event_type: String,
    object: Value,
}

/// A label selector the test understands, and labels of an object that passes it.
#[derive(Debug, Clone)]
struct Selection {
    namespace: Option<String>,
    selector: &'static str,
    passing_labels: Value,
}

impl Selection {
    fn passes(&self, object: &Value) -> bool {
        let labels = &object["metadata"]["labels"];
        let ns_ok = self
            .namespace
            .as_deref()
            .is_none_or(|ns| object["metadata"]["namespace"] == ns);
        let label = |k: &str| labels[k].as_str();
        let selected = match self.selector {
            "" => true,
            "team=a" => label("team") == Some("a"),
            "team in (a,b)" => matches!(label("team"), Some("a" | "b")),
            "team!=a" => label("team") != Some("a"),
            "tier" => label("tier").is_some(),
            "!tier" => label("tier").is_none(),
            "team=b,tier" => label("team") == Some("b") && label("tier").is_some(),
            other => panic!("unknown selector {other}"),
        };
        ns_ok && selected
    }

    fn query(&self) -> String {
        let mut q = String::new();
        if !self.selector.is_empty() {
            q.push_str("labelSelector=");
            q.push_str(
                &self
                    .selector
                    .replace(' ', "+")
                    .replace(',', "%2C")
                    .replace('(', "%28")
                    .replace(')', "%29")
                    .replace('!', "%21"),
            );
        }
        q
    }

    fn path(&self) -> String {
        match &self.namespace {
            Some(ns) => collection(ns),
            None => "/api/v1/configmaps".to_string(),
        }
    }

    fn random(rng: &mut ChaCha8Rng) -> Self {
        let (selector, passing_labels) = [
            ("", json!({"team": "a"})),
            ("team=a", json!({"team": "a"})),
            ("team in (a,b)", json!({"team": "b"})),
            ("team!=a", json!({"team": "c"})),
            ("tier", json!({"team": "a", "tier": "x"})),
            ("!tier", json!({"team": "a"})),
            ("team=b,tier", json!({"team": "b", "tier": "y"})),
        ][rng.random_range(0..7)]
        .clone();
        let namespace = rng
            .random_bool(0.5)
            .then(|| NAMESPACES[rng.random_range(0..2)].to_string());
        Selection {
            namespace,
            selector,
            passing_labels,
        }
    }
}

/// How a watch starts.
#[derive(Debug, Clone, Copy)]
enum From {
    /// The events after this resourceVersion.
    Revision(u64),
    /// A streaming list: the state now, a bookmark at its revision, then the events after it.
    Streaming,
}

/// What a watch saw: for a streaming list the initial objects and the bookmark's revision,
/// then every event in order.
#[derive(Debug, Default)]
struct Seen {
    initial: Vec<Value>,
    initial_revision: Option<u64>,
    events: Vec<Delivered>,
    reconnects: usize,
}

/// Follows a watch until its marker object arrives, resuming from the last resourceVersion
/// seen whenever the server drops it (restarting a streaming list whose initial part was cut).
async fn follow(http: Http, selection: Selection, from: From, marker: String) -> Seen {
    let mut seen = Seen::default();
    let mut last = match from {
        From::Revision(rv) => Some(rv),
        From::Streaming => None,
    };
    loop {
        let mut query = selection.query();
        match last {
            Some(rv) => query.push_str(&format!("&resourceVersion={rv}")),
            None => query.push_str(
                "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
            ),
        }
        let uri = format!(
            "{}?watch=true&{}",
            selection.path(),
            query.trim_start_matches('&')
        );
        let request = Request::builder().uri(&uri).body(Body::empty()).unwrap();
        let response = http.0.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), 200, "{uri}");
        let mut body = response.into_body();
        let mut buffer = Vec::new();
        let mut initial = Vec::new();
        while let Some(frame) = body.frame().await {
            let Ok(data) = frame.unwrap().into_data() else {
                continue;
            };
            buffer.extend_from_slice(&data);
            while let Some(at) = buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buffer.drain(..=at).collect();
                let event: Value = serde_json::from_slice(&line).unwrap();
                let event_type = event["type"].as_str().unwrap().to_string();
                let object = event["object"].clone();
                match event_type.as_str() {
                    "ERROR" => panic!("watch {uri} failed: {object}"),
                    "BOOKMARK" => {
                        let rv = rv_of(&object);
                        if last.is_none() {
                            assert_eq!(
                                object["metadata"]["annotations"]["k8s.io/initial-events-end"],
                                "true"
                            );
                            seen.initial = std::mem::take(&mut initial);
                            seen.initial_revision = Some(rv);
                        }
                        last = Some(rv);
                    }
                    _ if last.is_none() => {
                        assert_eq!(event_type, "ADDED", "{uri}: {object}");
                        initial.push(object);
                    }
                    _ => {
                        last = Some(rv_of(&object));
                        let done = event_type == "ADDED" && object["metadata"]["name"] == *marker;
                        seen.events.push(Delivered { event_type, object });
                        if done {
                            return seen;
                        }
                    }
                }
            }
        }
        seen.reconnects += 1;
    }
}

/// The commit log: every revision from the start, with the object's state before and after.
struct Log {
    start: u64,
    end: u64,
    entries: Vec<Entry>,
    /// Per key: (revision, state from then on).
    timelines: HashMap<Key, Vec<(u64, Option<State>)>>,
}

#[derive(Debug, Clone)]
struct Entry {
    revision: u64,
    event_type: String,
    key: Key,
    object: Value,
    prev: Option<State>,
    next: Option<State>,
}

impl Log {
    /// Builds the log from the unfiltered watch, checking that it has every revision once, in
    /// order, and that each event follows from the object's previous state.
    fn build(start: u64, end: u64, events: &[Delivered]) -> Self {
        let mut timelines: HashMap<Key, Vec<(u64, Option<State>)>> = HashMap::new();
        let mut entries = Vec::new();
        let mut expected = start + 1;
        for event in events {
            let revision = rv_of(&event.object);
            if revision > end {
                break;
            }
            assert_eq!(
                revision, expected,
                "the unfiltered watch skipped or reordered a revision: got {revision}, expected {expected} ({})",
                event.object
            );
            expected += 1;
            let key = key_of(&event.object);
            let timeline = timelines.entry(key.clone()).or_default();
            let prev = timeline.last().and_then(|(_, s)| s.clone());
            let state = State {
                rv: revision,
                object: event.object.clone(),
                content: content(&event.object),
            };
            let next = match event.event_type.as_str() {
                "ADDED" => {
                    assert!(
                        prev.is_none(),
                        "ADDED over an existing object at {revision}"
                    );
                    Some(state)
                }
                "MODIFIED" => {
                    assert!(prev.is_some(), "MODIFIED of a missing object at {revision}");
                    Some(state)
                }
                "DELETED" => {
                    let p = prev
                        .as_ref()
                        .unwrap_or_else(|| panic!("DELETED of a missing object at {revision}"));
                    assert_eq!(
                        p.content, state.content,
                        "a DELETED event carries the last state, at {revision}"
                    );
                    None
                }
                other => panic!("unexpected event {other}"),
            };
            timeline.push((revision, next.clone()));
            entries.push(Entry {
                revision,
                event_type: event.event_type.clone(),
                key,
                object: event.object.clone(),
                prev,
                next,
            });
        }
        assert_eq!(
            expected,
            end + 1,
            "the unfiltered watch ended at revision {}, the store is at {end}",
            expected - 1
        );
        Log {
            start,
            end,
            entries,
            timelines,
        }
    }

    /// The state of `key` at `revision`.
    fn state_at(&self, key: &Key, revision: u64) -> Option<&State> {
        let timeline = self.timelines.get(key)?;
        let i = timeline.partition_point(|(r, _)| *r <= revision);
        if i == 0 {
            None
        } else {
            timeline[i - 1].1.as_ref()
        }
    }

    /// Every state `key` had from `from` to `to`.
    fn states_between(&self, key: &Key, from: u64, to: u64) -> Vec<Option<&State>> {
        let mut out = vec![self.state_at(key, from)];
        if let Some(timeline) = self.timelines.get(key) {
            for (r, s) in timeline {
                if *r > from && *r <= to {
                    out.push(s.as_ref());
                }
            }
        }
        out
    }

    /// Every object at `revision` that `selection` selects, in key order.
    fn replay(&self, selection: &Selection, revision: u64) -> Vec<Value> {
        let mut keys: Vec<&Key> = self.timelines.keys().collect();
        keys.sort();
        keys.into_iter()
            .filter_map(|k| self.state_at(k, revision))
            .map(|s| s.object.clone())
            .filter(|o| selection.passes(o))
            .collect()
    }

    /// The events a watch of `selection` from `revision` must deliver, up to the log's end.
    fn expected_events(&self, selection: &Selection, revision: u64) -> Vec<Delivered> {
        let mut out = Vec::new();
        for entry in self.entries.iter().filter(|e| e.revision > revision) {
            let was = entry
                .prev
                .as_ref()
                .is_some_and(|p| selection.passes(&p.object));
            let is = entry
                .next
                .as_ref()
                .is_some_and(|n| selection.passes(&n.object));
            let delivered = |t: &str, object: Value| Delivered {
                event_type: t.to_string(),
                object,
            };
            match (entry.event_type.as_str(), was, is) {
                ("DELETED", true, _) => out.push(delivered("DELETED", entry.object.clone())),
                ("ADDED", _, true) => out.push(delivered("ADDED", entry.object.clone())),
                ("MODIFIED", true, true) => out.push(delivered("MODIFIED", entry.object.clone())),
                ("MODIFIED", false, true) => out.push(delivered("ADDED", entry.object.clone())),
                ("MODIFIED", true, false) => {
                    // Its last state that matched, at the revision that made it leave.
                    let mut object = entry.prev.as_ref().unwrap().object.clone();
                    object["metadata"]["resourceVersion"] = json!(entry.revision.to_string());
                    out.push(delivered("DELETED", object));
                }
                _ => {}
            }
        }
        out
    }
}

/// Checks every client record against the log.
fn check_records(log: &Log, records: &[Record]) {
    // Acknowledged writes by the revision they were acknowledged with.
    let mut by_revision: HashMap<u64, Vec<&Record>> = HashMap::new();
    let mut finalized: HashMap<Key, Vec<&Record>> = HashMap::new();
    for record in records {
        let describe = || format!("{record:#?}");
        match record.status {
            200 | 201 => {}
            404 | 409 => {
                let justified = log
                    .states_between(&record.key, record.before, record.after)
                    .into_iter()
                    .any(|s| outcome(&record.op, s) == Outcome::Refused(record.status));
                assert!(
                    justified,
                    "a refusal no state in its window explains: {}",
                    describe()
                );
                continue;
            }
            _ => panic!("unexpected answer: {}", describe()),
        }
        let response = &record.response;
        match &record.op {
            Op::Get => {
                let justified = log
                    .states_between(&record.key, record.before, record.after)
                    .into_iter()
                    .flatten()
                    .any(|s| s.object == *response);
                assert!(
                    justified,
                    "a read returned a state the object did not have while it was in flight: {}",
                    describe()
                );
            }
            Op::Delete { .. } if response["kind"] == "Status" => {
                // Deleted at once: the answer names the object but not the revision.
                finalized
                    .entry(record.key.clone())
                    .or_default()
                    .push(record);
            }
            Op::Delete { .. } if !response["metadata"]["deletionTimestamp"].is_null() => {
                // The deletion marked the object (a commit explained below) or it already was
                // marked (no change): either way the answer is a state it had.
                let justified = log
                    .states_between(&record.key, record.before, record.after)
                    .into_iter()
                    .flatten()
                    .any(|s| s.object == *response);
                assert!(
                    justified,
                    "a delete answered a state never stored: {}",
                    describe()
                );
                by_revision.entry(rv_of(response)).or_default().push(record);
            }
            _ if !response["metadata"]["deletionTimestamp"].is_null()
                && content(response).finalizers.is_empty() =>
            {
                finalized
                    .entry(record.key.clone())
                    .or_default()
                    .push(record);
            }
            _ => {
                let rv = rv_of(response);
                assert!(
                    rv > record.before && rv <= record.after,
                    "acknowledged at a revision outside its window: {}",
                    describe()
                );
                by_revision.entry(rv).or_default().push(record);
            }
        }
    }

    let mut claimed_finalizations = 0;
    for entry in &log.entries {
        let at = by_revision
            .get(&entry.revision)
            .cloned()
            .unwrap_or_default();
        let describe = || format!("{entry:#?}\nacknowledged at this revision: {at:#?}");
        let writes: Vec<&&Record> = at
            .iter()
            .filter(|r| r.key == entry.key && !matches!(r.op, Op::Delete { .. }))
            .collect();
        let deletes: Vec<&&Record> = at
            .iter()
            .filter(|r| r.key == entry.key && matches!(r.op, Op::Delete { .. }))
            .collect();
        assert!(
            at.iter().all(|r| r.key == entry.key),
            "a write acknowledged at a revision that changed another object: {}",
            describe()
        );
        let prev = entry.prev.as_ref();
        let explained_by = |record: &Record| {
            let expected = outcome(&record.op, prev);
            let matches = match (&expected, entry.event_type.as_str()) {
                (Outcome::Added(c), "ADDED") | (Outcome::Modified(c), "MODIFIED") => {
                    *c == content(&entry.object)
                }
                (Outcome::Deleted, "DELETED") => true,
                _ => false,
            };
            matches && record.response == entry.object
        };
        if entry.event_type == "DELETED" && writes.is_empty() && deletes.is_empty() {
            // Deleted at once (answered with a Status), or released by an update that removed
            // the last finalizer of a deleting object.
            let candidates = finalized
                .get_mut(&entry.key)
                .unwrap_or_else(|| panic!("a deletion no request explains: {}", describe()));
            let position = candidates.iter().position(|r| {
                r.before < entry.revision
                    && entry.revision <= r.after
                    && match outcome(&r.op, prev) {
                        Outcome::Finalized(c) => {
                            c == content(&r.response)
                                && rv_of(&r.response) == prev.map_or(0, |p| p.rv)
                        }
                        Outcome::Deleted => {
                            r.response["details"]["uid"]
                                == prev.map_or(Value::Null, |p| p.object["metadata"]["uid"].clone())
                        }
                        _ => false,
                    }
            });
            let Some(position) = position else {
                panic!(
                    "a deletion no finalizing update explains: {}\ncandidates: {candidates:#?}",
                    describe()
                )
            };
            candidates.remove(position);
            claimed_finalizations += 1;
            continue;
        }
        match (writes.len(), deletes.len()) {
            // Deletes answered with this revision found the object already marked.
            (1, _) => assert!(
                explained_by(writes[0]),
                "the write's result is not the operation applied to the previous state (lost update?):\n{}",
                describe()
            ),
            (0, n) if n >= 1 => assert!(
                deletes.iter().any(|r| explained_by(r)),
                "the deletion's result is not the previous state deleted:\n{}",
                describe()
            ),
            _ => panic!(
                "a revision explained by no acknowledged write, or by more than one:\n{}",
                describe()
            ),
        }
    }
    let unclaimed: Vec<_> = finalized.values().flatten().collect();
    assert!(
        unclaimed.is_empty(),
        "updates answered as releasing the object, but no deletion followed: {unclaimed:#?}"
    );
    // Every acknowledged write that committed was found above; the ones left are deletes that
    // found the object already marked.
    for (revision, at) in &by_revision {
        for record in at {
            if !matches!(record.op, Op::Delete { .. }) {
                let entry = log.entries.iter().find(|e| e.revision == *revision);
                assert!(
                    entry.is_some_and(|e| e.key == record.key && e.object == record.response),
                    "an acknowledged write is not in the log: {record:#?}"
                );
            }
        }
    }
    let _ = claimed_finalizations;
}

/// Checks what a watch delivered against the log.
fn check_watch(log: &Log, selection: &Selection, from: From, seen: &Seen) {
    let delivered: Vec<Delivered> = seen
        .events
        .iter()
        .filter(|e| rv_of(&e.object) <= log.end)
        .cloned()
        .collect();
    let start = match from {
        From::Revision(rv) => rv,
        From::Streaming => {
            let at = seen
                .initial_revision
                .expect("no initial-events-end bookmark");
            assert!(at >= log.start, "a streaming list from before the start");
            let expected = log.replay(selection, at);
            assert_eq!(
                seen.initial, expected,
                "the streaming list of {selection:?} is not the state at its bookmark {at}"
            );
            at
        }
    };
    let expected = log.expected_events(selection, start);
    if delivered != expected {
        let first = delivered
            .iter()
            .zip(&expected)
            .position(|(a, b)| a != b)
            .unwrap_or(delivered.len().min(expected.len()));
        panic!(
            "the watch of {selection:?} from {from:?} ({} reconnects) delivered {} events, {} expected; first difference at #{first}:\ndelivered: {:#?}\nexpected: {:#?}",
            seen.reconnects,
            delivered.len(),
            expected.len(),
            delivered.get(first),
            expected.get(first),
        );
    }
}

/// Lists `selection` at exactly `revision`, in pages of `limit`.
async fn list_at(http: &Http, selection: &Selection, revision: u64, limit: usize) -> Vec<Value> {
    let mut items = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut uri = format!("{}?limit={limit}", selection.path());
        let query = selection.query();
        if !query.is_empty() {
            uri.push('&');
            uri.push_str(&query);
        }
        match &token {
            Some(t) => uri.push_str(&format!("&continue={t}")),
            None => uri.push_str(&format!(
                "&resourceVersion={revision}&resourceVersionMatch=Exact"
            )),
        }
        let (status, list) = http.send(Method::GET, &uri, "application/json", None).await;
        assert_eq!(status, 200, "{uri}: {list}");
        assert_eq!(
            list["metadata"]["resourceVersion"],
            revision.to_string(),
            "{uri}"
        );
        for item in list["items"].as_array().unwrap() {
            let mut item = item.clone();
            item["apiVersion"] = json!("v1");
            item["kind"] = json!("ConfigMap");
            items.push(item);
        }
        match list["metadata"]["continue"].as_str() {
            Some(t) if !t.is_empty() => token = Some(t.to_string()),
            _ => return items,
        }
    }
}

async fn run_seed(seed: u64) {
    // A bare server: the model accounts for its clients' writes only, not for those of
    // kube-controller-manager's controllers (the root CA publisher writes ConfigMaps too).
    let server = FakeApiServer::builder().seed(seed).bare().build();
    let http = Http(server.router());
    for ns in NAMESPACES {
        let (status, body) = http
            .send(
                Method::POST,
                "/api/v1/namespaces",
                "application/json",
                Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})),
            )
            .await;
        assert_eq!(status, 201, "{body}");
    }
    let start = server.revision();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let keys: Vec<Key> = NAMESPACES
        .iter()
        .flat_map(|ns| (0..NAMES).map(move |i| (ns.to_string(), format!("n{i}"))))
        .collect();

    let everything = Selection {
        namespace: None,
        selector: "",
        passing_labels: json!({"team": "a"}),
    };
    let log_watch = tokio::spawn(follow(
        http.clone(),
        everything.clone(),
        From::Revision(start),
        "end-log".into(),
    ));

    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| tokio::spawn(client(server.clone(), http.clone(), i, seed, keys.clone())))
        .collect();

    // Watches start while the clients run; the server drops every watch now and then.
    let mut watches = Vec::new();
    let mut drops = 0;
    for i in 0..WATCHERS {
        tokio::time::sleep(Duration::from_millis(rng.random_range(2..15))).await;
        let selection = Selection::random(&mut rng);
        let from = if rng.random_bool(0.3) {
            From::Streaming
        } else {
            From::Revision(rng.random_range(start..=server.revision()))
        };
        let marker = format!("end-w{i}");
        watches.push((
            selection.clone(),
            from,
            marker.clone(),
            tokio::spawn(follow(http.clone(), selection, from, marker)),
        ));
        if rng.random_bool(0.6) {
            server.drop_watches(RequestMatcher::default());
            drops += 1;
        }
    }
    let mut records = Vec::new();
    for c in clients {
        records.extend(c.await.unwrap());
    }
    let end = server.revision();

    // Lists at past revisions, before the markers are written.
    let mut lists = Vec::new();
    for _ in 0..12 {
        let selection = Selection::random(&mut rng);
        let revision = rng.random_range(start..=end);
        let limit = rng.random_range(1..6);
        lists.push((
            selection.clone(),
            revision,
            list_at(&http, &selection, revision, limit).await,
        ));
    }

    // Each watch ends when it sees its marker.
    let mut markers = vec![(everything.clone(), "end-log".to_string())];
    markers.extend(watches.iter().map(|(s, _, m, _)| (s.clone(), m.clone())));
    for (selection, name) in &markers {
        let ns = selection.namespace.clone().unwrap_or_else(|| "m1".into());
        let (status, body) = http
            .send(
                Method::POST,
                &collection(&ns),
                "application/json",
                Some(&json!({"metadata": {"name": name, "labels": selection.passing_labels}})),
            )
            .await;
        assert_eq!(status, 201, "{body}");
    }
    let log_events = tokio::time::timeout(Duration::from_secs(60), log_watch)
        .await
        .expect("the unfiltered watch never saw its marker")
        .unwrap();
    let log = Log::build(start, end, &log_events.events);
    check_records(&log, &records);
    for (selection, revision, items) in &lists {
        assert_eq!(
            *items,
            log.replay(selection, *revision),
            "the list of {selection:?} at {revision} is not the replay of the log"
        );
    }
    for (selection, from, _, task) in watches {
        let seen = tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .unwrap_or_else(|_| panic!("the watch of {selection:?} never saw its marker"))
            .unwrap();
        check_watch(&log, &selection, from, &seen);
    }
    let acknowledged = records.iter().filter(|r| r.status < 300).count();
    eprintln!(
        "seed {seed}: {} requests ({acknowledged} acknowledged), {} revisions, {drops} watch drops, {} watches",
        records.len(),
        end - start,
        WATCHERS + 1,
    );
    assert!(end - start > 50, "too few writes to mean anything");
}

fn seeds() -> Vec<u64> {
    if let Some(seed) = std::env::var("MODEL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return vec![seed];
    }
    let count = std::env::var("MODEL_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3u64);
    (1..=count).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_clients_lose_nothing_and_watches_see_every_commit() {
    for seed in seeds() {
        eprintln!("seed {seed} (MODEL_SEED={seed} repeats it)");
        run_seed(seed).await;
    }
}

/// Regression (found by the model test): an object leaving a watch's selector is a DELETED event
/// carrying its last matching state at the revision of the change that moved it out, as the
/// real watch cache sends it, so that a client resuming from there does not see it again.
#[tokio::test]
async fn an_object_leaving_the_selector_is_deleted_at_the_revision_that_moved_it() {
    let server = FakeApiServer::new();
    let http = Http(server.router());
    let (status, created) = http
        .send(
            Method::POST,
            &collection("default"),
            "application/json",
            Some(&json!({"metadata": {"name": "x", "labels": {"team": "a"}}, "data": {"k": "1"}})),
        )
        .await;
    assert_eq!(status, 201);
    let selection = Selection {
        namespace: Some("default".into()),
        selector: "team=a",
        passing_labels: json!({"team": "a"}),
    };
    let watch = tokio::spawn(follow(
        http.clone(),
        selection,
        From::Revision(rv_of(&created)),
        "end".into(),
    ));
    let (status, moved) = http
        .send(
            Method::PATCH,
            &object_uri(&("default".into(), "x".into())),
            "application/merge-patch+json",
            Some(&json!({"metadata": {"labels": {"team": "b"}}})),
        )
        .await;
    assert_eq!(status, 200);
    // Resuming from the DELETED event's revision must not repeat it.
    let (status, _) = http
        .send(
            Method::POST,
            &collection("default"),
            "application/json",
            Some(&json!({"metadata": {"name": "end", "labels": {"team": "a"}}})),
        )
        .await;
    assert_eq!(status, 201);
    let seen = tokio::time::timeout(Duration::from_secs(10), watch)
        .await
        .unwrap()
        .unwrap();
    let deleted = &seen.events[0];
    assert_eq!(deleted.event_type, "DELETED");
    assert_eq!(deleted.object["metadata"]["labels"]["team"], "a");
    assert_eq!(
        deleted.object["metadata"]["resourceVersion"],
        moved["metadata"]["resourceVersion"]
    );
    assert_eq!(seen.events.len(), 2, "{:#?}", seen.events);
}
