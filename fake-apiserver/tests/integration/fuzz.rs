//! Structured fuzzing of the HTTP surface.
//!
//! Seeded random requests: paths built from the served resources (namespaced or not, object,
//! subresource) and from discovery, OpenAPI and malformed paths; every verb; query parameters
//! with valid and garbage values; content types and `Accept` headers; bodies that are valid
//! objects of the target kind mutated field by field, the same as YAML, Kubernetes protobuf
//! (valid and with bytes flipped or cut), patches, and garbage. For every request:
//!
//! - the server does not panic;
//! - an error is a `metav1.Status` (`kind: Status`, `apiVersion: v1`, `status: Failure`) whose
//!   `code` is the HTTP status, except Go's plain-text `404 page not found` for a path outside
//!   the built-in API's routes, as a real server's handler chain ends;
//! - nothing is a 5xx, except the few answers a real API server gives as 5xx (listed in
//!   [`REAL_SERVER_5XX`]);
//! - a refused request (and a dry run) leaves the store exactly as it was.
//!
//! `FUZZ_CASES` (default 2000) sets the number of requests, `FUZZ_SEED` the seed; `make fuzz`
//! runs many more.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request};
use fake_apiserver::FakeApiServer;
use http_body_util::BodyExt;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use tower::ServiceExt;

/// Refusals a real API server gives after it wrote (matched by the start of the message): the
/// answer is shaped as the request's `Accept` asks only once the write is done
/// (`transformResponseObject`), so a write whose answer cannot take the asked shape is stored
/// and answered 406 (or 400 for a bad `includeObject`).
const REFUSED_AFTER_THE_WRITE: &[(u16, &str)] = &[
    (406, "you requested PartialObjectMetadata"),
    (406, "no PartialObjectMetadataList exists"),
    (400, "unrecognized includeObject value"),
];

/// 5xx answers a real API server gives too (matched by the start of the message), so the fake
/// gives them as well.
const REAL_SERVER_5XX: &[(u16, &str)] = &[
    // etcd3 store: Create with metadata.resourceVersion set.
    (
        500,
        "resourceVersion should not be set on objects to be created",
    ),
    // The registry's update: a sent resourceVersion that is not a number (the versioner's
    // `strconv.ParseUint` error, passed on).
    (500, "strconv.ParseUint: parsing "),
    // The watch cache's GET or WATCH at a resourceVersion that is not a number (storage's
    // `InvalidError`, passed on).
    (500, "resourceVersion: Invalid value: "),
    // Server-side apply of a body that does not fit the kind's schema, or corrupt managedFields.
    (500, "failed to create typed patch object"),
    (500, "failed to decode managed fields"),
    (500, "failed to merge config"),
    // Strategic merge patch: a list whose elements are not all of one type (apimachinery's
    // error is not one the patch handler maps to a 4xx).
    (500, "list element types are not identical"),
    (500, "no elements in any of the given slices"),
    // componentstatuses: the storage's plain error for a component it does not probe.
    (500, "Component not found: "),
    // A read or watch at a resourceVersion the store has not reached.
    (504, "Timeout: Too large resource version"),
];

static PANICS: AtomicUsize = AtomicUsize::new(0);
static HOOK: Once = Once::new();

/// Counts panics anywhere in the process (a watch stream runs in a task of its own, where a
/// panic would not reach the test otherwise).
fn count_panics() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            previous(info);
        }));
    });
}

const NAMESPACES: [&str; 2] = ["default", "fuzz"];
const NAMES: [&str; 3] = ["a", "b", "w1"];

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "integer", "minimum": 0},
                        "color": {"type": "string", "enum": ["red", "blue"]}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}
            }]
        }
    })
}

