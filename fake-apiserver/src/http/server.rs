//! The server handle's builder and methods (its state is in [`crate::context`]), the axum
//! router, the in-process client and the TCP listener.

use std::future::Future;
use std::sync::{Arc, Mutex, RwLock};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use tokio::sync::broadcast;

use crate::chaos::Chaos;
pub(crate) use crate::context::{ClockFn, FakeApiServer, Shared};
use crate::controllers::{Controller, ControllerConfig, ControllerManager, Work};
use crate::error::ApiError;
use crate::hooks::{FaultRule, Faults, RequestGate, RequestInfo, RequestMatcher};
use crate::http::discovery;
use crate::registry::{self, Registry};
use crate::resource::ResourceInfo;
use crate::store::{resource_key, Store, StoreEvent, DEFAULT_HISTORY, DEFAULT_HISTORY_BYTES};

/// Largest request body accepted (the real server's limit), in bytes.
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Configures a [`FakeApiServer`].
pub struct FakeApiServerBuilder {
    history: usize,
    history_bytes: usize,
    seed: Option<u64>,
    clock: Option<ClockFn>,
    controllers: ControllerConfig,
    auth: crate::auth::AuthConfig,
    pub(crate) admission: crate::admission::AdmissionConfig,
}

impl Default for FakeApiServerBuilder {
    fn default() -> Self {
        Self {
            history: DEFAULT_HISTORY,
            history_bytes: DEFAULT_HISTORY_BYTES,
            seed: None,
            clock: None,
            controllers: ControllerConfig::all(),
            auth: crate::auth::AuthConfig::default(),
            admission: Default::default(),
        }
    }
}

impl FakeApiServerBuilder {
    /// How many events the server keeps for watches and paged lists (default 100 000).
    pub fn history(mut self, events: usize) -> Self {
        self.history = events;
        self
    }

    /// Bounds the bytes of the objects the kept events carry (default 256 MiB); older events are
    /// forgotten first, as by [`FakeApiServerBuilder::history`].
    pub fn history_bytes(mut self, bytes: usize) -> Self {
        self.history_bytes = bytes;
        self
    }

    /// Seeds uids and generated-name suffixes, so that a run can be repeated exactly.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Same as [`FakeApiServerBuilder::seed`]; the name the API documentation uses.
    pub fn name_suffixes(self, seed: u64) -> Self {
        self.seed(seed)
    }

    /// The server's clock (creation and deletion timestamps, ages in tables).
    pub fn clock(mut self, clock: impl Fn() -> jiff::Timestamp + Send + Sync + 'static) -> Self {
        self.clock = Some(Arc::new(clock));
        self
    }

    /// Which of kube-controller-manager's controllers run beside the server, and when
    /// (default: all of them, inline; see [`crate::controllers`]).
    pub fn controllers(mut self, config: ControllerConfig) -> Self {
        self.controllers = config;
        self
    }

    /// A bare API server: no controllers (as [`ControllerConfig::none`]).
    pub fn bare(self) -> Self {
        self.controllers(ControllerConfig::none())
    }

    /// All authentication, authorization and admission settings at once.
    pub fn auth(mut self, config: crate::auth::AuthConfig) -> Self {
        self.auth = config;
        self
    }

    /// Turns authentication on: requests without credentials are `system:anonymous` (or refused
    /// with 401, see [`FakeApiServerBuilder::anonymous_auth`]) instead of the cluster admin.
    pub fn authentication(mut self, on: bool) -> Self {
        self.auth.authentication = on;
        self
    }

    /// Whether anonymous requests are let through (on by default, as the real
    /// `--anonymous-auth`); only matters with authentication on.
    pub fn anonymous_auth(mut self, allowed: bool) -> Self {
        self.auth.anonymous_auth = allowed;
        self
    }

    /// Static bearer tokens (what `--token-auth-file` reads); turns authentication on.
    pub fn static_tokens(mut self, tokens: crate::auth::StaticTokens) -> Self {
        self.auth.static_tokens = tokens;
        self.auth.authentication = true;
        self
    }

    /// The authorizer (`AlwaysAllow` by default).
    pub fn authorization_mode(mut self, mode: crate::auth::AuthorizationMode) -> Self {
        self.auth.authorization_mode = mode;
        self
    }

    /// Whether pods must name an existing service account (the ServiceAccount admission
    /// plugin; off by default here).
    pub fn service_account_admission(mut self, on: bool) -> Self {
        self.auth.service_account_admission = on;
        self
    }

