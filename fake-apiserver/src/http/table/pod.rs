//! The pod's table: `printPod` (with `hasPodReadyCondition`, `isPodInitializedConditionTrue`,
//! `podutil.IsRestartableInitContainer`) and the row conditions of a finished pod
//! (`podSuccessConditions`, `podFailedConditions`).

use jiff::Timestamp;
use serde_json::{json, Value};

use super::{
    age_col, arr, col, int_of, name_col, or_none, since_time, str_of, text, timed, Column, Now,
};

/// The pod columns of `AddHandlers` (`podColumnDefinitions`).
pub(super) fn columns() -> Vec<Column> {
    vec![
        name_col(),
        col(
            "Ready",
            "string",
            "The aggregate readiness state of this pod for accepting traffic.",
            text(|o| {
                let s = Summary::of(o);
                format!("{}/{}", s.ready, s.total)
            }),
        ),
        col(
            "Status",
            "string",
            "The aggregate status of the containers in this pod.",
            text(|o| Summary::of(o).reason),
        ),
        col(
            "Restarts",
            "string",
            "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
            timed(|o, now| Summary::of(o).restarts_cell(now)),
        ),
        age_col(),
        col(
            "IP",
            "string",
            "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
            text(pod_ip),
        )
        .wide(),
        col(
            "Node",
            "string",
            "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename",
            text(|o| or_none(str_of(&o["spec"]["nodeName"]))),
        )
        .wide(),
        col(
            "Nominated Node",
            "string",
            "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.",
            text(|o| or_none(str_of(&o["status"]["nominatedNodeName"]))),
        )
        .wide(),
        col(
            "Readiness Gates",
            "string",
            "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates",
            text(readiness_gates),
        )
        .wide(),
    ]
}

/// The row conditions of a pod in a terminal phase (`podSuccessConditions`,
/// `podFailedConditions`).
pub(super) fn row_conditions(pod: &Value) -> Option<Value> {
    let (reason, message) = match str_of(&pod["status"]["phase"]) {
        "Succeeded" => ("Succeeded", "The pod has completed successfully."),
        "Failed" => ("Failed", "The pod failed."),
        _ => return None,
    };
    Some(json!([{"type": "Completed", "status": "True", "reason": reason, "message": message}]))
}

/// What `printPod` works out from the container statuses.
struct Summary {
    /// Ready containers (and started, ready sidecars).
    ready: usize,
    /// Containers plus restartable init containers.
    total: usize,
    /// The status column.
    reason: String,
    /// Restarts counted.
    restarts: i64,
    /// The latest `lastState.terminated.finishedAt` among the containers counted.
    last_restart: Option<Timestamp>,
}