/// A valid object of `kind` (with `apiVersion`), named `name`.
fn valid_object(api_version: &str, kind: &str, name: &str, namespace: Option<&str>) -> Value {
    let mut object = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "labels": {"app": "fuzz"}}});
    if let Some(ns) = namespace {
        object["metadata"]["namespace"] = json!(ns);
    }
    let extra = match kind {
        "ConfigMap" => json!({"data": {"k": "v"}}),
        "Secret" => json!({"stringData": {"k": "v"}, "type": "Opaque"}),
        "Pod" => json!({"spec": {"containers": [{"name": "c", "image": "busybox"}]}}),
        "Service" => json!({"spec": {"ports": [{"port": 80}], "selector": {"app": "fuzz"}}}),
        "Deployment" => {
            json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"app": "fuzz"}},
            "template": {"metadata": {"labels": {"app": "fuzz"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}})
        }
        "Lease" => json!({"spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}}),
        "Widget" => json!({"spec": {"size": 3, "color": "red"}}),
        "CustomResourceDefinition" => {
            let mut crd = crd();
            crd["metadata"]["name"] = json!(name);
            return crd;
        }
        "Node" => json!({"spec": {"unschedulable": false}}),
        _ => json!({}),
    };
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            object[k] = v;
        }
    }
    object
}

/// A fresh server with a few objects of several kinds.
async fn setup(seed: u64) -> FakeApiServer {
    let server = FakeApiServer::builder().seed(seed).build();
    server.apply_manifest(crd()).unwrap();
    server
        .apply_manifest(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fuzz"}}),
        )
        .unwrap();
    for ns in NAMESPACES {
        for (api_version, kind) in [
            ("v1", "ConfigMap"),
            ("v1", "Secret"),
            ("v1", "Pod"),
            ("v1", "Service"),
            ("apps/v1", "Deployment"),
            ("coordination.k8s.io/v1", "Lease"),
            ("example.com/v1", "Widget"),
        ] {
            let mut object = valid_object(api_version, kind, "a", Some(ns));
            if kind == "ConfigMap" {
                object["metadata"]["finalizers"] = json!(["fuzz.test/hold"]);
            }
            server.apply_manifest(object).unwrap();
        }
    }
    server
        .apply_manifest(valid_object("v1", "Node", "a", None))
        .unwrap();
    server
}

/// Values that break things, for fields and query parameters.
fn awkward_value(rng: &mut ChaCha8Rng) -> Value {
    let deep = (0..64).fold(json!(1), |inner, _| json!([inner]));
    [
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(1e308),
        json!(u64::MAX),
        json!(""),
        json!("x"),
        json!("Bad_Name"),
        json!("a".repeat(300)),
        json!("ü\u{0}\u{202e}"),
        json!("2024-13-45T99:00:00Z"),
        json!([]),
        json!([null]),
        json!({}),
        json!({"a": {"b": []}}),
        deep,
    ]
    .choose(rng)
    .unwrap()
    .clone()
}

/// Every JSON pointer in `value`.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                pointers(v, p, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(v, p, out);
            }
        }
        _ => {}
    }
}

/// `object` with one to three fields replaced, removed, or added.
fn mutate(rng: &mut ChaCha8Rng, mut object: Value) -> Value {
    for _ in 0..rng.random_range(1..=3) {
        let mut all = Vec::new();
        pointers(&object, String::new(), &mut all);
        let Some(at) = all.choose(rng).cloned() else {
            break;
        };
        match rng.random_range(0..4) {
            0 => {
                // Remove it.
                let (parent, last) = at.rsplit_once('/').unwrap();
                match object.pointer_mut(parent) {
                    Some(Value::Object(m)) => {
                        m.remove(&last.replace("~1", "/").replace("~0", "~"));
                    }
                    Some(Value::Array(a)) => {
                        if let Ok(i) = last.parse::<usize>() {
                            if i < a.len() {
                                a.remove(i);
                            }
                        }
                    }
                    _ => {}
                }
            }
            1 => {
                // Add an unknown field beside it.
                let (parent, _) = at.rsplit_once('/').unwrap();
                if let Some(Value::Object(m)) = object.pointer_mut(parent) {
                    m.insert("unknownField".into(), awkward_value(rng));
                }
            }
            _ => {
                if let Some(slot) = object.pointer_mut(&at) {
                    *slot = awkward_value(rng);
                }
            }
        }
    }
    object
}

