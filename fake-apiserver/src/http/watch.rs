//! WATCH: a chunked stream of JSON events — synthetic ADDED events for a watch from "0" (or
//! unset), exactly the events after a given resourceVersion otherwise, `410 Expired` as an ERROR
//! event when that is older than the kept history, bookmarks, `sendInitialEvents`, timeouts,
//! and selectors (an object leaving the selector is a DELETED event for that watcher).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::{BufMut, Bytes, BytesMut};

use crate::http::negotiation::Negotiated;
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use crate::context::FakeApiServer;
use crate::error::{ApiError, StatusCause};
use crate::hooks::RequestMatcher;
use crate::http::encoding::{put_typed, typed_bytes};
use crate::http::list::ListRequest;
use crate::http::request::{Query, ResourcePath};
use crate::http::server::drop_receiver;
use crate::resource::ResourceInfo;
use crate::store::{resource_key, EventType, StoreEvent};

/// Used when the client gives no `timeoutSeconds` (the real server picks 30–60 minutes).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

/// How often an idle watch with `allowWatchBookmarks` gets a bookmark.
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// What ends open watches.
#[derive(Debug, Clone)]
pub(crate) enum WatchDrop {
    /// The watches a matcher matches, as a dropped connection would end them
    /// ([`FakeApiServer::drop_watches`]).
    Matching(RequestMatcher),
    /// The watches served from a CRD's storage that was replaced or removed (see
    /// [`crate::registry::crd_storage`]): the versions it was built with.
    Storage(Arc<crate::resource::CustomVersions>),
}

impl WatchDrop {
    /// Whether this ends the watch `spec` describes.
    fn ends(&self, spec: &WatchSpec) -> bool {
        match self {
            WatchDrop::Matching(matcher) => matcher.matches(&spec.matcher_view),
            WatchDrop::Storage(versions) => spec
                .info
                .versions
                .as_ref()
                .is_some_and(|v| Arc::ptr_eq(v, versions)),
        }
    }
}

/// Ends, after [`crate::registry::crd_storage::WATCH_TEARDOWN_DELAY`], the watches served from a
/// CRD storage that a CRD write replaced or removed (`tearDown`).
pub(crate) fn tear_down_storage(
    server: &FakeApiServer,
    versions: Arc<crate::resource::CustomVersions>,
) {
    // Every open watch (and request in flight) on the old storage holds its versions: when
    // nothing but this call does, there is nothing to end.
    if Arc::strong_count(&versions) <= 1 {
        return;
    }
    let drops = server.shared.watch_drops.clone();
    let drop = WatchDrop::Storage(versions);
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(async move {
                tokio::time::sleep(crate::registry::crd_storage::WATCH_TEARDOWN_DELAY).await;
                let _ = drops.send(drop);
            });
        }
        // Outside a runtime no watch is being served.
        Err(_) => {
            let _ = drops.send(drop);
        }
    }
}

/// Where a watch starts.
enum Start {
    /// Synthetic ADDED events for what exists now, then live events.
    Current { initial_end_bookmark: bool },
    /// The events after this revision.
    After(u64),
}

struct WatchSpec {
    info: Arc<ResourceInfo>,
    key: String,
    namespace: Option<String>,
    name: Option<String>,
    filter: ListRequest,
    bookmarks: bool,
    timeout: Duration,
    /// Events carry a Table of this `meta.k8s.io` version.
    table: Option<&'static str>,
    /// What a Table event's row carries.
    include_object: crate::http::table::IncludeObject,
    /// Events carry `PartialObjectMetadata` (see [`crate::http::metadata_only`]).
    metadata_only: Option<crate::http::metadata_only::Requested>,
    /// Whether the next Table event is the first (which carries the column definitions).
    first_table: std::sync::atomic::AtomicBool,
    clock: crate::context::ClockFn,
    matcher_view: crate::hooks::RequestInfo,
}

