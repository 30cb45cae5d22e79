//! Conversion webhooks: custom resources of a CRD whose `spec.conversion.strategy` is `Webhook`
//! are converted between versions by posting `ConversionReview`s to the CRD's webhook, as the
//! apiextensions server's `webhookConverter` does
//! (`apiextensions-apiserver/pkg/apiserver/conversion/webhook_converter.go`): the objects that
//! are not at the desired version go in one review, the answer must carry as many objects, each
//! at the desired version, of the same kind, name, namespace and uid; the converted objects keep
//! the original metadata but for their labels and annotations. A failure reaches the client as a
//! `500` whose message is `conversion webhook for GROUP/VERSION, Kind=KIND failed: ...` (no
//! reason, as the real server's plain errors).
//!
//! **How the calls fit the synchronous paths.** As admission webhooks do (see
//! [`crate::admission`]): a conversion a write needs before it can decide (the stored object at
//! the request's version, the written object at the storage version) looks for its answer in
//! the request's scope; missing, it records the review to make and fails the attempt, which
//! leaves the store untouched; [`crate::admission::admit`] then calls the webhook with no lock
//! held and runs the request again ([`call_pending`]). What a request sends back (an object, a
//! list, watch events) is converted after the fact, asynchronously ([`convert_now`]), so a
//! write is never run twice for its answer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::admission::client::{self, Target};
use crate::error::ApiError;
use crate::resource::ConversionWebhook;
use crate::FakeApiServer;

/// The time a conversion webhook has to answer (a CRD cannot set it).
const TIMEOUT_SECONDS: u64 = 30;

/// The `ConversionReview` versions this server speaks, preferred first.
const REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];

/// One request's conversions: the answers so far and the review to make next.
#[derive(Default)]
struct Scope {
    answers: HashMap<(String, String), Result<Value, ApiError>>,
    pending: Option<Batch>,
}

/// Objects to convert in one review.
#[derive(Debug, Clone)]
struct Batch {
    webhook: ConversionWebhook,
    objects: Vec<Value>,
    target: String,
}

tokio::task_local! {
    static SCOPE: Arc<Mutex<Scope>>;
}

fn lock(scope: &Mutex<Scope>) -> std::sync::MutexGuard<'_, Scope> {
    scope.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `future` with a conversion scope (see the module documentation).
pub(crate) async fn scope<F: std::future::Future>(future: F) -> F::Output {
    SCOPE
        .scope(Arc::new(Mutex::new(Scope::default())), future)
        .await
}

/// Whether a request with a conversion scope is being served (the server's own writes — the
/// garbage collector's, the namespace controller's — have none: they act on objects as stored,
/// as the real controllers' metadata-only writes are version-agnostic).
pub(crate) fn in_request() -> bool {
    SCOPE.try_with(|_| ()).is_ok()
}

/// The error an attempt fails with while its conversion is made (never sent).
fn pending_error() -> ApiError {
    ApiError::plain_500("a conversion webhook is to be called")
}

/// Converts `objects` to `target` from the answers the request's scope holds; when one is
/// missing, records the review that answers them all and fails the attempt.
pub(crate) fn convert(
    webhook: &ConversionWebhook,
    objects: &[Value],
    target: &str,
) -> Result<Vec<Value>, ApiError> {
    let found = SCOPE.try_with(|scope| {
        let mut scope = lock(scope);
        let answers: Option<Vec<Result<Value, ApiError>>> = objects
            .iter()
            .map(|o| {
                let answer = scope.answers.get(&answer_key(o, target)).cloned()?;
                Some(answer.map(|converted| with_metadata_of(o, converted)))
            })
            .collect();
        match answers {
            Some(answers) => answers.into_iter().collect(),
            None => {
                scope.pending = Some(Batch {
                    webhook: webhook.clone(),
                    objects: objects.to_vec(),
                    target: target.to_string(),
                });
                Err(pending_error())
            }
        }
    });
    found.unwrap_or_else(|_| {
        Err(ApiError::plain_500(
            "a conversion webhook can only be called while a request is served",
        ))
    })
}

