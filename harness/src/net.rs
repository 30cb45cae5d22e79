//! The network between the controller processes and the fake API server, owned by the
//! schedule.
//!
//! Every process gets a `kube::Client` from [`Net::client`]. Each request it sends is *held*
//! until the schedule releases it ([`Net::release`]), so the order in which requests reach the
//! server, inside one reconcile and across controllers, is the schedule's. A released request
//! may be answered as the server answers it or with an injected fault ([`Verdict`]). A watch's
//! response is held event by event: the server's frames queue up on a [`Net`] watch link and
//! reach the process's informer only when the schedule delivers them ([`Net::deliver`]) — that
//! is informer lag, per watch. A watch can also be cut ([`Net::cut`]) or answered `410 Gone`.
//!
//! A crashed process's network dies with it ([`Net::kill`]): its held requests are dropped
//! unanswered by the server, its watches end, and whatever of it still runs can reach nothing.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Body;
use bytes::Bytes;
use fake_apiserver::request::percent_decode;
use fake_apiserver::{ApiError, FakeApiServer};
use futures::channel::{mpsc, oneshot};
use http_body_util::BodyExt;
use tower::ServiceExt;

/// How the schedule answers a held request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The server answers it.
    Pass,
    /// Answered with this status code (409, 429, 500) without reaching the server.
    Fail(u16),
    /// The server applies it, but the client sees a timeout instead of the answer.
    TimeoutAfterEffect,
}

/// A request waiting at the gate, as the schedule sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldRequest {
    /// Its id (arrival order).
    pub id: u64,
    /// The process that sent it.
    pub host: Arc<str>,
    /// `GET`, `PATCH`, ...
    pub method: http::Method,
    /// Path and query.
    pub target: Arc<str>,
    /// Whether it opens a watch.
    pub watch: bool,
    /// Virtual time at which it arrived at the gate.
    pub since: std::time::Duration,
    /// Arrival number: requests and watch events share one count, so "what has waited
    /// longest" has an answer even when virtual time stands still.
    pub arrival: u64,
}

impl HeldRequest {
    /// `PATCH /apis/...`, with the query shortened to what tells requests apart.
    pub fn label(&self) -> String {
        format!("{} {}", self.method, short_target(&self.target))
    }

    /// Whether it writes (only writes can meet a 409 or have an effect before a timeout).
    pub fn is_write(&self) -> bool {
        self.method != "GET"
    }
}

/// A query reduced to the parameters a reader cares about (selectors, watch, resourceVersion).
fn short_target(target: &str) -> String {
    let Some((path, query)) = target.split_once('?') else {
        return target.to_string();
    };
    let kept: Vec<String> = query
        .split('&')
        .filter(|kv| {
            let key = kv.split('=').next().unwrap_or_default();
            matches!(
                key,
                "watch" | "labelSelector" | "fieldSelector" | "resourceVersion"
            )
        })
        .map(percent_decode)
        .collect();
    if kept.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{}", kept.join("&"))
    }
}

/// A watch whose events the schedule delivers, as the schedule sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchView {
    /// Its id.
    pub id: u64,
    /// The process whose informer reads it.
    pub host: String,
    /// What it watches (`pods?labelSelector=...`).
    pub label: String,
    /// Events the server sent that the informer has not seen yet.
    pub held: usize,
    /// Virtual time since the oldest held event arrived.
    pub held_for: std::time::Duration,
    /// The arrival number of the oldest held event (see [`HeldRequest::arrival`]).
    pub head_arrival: Option<u64>,
}

/// Rewrites or answers requests on their way to the server: how a scenario changes the world
/// to defeat a guard honestly (a read answered from a lagging cache, a server that ignores a
/// precondition).
pub trait Interceptor: Send + Sync {
    /// Called when a request is released to the server. Return a response to answer it
    /// without the server, or change `body` and return `None` to forward it.
    fn intercept(
        &self,
        host: &str,
        method: &str,
        target: &str,
        body: &mut Bytes,
        views: &Views,
        server: &FakeApiServer,
    ) -> Option<http::Response<Body>>;

