//! HTTP handlers for resource requests: each verb is a thin layer over the lifecycle rules in
//! [`crate::registry::semantics`] and the store.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{json, Value};

use crate::context::FakeApiServer;
use crate::error::ApiError;
use crate::hooks::RequestInfo;
use crate::http::encoding::{add_type_meta, strip_type_meta, typed_bytes};
use crate::http::list::{self, ListRequest};
use crate::http::options::check_write_options;
use crate::http::request::{Query, ResourcePath};
use crate::http::server::{self, json_response, value_response, MAX_BODY_BYTES};
use crate::http::typed::FieldValidation;
use crate::http::watch;
use crate::patch::PatchType;
use crate::registry::conversion;
use crate::registry::crd;
use crate::registry::kind_rules;
use crate::registry::semantics::{
    self, check_namespace, check_type_meta, decide_delete, prepare_create, prepare_update,
    DeleteOptions, UpdateTarget, VersionMemo, WriteContext,
};
use crate::registry::{self, split_api_version};
use crate::resource::ResourceInfo;
use crate::rules::defaults;
use crate::store::{resource_key, Mutation};

/// Longest prefix kept from `generateName` (a generated name is at most 63 characters).
const MAX_GENERATE_NAME_PREFIX: usize = 58;

/// The router's fallback: resource requests, discovery below the roots, OpenAPI and health checks.
pub(crate) async fn dispatch(State(server): State<FakeApiServer>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Some(path) = crate::http::request::decode_path(parts.uri.path()).map(String::from) else {
        return crate::http::request::malformed_request();
    };
    if ["/healthz/", "/livez/", "/readyz/"]
        .iter()
        .any(|p| path.starts_with(p))
    {
        return server::health(parts.uri.clone()).await;
    }
    if path == "/openapi/v2" || path.starts_with("/openapi/v3") {
        return crate::http::openapi_routes::serve(&server, &path, &parts.headers);
    }
    if let Some(found) = server::discovery_for_path(&server, &path) {
        // The built-in API's discovery documents are routes that only GET; a CRD group's are
        // served by the CRD handler whatever the method.
        if parts.method != Method::GET && in_builtin_routes(&path) {
            return ApiError::method_not_allowed().into_response();
        }
        return match found {
            // Discovery documents are written negotiated too.
            Ok(v) => match crate::http::negotiation::output(&parts.headers) {
                Ok(output) => {
                    crate::http::negotiation::answer(output, value_response(StatusCode::OK, &v))
                        .await
                }
                Err(e) => e.into_response(),
            },
            Err(_) => not_found(&path),
        };
    }
    let Some(rp) = ResourcePath::parse(&path) else {
        return not_found(&path);
    };
    let Some(info) = server
        .shared
        .registry
        .lookup(&rp.group, &rp.version, &rp.plural)
    else {
        return not_found(&path);
    };
    if let Some(miss) = scope_miss(&rp, &info, &parts.method) {
        return miss;
    }
    let response = serve_resource(server, parts, body, path, rp, &info).await;
    with_deprecation_warning(response, &info)
}

/// The answer to a path nothing serves. Inside the built-in API's routes (`/api/...`,
/// `/apis/{built-in group}/...`) the real server's router answers a `Status` 404; everywhere
/// else (unknown groups, custom resources of no CRD, paths outside the API) the request falls
/// through the CRD handler to the end of the handler chain, Go's `http.NotFound`.
fn not_found(path: &str) -> Response {
    if in_builtin_routes(path) {
        ApiError::no_route().into_response()
    } else {
        page_not_found()
    }
}

/// Whether `path` is inside the built-in API's routes (`/api/...`, `/apis/{built-in group}/...`),
/// which the real server's router answers, misses included.
fn in_builtin_routes(path: &str) -> bool {
    let mut segments = path.trim_start_matches('/').split('/');
    match (segments.next(), segments.next()) {
        (Some("api"), _) => true,
        (Some("apis"), Some(group)) => crate::http::discovery::is_builtin_group(group),
        _ => false,
    }
}

/// Go's `http.NotFound`: a plain-text `404 page not found`.
pub(crate) fn page_not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        "404 page not found\n",
    )
        .into_response()
}

/// The answer when a path names a resource in a scope it does not have, as a real server gives
/// it; `None` when the scope is right.
///
/// Built-in resources are routes: a namespaced path of a cluster-scoped resource, or an object
/// path of a namespaced one without its namespace, matches none (404 `Status`); the namespaced
/// resource's cluster-wide collection path only lists and watches (any other method is a 405).
/// A custom resource's request in the wrong scope is passed on by the CRD handler (its
/// `namespacedCRD, namespacedReq` check) and ends in the plain-text 404; a namespaced one may
/// be listed and watched across namespaces.
fn scope_miss(rp: &ResourcePath, info: &ResourceInfo, method: &Method) -> Option<Response> {
    let namespaced_request = rp.namespace.is_some();
    if namespaced_request == info.namespaced {
        return None;
    }
    let across_namespaces = info.namespaced && rp.name.is_none();
    if info.custom {
        return (!(across_namespaces && *method == Method::GET)).then(page_not_found);
    }
    if !across_namespaces {
        return Some(ApiError::no_route().into_response());
    }
    (*method != Method::GET).then(|| ApiError::method_not_allowed().into_response())
}

/// Every answer of a deprecated resource (a built-in such as `v1 Endpoints`, or a CRD version
/// marked `deprecated`) carries its deprecation warning, before any other warning: the real
/// server adds it before the resource's handler runs, so errors carry it too.
fn with_deprecation_warning(mut response: Response, info: &ResourceInfo) -> Response {
    let Some(warning) = &info.deprecation_warning else {
        return response;
    };
    let headers = response.headers_mut();
    let others: Vec<http::HeaderValue> = headers.get_all(header::WARNING).iter().cloned().collect();
    headers.remove(header::WARNING);
    let mut response = crate::admission::with_warnings(response, std::slice::from_ref(warning));
    for value in others {
        response.headers_mut().append(header::WARNING, value);
    }
    response
}