impl Summary {
    /// `printPod`'s walk over the init containers, then (once initialized) the containers.
    fn of(pod: &Value) -> Summary {
        let (spec, status) = (&pod["spec"], &pod["status"]);
        let init_specs = arr(&spec["initContainers"]);
        // `podutil.IsRestartableInitContainer(initContainers[name])`; the map keeps the last
        // container of a name.
        let restartable = |c: &Value| c["restartPolicy"] == "Always";
        let restartable_named = |name: &str| {
            init_specs
                .iter()
                .rev()
                .find(|c| str_of(&c["name"]) == name)
                .is_some_and(restartable)
        };
        let mut s = Summary {
            ready: 0,
            total: arr(&spec["containers"]).len()
                + init_specs.iter().filter(|c| restartable(c)).count(),
            reason: match str_of(&status["reason"]) {
                "" => str_of(&status["phase"]).to_string(),
                reason => reason.to_string(),
            },
            restarts: 0,
            last_restart: None,
        };
        let conditions = arr(&status["conditions"]);
        if conditions
            .iter()
            .any(|c| c["type"] == "PodScheduled" && c["reason"] == "SchedulingGated")
        {
            s.reason = "SchedulingGated".into();
        }

        let mut restartable_restarts = 0;
        let mut last_restartable_restart = None;
        let mut initializing = false;
        for (i, container) in arr(&status["initContainerStatuses"]).iter().enumerate() {
            let count = int_of(&container["restartCount"]);
            let finished = last_finished(container);
            s.restarts += count;
            later(&mut s.last_restart, finished);
            let is_restartable = restartable_named(str_of(&container["name"]));
            if is_restartable {
                restartable_restarts += count;
                later(&mut last_restartable_restart, finished);
            }
            let terminated = &container["state"]["terminated"];
            let waiting = &container["state"]["waiting"];
            if terminated.is_object() && int_of(&terminated["exitCode"]) == 0 {
                continue;
            }
            if is_restartable && container["started"] == true {
                if container["ready"] == true {
                    s.ready += 1;
                }
                continue;
            }
            s.reason = if terminated.is_object() {
                // Initialization failed.
                match str_of(&terminated["reason"]) {
                    "" if int_of(&terminated["signal"]) != 0 => {
                        format!("Init:Signal:{}", int_of(&terminated["signal"]))
                    }
                    "" => format!("Init:ExitCode:{}", int_of(&terminated["exitCode"])),
                    reason => format!("Init:{reason}"),
                }
            } else if waiting.is_object()
                && !matches!(str_of(&waiting["reason"]), "" | "PodInitializing")
            {
                format!("Init:{}", str_of(&waiting["reason"]))
            } else {
                format!("Init:{i}/{}", init_specs.len())
            };
            initializing = true;
            break;
        }

        // `isPodInitializedConditionTrue`: the first `Initialized` condition decides.
        let initialized = conditions
            .iter()
            .find(|c| c["type"] == "Initialized")
            .is_some_and(|c| c["status"] == "True");
        if !initializing || initialized {
            s.restarts = restartable_restarts;
            s.last_restart = last_restartable_restart;
            let mut has_running = false;
            for container in arr(&status["containerStatuses"]).iter().rev() {
                s.restarts += int_of(&container["restartCount"]);
                later(&mut s.last_restart, last_finished(container));
                let waiting = &container["state"]["waiting"];
                let terminated = &container["state"]["terminated"];
                if waiting.is_object() && !str_of(&waiting["reason"]).is_empty() {
                    s.reason = str_of(&waiting["reason"]).to_string();
                } else if terminated.is_object() && !str_of(&terminated["reason"]).is_empty() {
                    s.reason = str_of(&terminated["reason"]).to_string();
                } else if terminated.is_object() {
                    s.reason = match int_of(&terminated["signal"]) {
                        0 => format!("ExitCode:{}", int_of(&terminated["exitCode"])),
                        signal => format!("Signal:{signal}"),
                    };
                } else if container["ready"] == true && container["state"]["running"].is_object() {
                    has_running = true;
                    s.ready += 1;
                }
            }
            // Back to `Running` while a container still runs (`hasPodReadyCondition`).
            if s.reason == "Completed" && has_running {
                let ready = conditions
                    .iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True");
                s.reason = if ready { "Running" } else { "NotReady" }.into();
            }
        }

        if !pod["metadata"]["deletionTimestamp"].is_null() {
            if str_of(&status["reason"]) == "NodeLost" {
                s.reason = "Unknown".into();
            } else if !matches!(str_of(&status["phase"]), "Failed" | "Succeeded") {
                s.reason = "Terminating".into();
            }
        }
        s
    }

    /// `5`, or `5 (3m ago)` when the last termination time is known.
    fn restarts_cell(&self, now: Now) -> String {
        match self.last_restart {
            Some(t) if self.restarts != 0 => {
                format!("{} ({} ago)", self.restarts, since_time(t, now))
            }
            _ => self.restarts.to_string(),
        }
    }
}

/// `lastState.terminated.finishedAt` of a container status.
fn last_finished(container: &Value) -> Option<Timestamp> {
    super::timestamp(&container["lastState"]["terminated"]["finishedAt"])
}

/// Keeps the later of `latest` and `t` in `latest`.
fn later(latest: &mut Option<Timestamp>, t: Option<Timestamp>) {
    if let Some(t) = t {
        if latest.is_none_or(|l| l < t) {
            *latest = Some(t);
        }
    }
}

/// `pod.Status.PodIPs[0].IP` of the internal pod: the v1 `podIP` is authoritative, then
/// `podIPs` (`Convert_v1_PodStatus_To_core_PodStatus`); `<none>` when neither is set.
fn pod_ip(pod: &Value) -> String {
    let status = &pod["status"];
    match str_of(&status["podIP"]) {
        "" => or_none(str_of(&status["podIPs"][0]["ip"])),
        ip => ip.to_string(),
    }
}

/// `true/total` of the readiness gates' conditions, `<none>` without gates.
fn readiness_gates(pod: &Value) -> String {
    let gates = arr(&pod["spec"]["readinessGates"]);
    if gates.is_empty() {
        return "<none>".into();
    }
    let conditions = arr(&pod["status"]["conditions"]);
    let true_conditions = gates
        .iter()
        .filter(|gate| {
            conditions
                .iter()
                .find(|c| str_of(&c["type"]) == str_of(&gate["conditionType"]))
                .is_some_and(|c| c["status"] == "True")
        })
        .count();
    format!("{true_conditions}/{}", gates.len())
}