    /// Whether a request of `host` to `target` is lost on the way (a network partition): it
    /// never reaches the server and is never answered; the caller waits until it gives up.
    fn partitioned(&self, _host: &str, _target: &str) -> bool {
        false
    }
}

/// What each process's informers have seen, per watched collection: the last list's items
/// with the delivered watch events applied. An interceptor answers "live" reads from it to
/// make them cache reads.
#[derive(Debug, Default, Clone)]
pub struct Views {
    /// (host, collection) → object key (namespace/name) → object. A collection is a path with
    /// its selectors ([`collection`]), so a list and the watch that follows it share one.
    by_collection: BTreeMap<(String, String), BTreeMap<String, serde_json::Value>>,
}

impl Views {
    /// The objects `host` has seen of `collection` (e.g.
    /// `/api/v1/namespaces/eno/pods?labelSelector=app.kubernetes.io/managed-by=eno`, see
    /// [`collection`]).
    pub fn objects(&self, host: &str, path: &str) -> Vec<serde_json::Value> {
        self.by_collection
            .get(&(host.to_string(), path.to_string()))
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    fn replace(&mut self, host: &str, path: &str, items: &[serde_json::Value]) {
        let map = items.iter().map(|o| (object_key(o), o.clone())).collect();
        self.by_collection
            .insert((host.to_string(), path.to_string()), map);
    }

    fn apply(&mut self, host: &str, path: &str, event: &serde_json::Value) {
        let object = &event["object"];
        let map = self
            .by_collection
            .entry((host.to_string(), path.to_string()))
            .or_default();
        match event["type"].as_str() {
            Some("ADDED") | Some("MODIFIED") => {
                map.insert(object_key(object), object.clone());
            }
            Some("DELETED") => {
                map.remove(&object_key(object));
            }
            _ => {}
        }
    }
}

fn object_key(object: &serde_json::Value) -> String {
    format!(
        "{}/{}",
        object["metadata"]["namespace"].as_str().unwrap_or_default(),
        object["metadata"]["name"].as_str().unwrap_or_default()
    )
}

/// How many answers [`Net::outcome`] can still tell (the latest; ids only grow, so the oldest
/// go first).
pub const OUTCOMES_KEPT: usize = 1024;

/// What became of a released request (read as the step's outcome line). Recorded on every
/// request, so it holds codes, not text: the line is only written when the schedule asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answered {
    /// The server (or an interceptor) answered with this status.
    Status(u16),
    /// The schedule failed it with this status.
    Injected(u16),
    /// The server answered with this status; the client saw a timeout.
    StatusThenTimeout(u16),
    /// Lost in a partition: never answered.
    Partitioned,
}

impl std::fmt::Display for Answered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Answered::Status(code) => write!(f, "{code}"),
            Answered::Injected(code) => write!(f, "injected {code}"),
            Answered::StatusThenTimeout(code) => write!(f, "{code}, then injected timeout"),
            Answered::Partitioned => f.write_str("lost: partitioned"),
        }
    }
}

struct Held {
    view: HeldRequest,
    body: Bytes,
    epoch: u64,
    release: oneshot::Sender<Verdict>,
}

enum Frame {
    Event(Bytes),
    End,
}

struct WatchLink {
    host: String,
    epoch: u64,
    /// The collection path (for views).
    path: String,
    label: String,
    /// Held frames, each with the arrival number it was queued with.
    frames: VecDeque<(u64, Frame)>,
    /// When the oldest held frame arrived (virtual time).
    held_since: Option<std::time::Duration>,
    out: mpsc::UnboundedSender<Result<Bytes, std::io::Error>>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    held: BTreeMap<u64, Held>,
    watches: BTreeMap<u64, WatchLink>,
    /// Each host's current incarnation; a request or watch of an older one is dead.
    epochs: BTreeMap<String, u64>,
    answered: BTreeMap<u64, Answered>,
    /// Shared with the snapshots handed to the interceptor ([`Net::views`]), copied on write only
    /// while one of those is still held.
    views: Arc<Views>,
    track_views: bool,
    requests_seen: u64,
    /// Bumped by everything the schedule can see happen: a request arriving, an event queued.
    activity: u64,
}

