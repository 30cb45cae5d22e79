//! The controllers' kinds: `printDeployment`, `printReplicaSet`, `printReplicationController`,
//! `printDaemonSet`, `printStatefulSet`, `printJob` (`hasJobCondition`), `printCronJob`
//! (`printBoolPtr`), `printControllerRevision` (`formatResourceName`) and
//! `printPodDisruptionBudget`, each with the wide `Containers`, `Images` and `Selector` columns
//! (`layoutContainerCells`, `metav1.FormatLabelSelector`) its definitions declare.

use serde_json::Value;

use super::{
    age_col, arr, col, container_cols, format_label_selector, format_labels, human_duration,
    int_col, int_of, int_string_col, label_selector_string, name_col, pointer_or_none, print_bool,
    since, since_time, str_of, text, timed, timestamp, Column, Now,
};

/// The description of the `Ready` column of deployments and stateful sets.
const READY_DESCRIPTION: &str = "Number of the pod with ready state";

/// The workload kinds' columns, `None` for a kind this module does not print.
pub(super) fn columns(group: &str, kind: &str) -> Option<Vec<Column>> {
    Some(match (group, kind) {
        ("apps", "Deployment") => deployment(),
        ("apps", "ReplicaSet") => replica_set(),
        ("", "ReplicationController") => replication_controller(),
        ("apps", "DaemonSet") => daemon_set(),
        ("apps", "StatefulSet") => stateful_set(),
        ("apps", "ControllerRevision") => controller_revision(),
        ("batch", "Job") => job(),
        ("batch", "CronJob") => cron_job(),
        ("policy", "PodDisruptionBudget") => pod_disruption_budget(),
        _ => return None,
    })
}

/// `spec.replicas`, 1 when unset (what defaulting stores).
fn desired(o: &Value) -> i64 {
    o["spec"]["replicas"].as_i64().unwrap_or(1)
}

/// `ready/desired` of a deployment or stateful set.
fn ready_of_desired(o: &Value) -> String {
    format!("{}/{}", int_of(&o["status"]["readyReplicas"]), desired(o))
}

/// The wide `Selector` column: `metav1.FormatLabelSelector` of the label selector at the JSON
/// pointer `selector`.
fn selector_col(description: &str, selector: &'static str) -> Column {
    col(
        "Selector",
        "string",
        description,
        text(move |o| format_label_selector(o.pointer(selector).unwrap_or(&Value::Null))),
    )
    .wide()
}

/// `deploymentColumnDefinitions` and `printDeployment`; its selector prints as
/// `selector.String()` (empty for none) and `<invalid>` when it does not convert.
fn deployment() -> Vec<Column> {
    let [containers, images] = container_cols("/spec/template/spec/containers").map(Column::wide);
    vec![
        name_col(),
        col("Ready", "string", READY_DESCRIPTION, text(ready_of_desired)),
        int_string_col(
            "Up-to-date",
            "Total number of non-terminating pods targeted by this deployment that have the desired template spec.",
            |o| int_of(&o["status"]["updatedReplicas"]),
        ),
        int_string_col(
            "Available",
            "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.",
            |o| int_of(&o["status"]["availableReplicas"]),
        ),
        age_col(),
        containers,
        images,
        col(
            "Selector",
            "string",
            "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
            text(|o| {
                label_selector_string(&o["spec"]["selector"])
                    .unwrap_or_else(|| "<invalid>".into())
            }),
        )
        .wide(),
    ]
}

/// `replicaSetColumnDefinitions` and `printReplicaSet`.
fn replica_set() -> Vec<Column> {
    let [containers, images] = container_cols("/spec/template/spec/containers").map(Column::wide);
    vec![
        name_col(),
        int_col(
            "Desired",
            "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
            |o| Some(desired(o)),
        ),
        int_col(
            "Current",
            "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
            |o| o["status"]["replicas"].as_i64(),
        ),
        int_col(
            "Ready",
            "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.",
            |o| o["status"]["readyReplicas"].as_i64(),
        ),
        age_col(),
        containers,
        images,
        selector_col(
            "Selector is a label query over pods that should match the replica count. If the selector is empty, it is defaulted to the labels present on the pod template. Label keys and values that must match in order to be controlled by this replica set. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
            "/spec/selector",
        ),
    ]
}

