//! Admission webhooks: the `MutatingAdmissionWebhook` and `ValidatingAdmissionWebhook` plugins
//! of kube-apiserver, calling the webhooks of the stored `MutatingWebhookConfiguration`s and
//! `ValidatingWebhookConfiguration`s over HTTPS.
//!
//! Order, as on a real server: the in-tree admission (namespace lifecycle, ServiceAccount), then
//! the mutating webhooks on the decoded object, then the kind's own validation, then the
//! validating webhooks, then the write. Updates (PUT, PATCH, apply) call the mutating webhooks
//! with the object the request makes of the stored one and the stored one as `oldObject`;
//! deletes call both kinds with the stored object as `oldObject` and no object.
//!
//! **How the calls fit the synchronous write path.** The write paths decide a write inside the
//! store's lock, synchronously, and a webhook call is an HTTP round trip that must not hold that
//! lock. So each admission point in the write path ([`mutate`], [`validate`],
//! [`validate_mutation`], [`delete`]) is a synchronous hook that looks for the outcome of its
//! webhooks in the request's admission scope: found, it applies it (the mutated object, the
//! validated object, or the refusal); not found, it records what the webhooks are to be asked
//! and fails the attempt, which leaves the store untouched. [`admit`] then calls the webhooks
//! with no lock held, records the outcome and runs the request again. Outcomes are keyed by the
//! stored object they were computed against (uid and resourceVersion), so a request that finds
//! the object changed since calls the webhooks again, as the real server's optimistic update
//! loop does. A request with no configured webhooks runs once, with no scope.
//!
//! `pods/eviction` calls both kinds of webhooks with the `Eviction` (kind `policy/v1`
//! Eviction, resource `pods`, subresource `eviction`) before the eviction is decided.
//!
//! `matchConditions` are evaluated with [`crate::cel`] (without the `authorizer` variable).
//! Not covered: the `scale` and `binding` subresources (their own objects) and writes the
//! in-process controllers make (on a cluster those are other clients' requests).

pub(crate) mod certificates;
pub(crate) mod claim_resize;
pub(crate) mod client;
mod config;
mod default_classes;
mod dispatch;
pub(crate) mod limit_ranger;
mod matching;
pub(crate) mod node_taint;
pub(crate) mod pod_security;
pub(crate) mod policy;
pub(crate) mod priority;
mod review;
mod runtime_class;
mod storage_protection;
pub mod validation;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::http::{header, HeaderValue};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{json, Value};

pub use config::{AdmissionConfig, ServiceReference, ServiceResolver};
pub use pod_security::config::{ConfigError as PodSecurityConfigError, PodSecurityConfiguration};

use crate::auth::UserInfo;
use crate::error::ApiError;
use crate::http::request::Query;
use crate::resource::ResourceInfo;
use crate::store::Mutation;
use crate::FakeApiServer;

/// How often a request is run again for webhook outcomes before it gives up (each run needs one
/// more outcome; a create needs two, a contended update a few more).
const MAX_RUNS: usize = 16;

/// What a webhook is told about the request (`admission.Attributes`).
#[derive(Debug, Clone)]
pub(crate) struct Attributes {
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'static str,
    /// The requested resource.
    pub info: Arc<ResourceInfo>,
    /// The kind of the object written (the resource's, or a subresource's own, e.g. Eviction).
    pub kind: matching::Gvk,
    /// The requested subresource, empty for the main resource.
    pub subresource: String,
    /// The namespace (a namespace's own name for requests on namespaces).
    pub namespace: String,
    /// The object's name (empty for a create by `generateName`).
    pub name: String,
    /// The object written, with `apiVersion` and `kind`.
    pub object: Option<Value>,
    /// The stored object, with `apiVersion` and `kind`.
    pub old_object: Option<Value>,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// The operation's options (`CreateOptions`, `UpdateOptions`, `DeleteOptions`).
    pub options: Value,
    /// Who sent the request.
    pub user: UserInfo,
}

