//! `hostProbesAndHostLifecycle` (baseline, 1.34+): no container's probes (`livenessProbe`,
//! `readinessProbe`, `startupProbe`) or lifecycle handlers (`lifecycle.postStart`,
//! `lifecycle.preStop`) may name a `host` in their `httpGet` or `tcpSocket` action; only an
//! unset or empty host (the pod's IP) is allowed (`check_hostProbesAndhostLifecycle.go`).

use serde_json::Value;

use crate::admission::pod_security::helpers::{
    container_name, containers_phrase, join_quote, pluralize, sorted_set, visit_containers,
};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// Forbids an explicit host in any container's probe or lifecycle handler, from 1.34
/// (`CheckHostProbesAndHostLifecycle`).
pub(crate) const CHECK: Check = Check {
    id: "hostProbesAndHostLifecycle",
    level: Level::Baseline,
    versions: &[VersionedCheck {
        minimum_version: 34,
        check_pod: host_probes_and_host_lifecycle_v1_dot_34,
        override_check_ids: &[],
    }],
};

/// The probes of a container, in the order upstream looks at them.
const PROBES: [&str; 3] = ["livenessProbe", "readinessProbe", "startupProbe"];

/// The lifecycle handlers of a container (under `lifecycle`), in the order upstream looks at
/// them.
const LIFECYCLE_HANDLERS: [&str; 2] = ["postStart", "preStop"];

fn host_probes_and_host_lifecycle_v1_dot_34(_metadata: &Value, spec: &Value) -> CheckResult {
    let mut bad_containers = Vec::new();
    let mut forbidden_hosts = Vec::new();
    visit_containers(spec, |container| {
        let lifecycle = &container["lifecycle"];
        let handlers = PROBES.iter().map(|probe| &container[*probe]).chain(
            LIFECYCLE_HANDLERS
                .iter()
                .map(|handler| &lifecycle[*handler]),
        );
        for handler in handlers {
            let hosts = forbidden_hosts_of(handler);
            if !hosts.is_empty() {
                bad_containers.push(container_name(container));
                forbidden_hosts.extend(hosts);
            }
        }
    });
    // Both are sets upstream: sorted, each name or host once, and counted once.
    let bad_containers = sorted_set(bad_containers);
    let forbidden_hosts = sorted_set(forbidden_hosts);
    if bad_containers.is_empty() {
        return CheckResult::allowed();
    }
    CheckResult::forbidden(
        "probe or lifecycle host",
        format!(
            "{} {} {} {}",
            containers_phrase(&bad_containers),
            pluralize("uses", "use", bad_containers.len()),
            pluralize(
                "probe or lifecycle host",
                "probe or lifecycle hosts",
                forbidden_hosts.len()
            ),
            join_quote(&forbidden_hosts),
        ),
    )
}

