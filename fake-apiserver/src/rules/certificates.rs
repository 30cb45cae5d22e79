//! Rules of `certificates.k8s.io/v1` CertificateSigningRequests: the validation of
//! `pkg/apis/certificates/validation` (`ValidateCertificateSigningRequestCreate`, `...Update`,
//! `...StatusUpdate`, `...ApprovalUpdate` and the compatibility options they derive from the
//! stored request) and the three update strategies of `pkg/registry/certificates/certificates`
//! (the main endpoint changes only metadata, `/status` everything but the spec and the
//! `Approved`/`Denied` conditions, `/approval` only the conditions), with their condition
//! timestamps. The X.509 work is in [`x509`], Go's PEM decoding in [`pem`].

pub mod pem;
pub mod x509;

use base64::Engine;
use serde_json::{json, Value};

use super::validation::{is_dns1123_label, is_dns1123_subdomain, Cause, FieldErrorType};
use super::Target;

/// `certificates.LegacyUnknownSignerName`, refused in `certificates.k8s.io/v1`.
pub const LEGACY_UNKNOWN_SIGNER: &str = "kubernetes.io/legacy-unknown";

/// The condition types that may only be `True` (`trueConditionTypes`).
const TRUE_ONLY_CONDITIONS: [&str; 3] = ["Approved", "Denied", "Failed"];

/// `allValidUsages`, sorted as `sets.String.List()` gives them.
const VALID_USAGES: [&str; 23] = [
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

/// `certificateValidationOptions`: what an update path permits, and what a stored request's
/// existing problems make tolerable.
#[derive(Debug, Default, Clone, Copy)]
struct Options {
    allow_setting_approval_conditions: bool,
    allow_setting_certificate: bool,
    allow_both_approved_and_denied: bool,
    allow_legacy_signer_name: bool,
    allow_duplicate_condition_types: bool,
    allow_empty_condition_type: bool,
    allow_arbitrary_certificate: bool,
    allow_unknown_usages: bool,
    allow_duplicate_usages: bool,
}

impl Options {
    /// `getValidationOptions(new, old)`; `old` is `None` on create.
    fn for_write(new: &Value, old: Option<&Value>) -> Self {
        let Some(old) = old else {
            return Options::default();
        };
        let types = condition_types(old);
        let certificate_unchanged =
            bytes_of(&new["status"]["certificate"]) == bytes_of(&old["status"]["certificate"]);
        Options {
            allow_both_approved_and_denied: types.contains(&"Approved")
                && types.contains(&"Denied"),
            allow_legacy_signer_name: old["spec"]["signerName"] == LEGACY_UNKNOWN_SIGNER,
            allow_duplicate_condition_types: has_duplicates(&types),
            allow_empty_condition_type: types.contains(&""),
            allow_arbitrary_certificate: certificate_unchanged
                || x509::validate_certificate(&bytes_of(&old["status"]["certificate"])).is_err(),
            allow_unknown_usages: usages(old)
                .iter()
                .any(|u| !VALID_USAGES.contains(&u.as_str())),
            allow_duplicate_usages: has_duplicates(&usages(old)),
            ..Options::default()
        }
    }
}

/// The causes of creating a `certificates.k8s.io` object of `kind` (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "CertificateSigningRequest" => request_causes(obj, Options::for_write(obj, None)),
        _ => Vec::new(),
    }
}

/// The causes of an update through `target` (the main endpoint, `/status` or `/approval`).
pub fn update_causes(kind: &str, old: &Value, new: &Value, target: Target) -> Vec<Cause> {
    if kind != "CertificateSigningRequest" {
        return Vec::new();
    }
    let mut options = Options::for_write(new, Some(old));
    match target {
        Target::Status => options.allow_setting_certificate = true,
        Target::Approval => options.allow_setting_approval_conditions = true,
        _ => {}
    }
    let mut causes = request_causes(new, options);
    // Existing Approved, Denied and Failed conditions stay.
    for kind in ["Approved", "Denied", "Failed"] {
        if count_conditions(new, kind) < count_conditions(old, kind) {
            causes.push(Cause::forbidden(
                "status.conditions",
                &format!("updates may not remove a condition of type \"{kind}\""),
            ));
        }
    }
    if !options.allow_setting_approval_conditions {
        // A change to an existing approval (same count) cannot get here: the main endpoint
        // keeps the stored status and `/status` restores the stored instances first.
        for kind in ["Approved", "Denied"] {
            if count_conditions(new, kind) > count_conditions(old, kind) {
                causes.push(Cause::forbidden(
                    "status.conditions",
                    &format!("updates may not add a condition of type \"{kind}\""),
                ));
            }
        }
    }
    let new_certificate = bytes_of(&new["status"]["certificate"]);
    let old_certificate = bytes_of(&old["status"]["certificate"]);
    if new_certificate != old_certificate {
        if !options.allow_setting_certificate {
            causes.push(Cause::forbidden(
                "status.certificate",
                "updates may not set certificate content",
            ));
        } else if !old_certificate.is_empty() {
            causes.push(Cause::forbidden(
                "status.certificate",
                "updates may not modify existing certificate content",
            ));
        }
    }
    causes
}