/// `replicationControllerColumnDefinitions` and `printReplicationController`: the selector is
/// a plain label map.
fn replication_controller() -> Vec<Column> {
    let [containers, images] = container_cols("/spec/template/spec/containers").map(Column::wide);
    vec![
        name_col(),
        int_col(
            "Desired",
            "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
            |o| Some(desired(o)),
        ),
        int_col(
            "Current",
            "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
            |o| o["status"]["replicas"].as_i64(),
        ),
        int_col(
            "Ready",
            "The number of ready replicas for this replication controller.",
            |o| o["status"]["readyReplicas"].as_i64(),
        ),
        age_col(),
        containers,
        images,
        col(
            "Selector",
            "string",
            "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
            text(|o| format_labels(&o["spec"]["selector"])),
        )
        .wide(),
    ]
}

/// `daemonSetColumnDefinitions` and `printDaemonSet`.
fn daemon_set() -> Vec<Column> {
    let [containers, images] = container_cols("/spec/template/spec/containers").map(Column::wide);
    vec![
        name_col(),
        int_col(
            "Desired",
            "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
            |o| o["status"]["desiredNumberScheduled"].as_i64(),
        ),
        int_col(
            "Current",
            "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
            |o| o["status"]["currentNumberScheduled"].as_i64(),
        ),
        int_col(
            "Ready",
            "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.",
            |o| o["status"]["numberReady"].as_i64(),
        ),
        int_col(
            "Up-to-date",
            "The total number of nodes that are running updated daemon pod",
            |o| o["status"]["updatedNumberScheduled"].as_i64(),
        ),
        int_col(
            "Available",
            "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)",
            |o| o["status"]["numberAvailable"].as_i64(),
        ),
        col(
            "Node Selector",
            "string",
            "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/",
            text(|o| format_labels(&o["spec"]["template"]["spec"]["nodeSelector"])),
        ),
        age_col(),
        containers,
        images,
        selector_col(
            "A label query over pods that are managed by the daemon set. Must match in order to be controlled. If empty, defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
            "/spec/selector",
        ),
    ]
}

/// `statefulSetColumnDefinitions` and `printStatefulSet`: no selector column.
fn stateful_set() -> Vec<Column> {
    let [containers, images] = container_cols("/spec/template/spec/containers").map(Column::wide);
    vec![
        name_col(),
        col("Ready", "string", READY_DESCRIPTION, text(ready_of_desired)),
        age_col(),
        containers,
        images,
    ]
}

/// `hasJobCondition`: whether the first condition of the type is `True`.
fn has_job_condition(job: &Value, kind: &str) -> bool {
    arr(&job["status"]["conditions"])
        .iter()
        .find(|c| c["type"] == kind)
        .is_some_and(|c| c["status"] == "True")
}

/// `printJob`'s status.
fn job_status(job: &Value) -> String {
    if has_job_condition(job, "Complete") {
        "Complete"
    } else if has_job_condition(job, "Failed") {
        "Failed"
    } else if !job["metadata"]["deletionTimestamp"].is_null() {
        "Terminating"
    } else if has_job_condition(job, "Suspended") {
        "Suspended"
    } else if has_job_condition(job, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    }
    .into()
}

/// `printJob`'s completions: `succeeded/completions`, or `succeeded/1` (`of N` with
/// parallelism above 1) when completions are unset.
fn job_completions(job: &Value) -> String {
    let succeeded = int_of(&job["status"]["succeeded"]);
    let spec = &job["spec"];
    if !spec["completions"].is_null() {
        return format!("{succeeded}/{}", int_of(&spec["completions"]));
    }
    match int_of(&spec["parallelism"]) {
        p if p > 1 => format!("{succeeded}/1 of {p}"),
        _ => format!("{succeeded}/1"),
    }
}

/// `printJob`'s duration: from the start to completion, or to now while it runs; empty before
/// it starts.
fn job_duration(job: &Value, now: Now) -> String {
    let status = &job["status"];
    let Some(start) = timestamp(&status["startTime"]) else {
        return String::new();
    };
    match timestamp(&status["completionTime"]) {
        Some(end) => human_duration(end.duration_since(start).as_secs()),
        None => since_time(start, now),
    }
}