#[cfg(test)]
mod tests {
    use super::super::tests::table_of;
    use rstest::rstest;
    use serde_json::{json, Value};

    fn running(restarts: i64) -> Value {
        json!({"name": "c", "ready": true, "restartCount": restarts, "state": {"running": {}}})
    }

    #[test]
    fn pod_columns_and_wide_cells() {
        let (names, cells, t) = table_of(
            "pods",
            json!({"spec": {"containers": [{"name": "c"}], "nodeName": "n1",
                "readinessGates": [{"conditionType": "g1"}, {"conditionType": "g2"}]},
             "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.9"}],
                "conditions": [{"type": "g1", "status": "True"}, {"type": "g2", "status": "False"}],
                "containerStatuses": [running(0)]}}),
        );
        assert_eq!(
            names,
            [
                "Name",
                "Ready",
                "Status",
                "Restarts",
                "Age",
                "IP*",
                "Node*",
                "Nominated Node*",
                "Readiness Gates*"
            ]
        );
        assert_eq!(
            cells,
            json!(["x", "1/1", "Running", "0", "60s", "10.0.0.9", "n1", "<none>", "1/2"])
        );
        assert_eq!(
            t["columnDefinitions"][1]["description"],
            "The aggregate readiness state of this pod for accepting traffic."
        );
        assert!(t["rows"][0].get("conditions").is_none());
    }

    /// `printPod`'s branches: (pod spec, pod status, extra metadata) → Ready, Status, Restarts.
    #[rstest]
    #[case::pending(json!({"containers": [{"name": "c"}]}), json!({"phase": "Pending"}), json!({}),
        "0/1", "Pending", "0")]
    #[case::status_reason_wins(json!({"containers": [{"name": "c"}]}), json!({"phase": "Failed", "reason": "Evicted"}), json!({}),
        "0/1", "Evicted", "0")]
    #[case::scheduling_gated(json!({"containers": [{"name": "c"}]}),
        json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}), json!({}),
        "0/1", "SchedulingGated", "0")]
    #[case::init_waiting_default(json!({"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]}),
        json!({"phase": "Pending", "initContainerStatuses": [{"name": "i", "state": {"running": {}}}]}), json!({}),
        "0/1", "Init:0/1", "0")]
    #[case::init_second_of_two(json!({"initContainers": [{"name": "a"}, {"name": "b"}], "containers": [{"name": "c"}]}),
        json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
            {"name": "b", "state": {"waiting": {"reason": "PodInitializing"}}}]}), json!({}),
        "0/1", "Init:1/2", "0")]
    #[case::init_error(json!({"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]}),
        json!({"phase": "Pending", "initContainerStatuses": [{"name": "i", "restartCount": 2,
            "state": {"terminated": {"exitCode": 1, "reason": "Error"}},
            "lastState": {"terminated": {"finishedAt": "2024-01-01T00:00:30Z"}}}]}), json!({}),
        "0/1", "Init:Error", "2 (30s ago)")]
    #[case::init_signal(json!({"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]}),
        json!({"phase": "Pending", "initContainerStatuses": [{"name": "i", "state": {"terminated": {"exitCode": 137, "signal": 9}}}]}), json!({}),
        "0/1", "Init:Signal:9", "0")]
    #[case::init_exit_code(json!({"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]}),
        json!({"phase": "Pending", "initContainerStatuses": [{"name": "i", "state": {"terminated": {"exitCode": 3}}}]}), json!({}),
        "0/1", "Init:ExitCode:3", "0")]
    #[case::init_crash_loop(json!({"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]}),
        json!({"phase": "Pending", "initContainerStatuses": [{"name": "i", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}), json!({}),
        "0/1", "Init:CrashLoopBackOff", "0")]
    #[case::sidecar_started(json!({"initContainers": [{"name": "s", "restartPolicy": "Always"}], "containers": [{"name": "c"}]}),
        json!({"phase": "Running", "conditions": [{"type": "Initialized", "status": "True"}],
            "initContainerStatuses": [{"name": "s", "started": true, "ready": true, "restartCount": 1, "state": {"running": {}},
                "lastState": {"terminated": {"finishedAt": "2024-01-01T00:00:10Z"}}}],
            "containerStatuses": [running(0)]}), json!({}),
        "2/2", "Running", "1 (50s ago)")]
    #[case::waiting_reason(json!({"containers": [{"name": "c"}]}),
        json!({"phase": "Pending", "containerStatuses": [{"name": "c", "state": {"waiting": {"reason": "ImagePullBackOff"}}}]}), json!({}),
        "0/1", "ImagePullBackOff", "0")]
    #[case::crash_loop_restarts_ago(json!({"containers": [{"name": "c"}]}),
        json!({"phase": "Running", "containerStatuses": [{"name": "c", "restartCount": 5, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2023-12-31T23:56:00Z"}}}]}), json!({}),
        "0/1", "CrashLoopBackOff", "5 (5m ago)")]
    #[case::restarts_without_a_time(json!({"containers": [{"name": "c"}]}),
        json!({"phase": "Running", "containerStatuses": [running(3)]}), json!({}),
        "1/1", "Running", "3")]
    #[case::completed(json!({"containers": [{"name": "c"}]}),
        json!({"phase": "Succeeded", "containerStatuses": [{"name": "c", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}), json!({}),
        "0/1", "Completed", "0")]
    #[case::terminated_signal(json!({"containers": [{"name": "c"}]}),
        json!({"phase": "Failed", "containerStatuses": [{"name": "c", "state": {"terminated": {"exitCode": 143, "signal": 15}}}]}), json!({}),
        "0/1", "Signal:15", "0")]
    #[case::terminated_exit_code(json!({"containers": [{"name": "c"}]}),
        json!({"phase": "Failed", "containerStatuses": [{"name": "c", "state": {"terminated": {"exitCode": 2}}}]}), json!({}),
        "0/1", "ExitCode:2", "0")]
    #[case::completed_one_still_running_ready(json!({"containers": [{"name": "a"}, {"name": "b"}]}),
        json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}], "containerStatuses": [
            {"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}, running(0)]}), json!({}),
        "1/2", "Running", "0")]
    #[case::completed_one_still_running_not_ready(json!({"containers": [{"name": "a"}, {"name": "b"}]}),
        json!({"phase": "Running", "containerStatuses": [
            {"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}, running(0)]}), json!({}),
        "1/2", "NotReady", "0")]
    #[case::terminating(json!({"containers": [{"name": "c"}]}), json!({"phase": "Running", "containerStatuses": [running(0)]}),
        json!({"deletionTimestamp": "2024-01-01T00:00:50Z"}), "1/1", "Terminating", "0")]
    #[case::deleted_after_success(json!({"containers": [{"name": "c"}]}), json!({"phase": "Succeeded"}),
        json!({"deletionTimestamp": "2024-01-01T00:00:50Z"}), "0/1", "Succeeded", "0")]
    #[case::node_lost(json!({"containers": [{"name": "c"}]}), json!({"phase": "Running", "reason": "NodeLost"}),
        json!({"deletionTimestamp": "2024-01-01T00:00:50Z"}), "0/1", "Unknown", "0")]
    fn pod_status_cells(
        #[case] spec: Value,
        #[case] status: Value,
        #[case] metadata: Value,
        #[case] ready: &str,
        #[case] reason: &str,
        #[case] restarts: &str,
    ) {
        let mut pod = json!({"metadata": metadata, "spec": spec, "status": status});
        pod["metadata"]["name"] = json!("p");
        let (_, cells, _) = table_of("pods", pod);
        assert_eq!(
            [&cells[1], &cells[2], &cells[3]],
            [&json!(ready), &json!(reason), &json!(restarts)]
        );
    }

    #[rstest]
    #[case::pod_ip_wins(json!({"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.2"}]}), "10.0.0.1")]
    #[case::pod_ips(json!({"podIPs": [{"ip": "fd00::1"}]}), "fd00::1")]
    #[case::none(json!({}), "<none>")]
    fn pod_ip_cell(#[case] status: Value, #[case] ip: &str) {
        let (_, cells, _) = table_of("pods", json!({"status": status}));
        assert_eq!(cells[5], ip);
    }

    #[rstest]
    #[case::succeeded("Succeeded", json!([{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}]))]
    #[case::failed("Failed", json!([{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]))]
    fn finished_pods_carry_a_completed_row_condition(#[case] phase: &str, #[case] want: Value) {
        let (_, _, t) = table_of("pods", json!({"status": {"phase": phase}}));
        assert_eq!(t["rows"][0]["conditions"], want);
    }
}