/// Serves a request to a resource this server has (`info`), in the scope it is in.
async fn serve_resource(
    server: FakeApiServer,
    parts: http::request::Parts,
    body: axum::body::Body,
    path: String,
    rp: ResourcePath,
    info: &Arc<ResourceInfo>,
) -> Response {
    let subresource = match &rp.subresource {
        Some(name) => match crate::registry::subresource::find(info, name) {
            Some(found) => Some(found),
            // The CRD handler answers a subresource its CRD does not have as a missing object.
            None if info.custom => {
                let name = rp.name.as_deref().unwrap_or_default();
                return ApiError::not_found(&info.group, &info.plural, name).into_response();
            }
            None => return ApiError::no_route().into_response(),
        },
        None => None,
    };
    if rp.subresource.as_deref() == Some("finalize") && parts.method != Method::PUT {
        // The finalize subresource only serves updates.
        return ApiError::method_not_allowed().into_response();
    }
    let query = Query::parse(parts.uri.query());
    let verb = match verb_of(&parts.method, &rp, &query) {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    if subresource
        .as_ref()
        .is_some_and(|s| !s.verbs.contains(&verb))
    {
        return ApiError::method_not_allowed().into_response();
    }
    // Every handler negotiates its answer before it acts; a watch streams JSON, and the connect
    // subresources answer what they answer.
    let streams = verb == "watch"
        || rp
            .subresource
            .as_deref()
            .is_some_and(|s| matches!(s, "log" | "exec" | "attach" | "portforward" | "proxy"));
    // Negotiated once; a watch before it starts (the connect subresources are not).
    let negotiated = match verb {
        "watch" => crate::http::negotiation::for_watch(&parts.headers, info.custom),
        _ if streams => Ok(Default::default()),
        _ => crate::http::negotiation::for_resource(&parts.headers, info.custom),
    };
    let negotiated = match negotiated {
        Ok(negotiated) => negotiated,
        Err(e) => return e.into_response(),
    };
    let output = negotiated.output;
    let table = crate::http::table::wants_table(&negotiated);
    let request_info = RequestInfo {
        method: parts.method.to_string(),
        verb: verb.to_string(),
        group: rp.group.clone(),
        resource: rp.plural.clone(),
        subresource: rp.subresource.clone(),
        namespace: rp.namespace.clone(),
        name: rp.name.clone(),
        path: path.clone(),
        user_agent: server::user_agent(&parts.headers),
    };
    if let Err(e) = server.admit(&request_info).await {
        return e.into_response();
    }
    let body = match read_body(body).await {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    if verb == "watch" && info.computed {
        return crate::http::component_status::not_watchable().into_response();
    }
    if verb == "watch" && !info.review {
        return watch::serve(
            &server,
            info.clone(),
            &rp,
            &query,
            &parts.headers,
            &negotiated,
        );
    }
    if let Some(revision) = read_ahead_of_store(&server, info, verb, &rp, &query) {
        // Boxed: few requests wait (see `future_sizes`).
        Box::pin(
            server
                .shared
                .store
                .wait_for_revision(revision, READ_BLOCK_TIMEOUT),
        )
        .await;
    }
    let user = crate::auth::request_user(&parts.extensions);
    let admission =
        crate::admission::Request::of_write(info, verb, &rp, &query, &parts.headers, &user, &body);
    // Only writes record a manager in managedFields.
    let manager = match verb {
        "get" | "list" => String::new(),
        _ => field_manager(&query, &request_info.user_agent),
    };
    // Served once, or again after each round of admission webhook calls (see `admission`).
    let serve = || {
        let call = Call {
            server: &server,
            info,
            path: &rp,
            query: &query,
            headers: &parts.headers,
            manager: manager.clone(),
            warnings: Default::default(),
            user: user.clone(),
            table,
        };
        let body = body.clone();
        match verb {
            "create" if info.review => call.review(body),
            "create" if rp.subresource.as_deref() == Some("token") => call.token_request(body),
            _ if info.review => Err(ApiError::method_not_allowed()),
            "get" if info.computed => call.component_status(),
            "list" if info.computed => call.component_statuses(),
            _ if info.computed => Err(ApiError::method_not_allowed()),
            _ if !served_as_object(rp.subresource.as_deref()) => call.subresource(verb, body),
            "get" => call.get(),
            "list" => call.list(),
            "create" => call.create(body),
            "update" => call.update(body),
            "patch" => call.patch(body),
            "delete" => call.delete(body),
            "deletecollection" => call.delete_collection(body),
            _ => Err(ApiError::method_not_allowed()),
        }
    };
    // What only some requests await (a conversion webhook's scope and answers, a metadata-only
    // answer) is boxed: this future is moved whole at least once per request, so it should
    // not carry room for the large states few requests use (see `future_sizes` below).
    let admitted = crate::admission::admit(&server, admission, serve);
    // Conversions through a webhook are answered between runs of the request.
    let (result, warnings) = match conversion::webhook_of(info) {
        Some(_) => Box::pin(crate::conversion_webhook::scope(admitted)).await,
        None => admitted.await,
    };
    let response = match result {
        Ok(response) => {
            let response = match conversion::webhook_of(info) {
                // What the answer carries is converted once the request has run.
                Some(webhook) => {
                    Box::pin(crate::http::converted::answer(
                        &server, info, webhook, response,
                    ))
                    .await
                }
                None => response,
            };
            match crate::http::metadata_only::requested(&negotiated) {
                Some(requested) => {
                    Box::pin(crate::http::metadata_only::answer(
                        info, &requested, response,
                    ))
                    .await
                }
                None => response,
            }
        }
        Err(e) => {
            tracing::debug!(path, code = e.code, reason = %e.reason, message = %e.message, "request failed");
            e.into_response()
        }
    };
    let response = crate::admission::with_warnings(response, &warnings);
    crate::http::negotiation::answer(output, response).await
}

/// How much of an oversized body is read (and dropped) before answering 413, so that a client
/// still sending gets the answer rather than a broken connection.
const MAX_DRAINED_BYTES: usize = 64 * 1024 * 1024;

/// How long a read at a revision the store has not reached waits for it before the `504`
/// (the watch cache's `blockTimeout`).
const READ_BLOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// Whether a request to `subresource` reads and writes the object itself (its status, its
/// finalizers, ...), not a subresource with handlers of its own.
fn served_as_object(subresource: Option<&str>) -> bool {
    subresource.is_none_or(|s| {
        matches!(
            s,
            "status" | "finalize" | "ephemeralcontainers" | "resize" | "approval"
        )
    })
}

/// The revision a valid GET or LIST asks for when the store has not reached it yet. The real
/// server serves both from its watch cache (an `Exact` list too, from the cache's snapshots:
/// `ListFromCacheSnapshot`, on since 1.34), which blocks such a read until it has caught up,
/// for at most [`READ_BLOCK_TIMEOUT`], before answering `504 Too large resource version`
/// (`waitUntilFreshAndBlock`): a write landing meanwhile (another client's, or through
/// another server of the cluster) lets the read through.
fn read_ahead_of_store(
    server: &FakeApiServer,
    info: &ResourceInfo,
    verb: &str,
    rp: &ResourcePath,
    query: &Query,
) -> Option<u64> {
    if info.computed || info.review || !served_as_object(rp.subresource.as_deref()) {
        return None;
    }
    let rv = query.get("resourceVersion").filter(|rv| !rv.is_empty())?;
    let revision = crate::rules::strconv::parse_resource_version(rv).ok()?;
    if revision <= server.shared.store.revision() {
        return None;
    }
    let valid = match verb {
        "get" => true,
        "list" => ListRequest::parse(info, query).is_ok_and(|request| {
            matches!(
                request.read_at,
                list::ReadAt::NotOlderThan(_) | list::ReadAt::Exact(_)
            )
        }),
        _ => false,
    };
    valid.then_some(revision)
}

/// Reads a request body of at most [`MAX_BODY_BYTES`]; a larger one is a 413. A body that
/// comes in one piece (an in-process client's always does, a small one over a socket mostly)
/// is that piece itself, not a copy; one in several pieces is copied into one buffer.
async fn read_body(body: axum::body::Body) -> Result<Bytes, ApiError> {
    use http_body_util::BodyExt;
    let mut body = body;
    let mut first: Option<Bytes> = None;
    let mut collected: Option<bytes::BytesMut> = None;
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| ApiError::bad_request(format!("reading the body: {e}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen += data.len();
        if seen > MAX_DRAINED_BYTES {
            break;
        }
        if seen > MAX_BODY_BYTES || data.is_empty() {
            continue;
        }
        match (&mut collected, first.take()) {
            (Some(collected), _) => collected.extend_from_slice(&data),
            (None, None) => first = Some(data),
            (None, Some(before)) => {
                let mut joined = bytes::BytesMut::with_capacity(before.len() + data.len());
                joined.extend_from_slice(&before);
                joined.extend_from_slice(&data);
                collected = Some(joined);
            }
        }
    }
    if seen > MAX_BODY_BYTES {
        return Err(ApiError::too_large(MAX_BODY_BYTES));
    }
    Ok(match (collected, first) {
        (Some(collected), _) => collected.freeze(),
        (None, first) => first.unwrap_or_default(),
    })
}

fn verb_of(method: &Method, rp: &ResourcePath, query: &Query) -> Result<&'static str, ApiError> {
    let item = rp.name.is_some();
    let verb = match (method.as_str(), item) {
        ("GET", true) => "get",
        ("GET", false) if query.flag("watch") => "watch",
        ("GET", false) => "list",
        ("POST", false) if rp.subresource.is_none() => "create",
        ("POST", true) if rp.subresource.is_some() => "create",
        ("PUT", true) => "update",
        ("PATCH", true) => "patch",
        ("DELETE", true) if rp.subresource.as_deref() != Some("status") => "delete",
        ("DELETE", false) => "deletecollection",
        _ => return Err(ApiError::method_not_allowed()),
    };
    Ok(verb)
}

/// The manager recorded in managedFields: `fieldManager`, else derived from the user agent as the
/// real server does ([`crate::apply::manager_from_user_agent`]).
fn field_manager(query: &Query, user_agent: &str) -> String {
    match query.get("fieldManager").filter(|m| !m.is_empty()) {
        Some(m) => m.to_string(),
        None => crate::apply::manager_from_user_agent(user_agent),
    }
}

/// One resource request being served.
struct Call<'a> {
    server: &'a FakeApiServer,
    info: &'a Arc<ResourceInfo>,
    path: &'a ResourcePath,
    query: &'a Query,
    headers: &'a HeaderMap,
    manager: String,
    /// Warnings for the client, sent as `Warning` headers.
    warnings: std::cell::RefCell<Vec<String>>,
    /// Who the request is from.
    user: Arc<crate::auth::UserInfo>,
    /// The `meta.k8s.io` version of the Table the answer is to be, if it is one.
    table: Option<&'static str>,
}

impl Call<'_> {
    fn key(&self) -> String {
        resource_key(&self.info.group, &self.info.plural)
    }

    fn namespace(&self) -> &str {
        self.path.namespace.as_deref().unwrap_or_default()
    }

    fn name(&self) -> &str {
        self.path.name.as_deref().unwrap_or_default()
    }

    /// The version of the Table the client asked for, if it asked for one.
    fn wants_table(&self) -> Option<&'static str> {
        self.table
    }

    /// The checks the real registry's key functions (`NamespaceKeyFunc`, `NoNamespaceKeyFunc`)
    /// make of the URL's name before any read or write of storage: a name that cannot be a
    /// path segment (`.`, `..`, or holding `/` or `%` once the path is decoded) is a `400`.
    fn check_key_name(&self) -> Result<(), ApiError> {
        let name = self.name();
        // Every keyed request passes here; a name is rarely anything but a plain segment.
        let plain =
            name != "." && name != ".." && memchr::memchr2(b'/', b'%', name.as_bytes()).is_none();
        if plain {
            return Ok(());
        }
        let problems = crate::rules::validation::validate_path_segment_name(name);
        if problems.is_empty() {
            return Ok(());
        }
        Err(ApiError::bad_request(format!(
            "Name parameter invalid: {}: {}",
            crate::rules::validation::go_quote(name),
            problems.join(";")
        )))
    }

    fn target(&self) -> UpdateTarget {
        match self.path.subresource.as_deref() {
            Some("status") => UpdateTarget::Status,
            Some("finalize") => UpdateTarget::Finalize,
            Some("ephemeralcontainers") => UpdateTarget::EphemeralContainers,
            Some("resize") => UpdateTarget::Resize,
            Some("approval") => UpdateTarget::Approval,
            _ => UpdateTarget::Main,
        }
    }

    fn object_response(&self, code: StatusCode, mut object: Value) -> Result<Response, ApiError> {
        add_type_meta(self.info, &mut object);
        if let Some(version) = self.wants_table() {
            let table = crate::http::table::to_table(
                self.info,
                std::slice::from_ref(&object),
                &crate::registry::semantics::format_time(self.server.shared.now()),
                true,
                crate::http::table::IncludeObject::parse(self.query.get("includeObject"))?,
                version,
            );
            return Ok(self.with_warnings(value_response(code, &table)));
        }
        Ok(self.with_warnings(value_response(code, &object)))
    }

    /// Adds the collected warnings as `Warning: 299 - "..."` headers.
    fn with_warnings(&self, mut response: Response) -> Response {
        for warning in self.warnings.borrow().iter() {
            if let Some(value) = crate::admission::warning_header(warning) {
                response.headers_mut().append(header::WARNING, value);
            }
        }
        response
    }

    /// The object's name must be the URL's.
    fn check_name(&self, object: &Value) -> Result<(), ApiError> {
        let name = semantics::name_of(object);
        if name == self.name() {
            return Ok(());
        }
        Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            self.name()
        )))
    }

    /// Writes the object at the URL, which must exist: `decide` gets what is stored and returns
    /// the write. Answers with the result (or, for a dry run, what the result would be).
    fn write_existing(
        &self,
        ctx: &WriteContext<'_>,
        dry_run: bool,
        decide: impl FnOnce(&Value) -> Result<Mutation, ApiError>,
    ) -> Result<Response, ApiError> {
        // Read before the store is locked: the RBAC objects a role or binding write is checked
        // against.
        let guard = crate::auth::escalation::WriteGuard::prepare(
            &self.server.shared,
            &self.user,
            self.info,
        );
        let attrs = self.policy_attributes(crate::admission::policy::Operation::Update, dry_run);
        let policies = crate::admission::policy::prepare(&self.server.shared, &attrs);
        let priority = match self.path.subresource {
            None => crate::admission::priority::prepare_update(&self.server.shared, self.info),
            Some(_) => None,
        };
        let limit_ranges = crate::admission::limit_ranger::prepare_update(
            &self.server.shared,
            self.info,
            self.path.subresource.as_deref(),
            self.namespace(),
        );
        let resize = crate::admission::claim_resize::prepare_update(
            &self.server.shared,
            self.info,
            self.path.subresource.as_deref(),
        );
        let pod_security = crate::admission::pod_security::prepare_update(
            &self.server.shared,
            self.info,
            self.path.subresource.as_deref(),
            self.namespace(),
            self.name(),
            &self.user.name,
        );
        let decide = |current: &Value| {
            let mutation = decide(current)?;
            if let Mutation::Put(next) = &mutation {
                guard.check(self.info, self.name(), next, Some(current))?;
                crate::admission::certificates::admit_update(
                    &self.server.shared,
                    &self.user,
                    self.info,
                    self.path.subresource.as_deref(),
                    current,
                    next,
                )?;
                if let Some(priority) = &priority {
                    priority.check(next)?;
                }
                // The validating plugins' order: `LimitRanger`, `PodSecurity`, then
                // `PersistentVolumeClaimResize`.
                if let Some(limit_ranges) = &limit_ranges {
                    limit_ranges.check(self.info, current, next)?;
                }
                if let Some(pod_security) = &pod_security {
                    pod_security.check(self.info, current, next, &self.warnings)?;
                }
                if let Some(resize) = &resize {
                    resize.check(self.info, current, next)?;
                }
                if let Some(policies) = &policies {
                    policies.check(&attrs, Some(next), Some(current), &self.warnings)?;
                }
            }
            Ok(mutation)
        };
        let outcome = commit(
            self.server,
            ctx,
            dry_run,
            &self.key(),
            self.namespace(),
            self.name(),
            |current| {
                let current = current.ok_or_else(|| {
                    ApiError::not_found(&self.info.group, &self.info.plural, self.name())
                })?;
                decide(current)
            },
        )?;
        if !dry_run {
            after_write(self.server, self.info, &outcome.object, outcome.event);
        }
        self.warnings.borrow_mut().extend(ctx.warnings.take());
        self.outcome_response(StatusCode::OK, outcome)
    }

    /// Creates `object` with `options` and answers `201` with what was stored.
    fn create_with(
        &self,
        object: Value,
        options: &CreateOptions<'_>,
    ) -> Result<Response, ApiError> {
        let (outcome, warnings) = create_object(
            self.server,
            self.info,
            self.path.namespace.as_deref(),
            object,
            options,
        )?;
        self.warnings.borrow_mut().extend(warnings);
        self.outcome_response(StatusCode::CREATED, outcome)
    }

    /// Answers a write with its result: the stored bytes when the store holds them (no second
    /// encoding), else the object.
    fn outcome_response(
        &self,
        code: StatusCode,
        outcome: crate::store::Outcome,
    ) -> Result<Response, ApiError> {
        match &outcome.stored {
            Some(stored) if self.wants_table().is_none() => {
                Ok(self.with_warnings(json_response(code, typed_bytes(self.info, stored))))
            }
            _ => self.object_response(code, outcome.into_object()),
        }
    }

    fn get(&self) -> Result<Response, ApiError> {
        self.check_key_name()?;
        self.check_get_resource_version()?;
        let bytes = self
            .server
            .shared
            .store
            .get(&self.key(), self.namespace(), self.name())
            .ok_or_else(|| ApiError::not_found(&self.info.group, &self.info.plural, self.name()))?;
        if self.wants_table().is_some() {
            let object: Value = crate::store::json::from_slice(&bytes)
                .map_err(|e| ApiError::internal(e.to_string()))?;
            // The printer columns read the object at the request's version.
            let object = conversion::to_served_all(self.info, vec![object])?
                .pop()
                .unwrap_or_default();
            return self.object_response(StatusCode::OK, object);
        }
        Ok(json_response(
            StatusCode::OK,
            typed_bytes(self.info, &bytes),
        ))
    }

    /// A GET with a `resourceVersion` is served by the real server's watch cache, which reads
    /// it with storage's `ParseResourceVersion` (a malformed one is an unclassified 500: the
    /// registry passes storage's `InvalidError` on) and waits for a revision it has not reached
    /// yet, answering `504` when it does not come ([`read_ahead_of_store`] waited already);
    /// anything else reads the newest object, which is at least that new.
    fn check_get_resource_version(&self) -> Result<(), ApiError> {
        let Some(rv) = self
            .query
            .get("resourceVersion")
            .filter(|rv| !rv.is_empty())
        else {
            return Ok(());
        };
        let wanted =
            crate::rules::strconv::parse_resource_version(rv).map_err(ApiError::plain_500)?;
        let current = self.server.shared.store.revision();
        if wanted > current {
            return Err(crate::store::too_large_rv(wanted, current));
        }
        Ok(())
    }

    fn list(&self) -> Result<Response, ApiError> {
        let request = ListRequest::parse(self.info, self.query)?;
        list::serve(
            self.server,
            self.info,
            self.path.namespace.as_deref(),
            &request,
            self.table,
        )
    }

    fn write_context<'b>(&'b self, now: &'b str) -> WriteContext<'b> {
        WriteContext::new(self.info, now, &self.manager)
    }

    fn create(&self, body: Bytes) -> Result<Response, ApiError> {
        check_write_options(self.query, "CreateOptions", false)?;
        crate::http::crd_cleanup::refuse_create_while_terminating(self.server, self.info)?;
        let (mut object, repeated) = parse_create_body(self.headers, &body, self.info)?;
        let shared = &self.server.shared;
        if object["metadata"]["namespace"].is_null() {
            if let (Some(ns), Some(meta)) = (
                self.path.namespace.as_deref(),
                object["metadata"].as_object_mut(),
            ) {
                meta.insert("namespace".into(), json!(ns));
            }
        }
        crate::auth::escalation::WriteGuard::prepare(shared, &self.user, self.info)
            .check(self.info, "", &object, None)?;
        let options = CreateOptions {
            manager: &self.manager,
            dry_run: is_dry_run(self.query),
            validation: FieldValidation::from_query(self.query.get("fieldValidation"))?,
            applied: false,
            user: Some(&self.user),
            trusted: match repeated {
                true => Trust::RepeatedBody,
                false => Trust::Client,
            },
            in_tree_admission: true,
        };
        self.create_with(object, &options)
    }

    /// A review (`authorization.k8s.io`, `SelfSubjectReview`), answered from the request's user;
    /// nothing is stored.
    fn review(&self, body: Bytes) -> Result<Response, ApiError> {
        let mut review = parse_body(self.headers, &body)?;
        check_type_meta(self.info, &mut review)?;
        let answered = crate::auth::reviews::answer(
            &self.server.shared,
            &self.user,
            &self.info.kind,
            self.path.namespace.as_deref(),
            review,
        )?;
        Ok(value_response(StatusCode::CREATED, &answered))
    }

    /// `GET componentstatuses/{name}`.
    fn component_status(&self) -> Result<Response, ApiError> {
        let status = crate::http::component_status::get(self.server, self.name())?;
        self.object_response(StatusCode::OK, status)
    }

    /// `GET componentstatuses` (as a table when asked, as kubectl asks).
    fn component_statuses(&self) -> Result<Response, ApiError> {
        let list = crate::http::component_status::list(self.server, self.info, self.query)?;
        if let Some(version) = self.wants_table() {
            let items = list["items"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            let now = crate::registry::semantics::format_time(self.server.shared.now());
            let include =
                crate::http::table::IncludeObject::parse(self.query.get("includeObject"))?;
            let mut table =
                crate::http::table::to_table(self.info, items, &now, true, include, version);
            table["metadata"] = list["metadata"].clone();
            return Ok(self.with_warnings(value_response(StatusCode::OK, &table)));
        }
        Ok(self.with_warnings(value_response(StatusCode::OK, &list)))
    }

    /// `POST serviceaccounts/{name}/token`: a TokenRequest.
    fn token_request(&self, body: Bytes) -> Result<Response, ApiError> {
        let request = parse_body(self.headers, &body)?;
        let answered = crate::auth::token_request::create_token(
            self.server,
            self.namespace(),
            self.name(),
            request,
        )?;
        Ok(value_response(StatusCode::CREATED, &answered))
    }

    /// A request to a subresource other than `status` (whose verb the subresource allows).
    fn subresource(&self, verb: &str, body: Bytes) -> Result<Response, ApiError> {
        if self.path.name.is_some() {
            self.check_key_name()?;
        }
        match (self.path.subresource.as_deref().unwrap_or_default(), verb) {
            ("binding", _) => self.bind(body),
            ("eviction", _) => self.evict(body),
            ("scale", "get") => self.get_scale(),
            ("scale", "update") => self.update_scale(body),
            ("scale", "patch") => self.patch_scale(body),
            ("log", _) => crate::http::pod_connect::log(
                self.server,
                self.namespace(),
                self.name(),
                self.query,
            ),
            ("exec" | "attach" | "portforward", _) => crate::http::pod_connect::connect(
                self.server,
                self.path.subresource.as_deref().unwrap_or_default(),
                self.namespace(),
                self.name(),
                self.query,
            ),
            ("proxy", _) => crate::http::pod_connect::proxy(
                self.server,
                self.info,
                self.path.namespace.as_deref(),
                self.name(),
            ),
            _ => Err(ApiError::no_such_resource()),
        }
    }

    /// `POST pods/{name}/eviction`.
    fn evict(&self, body: Bytes) -> Result<Response, ApiError> {
        check_write_options(self.query, "CreateOptions", false)?;
        let mut eviction = parse_body(self.headers, &body)?;
        crate::admission::create_subresource(self.info, &mut eviction)?;
        let status = crate::http::eviction::evict(
            self.server,
            self.info,
            self.namespace(),
            self.name(),
            &eviction,
            is_dry_run(self.query),
        )?;
        Ok(value_response(StatusCode::CREATED, &status))
    }

    /// The scale subresource's description of this kind (it is served, so it exists).
    fn scale_spec(&self) -> Result<crate::registry::scale::ScaleSpec, ApiError> {
        crate::registry::scale::ScaleSpec::of(self.info).ok_or_else(ApiError::no_such_resource)
    }

    /// `GET .../{name}/scale`.
    fn get_scale(&self) -> Result<Response, ApiError> {
        let spec = self.scale_spec()?;
        let object = self
            .server
            .shared
            .store
            .get_value(&self.key(), self.namespace(), self.name())
            .ok_or_else(|| crate::registry::scale::not_found(self.info, self.name()))?;
        Ok(value_response(StatusCode::OK, &spec.scale_of(&object)?))
    }

    /// `PUT .../{name}/scale`.
    fn update_scale(&self, body: Bytes) -> Result<Response, ApiError> {
        check_write_options(self.query, "UpdateOptions", false)?;
        let scale = parse_body(self.headers, &body)?;
        check_scale_type(&scale)?;
        self.write_scale(|_| Ok(scale))
    }

    /// `PATCH .../{name}/scale`: the patch applies to the `Scale`, which is then written.
    fn patch_scale(&self, body: Bytes) -> Result<Response, ApiError> {
        let patch_type = crate::patch::check_patch_type(&content_type(self.headers), false)?;
        check_write_options(self.query, "PatchOptions", patch_type == PatchType::Apply)?;
        if patch_type == PatchType::Apply {
            return Err(ApiError::new(
                415,
                "UnsupportedMediaType",
                "server-side apply (application/apply-patch+yaml) is not supported by this fake API server yet; use a merge, JSON or strategic merge patch, or an update",
            ));
        }
        let patch = crate::patch::decode_patch(patch_type, &body)?;
        self.write_scale(|current| {
            let scale = crate::patch::apply_patch(
                patch_type,
                current.clone(),
                &patch,
                "autoscaling",
                "Scale",
                false,
            )?;
            check_scale_type(&scale)?;
            Ok(scale)
        })
    }

    /// Writes the replicas of the `Scale` that `new_scale` makes of the current one through the
    /// object's update rules; answers with the resulting `Scale`.
    fn write_scale(
        &self,
        new_scale: impl FnOnce(&Value) -> Result<Value, ApiError>,
    ) -> Result<Response, ApiError> {
        let spec = self.scale_spec()?;
        let now = self.server.shared.now_string();
        let ctx = self.write_context(&now);
        let dry_run = is_dry_run(self.query);
        let outcome = commit(
            self.server,
            &ctx,
            dry_run,
            &self.key(),
            self.namespace(),
            self.name(),
            |current| {
                let current = current
                    .ok_or_else(|| crate::registry::scale::not_found(self.info, self.name()))?;
                let scale = new_scale(&spec.scale_of(current)?)?;
                let object = spec.apply(self.info, current, &scale)?;
                update_with(&ctx, current, object, UpdateTarget::Main)
            },
        )?;
        if !dry_run {
            after_write(self.server, self.info, &outcome.object, outcome.event);
        }
        self.warnings.borrow_mut().extend(ctx.warnings.take());
        let scale = spec.scale_of(&outcome.object)?;
        Ok(self.with_warnings(value_response(StatusCode::OK, &scale)))
    }

    /// `POST pods/{name}/binding`: assigns the pod to a node, as the scheduler does.
    fn bind(&self, body: Bytes) -> Result<Response, ApiError> {
        check_write_options(self.query, "CreateOptions", false)?;
        let binding = parse_body(self.headers, &body)?;
        let node = check_binding(&binding, self.name())?;
        let outcome = self.server.shared.store.mutate(
            &self.key(),
            self.namespace(),
            self.name(),
            |current| {
                let current = current.ok_or_else(|| {
                    ApiError::not_found(&self.info.group, &self.info.plural, self.name())
                })?;
                let conflict =
                    |why: String| ApiError::conflict("", "pods/binding", self.name(), &why);
                if current["metadata"].get("deletionTimestamp").is_some() {
                    return Err(conflict(format!(
                        "pod {} is being deleted, cannot be assigned to a host",
                        self.name()
                    )));
                }
                if let Some(assigned) = current["spec"]["nodeName"]
                    .as_str()
                    .filter(|n| !n.is_empty())
                {
                    return Err(conflict(format!(
                        "pod {} is already assigned to node {assigned:?}",
                        self.name()
                    )));
                }
                let mut next = current.clone();
                next["spec"]["nodeName"] = json!(node);
                // Binding is the one way to change a pod's spec.nodeName: it bypasses the pod
                // update rules.
                Ok(Mutation::Put(next))
            },
        )?;
        after_write(self.server, self.info, &outcome.object, outcome.event);
        let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
        Ok(value_response(StatusCode::CREATED, &status))
    }

    fn update(&self, body: Bytes) -> Result<Response, ApiError> {
        check_write_options(self.query, "UpdateOptions", false)?;
        // A client sends back what it read: the body is read against the stored version.
        let stored = self.stored_for_sharing();
        let like = stored
            .as_ref()
            .map(|(stored, _)| (&*stored.value, stored.written()));
        let mut object = parse_body_like(self.headers, &body, like)?;
        check_type_meta(self.info, &mut object)?;
        self.check_name(&object)?;
        check_namespace(self.info, self.path.namespace.as_deref(), &mut object)?;
        self.check_key_name()?;
        let now = self.server.shared.now_string();
        let ctx = self.write_context(&now);
        let target = self.target();
        let dry_run = is_dry_run(self.query);
        let validation = FieldValidation::from_query(self.query.get("fieldValidation"))?;
        if self.info.allow_create_on_update
            && target != UpdateTarget::Finalize
            && self
                .server
                .shared
                .store
                .get(&self.key(), self.namespace(), self.name())
                .is_none()
        {
            // The kind's strategy allows create-on-update (leases, services, endpoints, events,
            // limit ranges, RBAC roles and bindings): the registry's update creates it.
            match self.create_instead_of_update(object.clone(), dry_run, validation, false) {
                // Created in between: the update goes to what is there now.
                Err(e) if e.reason == "AlreadyExists" => {}
                created => return created,
            }
        }
        // Decoding needs nothing stored, so it runs before the store is locked; the body's
        // parts equal to the stored version's are that version's (see `parse_body_like`), and
        // what is known of that version goes with them (see `DecodeBase`).
        let base = stored
            .as_ref()
            .and_then(|(stored, memo)| DecodeBase::of(self.info, &stored.value, memo.as_deref()));
        decode_object(self.info, &mut object, validation, &ctx, base)?;
        drop(stored);
        self.write_existing(&ctx, dry_run, |current| {
            update_with(&ctx, current, object, target)
        })
    }

    /// The stored version of a built-in object an UPDATE's body may share parts with (see
    /// [`parse_body_like`]), and what the store kept with it; none for a custom resource or a
    /// view of another kind, whose stored form is not the served one.
    fn stored_for_sharing(
        &self,
    ) -> Option<(crate::store::StoredVersion, Option<Arc<VersionMemo>>)> {
        if self.info.custom || conversion::is_builtin_view(self.info) {
            return None;
        }
        let stored =
            self.server
                .shared
                .store
                .get_version(&self.key(), self.namespace(), self.name())?;
        let memo = VersionMemo::of(stored.derived.as_ref());
        Some((stored, memo))
    }

    /// Creates `object` for a `PUT` or an apply `PATCH` that found nothing to update: through the
    /// create rules and create admission, authorized for `create` as well, answered `201`. The
    /// body's `resourceVersion` is dropped (storage clears it before writing) once the registry
    /// has read it as a number (a malformed one is its unclassified 500); `applied` for a
    /// server-side apply (its managedFields entry is an `Apply`).
    fn create_instead_of_update(
        &self,
        mut object: Value,
        dry_run: bool,
        validation: FieldValidation,
        applied: bool,
    ) -> Result<Response, ApiError> {
        let rv = crate::store::resource_version_of(&object);
        if !rv.is_empty() {
            crate::rules::strconv::parse_uint(&rv).map_err(ApiError::plain_500)?;
        }
        if let Some(meta) = object["metadata"].as_object_mut() {
            meta.remove("resourceVersion");
        }
        let shared = &self.server.shared;
        crate::auth::authorize_create_on_update(
            shared,
            &self.user,
            self.info,
            self.namespace(),
            self.name(),
        )?;
        crate::auth::escalation::WriteGuard::prepare(shared, &self.user, self.info).check(
            self.info,
            self.name(),
            &object,
            None,
        )?;
        let options = CreateOptions {
            manager: &self.manager,
            dry_run,
            validation,
            applied,
            user: Some(&self.user),
            trusted: Trust::Client,
            in_tree_admission: true,
        };
        self.create_with(object, &options)
    }

    fn patch(&self, body: Bytes) -> Result<Response, ApiError> {
        let patch_type =
            crate::patch::check_patch_type(&content_type(self.headers), self.info.custom)?;
        check_write_options(self.query, "PatchOptions", patch_type == PatchType::Apply)?;
        self.check_key_name()?;
        if patch_type == PatchType::Apply {
            return self.apply(body);
        }
        let patch = crate::patch::decode_patch(patch_type, &body)?;
        let now = self.server.shared.now_string();
        let ctx = self.write_context(&now);
        let target = self.target();
        let dry_run = is_dry_run(self.query);
        let validation = FieldValidation::from_query(self.query.get("fieldValidation"))?;
        self.write_existing(&ctx, dry_run, |current| {
            let mut patched = current.clone();
            add_type_meta(self.info, &mut patched);
            let mut patched = crate::patch::apply_patch(
                patch_type,
                patched,
                &patch,
                &self.info.group,
                &self.info.kind,
                self.info.custom,
            )?;
            check_type_meta(self.info, &mut patched)?;
            self.check_name(&patched)?;
            let memo = ctx.memos.stored_memo();
            let base = DecodeBase::of(self.info, current, memo.as_deref());
            decode_object(self.info, &mut patched, validation, &ctx, base)?;
            update_with(&ctx, current, patched, target)
        })
    }

    /// `PATCH` with `application/apply-patch+yaml`: server-side apply of the body (YAML or JSON)
    /// for `fieldManager`, creating the object when it does not exist (not through `/status`).
    fn apply(&self, body: Bytes) -> Result<Response, ApiError> {
        let config = decode_apply_body(&body)?;
        let (group, version) = split_api_version(config["apiVersion"].as_str().unwrap_or_default());
        let kind = config["kind"].as_str().unwrap_or_default();
        if group != self.info.group || version != self.info.version || kind != self.info.kind {
            return Err(ApiError::bad_request(format!(
                "invalid object type: {group}/{version}, Kind={kind}"
            )));
        }
        if config
            .pointer("/metadata/managedFields")
            .is_some_and(|m| !m.is_null())
        {
            return Err(ApiError::bad_request("metadata.managedFields must be nil"));
        }
        if let Some(ns) = config
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .filter(|ns| !ns.is_empty())
        {
            if self.info.namespaced && ns != self.namespace() {
                return Err(ApiError::bad_request(format!(
                    "the namespace of the object ({ns}) does not match the namespace on the URL ({})",
                    self.namespace()
                )));
            }
        }
        let force = self.query.flag("force");
        let dry_run = is_dry_run(self.query);
        let validation = FieldValidation::from_query(self.query.get("fieldValidation"))?;
        let now = self.server.shared.now_string();
        let mut ctx = self.write_context(&now);
        ctx.applied = true;
        let target = self.target();
        let subresource = self.path.subresource.as_deref();
        let exists = self
            .server
            .shared
            .store
            .get(&self.key(), self.namespace(), self.name())
            .is_some();
        if !exists && subresource.is_none() {
            return self.create_by_apply(&ctx, &config, force, dry_run, validation);
        }
        self.write_existing(&ctx, dry_run, |current| {
            let mut live = current.clone();
            add_type_meta(self.info, &mut live);
            let applied =
                crate::apply::apply(&ctx.writer(subresource), Some(&live), &config, force)?;
            let mut merged = applied.object;
            check_type_meta(self.info, &mut merged)?;
            self.check_name(&merged)?;
            check_namespace(self.info, self.path.namespace.as_deref(), &mut merged)?;
            let memo = ctx.memos.stored_memo();
            let base = DecodeBase::of(self.info, current, memo.as_deref());
            decode_object(self.info, &mut merged, validation, &ctx, base)?;
            update_with(&ctx, current, merged, target)
        })
    }

    /// An apply to an object that does not exist creates it (201), as the real server's
    /// create-on-update for apply patches does; a `resourceVersion` in the configuration is not
    /// checked against anything then.
    fn create_by_apply(
        &self,
        ctx: &WriteContext<'_>,
        config: &Value,
        force: bool,
        dry_run: bool,
        validation: FieldValidation,
    ) -> Result<Response, ApiError> {
        let applied = crate::apply::apply(&ctx.writer(None), None, config, force)?;
        let object = applied.object;
        self.check_name(&object)?;
        self.create_instead_of_update(object, dry_run, validation, true)
    }

    /// DeleteOptions from the body and the query, validated; a kind whose default policy
    /// orphans its dependents warns when the request leaves the policy to it.
    fn delete_options(&self, body: &[u8]) -> Result<DeleteOptions, ApiError> {
        let opts = crate::http::options::delete_options(body, self.query)?;
        crate::registry::gc_policy::validate(&opts)?;
        if let Some(warning) = crate::registry::gc_policy::default_policy_warning(self.info, &opts)
        {
            self.warnings.borrow_mut().push(warning.to_string());
        }
        Ok(opts)
    }

    /// What the admission policies know of this request.
    fn policy_attributes(
        &self,
        operation: crate::admission::policy::Operation,
        dry_run: bool,
    ) -> crate::admission::policy::Attributes<'_> {
        crate::admission::policy::Attributes {
            info: self.info,
            operation,
            namespace: self.namespace(),
            name: self.name(),
            subresource: self.path.subresource.as_deref(),
            user: &self.user,
            dry_run,
        }
    }

    /// The admission policies on deleting the object `namespace/name` as it is stored now.
    fn admit_delete(&self, namespace: &str, name: &str, dry_run: bool) -> Result<(), ApiError> {
        let mut attrs =
            self.policy_attributes(crate::admission::policy::Operation::Delete, dry_run);
        attrs.namespace = namespace;
        attrs.name = name;
        let Some(policies) = crate::admission::policy::prepare(&self.server.shared, &attrs) else {
            return Ok(());
        };
        let Some(current) = self
            .server
            .shared
            .store
            .get_value(&self.key(), namespace, name)
        else {
            return Ok(());
        };
        policies.check(&attrs, None, Some(&current), &self.warnings)
    }

    fn delete(&self, body: Bytes) -> Result<Response, ApiError> {
        let opts = self.delete_options(&body)?;
        self.check_key_name()?;
        self.admit_delete(self.namespace(), self.name(), opts.is_dry_run())?;
        let (object, gone) = if opts.is_dry_run() {
            let outcome = self.server.shared.store.preview(
                &self.key(),
                self.namespace(),
                self.name(),
                |current| {
                    let current = current.ok_or_else(|| {
                        ApiError::not_found(&self.info.group, &self.info.plural, self.name())
                    })?;
                    crate::admission::delete(self.info, current)?;
                    Ok(
                        decide_delete(self.info, current.clone(), &opts, self.server.shared.now())?
                            .mutation,
                    )
                },
            )?;
            let gone = outcome.event == Some(crate::store::EventType::Deleted);
            (outcome.into_object(), gone)
        } else {
            delete_object(self.server, self.info, self.namespace(), self.name(), &opts)?
        };
        let code = crate::registry::delete_answer::code(gone, &opts);
        if gone && !crate::registry::delete_answer::returns_deleted_object(self.info) {
            let status = crate::registry::delete_answer::body(self.info, object, gone);
            return Ok(self.with_warnings(value_response(code, &status)));
        }
        self.object_response(code, object)
    }

    /// Deletes every object the list options select; answers the list of them as they were
    /// listed, before the deletes (as `Store.DeleteCollection` does).
    fn delete_collection(&self, body: Bytes) -> Result<Response, ApiError> {
        // The list options are checked first, as the real handler does.
        let request = ListRequest::parse(self.info, self.query)?;
        let opts = self.delete_options(&body)?;
        let snapshot = self
            .server
            .shared
            .store
            .snapshot(&self.key(), self.path.namespace.as_deref());
        let mut listed = Vec::new();
        for ((ns, name), bytes) in snapshot.items {
            let Ok(mut object) = crate::store::json::from_slice(&bytes) else {
                continue;
            };
            if !request.matches(&object) {
                continue;
            }
            self.admit_delete(&ns, &name, opts.is_dry_run())?;
            if !opts.is_dry_run() {
                match delete_object(self.server, self.info, &ns, &name, &opts) {
                    Ok(_) => {}
                    Err(e) if e.code == 404 => {}
                    Err(e) => return Err(e),
                }
            }
            add_type_meta(self.info, &mut object);
            listed.push(object);
        }
        let list = json!({
            "kind": self.info.list_kind(),
            "apiVersion": self.info.api_version(),
            "metadata": {"resourceVersion": snapshot.revision.to_string()},
            "items": listed,
        });
        Ok(self.with_warnings(value_response(StatusCode::OK, &list)))
    }
}