impl Attributes {
    fn rule_target(&self) -> matching::RuleTarget<'_> {
        matching::RuleTarget {
            operation: self.operation,
            group: &self.info.group,
            version: &self.info.version,
            resource: &self.info.plural,
            subresource: &self.subresource,
            namespace: &self.namespace,
        }
    }

    fn resource_is_namespaces(&self) -> bool {
        self.info.group.is_empty() && self.info.plural == "namespaces"
    }
}

/// The request being admitted, as the handler received it.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    info: Arc<ResourceInfo>,
    verb: String,
    apply: bool,
    subresource: String,
    namespace: Option<String>,
    name: Option<String>,
    user: Arc<UserInfo>,
    query: Query,
    dry_run: bool,
    delete_body: Bytes,
}

impl Request {
    /// The request for `verb` on `info` at `path` when it is a write admission webhooks see
    /// (`None` for reads and for the subresources they are not called for here); `body` is
    /// kept for delete options only.
    pub(crate) fn of_write(
        info: &Arc<ResourceInfo>,
        verb: &str,
        path: &crate::http::request::ResourcePath,
        query: &Query,
        headers: &http::HeaderMap,
        user: &Arc<UserInfo>,
        body: &Bytes,
    ) -> Option<Self> {
        let subresource = path.subresource.as_deref().unwrap_or_default();
        let write = matches!(
            verb,
            "create" | "update" | "patch" | "delete" | "deletecollection"
        ) && matches!(subresource, "" | "status" | "finalize" | "eviction")
            && !info.review
            && !config::is_exempt(&info.group, &info.kind);
        if !write {
            return None;
        }
        let content_type = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let delete = matches!(verb, "delete" | "deletecollection");
        Some(Self {
            info: info.clone(),
            verb: verb.to_string(),
            apply: content_type.starts_with("application/apply-patch"),
            subresource: subresource.to_string(),
            namespace: path.namespace.clone(),
            name: path.name.clone(),
            user: user.clone(),
            query: query.clone(),
            dry_run: query.get("dryRun") == Some("All"),
            delete_body: if delete { body.clone() } else { Bytes::new() },
        })
    }

    /// `CreateOptions` or `UpdateOptions` as the webhook sees them.
    fn write_options(&self, kind: &str) -> Value {
        let mut options = json!({"kind": kind, "apiVersion": "meta.k8s.io/v1"});
        if let Some(dry_run) = self.query.get("dryRun").filter(|d| !d.is_empty()) {
            options["dryRun"] = json!([dry_run]);
        }
        for key in ["fieldManager", "fieldValidation"] {
            if let Some(v) = self.query.get(key).filter(|v| !v.is_empty()) {
                options[key] = json!(v);
            }
        }
        options
    }

    /// `DeleteOptions` from the body and the query.
    fn delete_options(&self) -> Value {
        let mut options = crate::store::json::from_slice(&self.delete_body)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        options["kind"] = json!("DeleteOptions");
        options["apiVersion"] = json!("meta.k8s.io/v1");
        if let Some(Ok(grace)) = self.query.get("gracePeriodSeconds").map(str::parse::<i64>) {
            options["gracePeriodSeconds"] = json!(grace);
        }
        if let Some(policy) = self.query.get("propagationPolicy") {
            options["propagationPolicy"] = json!(policy);
        }
        if let Some(dry_run) = self.query.get("dryRun").filter(|d| !d.is_empty()) {
            options["dryRun"] = json!([dry_run]);
        }
        options
    }
}

/// The admission phase an outcome belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Phase {
    Mutating,
    Validating,
    /// Both kinds of webhooks on a delete.
    Delete,
    /// Both kinds, one after the other, on a subresource's own object (an Eviction).
    Subresource,
}

/// An outcome's identity: its phase and the stored object it was computed against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    phase: Phase,
    old: Option<(String, String)>,
}