/// The schedule-owned network. Cheap to clone.
#[derive(Clone)]
pub struct Net {
    server: FakeApiServer,
    router: axum::Router,
    state: Arc<Mutex<State>>,
    interceptor: Option<Arc<dyn Interceptor>>,
    elapsed: Arc<dyn Fn() -> std::time::Duration + Send + Sync>,
    /// Signalled with every move of [`State::activity`] (see [`Net::activity_changed`]).
    moved: Arc<tokio::sync::Notify>,
}

impl Net {
    /// A network in front of `server`; `elapsed` tells virtual time (to stamp what is held).
    pub fn new(
        server: &FakeApiServer,
        elapsed: impl Fn() -> std::time::Duration + Send + Sync + 'static,
    ) -> Self {
        Self {
            server: server.clone(),
            router: server.router(),
            state: Arc::default(),
            interceptor: None,
            elapsed: Arc::new(elapsed),
            moved: Arc::default(),
        }
    }

    /// Sends every released request through `interceptor` first; keeps the views it reads.
    pub fn with_interceptor(mut self, interceptor: Arc<dyn Interceptor>) -> Self {
        self.interceptor = Some(interceptor);
        self.lock().track_views = true;
        self
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A client for process `host` in its current incarnation.
    pub fn client(&self, host: &str) -> kube::Client {
        let epoch = *self.lock().epochs.entry(host.to_string()).or_insert(0);
        let net = self.clone();
        let host: Arc<str> = Arc::from(host);
        let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
            let net = net.clone();
            let host = host.clone();
            async move { net.handle(&host, epoch, request).await }
        });
        kube::Client::new(service, "default")
    }

    /// Kills process `host`: its held requests are dropped unanswered, its watches end, and
    /// clients it was given reach nothing from now on. [`Net::client`] then serves the next
    /// incarnation.
    pub fn kill(&self, host: &str) {
        let mut state = self.lock();
        let epoch = state.epochs.entry(host.to_string()).or_insert(0);
        *epoch += 1;
        let epoch = *epoch;
        state
            .held
            .retain(|_, h| !(&*h.view.host == host && h.epoch < epoch));
        state
            .watches
            .retain(|_, w| !(w.host == host && w.epoch < epoch));
    }

    /// Requests waiting at the gate, in a canonical order: by host, then by what they ask,
    /// then by arrival. (Concurrent reconciles are polled in hash-map order inside
    /// kube-runtime; sorting by content keeps that order out of the schedule.)
    pub fn held(&self) -> Vec<HeldRequest> {
        let state = self.lock();
        let mut held: Vec<&Held> = state.held.values().collect();
        fn key(h: &Held) -> (&str, &str, &str, &Bytes, u64) {
            let v = &h.view;
            (&v.host, v.method.as_str(), &v.target, &h.body, v.id)
        }
        held.sort_by(|a, b| key(a).cmp(&key(b)));
        held.into_iter().map(|h| h.view.clone()).collect()
    }

    /// Open watches, by id.
    pub fn watches(&self) -> Vec<WatchView> {
        let now = (self.elapsed)();
        let state = self.lock();
        state
            .watches
            .iter()
            .map(|(id, w)| WatchView {
                id: *id,
                host: w.host.clone(),
                label: w.label.clone(),
                held: w.frames.len(),
                head_arrival: w.frames.front().map(|(n, _)| *n),
                held_for: w
                    .held_since
                    .map(|t| now.saturating_sub(t))
                    .unwrap_or_default(),
            })
            .collect()
    }

    /// A counter that moves whenever a request arrives or a watch event is queued.
    pub fn activity(&self) -> u64 {
        self.lock().activity
    }

    /// Resolves once [`Net::activity`] has moved since the previous call returned (at once if
    /// it moved in between), so a loop that releases what is held can sleep until there is
    /// something to release instead of polling:
    ///
    /// ```ignore
    /// loop {
    ///     for held in net.held() {
    ///         net.release(held.id, Verdict::Pass);
    ///     }
    ///     net.activity_changed().await;
    /// }
    /// ```
    ///
    /// The simulation does not need it (it settles the runtime and then looks); it is for
    /// drivers running on an ordinary runtime.
    pub async fn activity_changed(&self) {
        self.moved.notified().await;
    }

    /// Total requests sent so far (held or not).
    pub fn requests_seen(&self) -> u64 {
        self.lock().requests_seen
    }

    /// Lets request `id` go with `verdict`.
    pub fn release(&self, id: u64, verdict: Verdict) -> bool {
        let held = self.lock().held.remove(&id);
        match held {
            Some(h) => h.release.send(verdict).is_ok(),
            None => false,
        }
    }

    /// What became of request `id` once released (status code, or the injected fault). Read
    /// once: the answer is forgotten as it is returned. Only the latest [`OUTCOMES_KEPT`]
    /// answers are kept, so a driver that never asks does not make the network grow.
    pub fn outcome(&self, id: u64) -> Option<String> {
        self.lock().answered.remove(&id).map(|a| a.to_string())
    }

    /// Delivers the next held event of watch `id` to its informer (and any bookmarks right
    /// behind it). Returns what was delivered.
    pub fn deliver(&self, id: u64) -> Option<String> {
        let mut state = self.lock();
        let track = state.track_views;
        let link = state.watches.get_mut(&id)?;
        let (_, frame) = link.frames.pop_front()?;
        let text = describe_frame(&frame);
        let mut delivered = vec![frame];
        while matches!(link.frames.front(), Some((_, Frame::Event(b))) if is_bookmark(b)) {
            if let Some((_, f)) = link.frames.pop_front() {
                delivered.push(f);
            }
        }
        let (host, path) = (link.host.clone(), link.path.clone());
        let mut ended = false;
        let mut events = Vec::new();
        for frame in delivered {
            match frame {
                Frame::Event(bytes) => {
                    if track {
                        events.push(bytes.clone());
                    }
                    let _ = link.out.unbounded_send(Ok(bytes));
                }
                Frame::End => ended = true,
            }
        }
        if link.frames.is_empty() {
            link.held_since = None;
        }
        if ended {
            state.watches.remove(&id);
        }
        for bytes in events {
            if let Ok(event) = fake_apiserver::store::json::from_slice(&bytes) {
                Arc::make_mut(&mut state.views).apply(&host, &path, &event);
            }
        }
        Some(text)
    }

    /// Cuts watch `id` as a dropped connection would: held events are lost and the informer
    /// sees the stream end (it watches again from the last resourceVersion it saw).
    pub fn cut(&self, id: u64) -> bool {
        self.lock().watches.remove(&id).is_some()
    }

    /// Ends watch `id` with a `410 Gone` ERROR event in place of its held events, so the
    /// informer lists again and skips every intermediate state.
    pub fn expire(&self, id: u64) -> bool {
        let Some(link) = self.lock().watches.remove(&id) else {
            return false;
        };
        let status =
            ApiError::expired("too old resource version (injected by the harness)").to_status();
        let line = serde_json::json!({"type": "ERROR", "object": status});
        let mut bytes = serde_json::to_vec(&line).unwrap_or_default();
        bytes.push(b'\n');
        let _ = link.out.unbounded_send(Ok(Bytes::from(bytes)));
        true
    }

    /// The informer views (what each process has seen of each listed and watched collection),
    /// as they are now: a snapshot that later events do not change (shared, not copied).
    pub fn views(&self) -> Arc<Views> {
        self.lock().views.clone()
    }

    async fn handle(
        &self,
        host: &Arc<str>,
        epoch: u64,
        request: http::Request<kube::client::Body>,
    ) -> Result<http::Response<Body>, std::io::Error> {
        let (parts, body) = request.into_parts();
        let body = read_body(body).await?;
        let target: Arc<str> = Arc::from(
            parts
                .uri
                .path_and_query()
                .map_or_else(|| parts.uri.path(), |p| p.as_str()),
        );
        let watch = is_watch(&target);
        let (tx, rx) = oneshot::channel();
        let since = (self.elapsed)();
        let id = {
            let mut state = self.lock();
            if state.epochs.get(&**host).copied().unwrap_or(0) != epoch {
                return Err(dead());
            }
            state.next_id += 1;
            state.requests_seen += 1;
            let arrival = self.moved_on(&mut state);
            let id = state.next_id;
            state.held.insert(
                id,
                Held {
                    view: HeldRequest {
                        id,
                        host: host.clone(),
                        method: parts.method.clone(),
                        target: target.clone(),
                        watch,
                        since,
                        arrival,
                    },
                    body: body.clone(),
                    epoch,
                    release: tx,
                },
            );
            id
        };
        let verdict = rx.await.map_err(|_| dead())?;
        let mut body = body;
        match verdict {
            Verdict::Fail(code) => {
                self.answered(id, Answered::Injected(code));
                return Ok(axum::response::IntoResponse::into_response(injected(code)));
            }
            Verdict::TimeoutAfterEffect | Verdict::Pass => {}
        }
        if self
            .interceptor
            .as_ref()
            .is_some_and(|i| i.partitioned(host, &target))
        {
            self.answered(id, Answered::Partitioned);
            return std::future::pending().await;
        }
        let intercepted = self.interceptor.as_ref().and_then(|i| {
            let views = self.views();
            i.intercept(
                host,
                parts.method.as_str(),
                &target,
                &mut body,
                &views,
                &self.server,
            )
        });
        let response = match intercepted {
            Some(r) => r,
            None => {
                let request = http::Request::from_parts(parts, Body::from(body));
                match self.router.clone().oneshot(request).await {
                    Ok(r) => r,
                    Err(never) => match never {},
                }
            }
        };
        let status = response.status().as_u16();
        if verdict == Verdict::TimeoutAfterEffect {
            self.answered(id, Answered::StatusThenTimeout(status));
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "injected: the request took effect but its answer timed out",
            ));
        }
        let track_views = self.answered(id, Answered::Status(status));
        if watch && status == 200 {
            return Ok(self.hold_watch(host, epoch, &target, response));
        }
        if status == 200 && !watch && track_views {
            // Boxed: noting a list is rare, and inline its state would make every request's
            // future (moved several times on its way into kube's `BoxService`) larger.
            return Ok(Box::pin(self.note_list(host, &target, response)).await);
        }
        Ok(response)
    }

    /// Records what became of request `id`; returns whether list answers are to be noted in
    /// the views (one lock for both).
    fn answered(&self, id: u64, outcome: Answered) -> bool {
        let mut state = self.lock();
        state.answered.insert(id, outcome);
        if state.answered.len() > OUTCOMES_KEPT {
            state.answered.pop_first();
        }
        state.track_views
    }

    /// A list answer replaces what the host has seen of that collection.
    async fn note_list(
        &self,
        host: &str,
        target: &str,
        response: http::Response<Body>,
    ) -> http::Response<Body> {
        let (parts, body) = response.into_parts();
        let bytes = body
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        if let Ok(list) = fake_apiserver::store::json::from_slice(&bytes) {
            if let Some(items) = list["items"].as_array() {
                Arc::make_mut(&mut self.lock().views).replace(host, &collection(target), items);
            }
        }
        http::Response::from_parts(parts, Body::from(bytes))
    }

    /// Puts a watch answer on a link: a pump task queues the server's events, the informer
    /// gets them as the schedule delivers them.
    fn hold_watch(
        &self,
        host: &str,
        epoch: u64,
        target: &str,
        response: http::Response<Body>,
    ) -> http::Response<Body> {
        let (parts, body) = response.into_parts();
        let (out, rx) = mpsc::unbounded();
        let path = collection(target);
        let label = watch_label(target);
        let id = {
            let mut state = self.lock();
            state.next_id += 1;
            let id = state.next_id;
            state.watches.insert(
                id,
                WatchLink {
                    host: host.to_string(),
                    epoch,
                    path,
                    label,
                    frames: VecDeque::new(),
                    held_since: None,
                    out,
                },
            );
            id
        };
        let net = self.clone();
        tokio::spawn(async move {
            let mut body = body;
            let mut partial: Vec<u8> = Vec::new();
            loop {
                let frame = body.frame().await;
                let data = match frame {
                    Some(Ok(frame)) => match frame.into_data() {
                        Ok(data) => data,
                        Err(_) => continue,
                    },
                    Some(Err(_)) | None => break,
                };
                partial.extend_from_slice(&data);
                while let Some(end) = partial.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = partial.drain(..=end).collect();
                    if !net.queue(id, Frame::Event(Bytes::from(line))) {
                        return;
                    }
                }
            }
            net.queue(id, Frame::End);
        });
        http::Response::from_parts(parts, Body::from_stream(rx))
    }

    /// Queues a frame on a link; a bookmark with nothing ahead of it goes straight through.
    /// False once the link is gone.
    fn queue(&self, id: u64, frame: Frame) -> bool {
        let now = (self.elapsed)();
        let mut state = self.lock();
        let state_arrival = self.moved_on(&mut state);
        let Some(link) = state.watches.get_mut(&id) else {
            return false;
        };
        match frame {
            Frame::Event(bytes) if link.frames.is_empty() && is_bookmark(&bytes) => {
                let _ = link.out.unbounded_send(Ok(bytes));
            }
            frame => {
                link.held_since.get_or_insert(now);
                link.frames.push_back((state_arrival, frame));
            }
        }
        true
    }

    /// Moves [`State::activity`] on and wakes [`Net::activity_changed`]; returns the new count
    /// (the arrival number of what moved it).
    fn moved_on(&self, state: &mut State) -> u64 {
        state.activity += 1;
        self.moved.notify_one();
        state.activity
    }

    /// The fake API server behind the network.
    pub fn server(&self) -> &FakeApiServer {
        &self.server
    }
}