/// apimachinery's `validateWatchOptions`: every cause in one 422.
fn validate_watch_options(
    send_initial: Option<bool>,
    rv_match: Option<&str>,
    has_continue: bool,
) -> Result<(), ApiError> {
    let forbidden = |detail: &str| StatusCause::forbidden("resourceVersionMatch", detail);
    let mut causes = Vec::new();
    if send_initial.is_some() && rv_match != Some("NotOlderThan") {
        causes.push(forbidden(
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if let Some(rv_match) = rv_match {
        if send_initial.is_none() {
            causes.push(forbidden(
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if rv_match != "NotOlderThan" {
            causes.push(StatusCause::not_supported(
                "resourceVersionMatch",
                &serde_json::json!(rv_match),
                &["NotOlderThan".into()],
            ));
        }
        if has_continue {
            causes.push(forbidden(
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
    }
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", causes))
}

/// Serves a WATCH request.
pub fn serve(
    server: &FakeApiServer,
    info: Arc<ResourceInfo>,
    path: &ResourcePath,
    query: &Query,
    headers: &HeaderMap,
    negotiated: &Negotiated,
) -> Response {
    match start(server, info, path, query, headers, negotiated) {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

fn start(
    server: &FakeApiServer,
    info: Arc<ResourceInfo>,
    path: &ResourcePath,
    query: &Query,
    headers: &HeaderMap,
    negotiated: &Negotiated,
) -> Result<Response, ApiError> {
    // `sendInitialEvents` is a `*bool` (absent, or true unless `0`/`false`).
    let send_initial = query
        .get("sendInitialEvents")
        .map(crate::http::request::go_bool);
    let rv = query.get("resourceVersion").filter(|r| !r.is_empty());
    let rv_match = query.get("resourceVersionMatch").filter(|r| !r.is_empty());
    let bookmarks = query.flag("allowWatchBookmarks");
    validate_watch_options(
        send_initial,
        rv_match,
        query.get("continue").is_some_and(|c| !c.is_empty()),
    )?;
    // The selector and field checks are those of a list.
    let mut list_query = query.clone();
    for option in [
        "resourceVersion",
        "resourceVersionMatch",
        "continue",
        "sendInitialEvents",
    ] {
        list_query.remove(option);
    }
    let filter = ListRequest::parse(&info, &list_query)?;
    let start = match (rv, send_initial) {
        (_, Some(true)) => Start::Current {
            initial_end_bookmark: bookmarks,
        },
        (None | Some("0"), _) => Start::Current {
            initial_end_bookmark: false,
        },
        // The watch cache's `ParseResourceVersion` fails with storage's `InvalidError`, which
        // the watch handler answers as an unclassified 500.
        (Some(rv), _) => Start::After(
            crate::rules::strconv::parse_resource_version(rv).map_err(ApiError::plain_500)?,
        ),
    };
    let timeout = query
        .int("timeoutSeconds")?
        .filter(|t| *t > 0)
        .map(|t| Duration::from_secs(t as u64))
        .unwrap_or(DEFAULT_TIMEOUT);
    let metadata_only = crate::http::metadata_only::requested(negotiated);
    if let Some(requested) = &metadata_only {
        crate::http::metadata_only::check_watch(&info, requested)?;
    }
    let table = crate::http::table::wants_table(negotiated);
    let include_object = match table {
        Some(_) => crate::http::table::IncludeObject::parse(query.get("includeObject"))?,
        None => Default::default(),
    };
    let spec = WatchSpec {
        metadata_only,
        include_object,
        key: resource_key(&info.group, &info.plural),
        namespace: path.namespace.clone(),
        name: None,
        filter,
        bookmarks,
        timeout,
        table,
        first_table: std::sync::atomic::AtomicBool::new(true),
        clock: server.shared.clock.clone(),
        matcher_view: crate::hooks::RequestInfo {
            verb: "watch".into(),
            group: info.group.clone(),
            resource: info.plural.clone(),
            namespace: path.namespace.clone(),
            user_agent: crate::http::server::user_agent(headers),
            ..Default::default()
        },
        info,
    };
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    let store = &server.shared.store;
    match start {
        Start::Current {
            initial_end_bookmark,
        } => {
            let (snapshot, live) =
                store.snapshot_and_subscribe(&spec.key, spec.namespace.as_deref());
            let mut initial = Vec::new();
            for (_, bytes) in &snapshot.items {
                if let Some(line) = spec.initial_line(bytes) {
                    initial.push(line);
                }
            }
            if initial_end_bookmark {
                initial.push(spec.bookmark(snapshot.revision, true));
            }
            spawn_stream(
                server,
                spec,
                initial,
                Vec::new(),
                live,
                snapshot.revision,
                tx,
            );
        }
        Start::After(revision) => match storage_too_old(&spec.info, revision)
            .map_or_else(|| store.watch_from(revision), Err)
        {
            Ok((backlog, live)) => {
                spawn_stream(server, spec, Vec::new(), backlog, live, revision, tx);
            }
            Err(e) => {
                // As a real server does: 200, then one ERROR event, then the end of the stream.
                let line = event_line("ERROR", e.to_status_json().as_bytes());
                let _ = tx.try_send(line);
            }
        },
    }
    let body = Body::from_stream(futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|chunk| (Ok::<Bytes, std::convert::Infallible>(chunk), rx))
    }));
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response.headers_mut().insert(
        header::TRANSFER_ENCODING,
        HeaderValue::from_static("chunked"),
    );
    Ok(response)
}

fn event_line(event_type: &str, object: &[u8]) -> Bytes {
    event_line_with(event_type, object.len(), |out| out.put_slice(object))
}

/// A watch event line whose object `put_object` writes (about `size` bytes) into the line.
fn event_line_with(event_type: &str, size: usize, put_object: impl FnOnce(&mut BytesMut)) -> Bytes {
    let mut out = BytesMut::with_capacity(size + 96);
    out.put_slice(b"{\"type\":\"");
    out.put_slice(event_type.as_bytes());
    out.put_slice(b"\",\"object\":");
    put_object(&mut out);
    out.put_slice(b"}\n");
    out.freeze()
}

impl WatchSpec {
    fn passes(&self, bytes: &[u8]) -> bool {
        !self.filter.has_selector() || self.filter.matches_bytes(&self.info, bytes)
    }

    fn render(&self, event_type: &str, bytes: &Bytes) -> Bytes {
        if let Some(version) = self.table {
            let typed = typed_bytes(&self.info, bytes);
            let object: Value = crate::store::json::from_slice(&typed).unwrap_or(Value::Null);
            let table = crate::http::table::to_table(
                &self.info,
                std::slice::from_ref(&object),
                &crate::registry::semantics::format_time((self.clock)()),
                self.first_table
                    .swap(false, std::sync::atomic::Ordering::Relaxed),
                self.include_object,
                version,
            );
            return event_line(event_type, &serde_json::to_vec(&table).unwrap_or_default());
        }
        // The object is copied once, type fields and all, into the event line.
        event_line_with(event_type, bytes.len(), |out| {
            put_typed(&self.info, bytes, out)
        })
    }

    fn initial_line(&self, bytes: &Bytes) -> Option<Bytes> {
        self.passes(bytes).then(|| self.render("ADDED", bytes))
    }

    fn bookmark(&self, revision: u64, initial_end: bool) -> Bytes {
        let mut metadata = json!({"resourceVersion": revision.to_string()});
        if initial_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let object = json!({
            "kind": self.info.kind,
            "apiVersion": self.info.api_version(),
            "metadata": metadata,
        });
        event_line("BOOKMARK", &serde_json::to_vec(&object).unwrap_or_default())
    }

    /// The line this watcher gets for a store event, if any.
    fn line_for(&self, event: &StoreEvent) -> Option<Bytes> {
        if *event.resource != *self.key {
            return None;
        }
        if self
            .namespace
            .as_deref()
            .is_some_and(|ns| ns != event.namespace)
        {
            return None;
        }
        if self.name.as_deref().is_some_and(|n| n != event.name) {
            return None;
        }
        let now_in = self.passes(&event.object);
        let was_in = event.previous.as_ref().is_some_and(|p| self.passes(p));
        let event_type = match (event.event_type, was_in, now_in) {
            (EventType::Deleted, true, _) => "DELETED",
            (EventType::Deleted, false, _) => return None,
            (EventType::Added, _, true) => "ADDED",
            (EventType::Modified, true, true) => "MODIFIED",
            (EventType::Modified, false, true) => "ADDED",
            (EventType::Modified, true, false) => "DELETED",
            _ => return None,
        };
        // An object leaving the selector is reported as its last state that matched, at the
        // revision of the change (a client resumes from there, not from before the change).
        match (event.event_type, event_type, &event.previous) {
            (EventType::Modified, "DELETED", Some(previous)) => {
                Some(self.render(event_type, &at_revision(previous, event.revision)))
            }
            _ => Some(self.render(event_type, &event.object)),
        }
    }
}

/// A stored object's bytes with `metadata.resourceVersion` set to `revision`.
/// A watch of a custom resource resuming from before its CRD's storage was built: the new
/// watch cache holds nothing older (see [`crate::registry::crd_storage`]).
fn storage_too_old(info: &ResourceInfo, revision: u64) -> Option<ApiError> {
    info.versions
        .as_ref()
        .filter(|_| info.custom)
        .and_then(|versions| versions.epoch.watch_too_old(revision))
}

fn at_revision(bytes: &Bytes, revision: u64) -> Bytes {
    let Ok(mut object) = crate::store::json::from_slice(bytes) else {
        return bytes.clone();
    };
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.insert("resourceVersion".into(), json!(revision.to_string()));
    }
    serde_json::to_vec(&object).map_or_else(|_| bytes.clone(), Bytes::from)
}

fn spawn_stream(
    server: &FakeApiServer,
    spec: WatchSpec,
    initial: Vec<Bytes>,
    backlog: Vec<Arc<StoreEvent>>,
    mut live: broadcast::Receiver<Arc<StoreEvent>>,
    from_revision: u64,
    tx: mpsc::Sender<Bytes>,
) {
    let mut drops = drop_receiver(server);
    let compacted_error = |revision: u64| {
        let status = ApiError::expired(format!(
            "too old resource version: {revision} (the watch fell behind)"
        ))
        .to_status();
        event_line("ERROR", &serde_json::to_vec(&status).unwrap_or_default())
    };
    // Events of a CRD that converts through a webhook are converted on their way out.
    let converter = crate::registry::conversion::webhook_of(&spec.info)
        .filter(|_| spec.table.is_none())
        .cloned()
        .map(|webhook| (server.clone(), webhook, spec.info.clone()));
    let metadata_only = spec.metadata_only.clone().filter(|_| spec.table.is_none());
    let out = tx.clone();
    let send = move |line: Bytes| {
        let tx = out.clone();
        let converter = converter.clone();
        let metadata_only = metadata_only.clone();
        async move {
            let line = match &converter {
                Some((server, webhook, info)) => {
                    match crate::http::converted::event_line(server, info, webhook, line).await {
                        Ok(line) => line,
                        Err(error) => {
                            let _ = tx.send(error).await;
                            return false;
                        }
                    }
                }
                None => line,
            };
            let line = match &metadata_only {
                Some(requested) => crate::http::metadata_only::event_line(requested, line),
                None => line,
            };
            tx.send(line).await.is_ok()
        }
    };
    tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + spec.timeout;
        let mut last_revision = from_revision;
        for line in initial {
            if !send(line).await {
                return;
            }
        }
        for event in backlog {
            last_revision = event.revision;
            if let Some(line) = spec.line_for(&event) {
                if !send(line).await {
                    return;
                }
            }
        }
        let mut bookmark_timer = tokio::time::interval_at(
            tokio::time::Instant::now() + BOOKMARK_INTERVAL,
            BOOKMARK_INTERVAL,
        );
        loop {
            // Biased, so a seeded run makes the same choice every time: a received event is
            // sent before a drop, a bookmark or the deadline is handled.
            tokio::select! {
                biased;
                received = live.recv() => match received {
                    Ok(event) => {
                        if event.revision <= last_revision {
                            continue;
                        }
                        last_revision = event.revision;
                        if let Some(line) = spec.line_for(&event) {
                            if !send(line).await {
                                return;
                            }
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let _ = tx.send(compacted_error(last_revision)).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                dropped = drops.recv() => match dropped {
                    Ok(drop) if drop.ends(&spec) => return,
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = bookmark_timer.tick(), if spec.bookmarks => {
                    if tx.send(spec.bookmark(last_revision, false)).await.is_err() {
                        return;
                    }
                }
                _ = tokio::time::sleep_until(deadline) => return,
                _ = tx.closed() => return,
            }
        }
    });
}