/// A protobuf varint.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited protobuf field.
fn field(out: &mut Vec<u8>, number: u64, bytes: &[u8]) {
    varint(out, (number << 3) | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A ConfigMap in Kubernetes protobuf: `k8s\0` + runtime.Unknown{typeMeta, raw}.
fn protobuf_configmap(name: &str) -> Vec<u8> {
    let mut meta = Vec::new();
    field(&mut meta, 1, name.as_bytes());
    let mut entry = Vec::new();
    field(&mut entry, 1, b"k");
    field(&mut entry, 2, b"v");
    let mut raw = Vec::new();
    field(&mut raw, 1, &meta);
    field(&mut raw, 2, &entry);
    let mut type_meta = Vec::new();
    field(&mut type_meta, 1, b"v1");
    field(&mut type_meta, 2, b"ConfigMap");
    let mut unknown = Vec::new();
    field(&mut unknown, 1, &type_meta);
    field(&mut unknown, 2, &raw);
    let mut out = b"k8s\x00".to_vec();
    out.extend_from_slice(&unknown);
    out
}

/// One generated request.
#[derive(Debug, Clone)]
struct Case {
    method: Method,
    uri: String,
    content_type: Option<String>,
    accept: Option<String>,
    body: Vec<u8>,
}

fn pick<'a>(rng: &mut ChaCha8Rng, options: &[&'a str]) -> &'a str {
    options.choose(rng).unwrap()
}