/// `jobColumnDefinitions` and `printJob`.
fn job() -> Vec<Column> {
    let [containers, images] = container_cols("/spec/template/spec/containers").map(Column::wide);
    vec![
        name_col(),
        col("Status", "string", "Status of the job.", text(job_status)),
        col(
            "Completions",
            "string",
            "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.",
            text(job_completions),
        ),
        col(
            "Duration",
            "string",
            "Time required to complete the job.",
            timed(job_duration),
        ),
        age_col(),
        containers,
        images,
        selector_col(JOB_SELECTOR_DESCRIPTION, "/spec/selector"),
    ]
}

/// `batchv1.JobSpec{}.SwaggerDoc()["selector"]`, which the cron job's selector column uses too.
const JOB_SELECTOR_DESCRIPTION: &str = "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";

/// `cronJobColumnDefinitions` and `printCronJob`.
fn cron_job() -> Vec<Column> {
    let [containers, images] =
        container_cols("/spec/jobTemplate/spec/template/spec/containers").map(Column::wide);
    vec![
        name_col(),
        col(
            "Schedule",
            "string",
            "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
            text(|o| str_of(&o["spec"]["schedule"]).into()),
        ),
        col(
            "Timezone",
            "string",
            "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones",
            text(|o| pointer_or_none(&o["spec"]["timeZone"])),
        ),
        col(
            "Suspend",
            "boolean",
            "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.",
            text(|o| match o["spec"]["suspend"].as_bool() {
                Some(b) => print_bool(b).into(),
                None => "<unset>".into(),
            }),
        ),
        int_col(
            "Active",
            "A list of pointers to currently running jobs.",
            |o| Some(arr(&o["status"]["active"]).len() as i64),
        ),
        col(
            "Last Schedule",
            "string",
            "Information when was the last time the job was successfully scheduled.",
            timed(|o, now| match &o["status"]["lastScheduleTime"] {
                Value::Null => "<none>".into(),
                t => since(t, now),
            }),
        ),
        age_col(),
        containers,
        images,
        selector_col(JOB_SELECTOR_DESCRIPTION, "/spec/jobTemplate/spec/selector"),
    ]
}

/// `printControllerRevision`'s controller: `kind.group/name` of the controlling owner, lower
/// case (`formatResourceName`); `<none>` without a controller (or with an owner `apiVersion`
/// that does not parse, where the real printer fails the request).
fn revision_controller(revision: &Value) -> String {
    let Some(owner) = crate::registry::disruption::controller_of(revision) else {
        return "<none>".into();
    };
    // `schema.ParseGroupVersion`: `v1` is the core group, `group/version` a named one.
    let group = match owner.api_version.split('/').collect::<Vec<_>>()[..] {
        [_] => "",
        [group, _] => group,
        _ => return "<none>".into(),
    };
    let group_kind = match (group, owner.kind.as_str()) {
        ("", "") => return owner.name,
        ("", kind) => kind.to_string(),
        (group, kind) => format!("{kind}.{group}"),
    };
    format!("{}/{}", group_kind.to_lowercase(), owner.name)
}

/// `controllerRevisionColumnDefinition` and `printControllerRevision`.
fn controller_revision() -> Vec<Column> {
    vec![
        name_col(),
        col(
            "Controller",
            "string",
            "Controller of the object",
            text(revision_controller),
        ),
        int_string_col(
            "Revision",
            "revision indicates the revision of the state represented by Data.",
            |o| int_of(&o["revision"]),
        ),
        age_col(),
    ]
}

/// An `IntOrString` as `String()` prints it; `N/A` when unset.
fn int_or_string(value: &Value) -> String {
    match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => "N/A".into(),
    }
}

