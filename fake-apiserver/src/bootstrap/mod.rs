//! What a new server writes before it serves, as a real kube-apiserver's post-start hooks do:
//! the `default`, `kube-system`, `kube-public` and `kube-node-lease` namespaces, the bootstrap
//! RBAC policy (aggregated), the `default/kubernetes` Service (the bootstrap controller's:
//! the first address of the service range, port 443 to the secure port), the system
//! priority classes and the APIServices of the built-in group versions (the autoregistration
//! controller's).
//!
//! Through the create path these writes were most of a server's start (each object decoded,
//! defaulted, validated, its managedFields computed, encoded), and they are the same every time
//! but for three things: the uids (drawn from the server's seeded source), the time (its clock)
//! and the resourceVersions. So they are recorded once as the bytes they store with those three
//! left open ([`image`]; `make bootstrap-image` records them again, and a test fails while a
//! file differs from a fresh recording), and a new server replays the record: the same writes,
//! in the same order, with the same events, the same uid draws and the same controller
//! reactions as the full path ([`write_in_full`]) gives — a test builds servers both ways and
//! compares everything a client or the harness can see. The default controllers (all of them,
//! inline) have a recording of their own, with their reactions in it: a default server's start
//! runs no create path at all.

mod image;

use image::Recording;

use serde_json::json;

use crate::controllers::ControllerConfig;
use crate::FakeApiServer;

/// Writes the start-up objects into a new server (from the recorded image; through the full
/// write path if the image cannot be read, which a test rules out).
pub(crate) fn write(server: &FakeApiServer) {
    let controllers = server.shared.controllers.config();
    let (recording, observed) = if controllers == ControllerConfig::all() {
        (Recording::Controllers, false)
    } else {
        (Recording::Bare, controllers.any())
    };
    match image::recorded(recording) {
        Ok(image) => image.replay(server, observed),
        Err(e) => {
            tracing::error!(error = %e, "the recorded start-up writes cannot be read; writing them in full");
            write_in_full(server);
        }
    }
}

/// Writes the start-up objects through the server's own create path, one by one (what the
/// image records).
pub(crate) fn write_in_full(server: &FakeApiServer) {
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        if let Err(e) = crate::http::handlers::apply_own(
            server,
            json!({
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}
            }),
        ) {
            tracing::error!(namespace = ns, error = %e, "cannot create a start-up namespace");
        }
    }
    bootstrap_rbac(server);
    // `kubernetesservice.Controller`'s Service (`createPortAndServiceSpec`): no selector, its
    // endpoints are the API server's own.
    if let Err(e) = crate::http::handlers::apply_own(
        server,
        json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "kubernetes", "namespace": "default",
                "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1", "sessionAffinity": "None",
                "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]}
        }),
    ) {
        tracing::error!(error = %e, "cannot create the kubernetes service");
    }
    for class in crate::admission::priority::system_priority_classes() {
        let name = class["metadata"]["name"].clone();
        if let Err(e) = crate::http::handlers::apply_own(server, class) {
            tracing::error!(%name, error = %e, "cannot create a system priority class");
        }
    }
    crate::controllers::api_services::register_own(server);
}

/// Creates the bootstrap RBAC policy (roles and bindings a real server creates at start)
/// and aggregates the aggregated roles.
fn bootstrap_rbac(server: &FakeApiServer) {
    let policy = crate::auth::bootstrap::cluster_roles()
        .into_iter()
        .chain(crate::auth::bootstrap::cluster_role_bindings());
    {
        let _deferred = crate::auth::aggregation::Deferred::enter();
        for object in policy {
            let name = object["metadata"]["name"].clone();
            if let Err(e) = crate::http::handlers::apply_own(server, object) {
                tracing::error!(%name, error = %e, "cannot create a bootstrap RBAC object");
            }
        }
    }
    crate::auth::aggregation::reconcile(server);
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use crate::controllers::{ControllerConfig, Drive};
    use crate::FakeApiServer;

    /// Everything a server holds after start that a client or the harness can see: the revision,
    /// the compacted revision and every stored object's bytes.
    fn stored(server: &FakeApiServer) -> (u64, u64, Vec<(String, String)>) {
        let (revision, objects) = server.shared.store.dump();
        let objects = objects
            .into_iter()
            .map(|(resource, bytes)| (resource, String::from_utf8_lossy(&bytes).into_owned()))
            .collect();
        (revision, server.shared.store.compacted_revision(), objects)
    }

    /// A server built from the recorded image is the one the full path builds, for any seed,
    /// clock and controllers: the same objects at the same revisions (uids and times included),
    /// the same state of the seeded source after it (the next uid), and the same controller
    /// work queued (with manual drive), which leaves the same objects once done.
    #[rstest]
    fn replaying_the_image_builds_the_server_the_full_path_builds(
        #[values(1, 7, 4242)] seed: u64,
        #[values(
            ControllerConfig::none(),
            ControllerConfig::all(),
            ControllerConfig::all().with_drive(Drive::Manual)
        )]
        controllers: ControllerConfig,
    ) {
        let at: jiff::Timestamp = "2026-05-06T07:08:09Z".parse().expect("a valid timestamp");
        let builder = || {
            FakeApiServer::builder()
                .seed(seed)
                .clock(move || at)
                .controllers(controllers)
        };
        let replayed = builder().build();
        let full = builder().build_in_full();
        let (revision, compacted, objects) = stored(&replayed);
        assert_eq!((revision, compacted, &objects), {
            let (r, c, o) = stored(&full);
            (r, c, &o.clone())
        });
        assert!(objects.len() >= 21, "only {} objects", objects.len());
        for (resource, object) in &objects {
            assert!(
                object.contains("2026-05-06T07:08:09Z"),
                "{resource}: {object}"
            );
        }
        assert_eq!(replayed.shared.new_uid(), full.shared.new_uid());
        assert_eq!(
            replayed.controllers().pending(),
            full.controllers().pending()
        );
        if controllers.drive == Drive::Manual {
            assert!(replayed.controllers().pending() > 0);
            loop {
                let (a, b) = (replayed.step_controllers(), full.step_controllers());
                assert_eq!(a, b);
                if a.is_none() {
                    break;
                }
            }
            assert_eq!(stored(&replayed), stored(&full));
        }
        if controllers == ControllerConfig::all() {
            assert!(objects.iter().any(|(r, _)| r == "/serviceaccounts"));
        }
    }
}
