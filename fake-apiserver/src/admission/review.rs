//! `AdmissionReview` objects: the request sent to a webhook (`CreateAdmissionObjects`,
//! `CreateV1AdmissionReview` in `admission/plugin/webhook/request`), the checks on its answer
//! (`VerifyAdmissionResponse`), and the error a denial becomes (`webhook/errors.ToStatusErr`).

use serde_json::{json, Map, Value};

use super::matching::Invocation;
use super::Attributes;
use crate::error::{ApiError, StatusCause};
use crate::resource::ResourceInfo;

/// The `AdmissionReview` versions the server can send, in the webhook's order of preference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReviewVersion {
    /// `admission.k8s.io/v1`.
    V1,
    /// `admission.k8s.io/v1beta1`.
    V1beta1,
}

impl ReviewVersion {
    fn api_version(self) -> &'static str {
        match self {
            ReviewVersion::V1 => "admission.k8s.io/v1",
            ReviewVersion::V1beta1 => "admission.k8s.io/v1beta1",
        }
    }

    /// The first version of `admissionReviewVersions` the server knows.
    pub fn choose(versions: &Value) -> Result<Self, String> {
        for v in versions.as_array().into_iter().flatten() {
            match v.as_str() {
                Some("v1") => return Ok(ReviewVersion::V1),
                Some("v1beta1") => return Ok(ReviewVersion::V1beta1),
                _ => {}
            }
        }
        Err("webhook does not accept known AdmissionReview versions (v1, v1beta1)".into())
    }
}

fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!({"group": group, "version": version, "kind": kind})
}

fn gvr(group: &str, version: &str, resource: &str) -> Value {
    json!({"group": group, "version": version, "resource": resource})
}

/// The object as the webhook gets it: in the invocation's version (converted from the form
/// the write holds, see [`crate::registry::conversion::write_form_at_version`]).
pub(crate) fn versioned(
    info: &ResourceInfo,
    object: &Option<Value>,
    invocation: &Invocation,
) -> Value {
    match object {
        Some(o) => {
            let mut o = if invocation.kind.group == info.group && invocation.kind.kind == info.kind
            {
                crate::registry::conversion::write_form_at_version(
                    info,
                    o,
                    &invocation.kind.version,
                )
            } else {
                o.clone()
            };
            if let Some(map) = o.as_object_mut() {
                map.insert("apiVersion".into(), json!(invocation.kind.api_version()));
                map.insert("kind".into(), json!(invocation.kind.kind));
            }
            o
        }
        None => Value::Null,
    }
}

/// The `AdmissionReview` for one webhook call; `uid` identifies it.
pub(crate) fn request(
    version: ReviewVersion,
    uid: &str,
    a: &Attributes,
    invocation: &Invocation,
) -> Value {
    let user = &a.user;
    let mut user_info = Map::new();
    if !user.name.is_empty() {
        user_info.insert("username".into(), json!(user.name));
    }
    if !user.uid.is_empty() {
        user_info.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        user_info.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        user_info.insert("extra".into(), json!(user.extra));
    }
    let info = &a.info;
    let mut request = Map::new();
    request.insert("uid".into(), json!(uid));
    request.insert(
        "kind".into(),
        gvk(
            &invocation.kind.group,
            &invocation.kind.version,
            &invocation.kind.kind,
        ),
    );
    request.insert(
        "resource".into(),
        gvr(&invocation.group, &invocation.version, &invocation.resource),
    );
    if !invocation.subresource.is_empty() {
        request.insert("subResource".into(), json!(invocation.subresource));
    }
    request.insert(
        "requestKind".into(),
        gvk(&a.kind.group, &a.kind.version, &a.kind.kind),
    );
    request.insert(
        "requestResource".into(),
        gvr(&info.group, &info.version, &info.plural),
    );
    if !a.subresource.is_empty() {
        request.insert("requestSubResource".into(), json!(a.subresource));
    }
    if !a.name.is_empty() {
        request.insert("name".into(), json!(a.name));
    }
    if !a.namespace.is_empty() {
        request.insert("namespace".into(), json!(a.namespace));
    }
    request.insert("operation".into(), json!(a.operation));
    request.insert("userInfo".into(), Value::Object(user_info));
    request.insert("object".into(), versioned(&a.info, &a.object, invocation));
    request.insert(
        "oldObject".into(),
        versioned(&a.info, &a.old_object, invocation),
    );
    request.insert("dryRun".into(), json!(a.dry_run));
    request.insert("options".into(), a.options.clone());
    json!({
        "kind": "AdmissionReview",
        "apiVersion": version.api_version(),
        "request": request,
    })
}