/// The non-empty hosts of a probe or lifecycle handler: its `httpGet.host`, then its
/// `tcpSocket.host` (`getForbiddenHostProbes`, `getForbiddenHostLifecycle`; probes and
/// handlers carry their actions inline, so one function serves both). An absent or null
/// handler has none.
fn forbidden_hosts_of(handler: &Value) -> Vec<String> {
    ["httpGet", "tcpSocket"]
        .iter()
        .filter_map(|action| handler[*action]["host"].as_str())
        .filter(|host| !host.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn expect(detail: Option<&str>) -> CheckResult {
        match detail {
            Some(detail) => CheckResult::forbidden("probe or lifecycle host", detail),
            None => CheckResult::allowed(),
        }
    }

    #[rstest]
    #[case::valid_pod_with_unset_hosts(
        json!({"containers": [{
            "name": "a",
            "livenessProbe": {"httpGet": {"port": 8080}},
            "readinessProbe": {"tcpSocket": {"port": 8080}},
            "lifecycle": {"postStart": {"httpGet": {"port": 8080}}},
        }]}),
        None
    )]
    #[case::invalid_pod_with_local_host_ip_as_probe_host(
        json!({"containers": [{
            "name": "a",
            "livenessProbe": {"httpGet": {"host": "127.0.0.1"}},
            "readinessProbe": {"tcpSocket": {"host": "::1"}},
            "startupProbe": {"httpGet": {"host": "localhost"}},
        }]}),
        Some(r#"container "a" uses probe or lifecycle hosts "127.0.0.1", "::1", "localhost""#)
    )]
    #[case::invalid_httpget_host_in_liveness_probe(
        json!({"containers": [{"name": "a", "livenessProbe": {"httpGet": {"host": "invalid.host"}}}]}),
        Some(r#"container "a" uses probe or lifecycle host "invalid.host""#)
    )]
    #[case::invalid_tcpsocket_host_in_readiness_probe(
        json!({"containers": [{"name": "b", "readinessProbe": {"tcpSocket": {"host": "invalid.host"}}}]}),
        Some(r#"container "b" uses probe or lifecycle host "invalid.host""#)
    )]
    #[case::invalid_httpget_host_in_startup_probe(
        json!({"containers": [{"name": "c", "startupProbe": {"httpGet": {"host": "invalid.host"}}}]}),
        Some(r#"container "c" uses probe or lifecycle host "invalid.host""#)
    )]
    #[case::invalid_poststart_tcpsocket_host(
        json!({"containers": [{"name": "d", "lifecycle": {"postStart": {"tcpSocket": {"host": "invalid.host"}}}}]}),
        Some(r#"container "d" uses probe or lifecycle host "invalid.host""#)
    )]
    #[case::invalid_prestop_httpget_host(
        json!({"containers": [{"name": "e", "lifecycle": {"preStop": {"httpGet": {"host": "another.invalid.host"}}}}]}),
        Some(r#"container "e" uses probe or lifecycle host "another.invalid.host""#)
    )]
    #[case::multiple_containers_with_multiple_invalid_hosts(
        json!({"containers": [
            {"name": "valid"},
            {"name": "invalid1", "livenessProbe": {"httpGet": {"host": "a.com"}}},
            {
                "name": "invalid2",
                "lifecycle": {"preStop": {"tcpSocket": {"host": "b.com"}}},
                "startupProbe": {"httpGet": {"host": "a.com"}},
            },
        ]}),
        Some(r#"containers "invalid1", "invalid2" use probe or lifecycle hosts "a.com", "b.com""#)
    )]
    #[case::invalid_ipv4_host_in_probe(
        json!({"containers": [{"name": "a", "livenessProbe": {"httpGet": {"host": "8.8.8.8"}}}]}),
        Some(r#"container "a" uses probe or lifecycle host "8.8.8.8""#)
    )]
    #[case::invalid_ipv6_host_in_probe(
        json!({"containers": [{"name": "a", "livenessProbe": {"tcpSocket": {"host": "2001:4860:4860::8888"}}}]}),
        Some(r#"container "a" uses probe or lifecycle host "2001:4860:4860::8888""#)
    )]
    #[case::invalid_host_in_initcontainer(
        json!({"initContainers": [{"name": "init", "livenessProbe": {"httpGet": {"host": "invalid.init.host"}}}]}),
        Some(r#"container "init" uses probe or lifecycle host "invalid.init.host""#)
    )]
    // fixtures
    #[case::fixture_no_probes(json!({"initContainers": [{"name": "initc"}], "containers": [{"name": "c"}]}), None)]
    #[case::fixture_sidecar_readiness_tcp_host(
        json!({
            "initContainers": [{
                "name": "initc",
                "restartPolicy": "Always",
                "readinessProbe": {"tcpSocket": {"host": "8.8.8.8", "port": 8080}},
            }],
            "containers": [{"name": "c"}],
        }),
        Some(r#"container "initc" uses probe or lifecycle host "8.8.8.8""#)
    )]
    #[case::fixture_poststart_httpget_host(
        json!({"containers": [{"name": "c", "lifecycle": {"postStart": {"httpGet": {"host": "bad.host", "port": 8080}}}}]}),
        Some(r#"container "c" uses probe or lifecycle host "bad.host""#)
    )]
    // containers and hosts are sets: sorted, once each, and counted once
    #[case::sorted_and_deduplicated(
        json!({
            "initContainers": [{"name": "z", "livenessProbe": {"httpGet": {"host": "h2"}, "tcpSocket": {"host": "h1"}}}],
            "containers": [{"name": "b", "startupProbe": {"httpGet": {"host": "h2"}}}],
            "ephemeralContainers": [{"name": "z", "lifecycle": {"preStop": {"httpGet": {"host": "h2"}}}}],
        }),
        Some(r#"containers "b", "z" use probe or lifecycle hosts "h1", "h2""#)
    )]
    #[case::one_container_one_host_twice(
        json!({"containers": [{
            "name": "a",
            "livenessProbe": {"httpGet": {"host": "h"}},
            "readinessProbe": {"httpGet": {"host": "h"}},
        }]}),
        Some(r#"container "a" uses probe or lifecycle host "h""#)
    )]
    #[case::empty_and_null_hosts(
        json!({"containers": [{
            "name": "a",
            "livenessProbe": {"httpGet": {"host": ""}, "tcpSocket": {"host": null}},
            "readinessProbe": null,
            "lifecycle": {"postStart": null, "preStop": {"httpGet": null}},
        }]}),
        None
    )]
    #[case::exec_and_grpc_probes_have_no_host(
        json!({"containers": [{
            "name": "a",
            "livenessProbe": {"exec": {"command": ["true"]}},
            "readinessProbe": {"grpc": {"port": 9000}},
            "lifecycle": {"preStop": {"sleep": {"seconds": 1}}},
        }]}),
        None
    )]
    #[case::malformed_shapes(
        json!({"containers": [{"name": "a", "livenessProbe": "x", "lifecycle": [1], "startupProbe": {"httpGet": {"host": 7}}}, 3]}),
        None
    )]
    #[case::nameless_container(
        json!({"containers": [{"livenessProbe": {"httpGet": {"host": "h"}}}]}),
        Some(r#"container "" uses probe or lifecycle host "h""#)
    )]
    fn explicit_probe_and_lifecycle_hosts_are_named(
        #[case] spec: Value,
        #[case] detail: Option<&str>,
    ) {
        assert_eq!(
            host_probes_and_host_lifecycle_v1_dot_34(&json!({}), &spec),
            expect(detail)
        );
    }

    /// TestHostProbesAndHostLifecycleEmulation, at the level of this check: none before 1.34.
    #[rstest]
    #[case::v1_33(33, false)]
    #[case::v1_34(34, true)]
    #[case::v1_36(36, true)]
    fn the_check_starts_at_1_34(#[case] minor: u32, #[case] exists: bool) {
        let in_force = CHECK
            .versions
            .iter()
            .rev()
            .find(|v| v.minimum_version <= minor);
        assert_eq!(in_force.is_some(), exists);
        assert_eq!(CHECK.id, "hostProbesAndHostLifecycle");
        assert_eq!(CHECK.level, Level::Baseline);
    }
}