    /// Builds the server with what a real one writes at start (see [`crate::bootstrap`]): the
    /// `default`, `kube-system`, `kube-public` and `kube-node-lease` namespaces, the bootstrap
    /// RBAC policy and the system priority classes.
    pub fn build(self) -> FakeApiServer {
        let server = self.assemble();
        crate::bootstrap::write(&server);
        // Watches from before start-up expire, as on a long-running, compacted server.
        server.shared.store.compact();
        server
    }

    /// [`Self::build`] through the full write path of every start-up object instead of the
    /// recorded image (to check the image against).
    #[cfg(test)]
    pub(crate) fn build_in_full(self) -> FakeApiServer {
        let server = self.assemble();
        crate::bootstrap::write_in_full(&server);
        server.shared.store.compact();
        server
    }

    /// The server with nothing stored yet.
    pub(crate) fn assemble(self) -> FakeApiServer {
        let rng = match self.seed {
            Some(seed) => ChaCha8Rng::seed_from_u64(seed),
            None => ChaCha8Rng::from_os_rng(),
        };
        let (watch_drops, _) = broadcast::channel(64);
        let store = Store::with_limits(self.history, self.history_bytes)
            .with_encoder(crate::rules::go_encoding::encode_stored);
        let auth = crate::auth::AuthState::new(self.auth);
        let shared = Arc::new(Shared {
            store,
            registry: Registry::new(),
            clock: self.clock.unwrap_or_else(|| Arc::new(jiff::Timestamp::now)),
            rng: Mutex::new(rng),
            faults: Faults::default(),
            chaos: Chaos::default(),
            gate: RwLock::new(None),
            watch_drops,
            controllers: ControllerManager::new(self.controllers),
            auth,
            pod_logs: Default::default(),
            admission: self.admission,
            audit_ids: Default::default(),
        });
        FakeApiServer { shared }
    }
}

impl std::fmt::Debug for FakeApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeApiServer")
            .field("revision", &self.revision())
            .finish()
    }
}

impl Default for FakeApiServer {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeApiServer {
    /// A server with the built-in kinds and the start-up namespaces.
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A builder for a configured server.
    pub fn builder() -> FakeApiServerBuilder {
        FakeApiServerBuilder::default()
    }

    /// The axum router that serves the API.
    pub fn router(&self) -> Router {
        Router::new()
            // Another method on these paths gets a Status too (axum's own 405 has no body).
            .route("/version", get(version).fallback(wrong_method))
            .route("/version/", get(version).fallback(wrong_method))
            .route("/api", get(core_versions).fallback(wrong_method))
            .route("/api/", get(core_versions).fallback(wrong_method))
            .route("/apis", get(group_list).fallback(wrong_method))
            .route("/apis/", get(group_list).fallback(wrong_method))
            // The health checks answer any method, as the real server's handlers do.
            .route("/healthz", any(health))
            .route("/livez", any(health))
            .route("/readyz", any(health))
            .fallback(crate::http::handlers::dispatch)
            .layer(axum::middleware::from_fn_with_state(
                self.clone(),
                crate::http::chain::layer,
            ))
            .with_state(self.clone())
    }

    /// A `kube::Client` talking to this server in-process, with no socket, as the cluster
    /// admin (`system:admin` in `system:masters`, as the real server's loopback client).
    ///
    /// Must be called inside a tokio runtime.
    pub fn client(&self) -> kube::Client {
        self.client_with_identity(crate::auth::UserInfo::admin())
    }

    /// An in-process client acting as `user` in `groups` (plus `system:authenticated`), as an
    /// authenticating proxy would present them: with authorization on, its requests are
    /// authorized as that user.
    pub fn client_as(&self, user: &str, groups: &[&str]) -> kube::Client {
        self.client_with_identity(crate::auth::UserInfo::authenticated(user, "", groups))
    }

    /// An in-process client acting as this user exactly (no group added).
    pub fn client_with_identity(&self, user: crate::auth::UserInfo) -> kube::Client {
        let user = Arc::new(user);
        let service = tower::ServiceBuilder::new()
            .map_request(move |mut request: http::Request<kube::client::Body>| {
                request
                    .extensions_mut()
                    .insert(crate::auth::InProcessUser(user.clone()));
                request
            })
            .service(self.router());
        kube::Client::new(service, "default")
    }

