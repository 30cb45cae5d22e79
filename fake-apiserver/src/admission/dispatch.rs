//! The two dispatchers (`admission/plugin/webhook/{mutating,validating}/dispatcher.go`):
//! mutating webhooks one after the other, each seeing the previous one's patch, with one
//! reinvocation round for `reinvocationPolicy: IfNeeded`; validating webhooks all at once. A
//! call that fails (no answer, a bad answer) is skipped under `failurePolicy: Ignore` and is a
//! 500 (`Internal error occurred: failed calling webhook "NAME": ...`) under `Fail`; a denial is
//! the webhook's own status; a dry run refuses webhooks that have side effects.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use super::client::{self, Target};
use super::config::{Webhook, Webhooks};
use super::matching::{self, Invocation};
use super::review::{self, ReviewVersion};
use super::Attributes;
use crate::error::{ApiError, StatusCause};
use crate::http::server::Shared;
use crate::http::typed::FieldValidation;

/// How one webhook call went wrong.
#[derive(Debug)]
enum HookError {
    /// The webhook could not be called or answered wrongly (`ErrCallingWebhook`): subject to
    /// the failure policy.
    Calling { webhook: String, reason: String },
    /// The webhook denied the request.
    Rejection(ApiError),
    /// Any other failure: the request fails whatever the policy.
    Other(ApiError),
}

impl HookError {
    fn calling(hook: &Webhook, reason: impl Into<String>) -> Self {
        HookError::Calling {
            webhook: hook.name().to_string(),
            reason: reason.into(),
        }
    }

    /// The error the request fails with, `None` when the failure policy ignores it.
    fn into_request_error(self, hook: &Webhook) -> Option<ApiError> {
        match self {
            HookError::Calling { webhook, reason } => {
                let text = format!("failed calling webhook {webhook:?}: {reason}");
                if hook.ignores_failures() {
                    tracing::warn!(webhook, "Failed calling webhook, failing open: {text}");
                    return None;
                }
                tracing::warn!(webhook, "Failed calling webhook, failing closed: {text}");
                Some(internal_error(&text))
            }
            HookError::Rejection(e) | HookError::Other(e) => Some(e),
        }
    }
}

/// `apierrors.NewInternalError`: a 500 whose one cause repeats the error.
pub(crate) fn internal_error(text: &str) -> ApiError {
    let mut error = ApiError::internal(text);
    error.causes.push(StatusCause {
        reason: String::new(),
        message: text.to_string(),
        field: String::new(),
    });
    error
}

/// What the dispatchers need from the server.
pub(crate) struct Context<'a> {
    /// The server's state (namespaces for selectors, uids).
    pub shared: &'a Shared,
    /// The webhooks, read at the start of the request.
    pub webhooks: &'a Webhooks,
    /// The request's other served versions (for `matchPolicy: Equivalent`).
    pub equivalents: &'a [(String, String)],
    /// Warnings for the client, from the webhooks' answers.
    pub warnings: Vec<String>,
}

impl Context<'_> {
    fn should_call(&self, hook: &Webhook, a: &Attributes) -> Result<Option<Invocation>, ApiError> {
        matching::should_call(self.shared, hook, a, self.equivalents)
    }

    /// Calls one webhook; returns its checked answer.
    async fn call(
        &self,
        hook: &Webhook,
        invocation: &Invocation,
        a: &Attributes,
        mutating: bool,
    ) -> Result<review::Response, HookError> {
        if a.dry_run {
            match hook.spec["sideEffects"].as_str() {
                None => return Err(HookError::calling(hook, "Webhook SideEffects is nil")),
                Some("None" | "NoneOnDryRun") => {}
                Some(_) => {
                    return Err(HookError::Other(ApiError::bad_request(format!(
                        "admission webhook {:?} does not support dry run",
                        hook.name()
                    ))))
                }
            }
        }
        let version =
            ReviewVersion::choose(&hook.spec["admissionReviewVersions"]).map_err(|e| {
                HookError::calling(hook, format!("could not create admission objects: {e}"))
            })?;
        let uid = self.shared.new_uid();
        let body = review::request(version, &uid, a, invocation);
        let timeout = hook.timeout_seconds();
        let target = Target::of(
            &hook.spec["clientConfig"],
            timeout,
            self.shared.admission.service_resolver.as_ref(),
        )
        .map_err(|e| HookError::calling(hook, format!("could not get REST client: {e}")))?;
        let ca_bundle = client::ca_bundle(&hook.spec["clientConfig"]);
        let bytes = serde_json::to_vec(&body)
            .map_err(|e| HookError::Other(internal_error(&e.to_string())))?;
        tracing::debug!(
            webhook = hook.name(),
            operation = a.operation,
            "calling admission webhook"
        );
        let answer = client::post(&target, &ca_bundle, bytes, Duration::from_secs(timeout))
            .await
            .map_err(|e| HookError::calling(hook, format!("failed to call webhook: {e}")))?;
        review::verify(version, &uid, mutating, &answer).map_err(|e| {
            HookError::calling(hook, format!("received invalid webhook response: {e}"))
        })
    }

    fn record_warnings(&mut self, warnings: &[String]) {
        for w in warnings {
            if !self.warnings.contains(w) {
                self.warnings.push(w.clone());
            }
        }
    }
}