/// `BindingREST.Create`'s checks of a `Binding`: its name must be the pod's (400), then
/// `ValidatePodBinding` (a target `Node` with a name), whose errors the registry returns as a
/// plain aggregate, so they are a 500 without a reason. Returns the node's name.
fn check_binding(binding: &Value, pod: &str) -> Result<String, ApiError> {
    if binding["metadata"]["name"].as_str().unwrap_or_default() != pod {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    let target = &binding["target"];
    let mut errors = Vec::new();
    let kind = target["kind"].as_str().unwrap_or_default();
    if !kind.is_empty() && kind != "Node" {
        let cause = crate::error::StatusCause::not_supported(
            "target.kind",
            &json!(kind),
            &["Node".to_string(), "<empty>".to_string()],
        );
        errors.push(format!("{}: {}", cause.field, cause.message));
    }
    let node = target["name"].as_str().unwrap_or_default();
    if node.is_empty() {
        errors.push("target.name: Required value".to_string());
    }
    if errors.is_empty() {
        Ok(node.to_string())
    } else {
        Err(ApiError::plain_500(crate::auth::rbac::aggregate(&errors)))
    }
}

/// A scale subresource takes `autoscaling/v1` `Scale` objects.
fn check_scale_type(scale: &Value) -> Result<(), ApiError> {
    let kind = scale["kind"].as_str().unwrap_or_default();
    let api_version = scale["apiVersion"].as_str().unwrap_or_default();
    if (kind.is_empty() || kind == "Scale")
        && (api_version.is_empty() || api_version == "autoscaling/v1")
    {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "Scale in version \"v1\" cannot be handled as a Scale: the body is a {kind} of {api_version}, not an autoscaling/v1 Scale"
    )))
}

fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

/// Decodes an apply body: YAML (JSON is YAML too) holding an object.
fn decode_apply_body(body: &[u8]) -> Result<Value, ApiError> {
    let value: Value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Object(Default::default())
    } else {
        serde_yaml::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?
    };
    match value {
        Value::Object(_) => Ok(value),
        Value::Null => Ok(Value::Object(Default::default())),
        other => Err(ApiError::bad_request(format!(
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            match other {
                Value::Array(_) => "array",
                Value::String(_) => "string",
                Value::Number(_) => "number",
                _ => "bool",
            }
        ))),
    }
}

/// Decodes a request body (JSON, or YAML when the content type says so).
fn parse_body(headers: &HeaderMap, body: &[u8]) -> Result<Value, ApiError> {
    parse_body_like(headers, body, None)
}

/// [`parse_body`] of a create's body, read like the last create body of its resource (see
/// [`crate::http::created_bodies`]; the value is the same), and whether it is the same bytes.
fn parse_create_body(
    headers: &HeaderMap,
    body: &Bytes,
    info: &ResourceInfo,
) -> Result<(Value, bool), ApiError> {
    if body_media(headers) != "application/json" {
        return Ok((parse_body(headers, body)?, false));
    }
    crate::http::created_bodies::read(info, body, |like| {
        let (value, texts) = read_json_body(body, || {
            let like = like.map(|(value, written)| (value, Some(written)));
            crate::store::json::from_slice_recording(body, like)
        })?;
        Ok((object_body(value)?, texts))
    })
}