/// A request body as one buffer. kube-client sends a body as a single frame, which is taken as
/// it is (no copy, no list of buffers); a body of several frames is gathered; trailers are
/// ignored.
async fn read_body<B>(body: B) -> Result<Bytes, std::io::Error>
where
    B: axum::body::HttpBody<Data = Bytes>,
    B::Error: std::fmt::Display,
{
    let mut body = std::pin::pin!(body);
    let mut whole = Bytes::new();
    let mut gathered: Option<bytes::BytesMut> = None;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| std::io::Error::other(e.to_string()))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        match &mut gathered {
            Some(buf) => buf.extend_from_slice(&data),
            None if whole.is_empty() => whole = data,
            None => {
                let mut buf = bytes::BytesMut::from(&whole[..]);
                buf.extend_from_slice(&data);
                gathered = Some(buf);
            }
        }
    }
    Ok(gathered.map_or(whole, bytes::BytesMut::freeze))
}

fn dead() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        "the process was killed; its connections are gone",
    )
}

fn injected(code: u16) -> ApiError {
    match code {
        409 => ApiError::new(
            409,
            "Conflict",
            "injected by the harness: the object has been modified; please apply your changes to the latest version and try again",
        ),
        429 => {
            let mut e = ApiError::new(
                429,
                "TooManyRequests",
                "injected by the harness: the server has received too many requests and has asked us to try again later",
            );
            e.retry_after_seconds = Some(1);
            e
        }
        _ => ApiError::internal("injected by the harness: etcdserver: request timed out"),
    }
}

