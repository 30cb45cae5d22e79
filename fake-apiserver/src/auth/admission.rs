//! The ServiceAccount admission plugin (`plugin/pkg/admission/serviceaccount`), on pod creation:
//! a pod that names no service account gets `default`, and a pod whose service account does not
//! exist is refused with the real `403` (`pods "p" is forbidden: error looking up service
//! account NS/NAME: serviceaccount "NAME" not found`). Mirror pods are left alone. The plugin is
//! on in every real server, whether or not a controller creates the `default` accounts; here it
//! is switched on by [`super::AuthConfig::service_account_admission`]. Token volumes are not
//! mounted.

use serde_json::{json, Value};

use super::attributes::forbidden_error;
use crate::context::Shared;
use crate::error::ApiError;
use crate::resource::ResourceInfo;

const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// Admits the creation of `object` in `namespace`; may set the pod's service account.
pub(crate) fn admit_create(
    shared: &Shared,
    info: &ResourceInfo,
    namespace: Option<&str>,
    object: &mut Value,
) -> Result<(), ApiError> {
    if !shared.auth.config.service_account_admission || !info.group.is_empty() || info.kind != "Pod"
    {
        return Ok(());
    }
    let Some(namespace) = namespace else {
        return Ok(());
    };
    if object["metadata"]["annotations"]
        .get(MIRROR_POD_ANNOTATION)
        .is_some()
    {
        return Ok(());
    }
    // A missing namespace is NamespaceLifecycle's answer (404), which comes first.
    if shared.store.get("/namespaces", "", namespace).is_none() {
        return Ok(());
    }
    if !object["spec"].is_object() {
        return Ok(());
    }
    let account = match object["spec"]["serviceAccountName"].as_str() {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => {
            object["spec"]["serviceAccountName"] = json!("default");
            "default".to_string()
        }
    };
    if shared
        .store
        .get("/serviceaccounts", namespace, &account)
        .is_some()
    {
        return Ok(());
    }
    Err(forbidden_error(
        "",
        "pods",
        crate::admission::admitted_name(object),
        &format!(
            "error looking up service account {namespace}/{account}: serviceaccount \"{account}\" not found"
        ),
    ))
}
