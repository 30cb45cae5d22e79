//! The APIServices kube-apiserver keeps for the group versions it serves itself: at start, one
//! for each built-in group version it has a priority for (`apiServicesToRegister`, labelled
//! `kube-aggregator.kubernetes.io/automanaged: onstart`); and, as CRDs come and go, one for each
//! group version a CRD serves (`crdRegistrationController`, labelled `true`, groupPriorityMinimum
//! 1000 and versionPriority 100), removed when no CRD serves it any more. All are local (no
//! `spec.service`) and `Available` from their creation.
//!
//! APIServices a client creates for a remote service are stored and validated, but nothing is
//! proxied to the service and discovery does not list their groups.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::http::handlers::{create_object, CreateOptions, Trust};
use crate::http::typed::FieldValidation;
use crate::rules::apiregistration::{
    local_api_service, AUTOMANAGED_LABEL, CUSTOM_PRIORITY, PRIORITIES,
};
use crate::FakeApiServer;

/// The field manager of the autoregistration controller's writes (its loopback client's user
/// agent, `kube-apiserver/<version> ...`).
const MANAGER: &str = "kube-apiserver";

/// `manageContinuously`: kept as long as a CRD serves the group version.
const MANAGED_FOR_CRDS: &str = "true";

/// The `(group, version)`s the server serves itself.
fn builtin_group_versions() -> BTreeSet<(String, String)> {
    crate::resource::builtin_resources()
        .into_iter()
        .map(|info| (info.group, info.version))
        .collect()
}

/// Creates the APIServices of the server's own group versions (the start-up writes).
pub(crate) fn register_own(server: &FakeApiServer) {
    let served = builtin_group_versions();
    let mut own: Vec<Value> = PRIORITIES
        .iter()
        .filter(|(group, version, _, _)| served.contains(&(group.to_string(), version.to_string())))
        .map(|(group, version, g, v)| local_api_service(group, version, (*g, *v), "onstart"))
        .collect();
    own.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    for service in own {
        create(server, service);
    }
}

/// Brings the CRDs' APIServices in line with the stored CRDs: one for every group version a CRD
/// serves (that the server does not serve itself), none for a group version no CRD serves.
pub(crate) fn sync_custom(server: &FakeApiServer) {
    let Some(info) = api_services_resource(server) else {
        return;
    };
    let Some(crds) =
        super::objects::resource(server, "apiextensions.k8s.io", "customresourcedefinitions")
    else {
        return;
    };
    let builtin = builtin_group_versions();
    let mut wanted = BTreeSet::new();
    for crd in super::objects::list(server, &crds, None) {
        let group = crd["spec"]["group"].as_str().unwrap_or_default();
        for version in crd["spec"]["versions"].as_array().into_iter().flatten() {
            let name = version["name"].as_str().unwrap_or_default();
            let key = (group.to_string(), name.to_string());
            if version["served"] == true && !name.is_empty() && !builtin.contains(&key) {
                wanted.insert(key);
            }
        }
    }
    let existing = super::objects::list(server, &info, None);
    let names: BTreeSet<&str> = existing
        .iter()
        .filter_map(|s| s["metadata"]["name"].as_str())
        .collect();
    for (group, version) in &wanted {
        if !names.contains(format!("{version}.{group}").as_str()) {
            create(
                server,
                local_api_service(group, version, CUSTOM_PRIORITY, MANAGED_FOR_CRDS),
            );
        }
    }
    for service in &existing {
        let managed = service["metadata"]["labels"][AUTOMANAGED_LABEL] == MANAGED_FOR_CRDS;
        let key = (
            service["spec"]["group"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            service["spec"]["version"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        );
        if managed && !wanted.contains(&key) {
            let name = service["metadata"]["name"].as_str().unwrap_or_default();
            let uid = super::objects::uid_of(service);
            if let Err(e) = super::objects::delete(server, &info, "", name, Some(uid), "Background")
            {
                tracing::debug!(name, error = %e, "cannot remove a CRD's APIService");
            }
        }
    }
}

fn api_services_resource(
    server: &FakeApiServer,
) -> Option<std::sync::Arc<crate::resource::ResourceInfo>> {
    super::objects::resource(server, "apiregistration.k8s.io", "apiservices")
}

fn create(server: &FakeApiServer, service: Value) {
    let Some(info) = api_services_resource(server) else {
        return;
    };
    let options = CreateOptions {
        manager: MANAGER,
        dry_run: false,
        validation: FieldValidation::Ignore,
        applied: false,
        user: None,
        trusted: Trust::Own,
        in_tree_admission: false,
    };
    let name = service["metadata"]["name"].clone();
    match create_object(server, &info, None, service, &options) {
        Ok(_) => {}
        Err(e) if e.code == 409 => {}
        Err(e) => tracing::error!(%name, error = %e, "cannot register an APIService"),
    }
}