fn generate(rng: &mut ChaCha8Rng, server: &FakeApiServer) -> Case {
    let resources = server.resources();
    // Mostly the kinds that have objects, so that writes get past the first checks.
    let stocked = [
        "configmaps",
        "secrets",
        "pods",
        "services",
        "deployments",
        "leases",
        "widgets",
        "nodes",
    ];
    let resource = if rng.random_bool(0.7) {
        let plural = pick(rng, &stocked);
        resources
            .iter()
            .find(|r| r.plural == plural)
            .unwrap()
            .clone()
    } else {
        resources.choose(rng).unwrap().clone()
    };
    let namespace = if resource.namespaced && rng.random_bool(0.9) {
        Some(if rng.random_bool(0.85) {
            pick(rng, &NAMESPACES).to_string()
        } else {
            pick(rng, &["missing", "Bad_NS", ""]).to_string()
        })
    } else if rng.random_bool(0.05) {
        Some("default".to_string())
    } else {
        None
    };
    let name = match rng.random_range(0..10) {
        0..6 => Some(pick(rng, &NAMES).to_string()),
        6 => Some(pick(rng, &["Bad_Name", "..", "%2e%2e", "a%2Fb", "%00", "ü"]).to_string()),
        7 => Some("x".repeat(rng.random_range(60..300))),
        _ => None,
    };
    let subresource = (name.is_some() && rng.random_bool(0.25)).then(|| {
        pick(
            rng,
            &["status", "binding", "scale", "log", "eviction", "nope"],
        )
        .to_string()
    });

    let prefix = if resource.group.is_empty() {
        format!("/api/{}", resource.version)
    } else {
        format!("/apis/{}/{}", resource.group, resource.version)
    };
    let mut path = prefix.clone();
    if let Some(ns) = &namespace {
        path.push_str(&format!("/namespaces/{ns}"));
    }
    path.push('/');
    path.push_str(&resource.plural);
    if let Some(name) = &name {
        path.push('/');
        path.push_str(name);
    }
    if let Some(sub) = &subresource {
        path.push('/');
        path.push_str(sub);
    }
    path = match rng.random_range(0..20) {
        0 => pick(
            rng,
            &[
                "/",
                "/api",
                "/apis",
                "/version",
                "/healthz",
                "/livez/ping",
                "/readyz",
                "/openapi/v2",
                "/openapi/v3",
                "/openapi/v3/api/v1",
                "/openapi/v3/apis/apps/v1",
                "/metrics",
                "/apis/example.com",
                "/apis/example.com/v1",
                "/api/v1",
                "/apis/nope.io/v1/things",
                "/api/v2/pods",
                "/api/v1/namespaces/default/",
                "/apis/apps",
                "/logs",
                "/api/v1/namespaces",
                "/api/v1/namespaces/default/status",
            ],
        )
        .to_string(),
        1 => path.replace('/', "//"),
        2 => format!("{path}/extra/segments"),
        3 => path.to_uppercase(),
        _ => path,
    };

    let mut query = Vec::new();
    for _ in 0..rng.random_range(0..4) {
        let key = pick(
            rng,
            &[
                "watch",
                "labelSelector",
                "fieldSelector",
                "resourceVersion",
                "resourceVersionMatch",
                "limit",
                "continue",
                "timeoutSeconds",
                "dryRun",
                "fieldManager",
                "fieldValidation",
                "force",
                "propagationPolicy",
                "gracePeriodSeconds",
                "pretty",
                "sendInitialEvents",
                "allowWatchBookmarks",
                "orphanDependents",
                "includeObject",
                "unknownParam",
            ],
        );
        let value = pick(
            rng,
            &[
                "",
                "true",
                "false",
                "0",
                "1",
                "-1",
                "abc",
                "99999999999999999999",
                "Exact",
                "NotOlderThan",
                "a=b",
                "a+in+(",
                "metadata.name%3Da",
                "spec.x%3D1",
                "All",
                "Foreground",
                "Orphan",
                "Background",
                "Strict",
                "Warn",
                "Ignore",
                "%E2%82",
                "app%3Dfuzz",
                "metadata.namespace%3Ddefault",
                "status.phase%3DRunning",
            ],
        );
        query.push(format!("{key}={value}"));
    }
    // A watch ends quickly.
    if query.iter().any(|q| q.starts_with("watch=")) {
        query.push("timeoutSeconds=1".into());
    }
    let method = match rng.random_range(0..20) {
        // A create goes to the collection.
        5..9 if name.is_some() && rng.random_bool(0.7) => {
            path = path
                .rsplit_once('/')
                .map_or(path.clone(), |(p, _)| p.to_string());
            if subresource.is_some() {
                path = path
                    .rsplit_once('/')
                    .map_or(path.clone(), |(p, _)| p.to_string());
            }
            Method::POST
        }
        0..5 => Method::GET,
        5..9 => Method::POST,
        9..12 => Method::PUT,
        12..16 => Method::PATCH,
        16..18 => Method::DELETE,
        18 => Method::HEAD,
        _ => Method::from_bytes(pick(rng, &["OPTIONS", "CONNECT", "TRACE", "FOO"]).as_bytes())
            .unwrap(),
    };
    let uri = if query.is_empty() {
        path
    } else {
        format!("{path}?{}", query.join("&"))
    };

    let content_type = match rng.random_range(0..12) {
        0..4 => Some("application/json"),
        4 => Some("application/yaml"),
        5 => Some("application/vnd.kubernetes.protobuf"),
        6 => Some("application/merge-patch+json"),
        7 => Some("application/json-patch+json"),
        8 => Some("application/strategic-merge-patch+json"),
        9 => Some("application/apply-patch+yaml"),
        10 => None,
        _ => Some(pick(
            rng,
            &[
                "text/plain",
                "application/json; charset=utf-16",
                "*/*",
                "garbage",
                "application/",
            ],
        )),
    }
    .map(str::to_string);
    let accept = match rng.random_range(0..8) {
        0 => Some("application/json;as=Table;v=v1;g=meta.k8s.io"),
        1 => Some("application/yaml"),
        2 => Some("application/vnd.kubernetes.protobuf"),
        3 => Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"),
        4 => Some("text/html"),
        5 => Some("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"),
        _ => None,
    }
    .map(str::to_string);

    let object_name = name.clone().unwrap_or_else(|| "fuzzed".into());
    let valid = valid_object(
        &resource.api_version(),
        &resource.kind,
        &object_name,
        namespace.as_deref(),
    );
    let body = match rng.random_range(0..12) {
        0 => Vec::new(),
        1 => serde_json::to_vec(&valid).unwrap(),
        2..6 => serde_json::to_vec(&mutate(rng, valid)).unwrap(),
        6 => serde_yaml::to_string(&mutate(rng, valid)).unwrap().into_bytes(),
        7 => {
            let mut bytes = protobuf_configmap(&object_name);
            match rng.random_range(0..3) {
                0 => {}
                1 => {
                    let cut = rng.random_range(0..bytes.len());
                    bytes.truncate(cut);
                }
                _ => {
                    for _ in 0..rng.random_range(1..4) {
                        let i = rng.random_range(0..bytes.len());
                        bytes[i] = rng.random();
                    }
                }
            }
            bytes
        }
        8 => serde_json::to_vec(&json!([
            {"op": pick(rng, &["add", "remove", "replace", "move", "copy", "test", "bogus"]),
             "path": pick(rng, &["/metadata/labels/x", "/spec", "/data/k", "/metadata/name", "", "/", "/metadata/finalizers/-", "/a/b/c"]),
             "from": "/metadata/labels", "value": awkward_value(rng)}
        ]))
        .unwrap(),
        9 => serde_json::to_vec(&json!({"metadata": {"labels": {"x": awkward_value(rng)}, "finalizers": awkward_value(rng)}, "spec": awkward_value(rng)})).unwrap(),
        10 => {
            let mut bytes = serde_json::to_vec(&valid).unwrap();
            let cut = rng.random_range(0..bytes.len());
            bytes.truncate(cut);
            bytes
        }
        _ => (0..rng.random_range(0..64)).map(|_| rng.random()).collect(),
    };
    Case {
        method,
        uri,
        content_type,
        accept,
        body,
    }
}