/// `validateCertificateSigningRequest` after the metadata.
fn request_causes(obj: &Value, options: Options) -> Vec<Cause> {
    let spec = &obj["spec"];
    let mut causes = Vec::new();
    let request = spec.get("request").filter(|v| !v.is_null()).map(bytes_of);
    if let Err(e) = x509::parse_and_verify_request(request.as_deref().unwrap_or_default()) {
        causes.push(Cause::new(
            FieldErrorType::Invalid,
            "spec.request",
            Some(go_bytes(request.as_deref())),
            &e,
        ));
    }
    let usages = usages(obj);
    if usages.is_empty() {
        causes.push(Cause::required("spec.usages", ""));
    }
    let valid: Vec<String> = VALID_USAGES.iter().map(|u| u.to_string()).collect();
    if !options.allow_unknown_usages {
        for (i, usage) in usages.iter().enumerate() {
            if !VALID_USAGES.contains(&usage.as_str()) {
                causes.push(Cause::not_supported(
                    format!("spec.usages[{i}]"),
                    &json!(usage),
                    &valid,
                ));
            }
        }
    }
    if !options.allow_duplicate_usages {
        for (i, usage) in usages.iter().enumerate() {
            if usages[..i].contains(usage) {
                causes.push(Cause::duplicate(format!("spec.usages[{i}]"), &json!(usage)));
            }
        }
    }
    let signer = spec["signerName"].as_str().unwrap_or_default();
    if !options.allow_legacy_signer_name && signer == LEGACY_UNKNOWN_SIGNER {
        causes.push(Cause::invalid_str(
            "spec.signerName",
            signer,
            "the legacy signerName is not allowed via this API version",
        ));
    } else {
        causes.extend(signer_name_causes("spec.signerName", signer));
    }
    if let Some(seconds) = spec["expirationSeconds"].as_i64() {
        if seconds < 600 {
            causes.push(Cause::invalid(
                "spec.expirationSeconds",
                &json!(seconds),
                "may not specify a duration less than 600 seconds (10 minutes)",
            ));
        }
    }
    causes.extend(condition_causes(obj, options));
    if !options.allow_arbitrary_certificate {
        if let Err(e) = x509::validate_certificate(&bytes_of(&obj["status"]["certificate"])) {
            causes.push(Cause::invalid_str(
                "status.certificate",
                "<certificate data>",
                &e,
            ));
        }
    }
    causes
}

/// `validateConditions` at `status.conditions`.
fn condition_causes(obj: &Value, options: Options) -> Vec<Cause> {
    let mut causes = Vec::new();
    let (mut approved, mut denied) = (false, false);
    let mut seen: Vec<&str> = Vec::new();
    for (i, condition) in conditions(obj).iter().enumerate() {
        let path = format!("status.conditions[{i}]");
        let kind = condition["type"].as_str().unwrap_or_default();
        if !options.allow_empty_condition_type && kind.is_empty() {
            causes.push(Cause::required(format!("{path}.type"), ""));
        }
        let allowed: &[&str] = if TRUE_ONLY_CONDITIONS.contains(&kind) {
            &["True"]
        } else {
            &["False", "True", "Unknown"]
        };
        let status = condition["status"].as_str().unwrap_or_default();
        if status.is_empty() {
            causes.push(Cause::required(format!("{path}.status"), ""));
        } else if !allowed.contains(&status) {
            let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
            causes.push(Cause::not_supported(
                format!("{path}.status"),
                &json!(status),
                &allowed,
            ));
        }
        if !options.allow_both_approved_and_denied {
            let exclusive = match kind {
                "Approved" => {
                    approved = true;
                    denied
                }
                "Denied" => {
                    denied = true;
                    approved
                }
                _ => false,
            };
            if exclusive {
                causes.push(Cause::invalid_str(
                    format!("{path}.type"),
                    kind,
                    "Approved and Denied conditions are mutually exclusive",
                ));
            }
        }
        if !options.allow_duplicate_condition_types {
            if seen.contains(&kind) {
                causes.push(Cause::duplicate(format!("{path}.type"), &json!(kind)));
            }
            seen.push(kind);
        }
    }
    causes
}