fn is_watch(target: &str) -> bool {
    target
        .split_once('?')
        .map(|(_, q)| q.split('&').any(|kv| kv == "watch=true" || kv == "watch=1"))
        .unwrap_or(false)
}

fn is_bookmark(bytes: &[u8]) -> bool {
    // Event lines are `{"type":"BOOKMARK",...}`; look at the head only.
    let head = &bytes[..bytes.len().min(32)];
    head.windows(8).any(|w| w == b"BOOKMARK")
}

/// A request target reduced to the collection it reads: the path and its label and field
/// selectors, decoded (`/api/v1/namespaces/eno/pods?labelSelector=a=b`).
pub fn collection(target: &str) -> String {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let selectors: Vec<String> = query
        .split('&')
        .filter(|kv| kv.starts_with("labelSelector=") || kv.starts_with("fieldSelector="))
        .map(percent_decode)
        .collect();
    if selectors.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{}", selectors.join("&"))
    }
}

/// `pods?labelSelector=...` for a watch of `/api/v1/namespaces/eno/pods?...`.
fn watch_label(target: &str) -> String {
    let short = short_target(target);
    let (path, query) = short.split_once('?').unwrap_or((&short, ""));
    let resource = path.rsplit('/').next().unwrap_or_default();
    let selectors: Vec<&str> = query
        .split('&')
        .filter(|kv| kv.starts_with("labelSelector") || kv.starts_with("fieldSelector"))
        .collect();
    if selectors.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}?{}", selectors.join("&"))
    }
}