    /// An in-process client that authenticates as the service account `namespace/name` with a
    /// token this server issues (valid for a year; the account must exist).
    pub fn client_for_service_account(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<kube::Client, ApiError> {
        let token = crate::auth::token_request::issue(self, namespace, name, 365 * 24 * 3600)?;
        let value = http::HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|e| ApiError::internal(e.to_string()))?;
        let service = tower::ServiceBuilder::new()
            .map_request(move |mut request: http::Request<kube::client::Body>| {
                request
                    .headers_mut()
                    .insert(http::header::AUTHORIZATION, value.clone());
                request
            })
            .service(self.router());
        Ok(kube::Client::new(service, namespace))
    }

    /// A bearer token for the service account `namespace/name`, valid for `seconds`, as a
    /// TokenRequest would issue it.
    pub fn service_account_token(
        &self,
        namespace: &str,
        name: &str,
        seconds: i64,
    ) -> Result<String, ApiError> {
        crate::auth::token_request::issue(self, namespace, name, seconds)
    }

    /// The messages of the latest requests (at most 1000) the authorizer refused with 403,
    /// oldest first: `pods is forbidden: User "..." cannot list resource "pods" ...`.
    pub fn forbidden_requests(&self) -> Vec<String> {
        self.shared.auth.denials()
    }