/// `ValidateSignerName` (`pkg/apis/core/validation`): `domain/path`, the domain DNS labels with
/// at least one dot, the path DNS subdomains, 571 characters at most.
pub fn signer_name_causes(field: &str, signer: &str) -> Vec<Cause> {
    const SUBDOMAIN_MAX: usize = 253;
    const LABEL_MAX: usize = 63;
    let mut causes = Vec::new();
    if signer.is_empty() {
        causes.push(Cause::required(field, ""));
        return causes;
    }
    let segments: Vec<&str> = signer.split('/').collect();
    let [domain, path] = segments[..] else {
        causes.push(Cause::invalid_str(
            field,
            signer,
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        ));
        return causes;
    };
    if domain.len() > SUBDOMAIN_MAX {
        causes.push(Cause::too_long(field, SUBDOMAIN_MAX as i64));
    }
    // Each segment's labels, up to the first one in error (the rest would only repeat it).
    let first_bad_label = |segment: &str, check: fn(&str) -> Vec<String>| {
        segment.split('.').find_map(|label| {
            let errs = check(label);
            (!errs.is_empty()).then(|| {
                errs.into_iter()
                    .map(|err| {
                        let label = super::validation::go_quote(label);
                        Cause::invalid_str(
                            field,
                            segment,
                            &format!("validating label {label}: {err}"),
                        )
                    })
                    .collect::<Vec<_>>()
            })
        })
    };
    causes.extend(first_bad_label(domain, is_dns1123_label).unwrap_or_default());
    if !domain.contains('.') {
        causes.push(Cause::invalid_str(
            field,
            domain,
            "should be a domain with at least two segments separated by dots",
        ));
    }
    causes.extend(first_bad_label(path, is_dns1123_subdomain).unwrap_or_default());
    let max = SUBDOMAIN_MAX + (SUBDOMAIN_MAX + LABEL_MAX + 1) + 1;
    if signer.len() > max {
        causes.push(Cause::too_long(field, max as i64));
    }
    causes
}

/// The requesting user, as `PrepareForCreate` copies it into the spec.
#[derive(Debug, Clone, Copy)]
pub struct Requestor<'a> {
    /// `user.GetName()`.
    pub name: &'a str,
    /// `user.GetUID()`.
    pub uid: &'a str,
    /// `user.GetGroups()`.
    pub groups: &'a [String],
    /// `user.GetExtra()`.
    pub extra: &'a std::collections::BTreeMap<String, Vec<String>>,
}

/// The create strategy's `PrepareForCreate`: whatever the client said of the requesting user is
/// replaced by the request's user (nothing when the write has none), and the status is reset,
/// so that nobody creates a pre-approved request.
pub fn prepare_create(obj: &mut Value, requestor: Option<Requestor<'_>>) {
    if !obj["spec"].is_object() {
        obj["spec"] = json!({});
    }
    if let Some(spec) = obj["spec"].as_object_mut() {
        for key in ["username", "uid", "groups", "extra"] {
            spec.remove(key);
        }
        if let Some(user) = requestor {
            if !user.name.is_empty() {
                spec.insert("username".into(), json!(user.name));
            }
            if !user.uid.is_empty() {
                spec.insert("uid".into(), json!(user.uid));
            }
            if !user.groups.is_empty() {
                spec.insert("groups".into(), json!(user.groups));
            }
            if !user.extra.is_empty() {
                spec.insert("extra".into(), json!(user.extra));
            }
        }
    }
    if let Some(object) = obj.as_object_mut() {
        object.insert("status".into(), json!({}));
    }
}

/// The update strategies' `PrepareForUpdate`, for the endpoint `target`; `now` stamps the
/// conditions that carry no time yet.
///
/// - main endpoint: spec and status stay as stored;
/// - `/status`: the spec stays, and so do the stored `Approved` and `Denied` conditions when the
///   request has as many of them (adding or removing one is left to validation to refuse);
/// - `/approval`: only the conditions come from the request.
pub fn prepare_update(old: &Value, new: &mut Value, target: Target, now: &str) {
    take(new, old, "spec");
    match target {
        Target::Status => {
            for kind in ["Approved", "Denied"] {
                preserve_condition_instances(new, old, kind);
            }
            populate_condition_timestamps(new, old, now);
        }
        Target::Approval => {
            populate_condition_timestamps(new, old, now);
            let conditions = new["status"].get("conditions").cloned();
            take(new, old, "status");
            if let Some(conditions) = conditions {
                if !new["status"].is_object() {
                    new["status"] = json!({});
                }
                new["status"]["conditions"] = conditions;
            } else if let Some(status) = new["status"].as_object_mut() {
                status.remove("conditions");
            }
        }
        _ => take(new, old, "status"),
    }
}

/// Sets `new[key]` to `old[key]`, or removes it when `old` has none.
fn take(new: &mut Value, old: &Value, key: &str) {
    match old.get(key) {
        Some(value) => new[key] = value.clone(),
        None => {
            if let Some(object) = new.as_object_mut() {
                object.remove(key);
            }
        }
    }
}