/// The media type of a request's body, `application/json` when it names none (or any).
fn body_media(headers: &HeaderMap) -> &str {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    match content_type.split(';').next().unwrap_or_default().trim() {
        "" | "*/*" => "application/json",
        media => media,
    }
}

/// [`parse_body`] of a body that is mostly `like` (an UPDATE's, `like` the stored object, with
/// its bytes and maps' texts when the store recorded them): a JSON body's parts equal to
/// `like`'s are `like`'s ([`crate::store::json::from_slice_like_written`]).
fn parse_body_like(
    headers: &HeaderMap,
    body: &[u8],
    like: Option<(&Value, Option<crate::store::json_writer::Written<'_>>)>,
) -> Result<Value, ApiError> {
    let value: Value = match body_media(headers) {
        "application/json" => read_json_body(body, || match like {
            // Only built-in kinds are read against their stored version, and their bodies are
            // decoded into Go structs next: a `null` the client left out is a match.
            Some((like, written)) => {
                crate::store::json::from_slice_like_written(body, like, written, true)
            }
            None => crate::store::json::from_slice(body),
        })?,
        "application/yaml" => serde_yaml::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error converting YAML to JSON: {e}")))?,
        "application/vnd.kubernetes.protobuf" => crate::protobuf::decode(body)
            .map_err(|e| ApiError::new(e.code(), e.reason(), e.to_string()))?,
        other => return Err(ApiError::unsupported_media_type(other)),
    };
    object_body(value)
}

/// Reads a JSON body with `read`: an empty body is missing its kind, and a body that does not
/// parse is answered in Go's words where we can give them (so clients see what a real server
/// says).
fn read_json_body<T>(
    body: &[u8],
    read: impl FnOnce() -> Result<T, serde_json::Error>,
) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("Object 'Kind' is missing in ''"));
    }
    read().map_err(|e| {
        let detail = crate::patch::go_json::syntax_error(body).unwrap_or_else(|| e.to_string());
        ApiError::bad_request(format!(
            "couldn't get version/kind; json parse error: {detail}"
        ))
    })
}

/// A body's value, when it is an object (the only thing a body can be).
fn object_body(value: Value) -> Result<Value, ApiError> {
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }",
        ));
    }
    Ok(value)
}

/// Applies a custom resource's schema: defaults, pruning of unknown fields, validation, then
/// its `x-kubernetes-validations` rules (`old` is the stored object of an update).
fn finish_custom_object(
    ctx: &WriteContext<'_>,
    object: &mut Value,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    let info = ctx.info;
    let (true, Some(schema)) = (info.custom, info.schema.as_ref()) else {
        return Ok(());
    };
    crate::rules::schema::apply_defaults(schema, object);
    crate::rules::schema::prune(schema, object);
    let mut causes = crate::rules::schema::validate(schema, object, old);
    causes.extend(crate::registry::scale::validate_custom_replicas(
        info, object,
    ));
    causes.extend(crate::cel::crd_rules::after_schema(
        schema,
        object,
        old,
        &causes,
        &ctx.warnings,
    ));
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        &info.group,
        &info.kind,
        semantics::name_of(object),
        causes,
    ))
}

/// Per-kind rules for built-in objects on every write (CRD defaults, validation and status).
/// `old` is the stored object of an update (`None` on create).
fn finish_builtin_object(
    info: &ResourceInfo,
    object: &mut Value,
    now: &str,
    old: Option<(&Value, UpdateTarget)>,
) -> Result<(), ApiError> {
    if crd::is_crd(info) {
        crate::rules::crd_validation::apply_defaults(object);
        match old {
            None => crate::rules::crd_validation::validate_create(object)?,
            // (The other subresources are other kinds'; a CRD has none.)
            Some((
                old,
                UpdateTarget::Main
                | UpdateTarget::Finalize
                | UpdateTarget::EphemeralContainers
                | UpdateTarget::Resize
                | UpdateTarget::Approval,
            )) => crate::rules::crd_validation::validate_update(object, old)?,
            Some((old, UpdateTarget::Status)) => {
                crate::rules::crd_validation::validate_status_update(object, old)?
            }
        }
        crd::set_established_status(object, now);
    }
    Ok(())
}