/// What an answer is kept under: the object without the metadata a run of the request sets
/// afresh (a create's uid and timestamps), and the desired version. A converted object takes
/// its metadata from the original but for its labels and annotations, so an answer fits every
/// run that sends the same content.
fn answer_key(object: &Value, target: &str) -> (String, String) {
    let mut content = object.clone();
    if let Some(metadata) = content.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata
            .retain(|k, _| matches!(k.as_str(), "name" | "namespace" | "labels" | "annotations"));
    }
    (content.to_string(), target.to_string())
}

/// `restoreObjectMeta`: a converted object with the metadata of `original` but for the
/// converted object's labels and annotations (absent or null ones dropped).
fn with_metadata_of(original: &Value, mut converted: Value) -> Value {
    let mut metadata = original["metadata"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for field in ["labels", "annotations"] {
        match converted["metadata"].get(field).filter(|v| !v.is_null()) {
            Some(v) => {
                metadata.insert(field.into(), v.clone());
            }
            None => {
                metadata.remove(field);
            }
        }
    }
    converted["metadata"] = Value::Object(metadata);
    converted
}

/// Makes the review an attempt recorded, if any, and keeps its answers for the next attempt;
/// whether there was one.
pub(crate) async fn call_pending(server: &FakeApiServer) -> bool {
    let Ok(Some(batch)) = SCOPE.try_with(|scope| lock(scope).pending.take()) else {
        return false;
    };
    // Boxed: the webhook call's state is kilobytes, and every write request's future would
    // carry room for it though few ever make one.
    let result = Box::pin(convert_now(
        server,
        &batch.webhook,
        &batch.objects,
        &batch.target,
    ))
    .await;
    let _ = SCOPE.try_with(|scope| {
        let mut scope = lock(scope);
        for (i, object) in batch.objects.iter().enumerate() {
            let answer = match &result {
                Ok(converted) => converted.get(i).cloned().ok_or_else(pending_error),
                Err(e) => Err(e.clone()),
            };
            scope
                .answers
                .insert(answer_key(object, &batch.target), answer);
        }
    });
    true
}

/// Converts `objects` (all of one kind) to `target` with one review to the webhook; those
/// already at `target` are not sent.
pub(crate) async fn convert_now(
    server: &FakeApiServer,
    webhook: &ConversionWebhook,
    objects: &[Value],
    target: &str,
) -> Result<Vec<Value>, ApiError> {
    let to_send: Vec<&Value> = objects
        .iter()
        .filter(|o| o["apiVersion"].as_str() != Some(target))
        .collect();
    let Some(first) = to_send.first() else {
        return Ok(objects.to_vec());
    };
    let gvk = format!(
        "{}, Kind={}",
        first["apiVersion"].as_str().unwrap_or_default(),
        first["kind"].as_str().unwrap_or_default()
    );
    let converted = review(server, webhook, &to_send, target)
        .await
        .map_err(|failure| ApiError::plain_500(failure.message(&gvk)))?;
    let mut converted = converted.into_iter();
    Ok(objects
        .iter()
        .map(|o| {
            if o["apiVersion"].as_str() == Some(target) {
                o.clone()
            } else {
                converted.next().unwrap_or_else(|| o.clone())
            }
        })
        .collect())
}

/// Why a review did not give converted objects, worded as `webhookConverter.Convert` words it.
#[derive(Debug)]
enum Failure {
    /// No review could be made or posted (`... failed: ERR`).
    Call(String),
    /// The answer is not a valid response (`... returned invalid response: ERR`).
    InvalidResponse(String),
    /// The wrong number of objects came back.
    Count { got: usize, expected: usize },
    /// A converted object is not the one sent, at the desired version.
    InvalidObject { index: usize, detail: String },
    /// A converted object's metadata cannot be taken.
    InvalidMetadata { index: usize, detail: String },
}

impl Failure {
    fn message(&self, gvk: &str) -> String {
        match self {
            Failure::Call(e) => format!("conversion webhook for {gvk} failed: {e}"),
            Failure::InvalidResponse(e) => {
                format!("conversion webhook for {gvk} returned invalid response: {e}")
            }
            Failure::Count { got, expected } => {
                format!("conversion webhook for {gvk} returned {got} objects, expected {expected}")
            }
            Failure::InvalidObject { index, detail } => format!(
                "conversion webhook for {gvk} returned invalid converted object at index {index}: {detail}"
            ),
            Failure::InvalidMetadata { index, detail } => format!(
                "conversion webhook for {gvk} returned invalid metadata in object at index {index}: {detail}"
            ),
        }
    }
}

/// Posts one `ConversionReview` and checks its answer.
async fn review(
    server: &FakeApiServer,
    webhook: &ConversionWebhook,
    objects: &[&Value],
    target: &str,
) -> Result<Vec<Value>, Failure> {
    let version = webhook
        .review_versions
        .iter()
        .find(|v| REVIEW_VERSIONS.contains(&v.as_str()))
        .ok_or_else(|| Failure::Call("no supported conversion review versions".into()))?;
    let uid = server.shared.new_uid();
    let body = json!({
        "kind": "ConversionReview",
        "apiVersion": format!("apiextensions.k8s.io/{version}"),
        "request": {"uid": uid, "desiredAPIVersion": target, "objects": objects},
    });
    let target_of = Target::of(
        &webhook.client_config,
        TIMEOUT_SECONDS,
        server.shared.admission.service_resolver.as_ref(),
    )
    .map_err(Failure::Call)?;
    let ca_bundle = client::ca_bundle(&webhook.client_config);
    let bytes = serde_json::to_vec(&body).map_err(|e| Failure::Call(e.to_string()))?;
    tracing::debug!(
        objects = objects.len(),
        target,
        "calling conversion webhook"
    );
    let answer = client::post(
        &target_of,
        &ca_bundle,
        bytes,
        Duration::from_secs(TIMEOUT_SECONDS),
    )
    .await
    .map_err(|e| Failure::Call(e.to_string()))?;
    let converted = converted_objects(&uid, &answer).map_err(Failure::InvalidResponse)?;
    if converted.len() != objects.len() {
        return Err(Failure::Count {
            got: converted.len(),
            expected: objects.len(),
        });
    }
    converted
        .into_iter()
        .zip(objects)
        .enumerate()
        .map(|(index, (converted, original))| checked(index, original, converted, target))
        .collect()
}

/// `getConvertedObjectsFromResponse`.
fn converted_objects(uid: &str, answer: &Value) -> Result<Vec<Value>, String> {
    let response = answer
        .get("response")
        .filter(|r| r.is_object())
        .ok_or("no response provided")?;
    let got = response["uid"].as_str().unwrap_or_default();
    if got != uid {
        return Err(format!("expected response.uid={uid:?}, got {got:?}"));
    }
    let result = &response["result"];
    let status = result["status"].as_str().unwrap_or_default();
    if status != "Success" {
        return Err(match result["message"].as_str().filter(|m| !m.is_empty()) {
            Some(message) => message.to_string(),
            None => format!("response.result.status was '{status}', not 'Success'"),
        });
    }
    Ok(response["convertedObjects"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

/// The checks of `webhookConverter.Convert` on one converted object, then
/// `restoreObjectMeta` ([`with_metadata_of`]).
fn checked(
    index: usize,
    original: &Value,
    converted: Value,
    target: &str,
) -> Result<Value, Failure> {
    let invalid = |detail: String| Failure::InvalidObject { index, detail };
    let got = converted["apiVersion"].as_str().unwrap_or_default();
    if got != target {
        return Err(invalid(format!(
            "invalid groupVersion (expected {target}, received {got})"
        )));
    }
    let (expected, got) = (
        original["kind"].as_str().unwrap_or_default(),
        converted["kind"].as_str().unwrap_or_default(),
    );
    if expected != got {
        return Err(invalid(format!(
            "invalid kind (expected {expected}, received {got})"
        )));
    }
    // `validateConvertedObject`.
    for (field, what) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
        let e = original["metadata"][field].as_str().unwrap_or_default();
        let a = converted["metadata"][field].as_str().unwrap_or_default();
        if e != a {
            return Err(invalid(format!("must have the same {what}: {e} != {a}")));
        }
    }
    let metadata_error = |detail: String| Failure::InvalidMetadata { index, detail };
    let answered = match converted.get("metadata") {
        None => {
            return Err(metadata_error(
                "missing metadata in converted object".into(),
            ))
        }
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(metadata_error(format!(
                "invalid metadata of type {} in converted object",
                go_type(other)
            )))
        }
    };
    for field in ["labels", "annotations"] {
        if let Some(other) = answered
            .get(field)
            .filter(|v| !v.is_null() && !v.is_object())
        {
            return Err(metadata_error(format!(
                "invalid metadata.{field} of type {} in converted object",
                go_type(other)
            )));
        }
    }
    Ok(with_metadata_of(original, converted))
}

/// The Go type `encoding/json` decodes a value into, for the messages that name it.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn widget(version: &str) -> Value {
        json!({"apiVersion": format!("ex.com/{version}"), "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default", "uid": "u1", "resourceVersion": "7",
                         "labels": {"a": "1"}},
            "spec": {"size": 1}})
    }

    #[rstest]
    #[case::no_response(json!({}), "no response provided")]
    #[case::other_uid(json!({"response": {"uid": "x", "result": {"status": "Success"}}}),
        "expected response.uid=\"u\", got \"x\"")]
    #[case::failure_with_message(json!({"response": {"uid": "u", "result": {"status": "Failure", "message": "cannot convert"}}}),
        "cannot convert")]
    #[case::failure_without_message(json!({"response": {"uid": "u", "result": {"status": "Failure"}}}),
        "response.result.status was 'Failure', not 'Success'")]
    fn invalid_responses_read_as_the_real_converter_words_them(
        #[case] answer: Value,
        #[case] expected: &str,
    ) {
        assert_eq!(converted_objects("u", &answer).unwrap_err(), expected);
    }

    #[test]
    fn a_converted_object_keeps_the_original_metadata_but_labels_and_annotations() {
        let mut answered = widget("v2");
        answered["metadata"] = json!({"name": "w", "namespace": "default", "uid": "u1",
            "resourceVersion": "changed", "annotations": {"converted": "yes"}});
        answered["spec"] = json!({"dimensions": {"size": 1}});
        let out = checked(0, &widget("v1"), answered, "ex.com/v2").unwrap();
        assert_eq!(
            out["metadata"],
            json!({"name": "w", "namespace": "default", "uid": "u1", "resourceVersion": "7",
                   "annotations": {"converted": "yes"}})
        );
        assert_eq!(out["spec"], json!({"dimensions": {"size": 1}}));
    }

    #[rstest]
    #[case::version(json!({"apiVersion": "ex.com/v1"}),
        "conversion webhook for ex.com/v1, Kind=Widget returned invalid converted object at index 0: invalid groupVersion (expected ex.com/v2, received ex.com/v1)")]
    #[case::kind(json!({"kind": "Gadget"}),
        "conversion webhook for ex.com/v1, Kind=Widget returned invalid converted object at index 0: invalid kind (expected Widget, received Gadget)")]
    #[case::name(json!({"metadata": {"name": "other", "namespace": "default", "uid": "u1"}}),
        "conversion webhook for ex.com/v1, Kind=Widget returned invalid converted object at index 0: must have the same name: w != other")]
    #[case::labels(json!({"metadata": {"name": "w", "namespace": "default", "uid": "u1", "labels": ["a"]}}),
        "conversion webhook for ex.com/v1, Kind=Widget returned invalid metadata in object at index 0: invalid metadata.labels of type []interface {} in converted object")]
    fn converted_objects_must_be_the_ones_sent(#[case] change: Value, #[case] expected: &str) {
        let mut answered = widget("v2");
        for (k, v) in change.as_object().unwrap() {
            answered[k] = v.clone();
        }
        let failure = checked(0, &widget("v1"), answered, "ex.com/v2").unwrap_err();
        assert_eq!(failure.message("ex.com/v1, Kind=Widget"), expected);
    }
}