/// Runs the mutating webhooks on `a.object` (changed in place).
pub(crate) async fn mutate(cx: &mut Context<'_>, a: &mut Attributes) -> Result<(), ApiError> {
    let hooks = &cx.webhooks.mutating;
    let mut previously_invoked: BTreeSet<String> = BTreeSet::new();
    let mut reinvoke: BTreeSet<String> = BTreeSet::new();
    let mut should_reinvoke = false;
    for round in 0..2 {
        if round == 1 && !should_reinvoke {
            break;
        }
        for hook in hooks {
            let Some(invocation) = cx.should_call(hook, a)? else {
                continue;
            };
            if round == 1 && !reinvoke.contains(&hook.uid()) {
                continue;
            }
            let result = call_mutating(cx, hook, &invocation, a).await;
            let changed = matches!(result, Ok(true));
            if changed {
                // A later change reinvokes the earlier webhooks that asked for it.
                reinvoke.append(&mut previously_invoked);
                should_reinvoke = true;
            }
            if hook.reinvoked_if_needed() {
                previously_invoked.insert(hook.uid());
            }
            if let Err(e) = result {
                if let Some(error) = e.into_request_error(hook) {
                    return Err(error);
                }
            }
        }
    }
    Ok(())
}

/// One mutating call; whether its patch changed the object.
async fn call_mutating(
    cx: &mut Context<'_>,
    hook: &Webhook,
    invocation: &Invocation,
    a: &mut Attributes,
) -> Result<bool, HookError> {
    let answer = cx.call(hook, invocation, a, true).await?;
    cx.record_warnings(&answer.warnings);
    if !answer.allowed {
        return Err(HookError::Rejection(review::denial(
            hook.name(),
            answer.result.as_ref(),
        )));
    }
    let Some(patch_bytes) = answer.patch else {
        return Ok(false);
    };
    let patch: Value = crate::store::json::from_slice(&patch_bytes).map_err(|e| {
        HookError::calling(
            hook,
            format!("received undecodable patch in webhook response: {e}"),
        )
    })?;
    if patch.as_array().is_some_and(|ops| ops.is_empty()) {
        return Ok(false);
    }
    let Some(object) = a.object.as_mut() else {
        return Err(HookError::Other(internal_error(&format!(
            "admission webhook {:?} attempted to modify the object, which is not supported for this operation",
            hook.name()
        ))));
    };
    if answer.patch_type != "JSONPatch" {
        return Err(HookError::calling(
            hook,
            format!("unsupported patch type {:?}", answer.patch_type),
        ));
    }
    let own_kind =
        crate::resource::same_group(&a.kind.group, &a.info.group) && a.kind.kind == a.info.kind;
    if !own_kind {
        // A subresource's own object (an Eviction) keeps its kind.
        let mut patched = crate::patch::json_patch(object.clone(), &patch)
            .map_err(|e| HookError::Other(internal_error(&e.to_string())))?;
        patched = super::with_kind(&patched, &a.kind);
        let changed = !crate::store::value_eq::equal(object, &patched);
        *object = patched;
        return Ok(changed);
    }
    // The patch applies to what the webhook was sent (the invocation's version); the result
    // comes back to the request's version and is decoded as a request body is (unknown fields
    // dropped), compared, then defaulted, as the real dispatcher does with the patched JSON.
    let view = review::versioned(&a.info, &Some(object.clone()), invocation);
    let patched = crate::patch::json_patch(view, &patch)
        .map_err(|e| HookError::Other(internal_error(&e.to_string())))?;
    let patched = crate::registry::conversion::request_form_from_version(
        &a.info,
        patched,
        &invocation.kind.version,
    );
    let mut patched = super::with_kind(&patched, &a.kind);
    crate::http::typed::decode(&a.info, &mut patched, FieldValidation::Ignore, None)
        .map_err(|e| HookError::Other(internal_error(&e.message)))?;
    crate::registry::conversion::from_builtin_view(&a.info, &mut patched);
    let mut patched = super::with_kind(&patched, &a.kind);
    let changed = !crate::store::value_eq::equal(object, &patched);
    crate::rules::defaults::on_decode(&a.info, &mut patched);
    *object = patched;
    Ok(changed)
}

/// Runs the validating webhooks (in parallel); the first refusal, in webhook order, wins.
pub(crate) async fn validate(cx: &mut Context<'_>, a: &Attributes) -> Result<(), ApiError> {
    let mut calls = Vec::new();
    for hook in &cx.webhooks.validating {
        if let Some(invocation) = cx.should_call(hook, a)? {
            calls.push((hook, invocation));
        }
    }
    if calls.is_empty() {
        return Ok(());
    }
    let shared_cx: &Context<'_> = cx;
    let results = futures::future::join_all(
        calls
            .iter()
            .map(|(hook, invocation)| shared_cx.call(hook, invocation, a, false)),
    )
    .await;
    let mut first = None;
    for ((hook, _), result) in calls.iter().zip(results) {
        let outcome = match result {
            Ok(answer) => {
                cx.record_warnings(&answer.warnings);
                if answer.allowed {
                    continue;
                }
                HookError::Rejection(review::denial(hook.name(), answer.result.as_ref()))
            }
            Err(e) => e,
        };
        if let Some(error) = outcome.into_request_error(hook) {
            tracing::debug!(webhook = hook.name(), error = %error.message, "rejected by webhook");
            first.get_or_insert(error);
        }
    }
    match first {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