/// Writes through the store, or with a server-side dry run only computes the result. What the
/// store kept with the stored version goes to the rules through `ctx`, and what they derived for
/// the written object back to the store (see [`semantics::VersionMemos`]). A custom resource is
/// decided at the version the request names and stored at its CRD's storage version (see
/// [`crate::registry::conversion`]).
fn commit<F>(
    server: &FakeApiServer,
    ctx: &WriteContext<'_>,
    dry_run: bool,
    key: &str,
    namespace: &str,
    name: &str,
    decide: F,
) -> Result<crate::store::Outcome, ApiError>
where
    F: FnOnce(Option<&Value>) -> Result<Mutation, ApiError>,
{
    let info = ctx.info;
    let decide = |current: Option<&Value>| {
        let current = current
            .map(|c| conversion::to_served(info, c))
            .transpose()?;
        let mut mutation = decide(current.as_deref())?;
        if info.custom {
            match &mut mutation {
                Mutation::Put(object) | Mutation::Unchanged(object) => {
                    conversion::to_storage(info, object)?
                }
                // What goes is the stored object as it was: no conversion back is needed
                // (a real server deletes the stored bytes).
                Mutation::Delete(object) | Mutation::Finalize(object) => {
                    if conversion::webhook_of(info).is_none() {
                        conversion::to_storage(info, object)?
                    }
                }
            }
        }
        Ok(mutation)
    };
    if dry_run {
        ctx.memos.set_stored(None);
        return server.shared.store.preview(key, namespace, name, decide);
    }
    server
        .shared
        .store
        .mutate_derived(key, namespace, name, |current, derived| {
            ctx.memos.set_stored(derived);
            let mutation = decide(current);
            ctx.memos.set_stored(None);
            Ok(ctx.memos.take_decision(mutation?))
        })
}

/// Whether the request asks for a server-side dry run (its `dryRun` values, checked by
/// [`check_write_options`] before any write, are all `All`).
fn is_dry_run(query: &Query) -> bool {
    crate::rules::options::is_dry_run(query.all("dryRun"))
}

/// The stored version a written body is a changed copy of (a PATCH's result, or an UPDATE's
/// body read against it), which lets the decode leave alone what the body still shares with
/// it: what a real server decodes again on every write, the fake knows to come out as it went
/// in.
#[derive(Debug, Clone, Copy)]
struct DecodeBase<'a> {
    /// The stored object, as served, known to decode cleanly ([`VersionMemo::decoded`]).
    stored: &'a Value,
    /// Its pod spec is what decoding makes of it ([`VersionMemo::pod_spec_decoded`]).
    pod_spec_decoded: bool,
}

impl<'a> DecodeBase<'a> {
    /// The base of a body derived from `stored`, given what the store kept with that version:
    /// none when it is not known to have been decoded, or for a kind served through a view
    /// of another (its stored object is not what its body is a copy of).
    fn of(info: &ResourceInfo, stored: &'a Value, memo: Option<&VersionMemo>) -> Option<Self> {
        let memo = memo.filter(|m| m.decoded && !conversion::is_builtin_view(info))?;
        Some(DecodeBase {
            stored,
            pod_spec_decoded: memo.pod_spec_decoded,
        })
    }

    /// Whether `object`'s pod spec is the stored one, known decoded: decoding it again would
    /// accept it and change nothing.
    fn holds_decoded_pod_spec(&self, object: &Value) -> bool {
        self.pod_spec_decoded
            && matches!(
                (object.get("spec"), self.stored.get("spec")),
                (Some(Value::Object(spec)), Some(Value::Object(stored))) if spec.shares_entries(stored)
            )
    }
}

/// Decodes a written object as the real server does: through the kind's typed schema (unknown
/// fields, wrong types), then the kind's decoding rules. `base`: the stored version the body
/// is a changed copy of, if it is one (see [`DecodeBase`]).
fn decode_object(
    info: &ResourceInfo,
    object: &mut Value,
    validation: FieldValidation,
    ctx: &WriteContext<'_>,
    base: Option<DecodeBase<'_>>,
) -> Result<(), ApiError> {
    let warnings = crate::http::typed::decode(info, object, validation, base.map(|b| b.stored))?;
    ctx.warnings.borrow_mut().extend(warnings);
    let pod = info.is_builtin("", "Pod");
    // A pod's decode rules read and default its spec alone: a spec known decoded is left
    // as it is.
    if !(pod && base.is_some_and(|b| b.holds_decoded_pod_spec(object))) {
        decode_defaults(info, object)?;
    }
    // The decoded pod spec is kept for the version memo when the body was written over a
    // stored version known decoded (a create's spec is changed by admission after the decode,
    // and holding it would only make those changes copy its maps; a body over an unknown
    // version is followed by one over a known one).
    ctx.memos
        .set_decoded(object.get("spec").filter(|_| pod && base.is_some()));
    Ok(())
}

/// [`decode_object`] of a created built-in object read from a body the same bytes as the last
/// create body of its resource: the decode made of an equal value before is taken, with its
/// warnings (`http::created_bodies`); else the object is decoded and the decode kept.
fn decode_repeated_body(
    info: &ResourceInfo,
    object: &mut Value,
    validation: FieldValidation,
    ctx: &WriteContext<'_>,
) -> Result<(), ApiError> {
    if let Some((made, warnings)) = crate::http::created_bodies::decoded(info, validation, object) {
        *object = made;
        ctx.warnings.borrow_mut().extend(warnings);
        return Ok(());
    }
    let given = object.clone();
    let warned = ctx.warnings.borrow().len();
    decode_object(info, object, validation, ctx, None)?;
    let warnings = ctx.warnings.borrow();
    let warnings = warnings.get(warned..).unwrap_or_default();
    crate::http::created_bodies::keep_decoded(info, validation, given, object, warnings);
    Ok(())
}

/// What decoding adds to a body besides the typed checks: the decode-time defaults and the
/// kind's decode rules (all of [`decode_object`] a [`Trust::Own`] body goes through).
fn decode_defaults(info: &ResourceInfo, object: &mut Value) -> Result<(), ApiError> {
    conversion::from_builtin_view(info, object);
    if !info.custom {
        crate::rules::go_encoding::convert_decoded(&info.group, &info.kind, object);
    }
    defaults::on_decode(info, object);
    kind_rules::on_decode(info, object)
}

/// The write path every update shares (PUT, PATCH, replacing a loaded manifest), after the body
/// was decoded ([`decode_object`]): the custom resource schema, per-kind rules, then the update
/// rules against what is stored.
fn update_with(
    ctx: &WriteContext<'_>,
    current: &Value,
    mut object: Value,
    target: UpdateTarget,
) -> Result<Mutation, ApiError> {
    crate::admission::mutate(ctx.info, Some(current), &mut object)?;
    finish_custom_object(ctx, &mut object, Some(current))?;
    finish_builtin_object(ctx.info, &mut object, ctx.now, Some((current, target)))?;
    strip_type_meta(ctx.info, &mut object);
    let mutation = prepare_update(ctx, current, object, target)?;
    let (mutation, replaced) = crate::admission::validate_mutation(ctx.info, current, mutation)?;
    if replaced {
        ctx.memos.set_written_encoded(false);
    }
    Ok(mutation)
}

/// How a create is performed.
pub(crate) struct CreateOptions<'a> {
    /// The field manager recorded in managedFields.
    pub manager: &'a str,
    /// Compute the result without storing it.
    pub dry_run: bool,
    /// What to do with unknown fields.
    pub validation: FieldValidation,
    /// A server-side apply: the object carries its `managedFields` already.
    pub applied: bool,
    /// Who asks; `None` (loading manifests or state) skips the admission policies.
    pub user: Option<&'a crate::auth::UserInfo>,
    /// Run the in-tree admission plugins of a client's create: the mutating ones (LimitRanger,
    /// ServiceAccount, Priority, RuntimeClass) after the field manager has seen the decoded
    /// object, as the real create handler orders them, and LimitRanger's checks with the
    /// validating ones.
    pub in_tree_admission: bool,
    /// The body is one the server built itself from a fixed template (the start-up namespaces
    /// and RBAC policy, the service-account controller's objects): the typed decode, which
    /// would neither change it nor warn, is skipped (see [`Trust`]).
    pub trusted: Trust,
}

/// Whether a create may skip the typed decode of its body.
///
/// The typed decode of a kind (`http::typed`) first builds that kind's typed shape from its
/// OpenAPI definitions, then walks the body along it: work a cold start paid for each kind it
/// writes. A body the server writes itself is known to decode cleanly; the test
/// `trusted_bootstrap_stores_what_the_full_path_stores` builds a server both ways and compares
/// the two stores object for object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trust {
    /// A client's (or a manifest's) body: decoded in full.
    Client,
    /// Built by the server itself: the typed decode is skipped.
    Own,
    /// A client's body, byte for byte the last create body of its resource this thread read
    /// (`http::created_bodies`): decoded in full once, then as that decode made it.
    RepeatedBody,
}