/// The parts of a watch event a trace line names; everything else is skipped unparsed.
#[derive(serde::Deserialize)]
struct EventHead<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    object: ObjectHead<'a>,
}

#[derive(serde::Deserialize)]
struct ObjectHead<'a> {
    #[serde(borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    metadata: MetaHead<'a>,
}

#[derive(serde::Deserialize, Default)]
struct MetaHead<'a> {
    #[serde(borrow, default)]
    namespace: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(rename = "resourceVersion", borrow, default)]
    resource_version: Option<std::borrow::Cow<'a, str>>,
}

fn describe_frame(frame: &Frame) -> String {
    match frame {
        Frame::End => "end of stream".into(),
        Frame::Event(bytes) => match serde_json::from_slice::<EventHead>(bytes) {
            Ok(event) => {
                let meta = &event.object.metadata;
                let name = meta.name.as_deref().unwrap_or_default();
                let who = match meta.namespace.as_deref() {
                    Some(ns) => format!("{ns}/{name}"),
                    None => name.to_string(),
                };
                format!(
                    "{} {} {who} rv {}",
                    event.kind,
                    event.object.kind.as_deref().unwrap_or("object"),
                    meta.resource_version.as_deref().unwrap_or_default()
                )
            }
            Err(_) => "an undecodable event".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_keep_only_what_tells_requests_apart() {
        assert_eq!(
            short_target("/api/v1/namespaces/eno/pods?labelSelector=a%3Db&limit=500&timeoutSeconds=290&watch=true&resourceVersion=7"),
            "/api/v1/namespaces/eno/pods?labelSelector=a=b&watch=true&resourceVersion=7"
        );
        assert_eq!(short_target("/api/v1/pods"), "/api/v1/pods");
        assert_eq!(
            watch_label("/api/v1/namespaces/eno/pods?labelSelector=a%3Db&watch=true"),
            "pods?labelSelector=a=b"
        );
        assert!(is_watch("/api/v1/pods?watch=true&x=1"));
        assert!(!is_watch("/api/v1/pods?watchy=true"));
    }

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, PostParams};
    use std::time::Duration;

    /// Releases every held request, sleeping on [`Net::activity_changed`] in between; records
    /// the ids it released.
    async fn pass_everything(net: &Net, released: &Mutex<Vec<u64>>) {
        loop {
            for held in net.held() {
                net.release(held.id, Verdict::Pass);
                released.lock().expect("ids").push(held.id);
            }
            net.activity_changed().await;
        }
    }

    /// A network in front of a fresh server, and a ConfigMap API through it for host `app`.
    fn gated_config_maps() -> (Net, Api<ConfigMap>) {
        let server = FakeApiServer::builder().seed(1).build();
        let net = Net::new(&server, || Duration::ZERO);
        let api = Api::namespaced(net.client("app"), "default");
        (net, api)
    }

    fn config_map(name: &str, n: usize) -> ConfigMap {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name}, "data": {"n": n.to_string()}
        }))
        .expect("config map")
    }

    // The clock is paused: if the loop were never woken, the runtime would jump to the timeout
    // and the test would fail at once instead of hanging.
    #[tokio::test(start_paused = true)]
    async fn a_loop_sleeping_on_activity_passes_every_request() {
        let (net, api) = gated_config_maps();
        let released = Mutex::new(Vec::new());
        let work = async {
            let mut cm = api
                .create(&PostParams::default(), &config_map("c", 0))
                .await?;
            for n in 1..=3 {
                let mut next = config_map("c", n);
                next.metadata.resource_version = cm.metadata.resource_version.clone();
                cm = api.replace("c", &PostParams::default(), &next).await?;
            }
            Ok::<_, kube::Error>(cm)
        };
        let cm = tokio::select! {
            cm = tokio::time::timeout(Duration::from_secs(60), work) => cm,
            _ = pass_everything(&net, &released) => unreachable!("the loop never ends"),
        };
        let cm = cm.expect("not stuck at the gate").expect("writes");
        assert_eq!(cm.data.expect("data")["n"], "3");
        assert_eq!(*released.lock().expect("ids"), [1, 2, 3, 4]);
        assert_eq!(net.requests_seen(), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn activity_changed_remembers_an_arrival_it_did_not_wait_for() {
        let (net, api) = gated_config_maps();
        let request = tokio::spawn(async move { api.get_opt("absent").await });
        while net.held().is_empty() {
            tokio::task::yield_now().await;
        }
        // The request arrived before anyone waited: the next call returns at once.
        use futures::FutureExt;
        assert_eq!(net.activity_changed().now_or_never(), Some(()));
        // Nothing has moved since: it waits.
        assert_eq!(net.activity_changed().now_or_never(), None);
        let id = net.held()[0].id;
        net.release(id, Verdict::Pass);
        let answer = request.await.expect("task").expect("get");
        assert!(answer.is_none());
        assert_eq!(net.outcome(id).as_deref(), Some("404"));
    }

    #[tokio::test(start_paused = true)]
    async fn only_the_latest_outcomes_are_kept() {
        let (net, api) = gated_config_maps();
        let released = Mutex::new(Vec::new());
        let work = async {
            for _ in 0..OUTCOMES_KEPT + 3 {
                api.get_opt("absent").await?;
            }
            Ok::<_, kube::Error>(())
        };
        tokio::select! {
            done = tokio::time::timeout(Duration::from_secs(60), work) => {
                done.expect("not stuck at the gate").expect("reads")
            }
            _ = pass_everything(&net, &released) => unreachable!("the loop never ends"),
        }
        let released = released.into_inner().expect("ids");
        assert_eq!(released.len(), OUTCOMES_KEPT + 3);
        let state = net.lock();
        assert_eq!(state.answered.len(), OUTCOMES_KEPT, "bounded");
        drop(state);
        assert_eq!(net.outcome(released[0]), None, "the oldest went first");
        assert_eq!(net.outcome(released[3]).as_deref(), Some("404"));
        assert_eq!(
            net.outcome(released[OUTCOMES_KEPT + 2]).as_deref(),
            Some("404")
        );
        assert_eq!(net.outcome(released[OUTCOMES_KEPT + 2]), None, "read once");
    }

    #[tokio::test]
    async fn a_body_is_read_whole_and_one_frame_is_not_copied() {
        let one = Bytes::from_static(b"{\"kind\":\"ConfigMap\"}");
        let read = read_body(http_body_util::Full::new(one.clone()))
            .await
            .expect("body");
        assert_eq!(read, one);
        assert_eq!(read.as_ptr(), one.as_ptr(), "taken as it is");
        let frames = ["{\"a\":", "1", "}"].map(|part| {
            Ok::<_, std::convert::Infallible>(http_body::Frame::data(Bytes::from_static(
                part.as_bytes(),
            )))
        });
        let several = http_body_util::StreamBody::new(futures::stream::iter(frames));
        assert_eq!(read_body(several).await.expect("body"), "{\"a\":1}");
        let empty = read_body(http_body_util::Empty::<Bytes>::new()).await;
        assert_eq!(empty.expect("body"), "");
    }
}