    /// Serves plain HTTP on `listener` until `shutdown` resolves.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        use axum::serve::ListenerExt;
        // Answers go out at once, as from a real API server (Go sets TCP_NODELAY on every
        // connection): Nagle's algorithm would hold a response's last segment back.
        let listener = listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(error = %e, "cannot set TCP_NODELAY");
            }
        });
        // Each connection gets a clone of the finished router (a reference count): serving the
        // `Router` itself would make each connection rebuild its route table
        // (`Router::with_state`), which costs a connection tens of microseconds.
        axum::serve(listener, self.router().into_make_service())
            .with_graceful_shutdown(shutdown)
            .await
    }

    /// The current revision (the newest resourceVersion).
    pub fn revision(&self) -> u64 {
        self.shared.store.revision()
    }

    /// The resource types served now.
    pub fn resources(&self) -> Vec<ResourceInfo> {
        self.shared.registry.all()
    }

    /// The resource types discovery and the OpenAPI documents list: all, but those of a CRD
    /// that is not established (its objects are still served once its names are accepted, as
    /// a real server serves them).
    pub(crate) fn discoverable_resources(&self) -> Vec<ResourceInfo> {
        let crds = crate::store::resource_key("apiextensions.k8s.io", "customresourcedefinitions");
        let mut established: std::collections::BTreeMap<String, bool> = Default::default();
        let mut resources = self.resources();
        resources.retain(|r| {
            if !r.custom {
                return true;
            }
            let name = crate::registry::crd_name_of(r);
            *established.entry(name).or_insert_with_key(|name| {
                self.shared
                    .store
                    .get_parsed(&crds, "", name)
                    .is_some_and(|crd| crate::registry::crd::condition_is_true(&crd, "Established"))
            })
        });
        resources
    }

    /// Reads an object straight from the store (with `apiVersion` and `kind`).
    pub fn get_object(
        &self,
        api_version: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let (info, key) = self.resource_of(api_version, plural)?;
        let mut value = self
            .shared
            .store
            .get_value(&key, namespace.unwrap_or_default(), name)?;
        crate::http::encoding::add_type_meta(&info, &mut value);
        Some(value)
    }

    /// The served resource that `api_version` and `plural` name, and the store key of its
    /// objects.
    fn resource_of(&self, api_version: &str, plural: &str) -> Option<(Arc<ResourceInfo>, String)> {
        let (group, version) = registry::split_api_version(api_version);
        let info = self.shared.registry.lookup(group, version, plural)?;
        Some((info, resource_key(group, plural)))
    }

    /// Whether an object is stored under this name (what [`FakeApiServer::get_object`] finds,
    /// without decoding it).
    pub fn has_object(
        &self,
        api_version: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> bool {
        self.resource_of(api_version, plural)
            .is_some_and(|(_, key)| {
                self.shared
                    .store
                    .contains(&key, namespace.unwrap_or_default(), name)
            })
    }

    /// Every stored object of a resource (optionally one namespace), with `apiVersion` and
    /// `kind`, in key order, and the revision the list reflects.
    pub fn list_objects(
        &self,
        api_version: &str,
        plural: &str,
        namespace: Option<&str>,
    ) -> (u64, Vec<Value>) {
        let Some((info, key)) = self.resource_of(api_version, plural) else {
            return (self.revision(), Vec::new());
        };
        // The store's parses (copies of the cached ones where it has them), served as
        // `typed_bytes` serves each object.
        let (revision, mut objects) = self.shared.store.snapshot_values(&key, namespace);
        for object in &mut objects {
            crate::http::encoding::type_in_place(&info, object);
        }
        (revision, objects)
    }

    /// The object an event carries, with `apiVersion` and `kind` (as a watcher would see it; a
    /// custom resource at the version it was stored at).
    pub fn event_object(&self, event: &StoreEvent) -> Option<Value> {
        let (group, plural) = event.resource.split_once('/')?;
        let info = self.shared.registry.lookup_resource(group, plural)?;
        if info.custom {
            return crate::store::json::from_slice(&event.object).ok();
        }
        crate::store::json::from_slice(&crate::http::encoding::typed_bytes(&info, &event.object))
            .ok()
    }

    /// A receiver for every write from now on, in revision order.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<StoreEvent>> {
        self.shared.store.subscribe()
    }

    /// The fault rules; add one to make matching requests fail.
    pub fn faults(&self) -> &Faults {
        &self.shared.faults
    }

    /// Adds a fault rule.
    pub fn add_fault(&self, rule: FaultRule) {
        self.shared.faults.add(rule);
    }

    /// Faults at a rate, a pause and request counts, for fault-tolerance tests.
    pub fn chaos(&self) -> &Chaos {
        &self.shared.chaos
    }

    /// Installs (or with `None` removes) the request gate.
    pub fn set_gate(&self, gate: Option<Arc<dyn RequestGate>>) {
        *self.shared.gate.write().unwrap_or_else(|e| e.into_inner()) = gate;
    }

    /// Ends every open watch that `matcher` matches, as a dropped connection would.
    pub fn drop_watches(&self, matcher: RequestMatcher) {
        let _ = self
            .shared
            .watch_drops
            .send(crate::http::watch::WatchDrop::Matching(matcher));
    }

    /// Appends lines (split at newlines) to the log of a pod's container, as a kubelet stand-in
    /// running it would; `pods/log` (`kubectl logs`) then shows them. The pod must exist and
    /// have the container; lines are kept until the pod is deleted.
    pub fn append_pod_log(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
        text: &str,
    ) -> Result<(), ApiError> {
        let object = self
            .shared
            .store
            .get_value("/pods", namespace, pod)
            .ok_or_else(|| ApiError::not_found("", "pods", pod))?;
        let known = ["initContainers", "containers", "ephemeralContainers"]
            .iter()
            .filter_map(|list| object["spec"][list].as_array())
            .flatten()
            .any(|c| c["name"] == container);
        if !known {
            return Err(ApiError::bad_request(format!(
                "container {container} is not valid for pod {pod}"
            )));
        }
        let uid = object["metadata"]["uid"].as_str().unwrap_or_default();
        self.shared
            .pod_logs
            .append(uid, container, text, self.shared.now());
        Ok(())
    }

    /// Forgets the event history: watches and continue tokens from before now get 410 Gone.
    pub fn compact(&self) {
        self.shared.store.compact();
    }

    /// Creates an object, or replaces it if it exists (as `kubectl apply` would, without the
    /// three-way merge). A CRD is served at once. Used to load manifests at start.
    pub fn apply_manifest(&self, object: Value) -> Result<Value, ApiError> {
        crate::http::handlers::apply_manifest(self, object)
    }

    /// The controllers' switches and queue.
    pub fn controllers(&self) -> &ControllerManager {
        &self.shared.controllers
    }

    /// Does the next piece of queued controller work (for [`crate::controllers::Drive::Manual`],
    /// where the caller owns the timing); returns what was done, `None` when nothing was queued.
    pub fn step_controllers(&self) -> Option<Work> {
        self.shared.controllers.step(self)
    }

    /// Does the next piece of one controller's queued work (see [`Self::step_controllers`]).
    pub fn step_controller(&self, controller: Controller) -> Option<Work> {
        self.shared.controllers.step_controller(self, controller)
    }

    /// Every object and the current revision, for saving the cluster's state.
    pub fn export_state(&self) -> Value {
        let (revision, objects) = self.shared.store.dump();
        let items: Vec<Value> = objects
            .into_iter()
            .filter_map(|(resource, bytes)| {
                let object: Value = crate::store::json::from_slice(&bytes).ok()?;
                Some(json!({"resource": resource, "object": object}))
            })
            .collect();
        json!({"revision": revision.to_string(), "objects": items})
    }

    /// Replaces every object with saved state (from [`FakeApiServer::export_state`]), after
    /// checking all of it ([`crate::registry::state::check`]): a state that fails a check changes nothing.
    pub fn import_state(&self, state: Value) -> Result<(), crate::registry::state::StateError> {
        let checked = crate::registry::state::check(&state, &self.shared.registry)?;
        let objects = checked
            .objects
            .into_iter()
            .map(|o| (o.resource, o.namespace, o.name, o.bytes))
            .collect();
        self.shared.store.load(checked.revision, objects);
        self.shared.auth.invalidate();
        // Serve the resources of every stored CRD.
        for (name, infos) in checked.custom_resources {
            self.shared.registry.set_custom(&name, infos);
        }
        // The controllers look at the loaded state as at a restart: every object once.
        self.shared.controllers.resync(self);
        Ok(())
    }

    /// Runs the gate and the fault rules for a request; an error is the answer to send instead.
    pub(crate) async fn admit(&self, info: &RequestInfo) -> Result<(), ApiError> {
        let gate = self
            .shared
            .gate
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(gate) = gate {
            gate.admit(info).await;
        }
        match self.shared.faults.take(info) {
            Some(err) => Err(err),
            None => self.shared.chaos.admit(info).await,
        }
    }
}