/// What the server answered.
struct Answer {
    status: u16,
    /// `None` when the body did not end in time (a watch).
    body: Option<Vec<u8>>,
}

async fn send(server: &FakeApiServer, case: &Case) -> Option<Answer> {
    let mut request = Request::builder()
        .method(case.method.clone())
        .uri(&case.uri);
    if let Some(ct) = &case.content_type {
        request = request.header("content-type", ct);
    }
    if let Some(accept) = &case.accept {
        request = request.header("accept", accept);
    }
    // A URI the HTTP layer cannot even parse never reaches the server.
    let request = request.body(Body::from(case.body.clone())).ok()?;
    let response = server.router().oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let body = tokio::time::timeout(Duration::from_millis(300), response.into_body().collect())
        .await
        .ok()
        .map(|b| b.expect("the body failed").to_bytes().to_vec());
    Some(Answer { status, body })
}

/// Checks one answer; the problem, if any.
fn check(case: &Case, answer: &Answer) -> Result<(), String> {
    let status = answer.status;
    if status < 400 {
        return Ok(());
    }
    let Some(body) = &answer.body else {
        return Err(format!("an error ({status}) whose body never ended"));
    };
    if case.method == Method::HEAD {
        return Ok(());
    }
    if status == 404 && body.as_slice() == b"404 page not found\n" {
        let path = case.uri.split('?').next().unwrap_or_default();
        let mut segments = path.trim_start_matches('/').split('/');
        let builtin = match (segments.next(), segments.next()) {
            (Some("api"), _) => true,
            (Some("apis"), Some(group)) => {
                group.ends_with(".k8s.io")
                    || ["apps", "batch", "autoscaling", "policy"].contains(&group)
            }
            _ => false,
        };
        if builtin {
            return Err(format!(
                "a plain-text 404 inside the built-in routes: {path}"
            ));
        }
        return Ok(());
    }
    // A Status is written in the negotiated form: YAML when the request asked for it.
    let yaml_asked = case
        .accept
        .as_deref()
        .is_some_and(|a| a.contains("application/yaml"));
    let parsed: Value = match serde_json::from_slice(body) {
        Ok(parsed) => parsed,
        Err(_) if yaml_asked => serde_yaml::from_slice(body).map_err(|_| {
            format!(
                "an error ({status}) that is neither JSON nor YAML: {:?}",
                String::from_utf8_lossy(body)
            )
        })?,
        Err(_) => {
            return Err(format!(
                "an error ({status}) that is not JSON: {:?}",
                String::from_utf8_lossy(body)
            ))
        }
    };
    if parsed["kind"] != "Status"
        || parsed["apiVersion"] != "v1"
        || parsed["status"] != "Failure"
        || parsed["code"] != status
    {
        return Err(format!(
            "an error ({status}) that is not a matching metav1.Status: {parsed}"
        ));
    }
    if status >= 500 {
        let message = parsed["message"].as_str().unwrap_or_default();
        let real = REAL_SERVER_5XX.iter().any(|(code, start)| {
            *code == status
                && (message.starts_with(start)
                    || message.starts_with(&format!("Internal error occurred: {start}")))
        });
        if !real {
            return Err(format!("a {status} no real server gives: {parsed}"));
        }
    }
    Ok(())
}