#[cfg(test)]
thread_local! {
    /// Test switch: every create on this thread decodes in full, trusted or not.
    pub(crate) static DECODE_ALL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Trust {
    /// Whether the typed decode is skipped.
    fn skips_decode(self) -> bool {
        #[cfg(test)]
        if DECODE_ALL.with(|all| all.get()) {
            return false;
        }
        self == Trust::Own
    }
}

/// Creates an object: the whole create path shared by POST and [`apply_manifest`]. Returns the
/// store's outcome (the created object) and the warnings for the client.
pub(crate) fn create_object(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: Option<&str>,
    mut object: Value,
    options: &CreateOptions<'_>,
) -> Result<(crate::store::Outcome, Vec<String>), ApiError> {
    let dry_run = options.dry_run;
    let now = server.shared.now_string();
    let mut ctx = WriteContext::new(info, &now, options.manager);
    ctx.applied = options.applied;
    check_type_meta(info, &mut object)?;
    check_namespace(info, namespace, &mut object)?;
    match options.trusted {
        trusted if trusted.skips_decode() => decode_defaults(info, &mut object)?,
        Trust::RepeatedBody if !info.custom => {
            decode_repeated_body(info, &mut object, options.validation, &ctx)?
        }
        _ => decode_object(info, &mut object, options.validation, &ctx, None)?,
    }
    let ns = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if info.namespaced {
        check_namespace_accepts(server, info, &ns, &object)?;
    }
    // The create handler's field manager sees a built-in object as decoded (defaults included),
    // before mutating admission and the kind's create strategy, whose additions nobody owns (a
    // pod's service account volume, a namespace's finalizer, a service's allocated IPs). A custom
    // resource's schema defaults come later here (`finish_custom_object`), so its managed
    // fields are computed after them, below.
    let mut tracked_early = (!ctx.applied && !info.custom)
        .then(|| crate::apply::track_create(&ctx.writer(None), &object));
    if options.in_tree_admission {
        crate::auth::admission::admit_create(&server.shared, info, namespace, &mut object)?;
        crate::admission::admit_builtin_create(&server.shared, info, &mut object)?;
    }
    crate::admission::mutate(info, None, &mut object)?;
    let generate_name = object["metadata"]["generateName"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let explicit_name = semantics::name_of(&object).to_string();
    if explicit_name.is_empty() && generate_name.is_empty() {
        return Err(ApiError::invalid(
            &info.group,
            &info.kind,
            "",
            vec![crate::error::StatusCause {
                reason: "FieldValueRequired".into(),
                message: "Required value: name or generateName is required".into(),
                field: "metadata.name".into(),
            }],
        ));
    }
    // Storage refuses a sent revision when it writes (after validation and admission); the
    // create rules clear it from the candidate before then.
    let sent_revision_refused = semantics::check_create_resource_version(&object).err();
    // A generated name that collides is retried with another suffix, as the real server does
    // (eight attempts in all, each on a fresh copy of the object). Here a name already taken is
    // an attempt lost before any work: what storage would refuse after the whole create path,
    // without copying the object for it. The first free name's attempt takes the object itself,
    // so it is the last: the name is taken only if another create takes it in between, and that
    // 409 is the answer (as a server without the retry gives it).
    let attempts = if explicit_name.is_empty() { 8 } else { 1 };
    let key = resource_key(&info.group, &info.plural);
    for attempt in 1..=attempts {
        let generated = explicit_name.is_empty().then(|| {
            let mut name: String = generate_name
                .chars()
                .take(MAX_GENERATE_NAME_PREFIX)
                .collect();
            server.shared.push_random_suffix(&mut name, 5);
            name
        });
        if generated
            .as_deref()
            .is_some_and(|name| attempt < attempts && server.shared.store.contains(&key, &ns, name))
        {
            continue;
        }
        let mut candidate = std::mem::take(&mut object);
        if let Some(generated) = generated {
            candidate["metadata"]["name"] = json!(generated);
        }
        let uid = server.shared.new_uid();
        prepare_create(&ctx, &mut candidate, &uid)?;
        // A pod's service account token volume name, drawn for each create.
        let mut api_access = None;
        match (info.group.as_str(), info.kind.as_str()) {
            ("", "Pod") => {
                let suffix = server.shared.random_suffix(5);
                defaults::default_pod(&mut candidate, &suffix);
                api_access = Some(defaults::api_access_volume_name(&suffix));
            }
            ("", "Namespace") => defaults::default_namespace(&mut candidate),
            _ => defaults::on_create(info, &mut candidate),
        }
        kind_rules::on_create(info, &mut candidate)?;
        if info.is_builtin("certificates.k8s.io", "CertificateSigningRequest") {
            let requestor = options
                .user
                .map(|user| crate::rules::certificates::Requestor {
                    name: &user.name,
                    uid: &user.uid,
                    groups: &user.groups,
                    extra: &user.extra,
                });
            crate::rules::certificates::prepare_create(&mut candidate, requestor);
        }
        if info.is_builtin("apiregistration.k8s.io", "APIService") {
            crate::rules::apiregistration::prepare_create(&mut candidate, &now);
        }
        crate::rules::allocate_on_create(info, &mut candidate, || {
            let key = resource_key(&info.group, &info.plural);
            let snapshot = server.shared.store.snapshot(&key, None);
            snapshot
                .items
                .iter()
                .filter_map(|(_, o)| crate::store::json::from_slice(o).ok())
                .collect()
        })?;
        // A pod alike to one this thread found valid (see `rules::valid_creates`) skips the
        // kind's checks and takes its warnings.
        let known = api_access
            .as_deref()
            .and_then(|token| crate::rules::valid_creates::find(info, &candidate, token));
        crate::rules::validate_create_known(info, &candidate, known.is_some())?;
        ctx.memos
            .set_written_pod_spec_valid(info.is_builtin("", "Pod"));
        if crate::rules::meta::checks_labels_and_annotations(info) {
            ctx.memos.set_validated_maps(&candidate);
        }
        let warnings = known.unwrap_or_else(|| {
            let warnings = crate::rules::warnings::on_create(info, &candidate);
            if let Some(token) = &api_access {
                crate::rules::valid_creates::keep(info, &candidate, token, &warnings);
            }
            warnings
        });
        ctx.warnings.borrow_mut().extend(warnings);
        finish_custom_object(&ctx, &mut candidate, None)?;
        match tracked_early.as_mut() {
            Some((managed, written)) => {
                if let Some(meta) = candidate["metadata"].as_object_mut() {
                    match managed.take() {
                        Some(managed) => meta.insert("managedFields".into(), managed),
                        None => meta.remove("managedFields"),
                    };
                }
                // (The decoded sets are a cache: a retried generated name goes without them.)
                ctx.memos.set_written(written.take());
            }
            None if !ctx.applied => {
                let written = crate::apply::track_update_known(
                    &ctx.writer(None),
                    None,
                    None,
                    None,
                    &mut candidate,
                );
                ctx.memos.set_written(written);
            }
            None => {}
        }
        finish_builtin_object(info, &mut candidate, &now, None)?;
        if crd::is_crd(info) {
            // Established only by the controllers after the create (see `after_write`).
            crd::set_initial_status(&mut candidate);
        }
        strip_type_meta(info, &mut candidate);
        if options.in_tree_admission {
            crate::admission::limit_ranger::validate_create(&server.shared, info, &candidate)?;
            crate::admission::pod_security::validate_create(
                &server.shared,
                info,
                &candidate,
                options.user.map_or("", |user| user.name.as_str()),
                &ctx.warnings,
            )?;
        }
        crate::admission::certificates::admit_create(info, &candidate)?;
        crate::admission::validate(info, None, &mut candidate)?;
        let name = semantics::name_of(&candidate).to_string();
        if let Some(user) = options.user {
            let attrs = crate::admission::policy::Attributes {
                info,
                operation: crate::admission::policy::Operation::Create,
                namespace: &ns,
                name: &explicit_name,
                subresource: None,
                user,
                dry_run,
            };
            crate::admission::policy::admit(
                &server.shared,
                &attrs,
                Some(&candidate),
                None,
                &ctx.warnings,
            )?;
        }
        let result = commit(server, &ctx, dry_run, &key, &ns, &name, |current| {
            if let (false, Some(refused)) = (dry_run, &sent_revision_refused) {
                return Err(refused.clone());
            }
            match current {
                Some(_) => Err(ApiError::already_exists(&info.group, &info.plural, &name)),
                None => Ok(Mutation::Put(candidate)),
            }
        });
        let outcome = result?;
        if !dry_run {
            after_write(server, info, &outcome.object, outcome.event);
        }
        return Ok((outcome, ctx.warnings.take()));
    }
    // Not reached: the last attempt is never skipped.
    Err(ApiError::internal("could not generate a unique name"))
}

/// A namespaced create needs its namespace to exist and not be terminating.
fn check_namespace_accepts(
    server: &FakeApiServer,
    info: &ResourceInfo,
    ns: &str,
    object: &Value,
) -> Result<(), ApiError> {
    let Some(namespace) = server.shared.store.get_parsed("/namespaces", "", ns) else {
        return Err(ApiError::not_found("", "namespaces", ns));
    };
    // NamespaceLifecycle admission: no new content in a terminating namespace.
    if namespace["status"]["phase"] == "Terminating"
        || namespace["metadata"].get("deletionTimestamp").is_some()
    {
        let name = semantics::name_of(object);
        let mut err = ApiError::new(
            403,
            "Forbidden",
            format!(
                "{} \"{name}\" is forbidden: unable to create new content in namespace {ns} because it is being terminated",
                crate::error::qualified(&info.group, &info.plural)
            ),
        )
        .with_details(&info.group, &info.plural, name);
        err.causes.push(crate::error::StatusCause {
            reason: "NamespaceTerminating".into(),
            message: format!("namespace {ns} is being terminated"),
            field: "metadata.namespace".into(),
        });
        return Err(err);
    }
    Ok(())
}

/// Deletes (or marks for deletion) one object; returns its last state and whether it is gone.
pub(crate) fn delete_object(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
    opts: &DeleteOptions,
) -> Result<(Value, bool), ApiError> {
    let key = resource_key(&info.group, &info.plural);
    let now = server.shared.now();
    crate::rules::admit_delete(info, name)?;
    let mut gone = false;
    let outcome = server
        .shared
        .store
        .mutate(&key, namespace, name, |current| {
            let current =
                current.ok_or_else(|| ApiError::not_found(&info.group, &info.plural, name))?;
            crate::admission::delete(info, current)?;
            let decision = decide_delete(info, current.clone(), opts, now)?;
            gone = decision.gone;
            Ok(decision.mutation)
        })?;
    let mut object = outcome.object;
    let mut event = outcome.event;
    if gone && event != Some(crate::store::EventType::Deleted) {
        // Marked first (MODIFIED), then removed (DELETED), as the real server does for pods.
        let removed =
            server
                .shared
                .store
                .mutate(&key, namespace, name, |current| match current {
                    Some(current) => Ok(Mutation::Delete(current.clone())),
                    None => Err(ApiError::not_found(&info.group, &info.plural, name)),
                })?;
        object = removed.object;
        event = removed.event;
    }
    after_write(server, info, &object, event);
    Ok((Arc::unwrap_or_clone(object), gone))
}

/// Side effects of a write: CRDs start or stop being served; disruption budgets follow their
/// pods; the controllers ([`crate::controllers`]) learn of every write.
pub(crate) fn after_write(
    server: &FakeApiServer,
    info: &ResourceInfo,
    object: &Value,
    event: Option<crate::store::EventType>,
) {
    let Some(event) = event else {
        return;
    };
    // What the server writes in reaction is not the request's write: no admission webhooks.
    let _unadmitted = crate::admission::Unadmitted::enter();
    let deleted = event == crate::store::EventType::Deleted;
    if info.group == crate::auth::rbac::RBAC_GROUP && info.kind == "ClusterRole" {
        crate::auth::aggregation::reconcile(server);
    }
    if crate::registry::disruption::concerns(&info.group, &info.kind) {
        let ns = object["metadata"]["namespace"].as_str().unwrap_or_default();
        crate::registry::disruption::sync_namespace(server, ns);
    }
    if crd::is_crd(info) {
        let name = semantics::name_of(object).to_string();
        let previous = server.shared.registry.custom_versions(&name);
        if event == crate::store::EventType::Deleted {
            remove_custom_resources(server, &name);
            if let Some(previous) = previous {
                crate::http::watch::tear_down_storage(server, previous);
            }
        } else {
            let revision = registry::crd_storage::written_at(object).unwrap_or_default();
            let (infos, replaced) =
                registry::resources_of_crd_after(object, previous.as_deref(), revision);
            // The same spec and names define the same resources: the storage stays.
            match previous {
                Some(previous) if replaced => {
                    server.shared.registry.set_custom(&name, infos);
                    crate::http::watch::tear_down_storage(server, previous);
                }
                Some(_) => {}
                None => server.shared.registry.set_custom(&name, infos),
            }
            if crate::registry::crd::awaits_cleanup(object) {
                crate::http::crd_cleanup::sync(server, &name);
            }
        }
        crate::controllers::api_services::sync_custom(server);
    }
    if deleted && info.is_builtin("apiregistration.k8s.io", "APIService") {
        // The autoregistration controller puts back a CRD's APIService that was deleted.
        crate::controllers::api_services::sync_custom(server);
    }
    if deleted && info.custom {
        crate::http::crd_cleanup::after_custom_resource_deleted(server, info);
    }
    if deleted && info.group.is_empty() && info.kind == "Pod" {
        let uid = object["metadata"]["uid"].as_str().unwrap_or_default();
        server.shared.pod_logs.remove_pod(uid);
    }
    server
        .shared
        .controllers
        .observe(server, info, object, event);
    if crd::is_crd(info) && event == crate::store::EventType::Added {
        // The establishing controller's write follows the creation, with the effects of any
        // CRD write (its accepted names rebuild the storage; the controllers see it).
        if let Some(established) = crd::establish(server, semantics::name_of(object)) {
            after_write(server, info, &established.object, established.event);
        }
    }
}

/// Stops serving a deleted CRD's resources and removes their objects.
fn remove_custom_resources(server: &FakeApiServer, crd_name: &str) {
    let removed = server.shared.registry.remove_custom(crd_name);
    let Some(info) = removed.first() else {
        return;
    };
    let key = resource_key(&info.group, &info.plural);
    for ((ns, name), _) in server.shared.store.snapshot(&key, None).items {
        let removed = server
            .shared
            .store
            .mutate(&key, &ns, &name, |current| match current {
                Some(current) => Ok(Mutation::Delete(current.clone())),
                None => Err(ApiError::not_found(&info.group, &info.plural, &name)),
            });
        if let Ok(removed) = removed {
            if let Some(event) = removed.event {
                server
                    .shared
                    .controllers
                    .observe(server, info, &removed.object, event);
            }
        }
    }
}

/// Create-or-replace of a whole object, for loading manifests and state.
pub(crate) fn apply_manifest(server: &FakeApiServer, object: Value) -> Result<Value, ApiError> {
    apply_object(server, object, Trust::Client)
}

/// [`apply_manifest`] of an object the server built itself (the start-up namespaces and RBAC
/// policy; see [`Trust::Own`]).
pub(crate) fn apply_own(server: &FakeApiServer, object: Value) -> Result<Value, ApiError> {
    apply_object(server, object, Trust::Own)
}

/// The field manager of a create-or-replace: the server's own start-up objects are written as a
/// real server's are, by its loopback client (`kube-apiserver`, from its user agent); loaded
/// manifests by `fake-apiserver`.
fn manifest_manager(trusted: Trust) -> &'static str {
    match trusted {
        Trust::Own => "kube-apiserver",
        Trust::Client | Trust::RepeatedBody => "fake-apiserver",
    }
}

/// Create-or-replace of a whole object; `trusted` says whose body it is.
fn apply_object(server: &FakeApiServer, object: Value, trusted: Trust) -> Result<Value, ApiError> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let info = server
        .shared
        .registry
        .lookup_kind(api_version, kind)
        .ok_or_else(|| {
            let (group, version) = split_api_version(api_version);
            ApiError::new(
                404,
                "NotFound",
                format!("no matches for kind {kind:?} in version \"{group}/{version}\""),
            )
        })?;
    let namespace = if info.namespaced {
        Some(
            object["metadata"]["namespace"]
                .as_str()
                .filter(|n| !n.is_empty())
                .unwrap_or("default")
                .to_string(),
        )
    } else {
        None
    };
    let name = semantics::name_of(&object).to_string();
    let key = resource_key(&info.group, &info.plural);
    if name.is_empty()
        || server
            .shared
            .store
            .get(&key, namespace.as_deref().unwrap_or_default(), &name)
            .is_none()
    {
        let mut object = object;
        if let Some(meta) = object["metadata"].as_object_mut() {
            meta.remove("resourceVersion");
        }
        let options = CreateOptions {
            manager: manifest_manager(trusted),
            dry_run: false,
            validation: FieldValidation::Warn,
            applied: false,
            user: None,
            trusted,
            in_tree_admission: false,
        };
        let (created, _) = create_object(server, &info, namespace.as_deref(), object, &options)?;
        let mut created = created.into_object();
        add_type_meta(&info, &mut created);
        return Ok(created);
    }
    let now = server.shared.now_string();
    let ctx = WriteContext::new(&info, &now, manifest_manager(trusted));
    let mut object = object;
    check_type_meta(&info, &mut object)?;
    check_namespace(&info, namespace.as_deref(), &mut object)?;
    let ns = namespace.unwrap_or_default();
    decode_object(&info, &mut object, FieldValidation::Warn, &ctx, None)?;
    let outcome = server.shared.store.mutate(&key, &ns, &name, |current| {
        let current =
            current.ok_or_else(|| ApiError::not_found(&info.group, &info.plural, &name))?;
        let mut object = object;
        if let Some(meta) = object["metadata"].as_object_mut() {
            meta.insert(
                "resourceVersion".into(),
                json!(crate::store::resource_version_of(current)),
            );
        }
        update_with(&ctx, current, object, UpdateTarget::Main)
    })?;
    after_write(server, &info, &outcome.object, outcome.event);
    let mut object = outcome.into_object();
    add_type_meta(&info, &mut object);
    Ok(object)
}