/// `preserveConditionInstances`: when `new` has as many conditions of `kind` as `old`, they are
/// `old`'s, in `new`'s positions.
fn preserve_condition_instances(new: &mut Value, old: &Value, kind: &str) {
    let old_conditions = conditions(old);
    let old_indices = condition_indices(old_conditions, kind);
    let new_indices = condition_indices(conditions(new), kind);
    if old_indices.len() != new_indices.len() {
        return;
    }
    let Some(list) = conditions_mut(new) else {
        return;
    };
    for (new_index, old_index) in new_indices.into_iter().zip(old_indices) {
        list[new_index] = old_conditions[old_index].clone();
    }
}

fn condition_indices(conditions: &[Value], kind: &str) -> Vec<usize> {
    conditions
        .iter()
        .enumerate()
        .filter(|(_, c)| c["type"] == kind)
        .map(|(i, _)| i)
        .collect()
}

/// `populateConditionTimestamps`: a condition without `lastUpdateTime` gets `now`; one without
/// `lastTransitionTime` gets the stored time of a condition of the same type and status, else
/// `now`.
fn populate_condition_timestamps(new: &mut Value, old: &Value, now: &str) {
    let old_conditions = conditions(old);
    let Some(list) = conditions_mut(new) else {
        return;
    };
    let is_zero = |v: Option<&Value>| v.and_then(Value::as_str).is_none_or(str::is_empty);
    for condition in list.iter_mut().filter(|c| c.is_object()) {
        if is_zero(condition.get("lastUpdateTime")) {
            condition["lastUpdateTime"] = json!(now);
        }
        if is_zero(condition.get("lastTransitionTime")) {
            let stored = old_conditions.iter().find(|o| {
                o["type"] == condition["type"]
                    && o["status"] == condition["status"]
                    && !is_zero(o.get("lastTransitionTime"))
            });
            condition["lastTransitionTime"] = match stored {
                Some(o) => o["lastTransitionTime"].clone(),
                None => json!(now),
            };
        }
    }
}

/// `extractCSRStatus`, the printer's Condition column: `Denied`, else `Approved`, else
/// `Pending`, then `,Failed` and `,Issued` as they apply.
pub fn printed_condition(obj: &Value) -> String {
    let has = |kind: &str| conditions(obj).iter().any(|c| c["type"] == kind);
    let mut status = if has("Denied") {
        "Denied"
    } else if has("Approved") {
        "Approved"
    } else {
        "Pending"
    }
    .to_string();
    if has("Failed") {
        status.push_str(",Failed");
    }
    if !bytes_of(&obj["status"]["certificate"]).is_empty() {
        status.push_str(",Issued");
    }
    status
}

/// The organizations of the request's subject, for the subject restriction (`ParseCSR`, the
/// signature not checked), or the parse error.
pub fn request_organizations(obj: &Value) -> Result<Vec<String>, String> {
    x509::parse_request(&bytes_of(&obj["spec"]["request"])).map(|r| r.organizations)
}

fn conditions(obj: &Value) -> &[Value] {
    obj["status"]["conditions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn conditions_mut(obj: &mut Value) -> Option<&mut Vec<Value>> {
    obj.get_mut("status")?.get_mut("conditions")?.as_array_mut()
}

fn condition_types(obj: &Value) -> Vec<&str> {
    conditions(obj)
        .iter()
        .map(|c| c["type"].as_str().unwrap_or_default())
        .collect()
}

fn count_conditions(obj: &Value, kind: &str) -> usize {
    conditions(obj).iter().filter(|c| c["type"] == kind).count()
}

fn usages(obj: &Value) -> Vec<String> {
    obj["spec"]["usages"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|u| u.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn has_duplicates<T: PartialEq>(items: &[T]) -> bool {
    items
        .iter()
        .enumerate()
        .any(|(i, item)| items[..i].contains(item))
}

/// A `[]byte` field's bytes: JSON carries them base64-encoded (the decoder has refused what is
/// not); absent or null is empty.
fn bytes_of(v: &Value) -> Vec<u8> {
    v.as_str()
        .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
        .unwrap_or_default()
}

/// Go's `%#v` of a `[]byte`, as a field error prints a request it refuses: `[]byte(nil)` when
/// absent, else `[]byte{0x2d, 0x2d, ...}`.
fn go_bytes(bytes: Option<&[u8]>) -> String {
    let Some(bytes) = bytes else {
        return "[]byte(nil)".into();
    };
    let items: Vec<String> = bytes.iter().map(|b| format!("0x{b:x}")).collect();
    format!("[]byte{{{}}}", items.join(", "))
}

#[cfg(test)]
mod tests;