/// The whole store, for comparing before and after a request.
fn dump(server: &FakeApiServer) -> (u64, Value) {
    (server.revision(), server.export_state())
}

async fn fuzz(seed: u64, cases: usize) {
    count_panics();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut server = setup(seed).await;
    let mut failures = Vec::new();
    let mut by_status = std::collections::BTreeMap::new();
    for n in 0..cases {
        if n % 250 == 249 {
            server = setup(seed + n as u64).await;
        }
        let case = generate(&mut rng, &server);
        let before = dump(&server);
        let panics = PANICS.load(Ordering::SeqCst);
        let task = {
            let server = server.clone();
            let case = case.clone();
            tokio::spawn(async move { send(&server, &case).await })
        };
        let answer = match task.await {
            Ok(Some(answer)) => answer,
            Ok(None) => continue,
            Err(e) => {
                failures.push(format!("#{n} panicked ({e}): {case:?}"));
                continue;
            }
        };
        *by_status.entry(answer.status).or_insert(0usize) += 1;
        let mut problem = check(&case, &answer).err();
        if PANICS.load(Ordering::SeqCst) != panics {
            problem = Some("a panic in the server".into());
        }
        let dry_run = case.uri.contains("dryRun=All");
        let after_the_write = answer.body.as_deref().is_some_and(|body| {
            let message = serde_json::from_slice::<Value>(body).unwrap_or_default()["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            REFUSED_AFTER_THE_WRITE
                .iter()
                .any(|(code, start)| *code == answer.status && message.starts_with(start))
        });
        let must_leave_the_store = dry_run || (answer.status >= 400 && !after_the_write);
        if problem.is_none() && must_leave_the_store && dump(&server) != before {
            problem = Some(format!(
                "the store changed on a {} {}",
                answer.status,
                if dry_run {
                    "dry run"
                } else {
                    "refused request"
                }
            ));
        }
        if let Some(problem) = problem {
            failures.push(format!(
                "#{n}: {problem}\n  {} {} content-type={:?} accept={:?}\n  body: {:?}",
                case.method,
                case.uri,
                case.content_type,
                case.accept,
                String::from_utf8_lossy(&case.body)
            ));
        }
    }
    eprintln!("seed {seed}: {cases} requests, answers by status: {by_status:?}");
    assert!(
        failures.is_empty(),
        "{} of {cases} requests broke a rule (FUZZ_SEED={seed}):\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_requests_get_a_status_never_a_panic_and_leave_the_store_alone_when_refused() {
    fuzz(env("FUZZ_SEED", 1), env("FUZZ_CASES", 2000) as usize).await;
}

/// Regression (found by the fuzzer): another method than GET on a fixed non-resource path got
/// axum's 405 with an empty body; it is a `metav1.Status`.
#[rstest::rstest]
#[case(Method::POST, "/version")]
#[case(Method::PUT, "/api")]
#[case(Method::PATCH, "/apis")]
#[case(Method::POST, "/apis/")]
#[case(Method::POST, "/apis/apps")]
#[case(Method::DELETE, "/api/v1")]
#[tokio::test]
async fn a_wrong_method_on_a_fixed_path_gets_a_status(#[case] method: Method, #[case] path: &str) {
    let server = FakeApiServer::new();
    let case = Case {
        method,
        uri: path.into(),
        content_type: Some("application/json".into()),
        accept: None,
        body: b"{}".to_vec(),
    };
    let answer = send(&server, &case).await.unwrap();
    assert_eq!(answer.status, 405);
    check(&case, &answer).unwrap();
}