/// `podDisruptionBudgetColumnDefinitions` and `printPodDisruptionBudget`.
fn pod_disruption_budget() -> Vec<Column> {
    vec![
        name_col(),
        col(
            "Min Available",
            "string",
            "The minimum number of pods that must be available.",
            text(|o| int_or_string(&o["spec"]["minAvailable"])),
        ),
        col(
            "Max Unavailable",
            "string",
            "The maximum number of pods that may be unavailable.",
            text(|o| int_or_string(&o["spec"]["maxUnavailable"])),
        ),
        int_col(
            "Allowed Disruptions",
            "Calculated number of pods that may be disrupted at this time.",
            |o| o["status"]["disruptionsAllowed"].as_i64(),
        ),
        age_col(),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::tests::table_of;
    use rstest::rstest;
    use serde_json::{json, Value};

    fn template(containers: Value) -> Value {
        json!({"metadata": {"labels": {"app": "a"}}, "spec": {"containers": containers}})
    }

    /// The columns `printers.go` gives these kinds (`*` marks a wide one), and their cells.
    #[rstest]
    #[case::deployment("deployments.apps", json!({"spec": {"replicas": 3, "selector": {"matchLabels": {"app": "a"}},
        "template": template(json!([{"name": "web", "image": "nginx"}, {"name": "log", "image": "fluent"}]))},
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}),
        &["Name", "Ready", "Up-to-date", "Available", "Age", "Containers*", "Images*", "Selector*"],
        json!(["x", "2/3", 3, 2, "60s", "web,log", "nginx,fluent", "app=a"]))]
    #[case::deployment_empty_selector("deployments.apps", json!({"spec": {"selector": {}}}),
        &["Name", "Ready", "Up-to-date", "Available", "Age", "Containers*", "Images*", "Selector*"],
        json!(["x", "0/1", 0, 0, "60s", "", "", ""]))]
    #[case::deployment_invalid_selector("deployments.apps", json!({"spec": {"replicas": 0,
        "selector": {"matchExpressions": [{"key": "a", "operator": "Bogus"}]}}}),
        &["Name", "Ready", "Up-to-date", "Available", "Age", "Containers*", "Images*", "Selector*"],
        json!(["x", "0/0", 0, 0, "60s", "", "", "<invalid>"]))]
    #[case::replica_set("replicasets.apps", json!({"spec": {"replicas": 3, "template": template(json!([{"name": "c", "image": "i"}])),
        "selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web", "api"]}]}},
        "status": {"replicas": 2, "readyReplicas": 1}}),
        &["Name", "Desired", "Current", "Ready", "Age", "Containers*", "Images*", "Selector*"],
        json!(["x", 3, 2, 1, "60s", "c", "i", "tier in (api,web)"]))]
    #[case::replication_controller("replicationcontrollers", json!({"spec": {"replicas": 1, "selector": {"app": "a"}}}),
        &["Name", "Desired", "Current", "Ready", "Age", "Containers*", "Images*", "Selector*"],
        json!(["x", 1, 0, 0, "60s", "", "", "app=a"]))]
    #[case::daemon_set("daemonsets.apps", json!({"spec": {"selector": {"matchLabels": {"app": "d"}},
        "template": {"spec": {"nodeSelector": {"zone": "a", "os": "linux"}, "containers": [{"name": "agent", "image": "agent:1"}]}}},
        "status": {"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberReady": 1, "updatedNumberScheduled": 2, "numberAvailable": 1}}),
        &["Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age", "Containers*", "Images*", "Selector*"],
        json!(["x", 2, 2, 1, 2, 1, "os=linux,zone=a", "60s", "agent", "agent:1", "app=d"]))]
    #[case::stateful_set("statefulsets.apps", json!({"spec": {"replicas": 3, "template": template(json!([{"name": "db", "image": "pg"}]))},
        "status": {"readyReplicas": 2}}),
        &["Name", "Ready", "Age", "Containers*", "Images*"], json!(["x", "2/3", "60s", "db", "pg"]))]
    #[case::pdb("poddisruptionbudgets.policy", json!({"spec": {"minAvailable": "50%"}, "status": {"disruptionsAllowed": 1}}),
        &["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"], json!(["x", "50%", "N/A", 1, "60s"]))]
    #[case::pdb_max_unavailable("poddisruptionbudgets.policy", json!({"spec": {"maxUnavailable": 1}}),
        &["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"], json!(["x", "N/A", "1", 0, "60s"]))]
    #[case::cron_job("cronjobs.batch", json!({"spec": {"schedule": "*/5 * * * *", "suspend": false,
        "jobTemplate": {"spec": {"template": template(json!([{"name": "c", "image": "busybox"}]))}}},
        "status": {"lastScheduleTime": "2024-01-01T00:00:30Z", "active": [{"name": "j"}]}}),
        &["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age", "Containers*", "Images*", "Selector*"],
        json!(["x", "*/5 * * * *", "<none>", "False", 1, "30s", "60s", "c", "busybox", "<none>"]))]
    #[case::cron_job_unset("cronjobs.batch", json!({"spec": {"schedule": "@daily", "timeZone": "Etc/UTC",
        "jobTemplate": {"spec": {"selector": {"matchLabels": {"a": "b"}}}}}}),
        &["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age", "Containers*", "Images*", "Selector*"],
        json!(["x", "@daily", "Etc/UTC", "<unset>", 0, "<none>", "60s", "", "", "a=b"]))]
    #[case::controller_revision("controllerrevisions.apps", json!({"metadata": {"name": "r",
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "other"},
                            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "controller": true}]}, "revision": 4}),
        &["Name", "Controller", "Revision", "Age"], json!(["r", "statefulset.apps/web", 4, "60s"]))]
    #[case::controller_revision_core_owner("controllerrevisions.apps", json!({"metadata": {"name": "r",
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "controller": true}]}}),
        &["Name", "Controller", "Revision", "Age"], json!(["r", "pod/p", 0, "60s"]))]
    #[case::controller_revision_orphan("controllerrevisions.apps", json!({"revision": 1}),
        &["Name", "Controller", "Revision", "Age"], json!(["x", "<none>", 1, "60s"]))]
    fn workloads_print_the_real_columns(
        #[case] resource: &str,
        #[case] object: Value,
        #[case] columns: &[&str],
        #[case] cells: Value,
    ) {
        let (names, got, _) = table_of(resource, object);
        assert_eq!(names, columns);
        assert_eq!(got, cells);
    }

    /// `printJob`: status from the conditions, completions, and durations from the start to the
    /// completion or to now.
    #[rstest]
    #[case::running(json!({"completions": 3, "parallelism": 2}), json!({"succeeded": 1, "startTime": "2024-01-01T00:00:15Z"}), json!({}),
        "Running", "1/3", "45s")]
    #[case::complete(json!({"completions": 1}), json!({"succeeded": 1, "startTime": "2023-12-31T23:00:00Z",
        "completionTime": "2023-12-31T23:03:20Z", "conditions": [{"type": "Complete", "status": "True"}]}), json!({}),
        "Complete", "1/1", "3m20s")]
    #[case::parallel_without_completions(json!({"parallelism": 4}), json!({}), json!({}), "Running", "0/1 of 4", "")]
    #[case::failed(json!({"completions": 2}), json!({"failed": 3, "startTime": "2024-01-01T00:00:00Z",
        "conditions": [{"type": "FailureTarget", "status": "True"}, {"type": "Failed", "status": "True"}]}), json!({}),
        "Failed", "0/2", "60s")]
    #[case::failure_target(json!({}), json!({"conditions": [{"type": "FailureTarget", "status": "True"}]}), json!({}),
        "FailureTarget", "0/1", "")]
    #[case::suspended(json!({}), json!({"conditions": [{"type": "Suspended", "status": "True"}, {"type": "Complete", "status": "False"}]}), json!({}),
        "Suspended", "0/1", "")]
    #[case::terminating(json!({}), json!({"conditions": [{"type": "Suspended", "status": "True"}]}),
        json!({"deletionTimestamp": "2024-01-01T00:00:59Z"}), "Terminating", "0/1", "")]
    fn jobs_print_status_completions_and_duration(
        #[case] spec: Value,
        #[case] status: Value,
        #[case] metadata: Value,
        #[case] job_status: &str,
        #[case] completions: &str,
        #[case] duration: &str,
    ) {
        let mut spec = spec;
        spec["selector"] = json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}});
        spec["template"] = template(json!([{"name": "pi", "image": "perl"}]));
        let (names, cells, _) = table_of(
            "jobs.batch",
            json!({"metadata": metadata, "spec": spec, "status": status}),
        );
        assert_eq!(
            names,
            [
                "Name",
                "Status",
                "Completions",
                "Duration",
                "Age",
                "Containers*",
                "Images*",
                "Selector*"
            ]
        );
        assert_eq!(
            cells,
            json!([
                "x",
                job_status,
                completions,
                duration,
                "60s",
                "pi",
                "perl",
                "batch.kubernetes.io/controller-uid=u"
            ])
        );
    }
}