/// A JSON response.
pub(crate) fn json_response(code: StatusCode, body: impl Into<Body>) -> Response {
    let mut response = Response::new(body.into());
    *response.status_mut() = code;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// Largest answer read back to be rewritten (a list of every object of a big resource).
const MAX_REWRITTEN_BYTES: usize = 1 << 30;

/// A successful JSON answer rewritten after the request ran (converted by a CRD's conversion
/// webhook, shaped as `PartialObjectMetadata`): `rewrite` gets the body and gives the new one,
/// `None` to keep it, or the error to answer instead. Other answers pass unchanged.
pub(crate) async fn rewrite_json_answer(
    response: Response,
    rewrite: impl AsyncFnOnce(&bytes::Bytes) -> Result<Option<Vec<u8>>, ApiError>,
) -> Response {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json || !response.status().is_success() {
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_REWRITTEN_BYTES).await {
        Ok(b) => b,
        Err(e) => return ApiError::internal(e.to_string()).into_response(),
    };
    match rewrite(&bytes).await {
        Ok(Some(out)) => {
            let mut response = Response::from_parts(parts, Body::from(out));
            response.headers_mut().remove(header::CONTENT_LENGTH);
            response
        }
        Ok(None) => Response::from_parts(parts, Body::from(bytes)),
        Err(e) => e.into_response(),
    }
}

/// A JSON response from a value.
pub(crate) fn value_response(code: StatusCode, value: &Value) -> Response {
    json_response(code, serde_json::to_vec(value).unwrap_or_default())
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = json_response(code, self.to_status_json());
        if let Some(secs) = self.retry_after_seconds {
            if let Ok(v) = header::HeaderValue::from_str(&secs.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        response
    }
}

/// `405 MethodNotAllowed` as a `metav1.Status`.
async fn wrong_method() -> Response {
    ApiError::method_not_allowed().into_response()
}

async fn version(State(server): State<FakeApiServer>, request: Request) -> Response {
    if let Err(e) = server.admit(&nonresource(&request)).await {
        return e.into_response();
    }
    json_response(StatusCode::OK, discovery::version_document())
}

fn nonresource(request: &Request) -> RequestInfo {
    RequestInfo {
        method: request.method().to_string(),
        verb: "nonresource".into(),
        path: crate::http::request::decode_path(request.uri().path())
            .map(String::from)
            .unwrap_or_default(),
        user_agent: user_agent(request.headers()),
        ..Default::default()
    }
}

/// The `User-Agent` header, or empty.
pub(crate) fn user_agent(headers: &HeaderMap) -> String {
    headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

fn accept(headers: &HeaderMap) -> &str {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

fn aggregated_response(value: &Value) -> Response {
    let mut response = value_response(StatusCode::OK, value);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(discovery::AGGREGATED_CONTENT_TYPE),
    );
    response
}

/// Answers a discovery root with the aggregated document when the client asks for one, else the
/// legacy document.
async fn discovery_root(
    server: &FakeApiServer,
    headers: &HeaderMap,
    request: RequestInfo,
    aggregated: fn(&[ResourceInfo]) -> Value,
    legacy: impl FnOnce(&[ResourceInfo]) -> Value,
) -> Response {
    if let Err(e) = server.admit(&request).await {
        return e.into_response();
    }
    let resources = server.discoverable_resources();
    if discovery::wants_aggregated(accept(headers)) {
        return aggregated_response(&aggregated(&resources));
    }
    // The legacy documents are written negotiated (`WriteObjectNegotiated`).
    match crate::http::negotiation::output(headers) {
        Ok(output) => {
            let response = value_response(StatusCode::OK, &legacy(&resources));
            crate::http::negotiation::answer(output, response).await
        }
        Err(e) => e.into_response(),
    }
}

async fn core_versions(
    State(server): State<FakeApiServer>,
    headers: HeaderMap,
    request: Request,
) -> Response {
    discovery_root(
        &server,
        &headers,
        nonresource(&request),
        discovery::aggregated_core,
        |resources| discovery::api_versions(resources, "127.0.0.1:6443"),
    )
    .await
}

async fn group_list(
    State(server): State<FakeApiServer>,
    headers: HeaderMap,
    request: Request,
) -> Response {
    discovery_root(
        &server,
        &headers,
        nonresource(&request),
        discovery::aggregated_groups,
        discovery::api_group_list,
    )
    .await
}

/// `/healthz`, `/livez`, `/readyz` (and their sub-paths): `ok`, or with `?verbose` the list of
/// checks and the closing line a real server prints; to any method, as the real handlers
/// (`healthz.handleRootHealth`) never look at it.
pub(crate) async fn health(uri: axum::http::Uri) -> Response {
    let endpoint = uri
        .path()
        .trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or("healthz")
        .to_string();
    let verbose = uri.query().is_some_and(|q| {
        q.split('&')
            .any(|p| p == "verbose" || p.starts_with("verbose="))
    });
    let body = if verbose {
        format!("[+]ping ok\n[+]log ok\n[+]etcd ok\n{endpoint} check passed\n")
    } else {
        "ok".to_string()
    };
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

/// Discovery for `/api/v1`, `/apis/{group}` and `/apis/{group}/{version}`; `None` if the path is
/// not one of those.
pub(crate) fn discovery_for_path(
    server: &FakeApiServer,
    path: &str,
) -> Option<Result<Value, ApiError>> {
    let path = path.trim_matches('/');
    // Every resource request passes through here: one with more than three segments is none
    // of the three discovery shapes, told without splitting it.
    if path.bytes().filter(|&b| b == b'/').count() > 2 {
        return None;
    }
    let segments: Vec<&str> = path.split('/').collect();
    // Only the three discovery shapes need the resource list, so it is not built for others.
    if !matches!(
        segments.as_slice(),
        ["api", _] | ["apis", _] | ["apis", _, _]
    ) {
        return None;
    }
    let resources = server.discoverable_resources();
    let found = match segments.as_slice() {
        ["api", version] => discovery::api_resource_list(&resources, "", version),
        ["apis", group] => discovery::api_group(&resources, group),
        ["apis", group, version] => discovery::api_resource_list(&resources, group, version),
        _ => return None,
    };
    Some(found.ok_or_else(ApiError::no_such_resource))
}

/// A receiver of what ends open watches (see [`crate::http::watch::WatchDrop`]).
pub(crate) fn drop_receiver(
    server: &FakeApiServer,
) -> broadcast::Receiver<crate::http::watch::WatchDrop> {
    server.shared.watch_drops.subscribe()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `list_objects` reads a built-in kind from the parse cache where it can; whether an object
    /// was cached (written through the API) or not (the start-up objects, replayed), the list is
    /// what parsing each object's served bytes gives.
    #[rstest::rstest]
    #[case::written_configmaps("v1", "configmaps", Some("default"))]
    #[case::replayed_namespaces("v1", "namespaces", None)]
    #[case::replayed_cluster_roles("rbac.authorization.k8s.io/v1", "clusterroles", None)]
    #[case::written_pods("v1", "pods", Some("default"))]
    #[case::custom_at_storage_version("example.com/v1", "widgets", Some("default"))]
    #[case::custom_converted("example.com/v2", "widgets", Some("default"))]
    fn list_objects_is_the_parse_of_the_served_bytes(
        #[case] api_version: &str,
        #[case] plural: &str,
        #[case] namespace: Option<&str>,
    ) {
        let server = FakeApiServer::builder().seed(3).build();
        let schema = json!({"openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {
                "size": {"type": "integer"},
                "colour": {"type": "string", "default": "blue"}
            }}}
        }});
        server
            .apply_manifest(json!({
                "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "widgets.example.com"},
                "spec": {
                    "group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                    "versions": [
                        {"name": "v1", "served": true, "storage": true, "schema": schema.clone()},
                        {"name": "v2", "served": true, "storage": false, "schema": schema}
                    ]
                }
            }))
            .expect("a CRD");
        for i in 0..3 {
            server
                .apply_manifest(json!({
                    "apiVersion": "example.com/v1", "kind": "Widget",
                    "metadata": {"name": format!("w{i}"), "namespace": "default"},
                    "spec": {"size": i}
                }))
                .expect("a Widget");
            server
                .apply_manifest(json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("c{i}"), "namespace": "default"},
                    "data": {"i": i.to_string()}
                }))
                .expect("a ConfigMap");
            server
                .apply_manifest(json!({
                    "apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": format!("p{i}"), "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]}
                }))
                .expect("a Pod");
        }
        let (group, version) = registry::split_api_version(api_version);
        let info = server
            .shared
            .registry
            .lookup(group, version, plural)
            .expect("a served resource");
        let snapshot = server
            .shared
            .store
            .snapshot(&resource_key(group, plural), namespace);
        let expected: Vec<Value> = snapshot
            .items
            .iter()
            .map(|(_, bytes)| {
                crate::store::json::from_slice(&crate::http::encoding::typed_bytes(&info, bytes))
                    .expect("stored JSON")
            })
            .collect();
        assert!(!expected.is_empty());
        let (revision, objects) = server.list_objects(api_version, plural, namespace);
        assert!(objects.iter().all(|o| o["apiVersion"] == api_version));
        assert_eq!((revision, objects), (snapshot.revision, expected));
    }

    /// The store of a server built with a fixed seed and clock; `decode_all` sends the start-up
    /// writes through the full typed decode, as a client's body would be.
    fn bootstrap_store(decode_all: bool) -> (u64, Vec<(String, String)>) {
        crate::http::handlers::DECODE_ALL.with(|all| all.set(decode_all));
        let at: jiff::Timestamp = "2026-01-02T03:04:05Z".parse().expect("a valid timestamp");
        let server = FakeApiServer::builder()
            .seed(7)
            .clock(move || at)
            .build_in_full();
        crate::http::handlers::DECODE_ALL.with(|all| all.set(false));
        let (revision, objects) = server.shared.store.dump();
        let objects = objects
            .into_iter()
            .map(|(resource, bytes)| (resource, String::from_utf8_lossy(&bytes).into_owned()))
            .collect();
        (revision, objects)
    }

    /// The start-up writes skip the typed decode (`Trust::Own`); the full create path stores
    /// exactly the same bytes for every object (uids, resourceVersions, managedFields,
    /// timestamps), so skipping it changes nothing a client can see.
    #[test]
    fn trusted_bootstrap_stores_what_the_full_path_stores() {
        let (full_revision, full) = bootstrap_store(true);
        let (revision, trusted) = bootstrap_store(false);
        assert_eq!(revision, full_revision);
        // Namespaces, the RBAC policy, a ServiceAccount and a root CA ConfigMap per namespace.
        assert!(trusted.len() >= 20, "only {} objects", trusted.len());
        assert_eq!(trusted.len(), full.len());
        for (kept, expected) in trusted.iter().zip(&full) {
            assert_eq!(kept, expected);
        }
        let kinds: std::collections::BTreeSet<&str> = trusted
            .iter()
            .map(|(resource, _)| resource.as_str())
            .collect();
        for resource in [
            "/namespaces",
            "/serviceaccounts",
            "/configmaps",
            "rbac.authorization.k8s.io/clusterroles",
            "rbac.authorization.k8s.io/clusterrolebindings",
        ] {
            assert!(kinds.contains(resource), "no {resource} in {kinds:?}");
        }
    }
}
