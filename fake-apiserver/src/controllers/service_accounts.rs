//! The service-account controller (`pkg/controller/serviceaccount`) and the root CA publisher
//! (`pkg/controller/certificates/rootcacertpublisher`): every active namespace gets a `default`
//! ServiceAccount and the `kube-root-ca.crt` ConfigMap, and gets them back when they are
//! deleted (the ConfigMap's content is also restored when it is changed).

use serde_json::{json, Value};

use super::objects;
use crate::context::FakeApiServer;
use crate::error::ApiError;
use crate::http::handlers::Trust;
use crate::registry::semantics::UpdateTarget;
use crate::resource::ResourceInfo;

/// The ServiceAccount every namespace gets.
pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";
/// The ConfigMap holding the cluster's CA bundle.
pub const ROOT_CA_CONFIGMAP: &str = "kube-root-ca.crt";
/// The annotation the publisher sets on it.
pub const DESCRIPTION_ANNOTATION: &str = "kubernetes.io/description";
/// Its text.
pub const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// The CA bundle published. The fake server serves plain HTTP, so no client verifies against
/// it; it is a real (self-signed, P-256) certificate so that tools parsing the bundle succeed.
pub const ROOT_CA_PEM: &str = "-----BEGIN CERTIFICATE-----
MIIBfTCCASKgAwIBAgIBATAKBggqhkjOPQQDAjAcMRowGAYDVQQDDBFmYWtlLWFw
aXNlcnZlci1jYTAgFw0yNjEyMDEwMjU3NThaGA8yMTI2MTEwNzAyNTc1OFowHDEa
MBgGA1UEAwwRZmFrZS1hcGlzZXJ2ZXItY2EwWTATBgcqhkjOPQIBBggqhkjOPQMB
BwNCAAQs2eemI8syXTRFNT4H/7JHqgyqKnoUY+psafAjiHe/Z3WI43H9nqjmGwBn
ZHVCnIKtCU1UnqAvnTxwyjjGCkn7o1MwUTAdBgNVHQ4EFgQUXwNfYSnYgfHXRn7f
M0d0JHJRlm4wHwYDVR0jBBgwFoAUXwNfYSnYgfHXRn7fM0d0JHJRlm4wDwYDVR0T
AQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEAkGhVQd+5w6rLv+4ORAuresnu
RoFegq0xjSb8sBWtYeoCIQDHKDl0+bOlo7X+SvWH0PYs58QiHsYZZbrVgeHPXSjo
bA==
-----END CERTIFICATE-----
";

/// Whether a write to `info`/`name` wakes these controllers for its namespace: the `default`
/// ServiceAccount deleted, the root CA ConfigMap deleted or changed.
pub(crate) fn watches(info: &ResourceInfo, name: &str, deleted: bool) -> bool {
    if !info.group.is_empty() {
        return false;
    }
    match info.plural.as_str() {
        "serviceaccounts" => deleted && name == DEFAULT_SERVICE_ACCOUNT,
        "configmaps" => name == ROOT_CA_CONFIGMAP,
        _ => false,
    }
}

/// Syncs one namespace: both controllers act only on an `Active` namespace.
pub(crate) fn sync(server: &FakeApiServer, namespace: &str) -> Result<(), ApiError> {
    let Some(ns_info) = objects::resource(server, "", "namespaces") else {
        return Ok(());
    };
    let Some(ns) = objects::get(server, &ns_info, "", namespace) else {
        return Ok(());
    };
    if ns["status"]["phase"] != "Active" {
        return Ok(());
    }
    ensure_service_account(server, namespace)?;
    publish_root_ca(server, namespace)
}

/// `serviceAccountsController.syncNamespace`: creates the `default` ServiceAccount if missing.
fn ensure_service_account(server: &FakeApiServer, namespace: &str) -> Result<(), ApiError> {
    let Some(info) = objects::resource(server, "", "serviceaccounts") else {
        return Ok(());
    };
    if objects::get(server, &info, namespace, DEFAULT_SERVICE_ACCOUNT).is_some() {
        return Ok(());
    }
    let sa = json!({"metadata": {"name": DEFAULT_SERVICE_ACCOUNT}});
    ignore_terminating(objects::create(server, &info, namespace, sa, Trust::Own))
}

/// `Publisher.syncNamespace`: creates the ConfigMap, or restores its data and annotation.
fn publish_root_ca(server: &FakeApiServer, namespace: &str) -> Result<(), ApiError> {
    let Some(info) = objects::resource(server, "", "configmaps") else {
        return Ok(());
    };
    let data = json!({"ca.crt": ROOT_CA_PEM});
    let Some(current) = objects::get(server, &info, namespace, ROOT_CA_CONFIGMAP) else {
        let cm = json!({
            "metadata": {
                "name": ROOT_CA_CONFIGMAP,
                "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION},
            },
            "data": data,
        });
        return ignore_terminating(objects::create(server, &info, namespace, cm, Trust::Own));
    };
    if up_to_date(&current, &data) {
        return Ok(());
    }
    objects::update(
        server,
        &info,
        namespace,
        ROOT_CA_CONFIGMAP,
        UpdateTarget::Main,
        |cm| {
            cm["data"] = data.clone();
            if !cm["metadata"]["annotations"].is_object() {
                cm["metadata"]["annotations"] = json!({});
            }
            cm["metadata"]["annotations"][DESCRIPTION_ANNOTATION] = json!(DESCRIPTION);
            true
        },
    )
}

fn up_to_date(cm: &Value, data: &Value) -> bool {
    cm["data"] == *data
        && cm["metadata"]["annotations"][DESCRIPTION_ANNOTATION]
            .as_str()
            .is_some_and(|d| !d.is_empty())
}

/// A namespace that went away or started terminating meanwhile is not an error.
fn ignore_terminating(result: Result<(), ApiError>) -> Result<(), ApiError> {
    match result {
        Err(e) if e.code == 404 || e.code == 403 => Ok(()),
        other => other,
    }
}
