//! `componentstatuses` (core `v1`, deprecated since 1.19): the health of the control plane's
//! parts, as kube-apiserver reports it (`pkg/registry/core/componentstatus`). Nothing is stored
//! and there is no watch: each `get` or `list` probes the components again. A real server probes
//! the scheduler's and the controller manager's `/healthz` and its etcd members; here `etcd-0`
//! is the store (always healthy), `controller-manager` is this server's own controllers (healthy
//! unless they are all off, as with `--no-controllers`), and `scheduler` is not running (this
//! server binds no pods), reported as a real server reports a component it cannot reach.

use serde_json::{json, Value};

use crate::context::FakeApiServer;
use crate::error::ApiError;
use crate::http::list::ListRequest;
use crate::http::request::Query;
use crate::resource::ResourceInfo;

/// The components, in the order they are listed (a real server lists them in the order its
/// probes finish, which varies; a fixed order keeps answers reproducible).
const COMPONENTS: [&str; 3] = ["controller-manager", "etcd-0", "scheduler"];

/// What a probe of `name` found: (healthy, message).
fn probe(server: &FakeApiServer, name: &str) -> (bool, String) {
    // The secure ports the real probes use (`kube-controller-manager` and `kube-scheduler`).
    let unreachable = |port: u16| {
        (
            false,
            format!(
                "Get \"https://127.0.0.1:{port}/healthz\": dial tcp 127.0.0.1:{port}: connect: connection refused"
            ),
        )
    };
    match name {
        "etcd-0" => (true, "ok".into()),
        "controller-manager" => {
            let config = server.controllers().config();
            if config.garbage_collector || config.namespaces || config.service_accounts {
                (true, "ok".into())
            } else {
                unreachable(10257)
            }
        }
        _ => unreachable(10259),
    }
}

/// One component's status: a single `Healthy` condition (`message` the probe's answer; `error`
/// is only set when the probe itself could not run, which never happens here).
fn status_of(server: &FakeApiServer, name: &str) -> Value {
    let (healthy, message) = probe(server, name);
    json!({
        "metadata": {"name": name},
        "conditions": [{
            "type": "Healthy",
            "status": if healthy { "True" } else { "False" },
            "message": message,
        }],
    })
}

/// `GET componentstatuses/NAME`. An unknown name is the storage's plain error, which the real
/// server answers as a `500` without a reason.
pub(crate) fn get(server: &FakeApiServer, name: &str) -> Result<Value, ApiError> {
    if !COMPONENTS.contains(&name) {
        return Err(ApiError::plain_500(format!("Component not found: {name}")));
    }
    let mut status = status_of(server, name);
    status["kind"] = json!("ComponentStatus");
    status["apiVersion"] = json!("v1");
    Ok(status)
}

/// `GET componentstatuses`: every component the selectors match (components have no labels, so
/// a label selector that needs one matches none); the list has no resourceVersion.
pub(crate) fn list(
    server: &FakeApiServer,
    info: &ResourceInfo,
    query: &Query,
) -> Result<Value, ApiError> {
    if query.get("watch").is_some_and(|w| w == "true" || w == "1") {
        return Err(not_watchable());
    }
    let request = ListRequest::parse(info, query)?;
    let items: Vec<Value> = COMPONENTS
        .iter()
        .map(|name| status_of(server, name))
        .filter(|status| request.matches(status))
        .collect();
    Ok(json!({
        "kind": "ComponentStatusList",
        "apiVersion": "v1",
        "metadata": {},
        "items": items,
    }))
}

/// A watch of component statuses: the storage cannot watch (`NewMethodNotSupported`).
pub(crate) fn not_watchable() -> ApiError {
    ApiError::new(
        405,
        "MethodNotAllowed",
        "watch is not supported on resources of kind \"componentstatuses\"",
    )
    .with_details("", "componentstatuses", "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::ControllerConfig;

    fn server(controllers: ControllerConfig) -> FakeApiServer {
        FakeApiServer::builder().controllers(controllers).build()
    }

    #[test]
    fn the_controller_manager_is_healthy_while_the_controllers_run() {
        let running = server(ControllerConfig::all());
        assert_eq!(
            get(&running, "controller-manager").unwrap()["conditions"][0],
            json!({"type": "Healthy", "status": "True", "message": "ok"})
        );
        let stopped = server(ControllerConfig::none());
        assert_eq!(
            get(&stopped, "controller-manager").unwrap()["conditions"][0],
            json!({"type": "Healthy", "status": "False",
                   "message": "Get \"https://127.0.0.1:10257/healthz\": dial tcp 127.0.0.1:10257: connect: connection refused"})
        );
        for s in [&running, &stopped] {
            assert_eq!(get(s, "etcd-0").unwrap()["conditions"][0]["status"], "True");
            assert_eq!(
                get(s, "scheduler").unwrap()["conditions"][0]["status"],
                "False"
            );
        }
    }

    #[test]
    fn an_unknown_component_is_a_plain_internal_error() {
        let e = get(&server(ControllerConfig::none()), "kubelet").unwrap_err();
        assert_eq!((e.code, e.reason.as_str()), (500, ""));
        assert_eq!(e.message, "Component not found: kubelet");
    }
}
