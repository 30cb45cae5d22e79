//! The certificates admission plugins kube-apiserver enables by default
//! (`plugin/pkg/admission/certificates`), all validating:
//!
//! - `CertificateApproval`: a write to `certificatesigningrequests/approval` needs the `approve`
//!   verb on the `signers` resource named by the stored request's `signerName` (or its
//!   `domain/*` wildcard);
//! - `CertificateSigning`: a write to `certificatesigningrequests/status` that changes the
//!   certificate or the conditions needs `sign` on that signer;
//! - `CertificateSubjectRestriction`: a request for the `kubernetes.io/kube-apiserver-client`
//!   signer may not ask for the `system:masters` group.
//!
//! Refusals are the admission chain's `403 Forbidden` on the request's object.

use serde_json::Value;

use crate::auth::{Attributes, UserInfo};
use crate::context::Shared;
use crate::error::ApiError;
use crate::resource::ResourceInfo;

const GROUP: &str = "certificates.k8s.io";
const KIND: &str = "CertificateSigningRequest";
const API_SERVER_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";

fn refused(info: &ResourceInfo, name: &str, why: &str) -> ApiError {
    crate::auth::attributes::forbidden_error(&info.group, &info.plural, name, why)
}

/// `CertificateSubjectRestriction` on a create.
pub(crate) fn admit_create(info: &ResourceInfo, object: &Value) -> Result<(), ApiError> {
    if !info.is_builtin(GROUP, KIND)
        || object["spec"]["signerName"].as_str() != Some(API_SERVER_CLIENT_SIGNER)
    {
        return Ok(());
    }
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let organizations = crate::rules::certificates::request_organizations(object)
        .map_err(|e| refused(info, name, &format!("failed to parse CSR: {e}")))?;
    if organizations.iter().any(|o| o == "system:masters") {
        return Err(refused(
            info,
            name,
            &format!(
                "use of {API_SERVER_CLIENT_SIGNER} signer with system:masters group is not allowed"
            ),
        ));
    }
    Ok(())
}

/// `CertificateApproval` and `CertificateSigning` on an update through `subresource`; `old` is
/// the stored request, whose signer is the one checked.
pub(crate) fn admit_update(
    shared: &Shared,
    user: &UserInfo,
    info: &ResourceInfo,
    subresource: Option<&str>,
    old: &Value,
    new: &Value,
) -> Result<(), ApiError> {
    if !info.is_builtin(GROUP, KIND) {
        return Ok(());
    }
    let verb = match subresource {
        Some("approval") => "approve",
        Some("status") => {
            let status_unchanged = crate::store::value_eq::equal(
                &old["status"]["certificate"],
                &new["status"]["certificate"],
            ) && crate::store::value_eq::equal(
                &old["status"]["conditions"],
                &new["status"]["conditions"],
            );
            if status_unchanged {
                return Ok(());
            }
            "sign"
        }
        _ => return Ok(()),
    };
    let signer = old["spec"]["signerName"].as_str().unwrap_or_default();
    if authorized_for_signer(shared, user, verb, signer) {
        return Ok(());
    }
    let name = old["metadata"]["name"].as_str().unwrap_or_default();
    let refusal = refused(
        info,
        name,
        &format!(
            "user not permitted to {verb} requests with signerName {}",
            crate::rules::validation::go_quote(signer)
        ),
    );
    shared.auth.record_denial(&refusal.message);
    Err(refusal)
}

/// `IsAuthorizedForSignerName`: `verb` on `signers/<signerName>`, else on `signers/<domain>/*`.
fn authorized_for_signer(shared: &Shared, user: &UserInfo, verb: &str, signer: &str) -> bool {
    let asks = |name: &str| {
        let mut attrs = Attributes::resource(user, verb, GROUP, "signers", "", name);
        attrs.version = "*".into();
        crate::auth::authorize(shared, &attrs).allowed
    };
    let domain = signer.split('/').next().unwrap_or_default();
    asks(signer) || asks(&format!("{domain}/*"))
}