impl Key {
    fn new(phase: Phase, old: Option<&Value>) -> Self {
        let old = old.map(|o| {
            let meta = &o["metadata"];
            (
                meta["uid"].as_str().unwrap_or_default().to_string(),
                meta["resourceVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        });
        Key { phase, old }
    }
}

/// What the webhooks of a phase decided.
#[derive(Debug, Clone)]
enum Outcome {
    /// Admitted: the object to go on with (mutated, or exactly as validated).
    Admitted(Value),
    /// Refused with this error.
    Refused(ApiError),
}

/// Webhooks to be asked before the request can go on.
#[derive(Debug)]
struct Pending {
    key: Key,
    attributes: Attributes,
    /// The object as the write path holds it (for a validated object to be put back).
    object: Value,
}

/// One request's admission state, shared by the hooks and [`admit`].
struct Scope {
    /// Set while the server makes writes of its own during the request (see [`Unadmitted`]).
    suspended: usize,
    request: Request,
    webhooks: Arc<config::Webhooks>,
    equivalents: Vec<(String, String)>,
    outcomes: HashMap<Key, Outcome>,
    pending: Option<Pending>,
}

tokio::task_local! {
    static SCOPE: Arc<Mutex<Scope>>;
}

/// Runs `f` with the request's scope, if the request has one.
fn with_scope<R>(f: impl FnOnce(Option<&mut Scope>) -> R) -> R {
    let mut f = Some(f);
    let result = SCOPE.try_with(|scope| {
        let mut scope = scope.lock().unwrap_or_else(|e| e.into_inner());
        (f.take().expect("called once"))(Some(&mut scope))
    });
    match result {
        Ok(r) => r,
        Err(_) => (f.take().expect("not called"))(None),
    }
}

/// The error an attempt fails with while its webhooks are being called (never sent).
fn pending_error() -> ApiError {
    ApiError::internal("admission webhooks are to be called")
}

impl Scope {
    /// Whether a hook for `info` with this old object belongs to the request (and not to a
    /// write an in-process controller makes while the request runs).
    fn concerns(&self, info: &ResourceInfo, operation: &str, old: Option<&Value>) -> bool {
        if self.suspended > 0 {
            return false;
        }
        let r = &self.request;
        if info.group != r.info.group || info.plural != r.info.plural {
            return false;
        }
        let verb_fits = match operation {
            "CREATE" => r.verb == "create" || (r.verb == "patch" && r.apply),
            "UPDATE" => matches!(r.verb.as_str(), "update" | "patch"),
            _ => matches!(r.verb.as_str(), "delete" | "deletecollection"),
        };
        let name_fits = match (old, r.verb.as_str()) {
            (Some(old), "update" | "patch" | "delete") => {
                old["metadata"]["name"].as_str() == r.name.as_deref()
            }
            _ => true,
        };
        verb_fits && name_fits
    }

    /// The attributes of an admission point.
    fn attributes(
        &self,
        info: &ResourceInfo,
        kind: &matching::Gvk,
        operation: &'static str,
        old: Option<&Value>,
        object: Option<&Value>,
    ) -> Attributes {
        let r = &self.request;
        let typed = |o: &Value| with_kind(o, kind);
        let object = object.map(typed);
        let old_object = old.map(typed);
        let meta_of = |key: &str| {
            [&object, &old_object]
                .into_iter()
                .flatten()
                .find_map(|o| o["metadata"][key].as_str().filter(|s| !s.is_empty()))
                .map(str::to_string)
        };
        let name = meta_of("name")
            .or_else(|| r.name.clone())
            .unwrap_or_default();
        let namespace = if info.group.is_empty() && info.plural == "namespaces" {
            name.clone()
        } else if info.namespaced {
            r.namespace
                .clone()
                .or_else(|| meta_of("namespace"))
                .unwrap_or_default()
        } else {
            String::new()
        };
        let options = match operation {
            "CREATE" => r.write_options("CreateOptions"),
            "UPDATE" => r.write_options("UpdateOptions"),
            _ => r.delete_options(),
        };
        Attributes {
            operation,
            info: r.info.clone(),
            kind: kind.clone(),
            subresource: r.subresource.clone(),
            namespace,
            name,
            object,
            old_object,
            dry_run: r.dry_run,
            options,
            user: (*r.user).clone(),
        }
    }

    /// Whether any webhook of the phase has a rule for the request (selectors are looked at
    /// when the webhooks are called).
    fn any_rule_matches(&self, phase: Phase, a: &Attributes) -> bool {
        let hooks = match phase {
            Phase::Mutating => &self.webhooks.mutating,
            Phase::Validating => &self.webhooks.validating,
            Phase::Delete | Phase::Subresource => {
                return self.any_rule_matches(Phase::Mutating, a)
                    || self.any_rule_matches(Phase::Validating, a)
            }
        };
        let target = a.rule_target();
        hooks
            .iter()
            .any(|h| matching::invocation(h, &target, &a.kind, &self.equivalents).is_some())
    }

    /// The admission point's outcome, or records the webhooks to ask and fails the attempt.
    fn decide(
        &mut self,
        phase: Phase,
        info: &ResourceInfo,
        operation: &'static str,
        old: Option<&Value>,
        object: Option<&Value>,
    ) -> Option<Result<Value, ApiError>> {
        let kind = matching::Gvk {
            group: info.group.clone(),
            version: info.version.clone(),
            kind: info.kind.clone(),
        };
        self.decide_as(phase, info, &kind, operation, old, object)
    }

    /// [`Scope::decide`] for an object of `kind`.
    fn decide_as(
        &mut self,
        phase: Phase,
        info: &ResourceInfo,
        kind: &matching::Gvk,
        operation: &'static str,
        old: Option<&Value>,
        object: Option<&Value>,
    ) -> Option<Result<Value, ApiError>> {
        if !self.concerns(info, operation, old) {
            return None;
        }
        let key = Key::new(phase, old);
        let found = if phase == Phase::Validating {
            // Used once: a create that retries with another generated name validates again.
            self.outcomes.remove(&key)
        } else {
            self.outcomes.get(&key).cloned()
        };
        match found {
            Some(Outcome::Admitted(v)) => return Some(Ok(v)),
            Some(Outcome::Refused(e)) => return Some(Err(e)),
            None => {}
        }
        let attributes = self.attributes(info, kind, operation, old, object);
        if !self.any_rule_matches(phase, &attributes) {
            return None;
        }
        self.pending = Some(Pending {
            key,
            attributes,
            object: object.cloned().unwrap_or(Value::Null),
        });
        Some(Err(pending_error()))
    }
}

/// A copy of `object` with `apiVersion` and `kind` of `kind`, first.
fn with_kind(object: &Value, kind: &matching::Gvk) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("apiVersion".into(), json!(kind.api_version()));
    out.insert("kind".into(), json!(kind.kind));
    if let Some(map) = object.as_object() {
        for (k, v) in map {
            if k != "apiVersion" && k != "kind" {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// `metadata.name` of the admitted object, else its `generateName`, else `Unknown`: the name an
/// admission plugin's `Forbidden` names (the name is not generated yet).
pub(crate) fn admitted_name(object: &Value) -> &str {
    let meta = &object["metadata"];
    [&meta["name"], &meta["generateName"]]
        .into_iter()
        .filter_map(Value::as_str)
        .find(|n| !n.is_empty())
        .unwrap_or("Unknown")
}

/// The in-tree plugins that admit the creation of built-in objects from the store, in the real
/// server's order: `LimitRanger` (its defaults; its checks run with the validating plugins, see
/// [`limit_ranger::validate_create`]), `TaintNodesByCondition`, `Priority`, `DefaultStorageClass`,
/// `StorageObjectInUseProtection` ([`storage_protection`]) and `DefaultIngressClass`
/// ([`default_classes`]; each looks at kinds no other plugin here changes, so where they run
/// among the others makes no difference), then `RuntimeClass`.
pub(crate) fn admit_builtin_create(
    shared: &crate::context::Shared,
    info: &ResourceInfo,
    object: &mut Value,
) -> Result<(), ApiError> {
    limit_ranger::mutate_create(shared, info, object);
    node_taint::admit_create(info, object);
    priority::admit_create(shared, info, object)?;
    default_classes::admit_create(shared, info, object);
    storage_protection::admit_create(info, object);
    runtime_class::admit_create(shared, info, object)
}

/// The webhooks of creating a subresource's own object on `info` (an `Eviction` on
/// `pods/eviction`): mutating then validating, before the subresource acts; `object` becomes
/// what the mutating ones made of it.
pub(crate) fn create_subresource(info: &ResourceInfo, object: &mut Value) -> Result<(), ApiError> {
    let (group, version) =
        crate::registry::split_api_version(object["apiVersion"].as_str().unwrap_or_default());
    let mut kind = matching::Gvk {
        group: group.to_string(),
        version: version.to_string(),
        kind: object["kind"].as_str().unwrap_or_default().to_string(),
    };
    if kind.kind.is_empty() {
        // The one such subresource here is pods/eviction; its body may leave the type out.
        kind = matching::Gvk {
            group: "policy".into(),
            version: "v1".into(),
            kind: "Eviction".into(),
        };
    }
    let decided = with_scope(|scope| {
        scope?.decide_as(
            Phase::Subresource,
            info,
            &kind,
            "CREATE",
            None,
            Some(object),
        )
    });
    if let Some(decided) = decided {
        *object = decided?;
    }
    Ok(())
}

fn operation_of(old: Option<&Value>) -> &'static str {
    if old.is_some() {
        "UPDATE"
    } else {
        "CREATE"
    }
}

/// The mutating webhooks of a create (`old` is `None`) or an update of `old`: `object` (as
/// decoded) becomes what they made of it.
pub(crate) fn mutate(
    info: &ResourceInfo,
    old: Option<&Value>,
    object: &mut Value,
) -> Result<(), ApiError> {
    let decided = with_scope(|scope| {
        scope?.decide(Phase::Mutating, info, operation_of(old), old, Some(object))
    });
    if let Some(decided) = decided {
        *object = decided?;
    }
    Ok(())
}

/// The validating webhooks of a create or an update of `old`, on the final `object`; when they
/// were asked in an earlier attempt, `object` becomes exactly what they admitted (the answer
/// says whether it did).
pub(crate) fn validate(
    info: &ResourceInfo,
    old: Option<&Value>,
    object: &mut Value,
) -> Result<bool, ApiError> {
    let decided = with_scope(|scope| {
        scope?.decide(
            Phase::Validating,
            info,
            operation_of(old),
            old,
            Some(object),
        )
    });
    match decided {
        Some(decided) => {
            *object = decided?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// [`validate`] for the write an update decided, and whether the object was replaced.
pub(crate) fn validate_mutation(
    info: &ResourceInfo,
    old: &Value,
    mutation: Mutation,
) -> Result<(Mutation, bool), ApiError> {
    Ok(match mutation {
        Mutation::Put(mut o) => {
            let replaced = validate(info, Some(old), &mut o)?;
            (Mutation::Put(o), replaced)
        }
        Mutation::Finalize(mut o) => {
            let replaced = validate(info, Some(old), &mut o)?;
            (Mutation::Finalize(o), replaced)
        }
        Mutation::Unchanged(o) => {
            validate(info, Some(old), &mut o.clone())?;
            (Mutation::Unchanged(o), false)
        }
        Mutation::Delete(o) => (Mutation::Delete(o), false),
    })
}

/// The webhooks of deleting `old` (mutating ones see no object and may not patch it).
pub(crate) fn delete(info: &ResourceInfo, old: &Value) -> Result<(), ApiError> {
    let decided = with_scope(|scope| scope?.decide(Phase::Delete, info, "DELETE", Some(old), None));
    match decided {
        Some(Err(e)) => Err(e),
        _ => Ok(()),
    }
}

/// Runs `run` until the conversions it needs are answered (at most [`MAX_RUNS`] times).
async fn run_converting(
    server: &FakeApiServer,
    mut run: impl FnMut() -> Result<Response, ApiError>,
) -> Result<Response, ApiError> {
    let mut result = run();
    for _ in 1..MAX_RUNS {
        if !crate::conversion_webhook::call_pending(server).await {
            break;
        }
        result = run();
    }
    result
}

/// Runs a write request through admission: `run` serves it (synchronously, as the handlers
/// do) and is run again after each round of webhook calls. Returns its result and the warnings
/// the webhooks gave, for `Warning` headers.
///
/// Within a conversion scope (see [`crate::conversion_webhook::scope`]), a run that needs a
/// conversion webhook's answer is run again once the webhook answered, keeping the admission
/// outcomes it already has.
pub(crate) async fn admit(
    server: &FakeApiServer,
    request: Option<Request>,
    mut run: impl FnMut() -> Result<Response, ApiError>,
) -> (Result<Response, ApiError>, Vec<String>) {
    let Some(request) = request else {
        return (run_converting(server, run).await, Vec::new());
    };
    let webhooks = config::Webhooks::load(&server.shared);
    if webhooks.is_empty() {
        return (run_converting(server, run).await, Vec::new());
    }
    let info = request.info.clone();
    let equivalents = server
        .shared
        .registry
        .all()
        .into_iter()
        .filter(|r| {
            crate::resource::same_group(&r.group, &info.group)
                && r.plural == info.plural
                && r.version != info.version
        })
        .map(|r| (r.version, r.kind))
        .collect();
    let scope = Arc::new(Mutex::new(Scope {
        suspended: 0,
        request,
        webhooks: Arc::new(webhooks),
        equivalents,
        outcomes: HashMap::new(),
        pending: None,
    }));
    let mut warnings = Vec::new();
    // The webhook calls are boxed (here and below): their state is kilobytes, and every write
    // request's future would otherwise carry room for it.
    Box::pin(prefetch_collection(server, &scope, &mut warnings)).await;
    for _ in 0..MAX_RUNS {
        let result = SCOPE.sync_scope(scope.clone(), &mut run);
        if crate::conversion_webhook::call_pending(server).await {
            continue;
        }
        let pending = lock(&scope).pending.take();
        let Some(pending) = pending else {
            return (result, warnings);
        };
        if result.is_ok() {
            // A hook failed inside something that did not fail the request: never run a
            // request that already succeeded again.
            tracing::warn!(?pending.key, "admission point left pending by a successful request");
            return (result, warnings);
        }
        let outcome = Box::pin(call_webhooks(server, &scope, &pending, &mut warnings)).await;
        lock(&scope).outcomes.insert(pending.key, outcome);
    }
    (
        Err(ApiError::internal(
            "the object kept changing while admission webhooks were called",
        )),
        warnings,
    )
}

fn lock(scope: &Mutex<Scope>) -> std::sync::MutexGuard<'_, Scope> {
    scope.lock().unwrap_or_else(|e| e.into_inner())
}

/// Calls the webhooks a pending admission point needs (no lock held).
async fn call_webhooks(
    server: &FakeApiServer,
    scope: &Mutex<Scope>,
    pending: &Pending,
    warnings: &mut Vec<String>,
) -> Outcome {
    // The scope's lock is not held across the calls.
    let (webhooks, equivalents) = {
        let s = lock(scope);
        (s.webhooks.clone(), s.equivalents.clone())
    };
    let mut cx = dispatch::Context {
        shared: &server.shared,
        webhooks: &webhooks,
        equivalents: &equivalents,
        warnings: Vec::new(),
    };
    let mut attributes = pending.attributes.clone();
    let result = match pending.key.phase {
        Phase::Mutating => dispatch::mutate(&mut cx, &mut attributes)
            .await
            .map(|()| attributes.object.take().unwrap_or(Value::Null)),
        Phase::Validating => dispatch::validate(&mut cx, &attributes)
            .await
            .map(|()| pending.object.clone()),
        Phase::Subresource => match dispatch::mutate(&mut cx, &mut attributes).await {
            Ok(()) => dispatch::validate(&mut cx, &attributes)
                .await
                .map(|()| attributes.object.take().unwrap_or(Value::Null)),
            Err(e) => Err(e),
        },
        Phase::Delete => match dispatch::mutate(&mut cx, &mut attributes).await {
            Ok(()) => dispatch::validate(&mut cx, &attributes)
                .await
                .map(|()| Value::Null),
            Err(e) => Err(e),
        },
    };
    for w in cx.warnings {
        if !warnings.contains(&w) {
            warnings.push(w);
        }
    }
    match result {
        Ok(object) => Outcome::Admitted(object),
        Err(e) => Outcome::Refused(e),
    }
}

/// A delete-collection asks the webhooks about every object it selects before it deletes
/// any, so that one run deletes them all (and lists them as they were).
async fn prefetch_collection(
    server: &FakeApiServer,
    scope: &Arc<Mutex<Scope>>,
    warnings: &mut Vec<String>,
) {
    let (info, query, namespace) = {
        let s = lock(scope);
        if s.request.verb != "deletecollection" {
            return;
        }
        (
            s.request.info.clone(),
            s.request.query.clone(),
            s.request.namespace.clone(),
        )
    };
    let Ok(selection) = crate::http::list::ListRequest::parse(&info, &query) else {
        return;
    };
    let key = crate::store::resource_key(&info.group, &info.plural);
    let snapshot = server.shared.store.snapshot(&key, namespace.as_deref());
    for (_, bytes) in snapshot.items {
        let Ok(object) = crate::store::json::from_slice(&bytes) else {
            continue;
        };
        if !selection.matches(&object) {
            continue;
        }
        let pending = {
            let mut s = lock(scope);
            let decided = s.decide(Phase::Delete, &info, "DELETE", Some(&object), None);
            match decided {
                Some(Err(_)) => s.pending.take(),
                _ => None,
            }
        };
        if let Some(pending) = pending {
            let outcome = call_webhooks(server, scope, &pending, warnings).await;
            lock(scope).outcomes.insert(pending.key, outcome);
        }
    }
}

/// While alive, the writes the server makes on its own during a request (the in-process
/// controllers reacting to the request's write, CRDs being established) skip admission, as
/// they are not the request's: on a real cluster they are other clients' requests.
#[must_use]
pub(crate) struct Unadmitted(());

impl Unadmitted {
    /// Suspends admission for the current request until the guard is dropped.
    pub(crate) fn enter() -> Self {
        with_scope(|scope| {
            if let Some(scope) = scope {
                scope.suspended += 1;
            }
        });
        Unadmitted(())
    }
}

impl Drop for Unadmitted {
    fn drop(&mut self) {
        with_scope(|scope| {
            if let Some(scope) = scope {
                scope.suspended = scope.suspended.saturating_sub(1);
            }
        });
    }
}

/// A `Warning` header value for `text` (`299 - "text"`, quotes and backslashes escaped).
pub(crate) fn warning_header(text: &str) -> Option<HeaderValue> {
    let escaped = text.replace('\\', "\\\\").replace('"', "\\\"");
    HeaderValue::from_str(&format!("299 - \"{escaped}\"")).ok()
}

/// Adds webhook warnings to a response.
pub(crate) fn with_warnings(mut response: Response, warnings: &[String]) -> Response {
    for w in warnings {
        if let Some(value) = warning_header(w) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}

impl crate::FakeApiServerBuilder {
    /// How admission webhooks configured with `clientConfig.service` are reached: `resolver`
    /// maps a service (namespace, name, port, path) to the address to connect to (`host:port`
    /// or a URL), as the cluster network would. The request still goes to the service's path
    /// and the certificate must be valid for `NAME.NAMESPACE.svc`. Without a resolver, such
    /// webhooks fail as an unresolvable host does.
    pub fn webhook_service_resolver(
        mut self,
        resolver: impl Fn(&ServiceReference) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.admission.service_resolver = Some(Arc::new(resolver));
        self
    }

    /// The `PodSecurity` admission plugin's configuration: the policy of namespaces without
    /// Pod Security labels and the exempt users, namespaces and runtime classes (by default
    /// every mode `privileged:latest`, nothing exempt), as kube-apiserver's
    /// `--admission-control-config-file` gives it (see
    /// [`PodSecurityConfiguration::from_admission_configuration_file`]).
    pub fn pod_security_configuration(mut self, configuration: PodSecurityConfiguration) -> Self {
        self.admission.pod_security = configuration;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forbidden_name_is_the_name_else_the_prefix_else_unknown() {
        assert_eq!(admitted_name(&json!({"metadata": {"name": "p"}})), "p");
        assert_eq!(
            admitted_name(&json!({"metadata": {"generateName": "web-"}})),
            "web-"
        );
        assert_eq!(admitted_name(&json!({})), "Unknown");
    }

    fn scope(verb: &str) -> Scope {
        let info = Arc::new(ResourceInfo {
            version: "v1".into(),
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
            namespaced: true,
            ..Default::default()
        });
        let hook = config::Webhook {
            configuration: "c".into(),
            index: 0,
            spec: json!({"name": "h.example.com", "rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]}),
        };
        Scope {
            suspended: 0,
            request: Request {
                info,
                verb: verb.into(),
                apply: false,
                subresource: String::new(),
                namespace: Some("default".into()),
                name: Some("cm".into()),
                user: Arc::new(UserInfo::admin()),
                query: Query::default(),
                dry_run: false,
                delete_body: Bytes::new(),
            },
            webhooks: Arc::new(config::Webhooks {
                mutating: Vec::new(),
                validating: vec![hook],
            }),
            equivalents: Vec::new(),
            outcomes: HashMap::new(),
            pending: None,
        }
    }

    fn stored(name: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "default", "uid": "u", "resourceVersion": "7"}})
    }

    #[test]
    fn an_admission_point_waits_for_its_webhooks_then_uses_their_outcome() {
        let mut s = scope("delete");
        let info = s.request.info.clone();
        let old = stored("cm");
        let first = s.decide(Phase::Delete, &info, "DELETE", Some(&old), None);
        assert!(matches!(first, Some(Err(_))), "pending: {first:?}");
        let pending = s.pending.take().expect("recorded");
        assert_eq!(pending.attributes.operation, "DELETE");
        assert_eq!(pending.attributes.name, "cm");
        assert_eq!(pending.attributes.namespace, "default");
        assert_eq!(pending.attributes.options["kind"], "DeleteOptions");
        s.outcomes
            .insert(pending.key, Outcome::Refused(ApiError::bad_request("no")));
        let again = s.decide(Phase::Delete, &info, "DELETE", Some(&old), None);
        assert_eq!(
            again.and_then(Result::err).map(|e| e.message),
            Some("no".into())
        );
        // The stored object changed since: the webhooks are asked again.
        let mut newer = old.clone();
        newer["metadata"]["resourceVersion"] = json!("8");
        assert!(matches!(
            s.decide(Phase::Delete, &info, "DELETE", Some(&newer), None),
            Some(Err(_))
        ));
        assert!(s.pending.is_some());
    }

    #[test]
    fn writes_that_are_not_the_requests_are_not_admitted() {
        let mut s = scope("delete");
        let info = s.request.info.clone();
        // Another object of the kind (a controller deleting a dependent).
        assert!(s
            .decide(Phase::Delete, &info, "DELETE", Some(&stored("other")), None)
            .is_none());
        // An update while the request is a delete.
        let object = stored("cm");
        assert!(s
            .decide(
                Phase::Mutating,
                &info,
                "UPDATE",
                Some(&stored("cm")),
                Some(&object)
            )
            .is_none());
        // The request's own object while the server writes on its own.
        s.suspended = 1;
        assert!(s
            .decide(Phase::Delete, &info, "DELETE", Some(&stored("cm")), None)
            .is_none());
        assert!(s.pending.is_none());
    }
}