/// A read-modify-write of a stored object by an in-process controller: `edit` changes a copy of
/// the stored object (resourceVersion included, so the write is conditional) and says whether
/// it changed anything; the result goes through the same update rules as a client's PUT.
pub(crate) fn update_object(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
    target: UpdateTarget,
    manager: &str,
    edit: impl FnOnce(&mut Value) -> bool,
) -> Result<(), ApiError> {
    let now = server.shared.now_string();
    let ctx = WriteContext::new(info, &now, manager);
    let key = resource_key(&info.group, &info.plural);
    let outcome = server
        .shared
        .store
        .mutate(&key, namespace, name, |current| {
            let current =
                current.ok_or_else(|| ApiError::not_found(&info.group, &info.plural, name))?;
            let mut next = current.clone();
            if !edit(&mut next) {
                return Ok(Mutation::Unchanged(current.clone()));
            }
            update_with(&ctx, current, next, target)
        })?;
    after_write(server, info, &outcome.object, outcome.event);
    Ok(())
}

/// The request's future is moved whole into its box (axum boxes every handler's future) and
/// again as it is polled, once per request: its size is paid on every request.
#[cfg(test)]
mod future_sizes {
    /// Before the rare states were boxed, 16,096 bytes in a release build (a server-only GET
    /// spent ~15% of its time copying it); 4,096 (debug) and ~4,400 (release) after.
    const MAX_REQUEST_FUTURE: usize = 6 * 1024;

    #[test]
    fn a_request_future_stays_small() {
        let server = crate::FakeApiServer::new();
        let request = axum::extract::Request::new(axum::body::Body::empty());
        let future = super::dispatch(axum::extract::State(server), request);
        let size = std::mem::size_of_val(&future);
        assert!(
            size <= MAX_REQUEST_FUTURE,
            "the request future is {size} bytes: box what only some requests await"
        );
    }
}

#[cfg(test)]
mod body_reading {
    use super::*;

    /// A body sent as these pieces, one frame each.
    fn body_of(pieces: Vec<Bytes>) -> axum::body::Body {
        let frames = pieces.into_iter().map(Ok::<_, std::io::Error>);
        axum::body::Body::from_stream(futures::stream::iter(frames))
    }

    #[tokio::test]
    async fn a_body_in_one_piece_is_that_piece_not_a_copy() {
        let sent = Bytes::from(vec![b'x'; 7000]);
        let read = read_body(axum::body::Body::from(sent.clone()))
            .await
            .unwrap();
        assert_eq!(read, sent);
        assert_eq!(read.as_ptr(), sent.as_ptr(), "the body was copied");
    }

    #[tokio::test]
    async fn a_body_in_pieces_is_joined_in_order() {
        let pieces = ["{\"a\":", "", "1,\"b\"", ":[2]}"].map(Bytes::from);
        let read = read_body(body_of(pieces.to_vec())).await.unwrap();
        assert_eq!(&read[..], b"{\"a\":1,\"b\":[2]}");
        assert_eq!(read_body(body_of(Vec::new())).await.unwrap(), Bytes::new());
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_refused_in_one_piece_or_many() {
        let half = Bytes::from(vec![b' '; MAX_BODY_BYTES / 2 + 1]);
        for pieces in [
            vec![half.clone(), half.clone()],
            vec![Bytes::from(vec![b' '; MAX_BODY_BYTES + 1])],
        ] {
            let err = read_body(body_of(pieces)).await.unwrap_err();
            assert_eq!(err.code, 413);
        }
        let at_limit = read_body(body_of(vec![Bytes::from(vec![b' '; MAX_BODY_BYTES])])).await;
        assert_eq!(at_limit.unwrap().len(), MAX_BODY_BYTES);
    }
}

/// Pods alike to one found valid skip the kind's checks (`rules::valid_creates`).
#[cfg(test)]
mod valid_creates_memo {
    use crate::rules::valid_creates::{forget_kept, kept_here, misses_here};
    use serde_json::{json, Value};

    /// Creates a pod named `name` with `image` through the server's create path.
    fn create(
        server: &crate::FakeApiServer,
        name: &str,
        image: &str,
    ) -> Result<Value, crate::error::ApiError> {
        super::apply_own(
            server,
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default", "labels": {"app": "a"}},
                "spec": {"containers": [{"name": "c", "image": image,
                    "ports": [{"containerPort": 80}]}]}}),
        )
    }

    /// The second of two alike pods finds the first kept (nothing more is kept; debug builds
    /// checked that the skipped checks find nothing); a pod that differs is checked and kept
    /// too, and one that differs by being invalid is refused.
    #[test]
    fn an_alike_pod_finds_the_kept_one_and_others_are_checked() {
        let server = crate::FakeApiServer::new();
        forget_kept();
        let first = create(&server, "first", "nginx").expect("a valid pod");
        assert_eq!(kept_here(), 1);
        let token = first["spec"]["volumes"][0]["name"]
            .as_str()
            .expect("a token volume");
        assert!(token.starts_with("kube-api-access-"), "{first}");
        create(&server, "second", "nginx").expect("a valid pod");
        assert_eq!(kept_here(), 1, "the second pod was found alike");
        create(&server, "third", "busybox").expect("a valid pod");
        assert_eq!(kept_here(), 2);
        let err = super::apply_own(
            &server,
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "fourth", "namespace": "default", "labels": {"app": "a"}},
                "spec": {"containers": [{"name": "c", "image": "nginx",
                    "ports": [{"containerPort": 99999}]}]}}),
        )
        .expect_err("an invalid port");
        assert_eq!(err.code, 422, "{err:?}");
        assert_eq!(kept_here(), 2);
    }

    /// A run of pods that are each new keeps only the 1st, 2nd, 4th, ... of them; a run of
    /// alike pods after it is found again once one of them is kept.
    #[test]
    fn a_run_of_new_pods_keeps_few_and_alike_ones_are_found_again() {
        let server = crate::FakeApiServer::new();
        forget_kept();
        for (i, kept) in [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 3)] {
            create(&server, &format!("new-{i}"), &format!("image-{i}")).expect("a valid pod");
            assert_eq!(kept_here(), kept, "after pod {i}");
        }
        assert_eq!(misses_here(), 6);
        // Alike to one another: the 7th misses and is not kept, the 8th is kept, then found.
        for (i, kept, misses) in [(7, 3, 7), (8, 4, 8), (9, 4, 0), (10, 4, 0)] {
            create(&server, &format!("alike-{i}"), "alike").expect("a valid pod");
            assert_eq!(
                (kept_here(), misses_here()),
                (kept, misses),
                "after pod {i}"
            );
        }
    }
}