/// A webhook's answer, checked.
#[derive(Debug, Default)]
pub(crate) struct Response {
    /// `response.allowed`.
    pub allowed: bool,
    /// `response.patch`, decoded from base64.
    pub patch: Option<Vec<u8>>,
    /// `response.patchType`.
    pub patch_type: String,
    /// `response.status`.
    pub result: Option<Value>,
    /// `response.warnings`.
    pub warnings: Vec<String>,
}

/// `VerifyAdmissionResponse`: the answer must carry a response, for v1 with the request's uid
/// and the v1 kind; a mutating webhook sends `patch` and `patchType` together, a validating one
/// neither.
pub(crate) fn verify(
    version: ReviewVersion,
    uid: &str,
    mutating: bool,
    review: &Value,
) -> Result<Response, String> {
    let Some(response) = review.get("response").filter(|r| r.is_object()) else {
        return Err("webhook response was absent".into());
    };
    let patch_text = response["patch"].as_str().unwrap_or_default();
    let patch = if patch_text.is_empty() {
        None
    } else {
        use base64::Engine;
        Some(
            base64::engine::general_purpose::STANDARD
                .decode(patch_text)
                .map_err(|e| format!("illegal base64 data in response.patch: {e}"))?,
        )
    };
    let patch_type = response.get("patchType").and_then(Value::as_str);
    let mut out = Response {
        allowed: response["allowed"].as_bool().unwrap_or(false),
        patch: None,
        patch_type: String::new(),
        result: response.get("status").filter(|s| s.is_object()).cloned(),
        warnings: response["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
    };
    match version {
        ReviewVersion::V1 => {
            let got_uid = response["uid"].as_str().unwrap_or_default();
            if got_uid != uid {
                return Err(format!("expected response.uid={uid:?}, got {got_uid:?}"));
            }
            let api_version = review["apiVersion"].as_str().unwrap_or_default();
            let kind = review["kind"].as_str().unwrap_or_default();
            if api_version != "admission.k8s.io/v1" || kind != "AdmissionReview" {
                let (group, version) = crate::registry::split_api_version(api_version);
                return Err(format!(
                    "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {group}/{version}, Kind={kind}"
                ));
            }
            if mutating {
                match (&patch, patch_type) {
                    (Some(_), None) => {
                        return Err(
                            "webhook returned response.patch but not response.patchType".into()
                        )
                    }
                    (None, Some(_)) => {
                        return Err(
                            "webhook returned response.patchType but not response.patch".into()
                        )
                    }
                    (_, Some("")) => {
                        return Err("webhook returned invalid response.patchType of \"\"".into())
                    }
                    _ => {}
                }
                out.patch = patch;
                out.patch_type = patch_type.unwrap_or_default().to_string();
            } else {
                if patch.is_some() {
                    return Err("validating webhook may not return response.patch".into());
                }
                if patch_type.is_some() {
                    return Err("validating webhook may not return response.patchType".into());
                }
            }
        }
        ReviewVersion::V1beta1 => {
            if mutating && patch.is_some() {
                out.patch = patch;
                out.patch_type = "JSONPatch".into();
            }
        }
    }
    Ok(out)
}

/// `ToStatusErr`: a denial as the error the client gets — the webhook's status with its code
/// (at least 400) and reason, the message prefixed with `admission webhook "NAME" denied the
/// request`.
pub(crate) fn denial(webhook: &str, result: Option<&Value>) -> ApiError {
    let empty = Value::Null;
    let result = result.unwrap_or(&empty);
    let denied_by = format!("admission webhook {webhook:?} denied the request");
    let message = result["message"].as_str().unwrap_or_default();
    let reason = result["reason"].as_str().unwrap_or_default();
    let text = if !message.is_empty() {
        format!("{denied_by}: {message}")
    } else if !reason.is_empty() {
        format!("{denied_by}: {reason}")
    } else {
        format!("{denied_by} without explanation")
    };
    let code = result["code"]
        .as_u64()
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c >= 400)
        .unwrap_or(400);
    let mut error = ApiError::new(code, reason, text);
    let details = &result["details"];
    let detail = |key: &str| details[key].as_str().map(str::to_string);
    error.name = detail("name");
    error.group = detail("group");
    error.kind = detail("kind");
    error.retry_after_seconds = details["retryAfterSeconds"]
        .as_u64()
        .and_then(|s| u32::try_from(s).ok());
    error.causes = details["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| StatusCause {
            reason: c["reason"].as_str().unwrap_or_default().to_string(),
            message: c["message"].as_str().unwrap_or_default().to_string(),
            field: c["field"].as_str().unwrap_or_default().to_string(),
        })
        .collect();
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::message(json!({"code": 403, "reason": "Forbidden", "message": "no"}), 403, "Forbidden", "admission webhook \"w.example.com\" denied the request: no")]
    #[case::reason_only(json!({"reason": "NotAllowed"}), 400, "NotAllowed", "admission webhook \"w.example.com\" denied the request: NotAllowed")]
    #[case::nothing(
        Value::Null,
        400,
        "",
        "admission webhook \"w.example.com\" denied the request without explanation"
    )]
    #[case::low_code(json!({"code": 200, "message": "m"}), 400, "", "admission webhook \"w.example.com\" denied the request: m")]
    #[case::conflict(json!({"code": 409, "reason": "Conflict", "message": "busy"}), 409, "Conflict", "admission webhook \"w.example.com\" denied the request: busy")]
    fn denials(
        #[case] status: Value,
        #[case] code: u16,
        #[case] reason: &str,
        #[case] message: &str,
    ) {
        let status = (!status.is_null()).then_some(status);
        let e = denial("w.example.com", status.as_ref());
        assert_eq!(
            (e.code, e.reason.as_str(), e.message.as_str()),
            (code, reason, message)
        );
    }

    #[test]
    fn v1_answers_are_checked() {
        let ok = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": "u", "allowed": true, "warnings": ["w"]}});
        let r = verify(ReviewVersion::V1, "u", false, &ok).unwrap();
        assert!(r.allowed);
        assert_eq!(r.warnings, vec!["w".to_string()]);
        assert_eq!(
            verify(ReviewVersion::V1, "other", false, &ok).unwrap_err(),
            "expected response.uid=\"other\", got \"u\""
        );
        let absent = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"});
        assert_eq!(
            verify(ReviewVersion::V1, "u", false, &absent).unwrap_err(),
            "webhook response was absent"
        );
        let untyped = json!({"response": {"uid": "u", "allowed": true}});
        assert_eq!(
            verify(ReviewVersion::V1, "u", false, &untyped).unwrap_err(),
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /, Kind="
        );
        let patched = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": "u", "allowed": true, "patch": "W10="}});
        assert_eq!(
            verify(ReviewVersion::V1, "u", true, &patched).unwrap_err(),
            "webhook returned response.patch but not response.patchType"
        );
        assert_eq!(
            verify(ReviewVersion::V1, "u", false, &patched).unwrap_err(),
            "validating webhook may not return response.patch"
        );
    }
}
