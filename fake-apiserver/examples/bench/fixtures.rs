//! What the sections share: the realistic pod, ConfigMaps, runtimes, timed loops and VmRSS.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kube::api::{Api, PostParams};
use serde_json::json;

/// The error type of the bench.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// A result of the bench.
pub type Result<T> = std::result::Result<T, BoxError>;

/// A one-core runtime: everything (server, client, watchers) on one thread.
pub fn current_thread() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// A runtime with `workers` threads.
pub fn multi_thread(workers: usize) -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()?)
}

/// How many operations a timed loop ran, in how much wall time, using how much CPU.
#[derive(Debug, Clone, Copy)]
pub struct Run {
    /// Operations completed.
    pub count: u64,
    /// Wall-clock time.
    pub wall: Duration,
    /// CPU time the whole process used meanwhile (user + system), if readable.
    pub cpu: Option<Duration>,
}

impl Run {
    /// Operations per wall-clock second.
    pub fn rate(&self) -> f64 {
        rate(self.count, self.wall)
    }

    /// CPU cores used on average (1.0 = one core busy all the time).
    pub fn cores(&self) -> Option<f64> {
        self.cpu
            .map(|cpu| cpu.as_secs_f64() / self.wall.as_secs_f64().max(1e-9))
    }
}

/// A stopwatch for wall and process CPU time.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch {
    wall: Instant,
    cpu: Option<Duration>,
}

impl Stopwatch {
    /// Starts now.
    pub fn start() -> Self {
        Self {
            wall: Instant::now(),
            cpu: process_cpu_time(),
        }
    }

    /// Wall time so far.
    pub fn elapsed(&self) -> Duration {
        self.wall.elapsed()
    }

    /// The run of `count` operations up to now.
    pub fn run(&self, count: u64) -> Run {
        let wall = self.wall.elapsed();
        let cpu = match (self.cpu, process_cpu_time()) {
            (Some(before), Some(now)) => Some(now.saturating_sub(before)),
            _ => None,
        };
        Run { count, wall, cpu }
    }
}

/// Runs `op(i)` back to back for `duration` (or `max` times). `BENCH_TIME_SCALE` (a factor,
/// default 1) stretches every such loop, for profiling under a slow tool (callgrind runs the
/// loops 50× slower, so their one-time costs would otherwise dominate).
pub async fn run_for<F, Fut>(duration: Duration, max: u64, mut op: F) -> Result<Run>
where
    F: FnMut(u64) -> Fut,
    Fut: Future<Output = Result<()>>,
{
    let duration = duration.mul_f64(time_scale());
    let watch = Stopwatch::start();
    let mut done = 0u64;
    while done < max && watch.elapsed() < duration {
        op(done).await?;
        done += 1;
    }
    Ok(watch.run(done))
}

/// The factor `BENCH_TIME_SCALE` sets for [`run_for`]'s loops (1 when unset or not a positive
/// number).
fn time_scale() -> f64 {
    std::env::var("BENCH_TIME_SCALE")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|f| f.is_finite() && *f > 0.0)
        .unwrap_or(1.0)
}

/// Operations per second.
pub fn rate(count: u64, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64().max(1e-9)
}

/// User + system CPU time of this process so far, from `/proc/self/stat` (clock ticks of 10 ms).
pub fn process_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let ticks = cpu_ticks(&stat)?;
    Some(Duration::from_millis(ticks * 10))
}

/// `utime + stime` from a `/proc/<pid>/stat` line (fields 14 and 15, after the command name).
pub fn cpu_ticks(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // Field 3 (state) is fields[0]; utime is field 14, stime field 15.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// Creates a namespace through the client.
pub async fn create_namespace(client: &kube::Client, name: &str) -> Result<()> {
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}}))?;
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await?;
    Ok(())
}

/// A ConfigMap with `data_bytes` of data in one key and two labels (`app`, `shard`).
pub fn config_map(namespace: &str, name: &str, shard: u64, data_bytes: usize) -> ConfigMap {
    ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(namespace.to_string()),
            labels: Some(BTreeMap::from([
                ("app".to_string(), "bench".to_string()),
                ("shard".to_string(), format!("s{shard}")),
            ])),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(
            "payload".to_string(),
            "x".repeat(data_bytes),
        )])),
        ..Default::default()
    }
}

/// A realistic pod: labels, annotations, two containers with env, ports, resources and volume
/// mounts, a volume; the server adds its defaults (service-account volume, tolerations, ...). Its status (conditions, container statuses) is set by [`pod_status`].
pub fn realistic_pod(namespace: &str, name: &str) -> Result<Pod> {
    let container = |cname: &str, image: &str, port: u16| {
        json!({
            "name": cname,
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "env": [
                {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                {"name": "LOG_LEVEL", "value": "info"}
            ],
            "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
            "resources": {
                "requests": {"cpu": "100m", "memory": "128Mi"},
                "limits": {"cpu": "500m", "memory": "256Mi"}
            },
            "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": true}]
        })
    };
    Ok(serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {
                "app.kubernetes.io/name": "checkout",
                "app.kubernetes.io/instance": "checkout-prod",
                "app.kubernetes.io/version": "1.24.3",
                "pod-template-hash": "7d9f8b6c5d"
            },
            "annotations": {
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "9080",
                "kubectl.kubernetes.io/default-container": "app"
            }
        },
        "spec": {
            "containers": [
                container("app", "registry.example.com/shop/checkout:1.24.3", 8080),
                container("sidecar", "registry.example.com/platform/envoy:1.31.0", 9901)
            ],
            "volumes": [{"name": "config", "configMap": {"name": "checkout-config"}}],
            "nodeName": "node-a-17",
            "serviceAccountName": "checkout"
        }
    }))?)
}

/// The status a running pod of [`realistic_pod`] has.
pub fn pod_status() -> serde_json::Value {
    let state = |cname: &str, image: &str| {
        json!({
            "name": cname,
            "image": image,
            "imageID": format!("{image}@sha256:4f3c9a1e0b8d7c6a5f4e3d2c1b0a99887766554433221100ffeeddccbbaa9988"),
            "containerID": "containerd://0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c",
            "ready": true,
            "started": true,
            "restartCount": 0,
            "state": {"running": {"startedAt": "2026-01-01T00:00:05Z"}},
            "lastState": {}
        })
    };
    let condition = |t: &str| json!({"type": t, "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:06Z"});
    json!({
        "phase": "Running",
        "hostIP": "10.0.3.17",
        "podIP": "10.244.3.41",
        "podIPs": [{"ip": "10.244.3.41"}],
        "startTime": "2026-01-01T00:00:01Z",
        "qosClass": "Burstable",
        "conditions": [
            condition("PodReadyToStartContainers"),
            condition("Initialized"),
            condition("Ready"),
            condition("ContainersReady"),
            condition("PodScheduled")
        ],
        "containerStatuses": [
            state("app", "registry.example.com/shop/checkout:1.24.3"),
            state("sidecar", "registry.example.com/platform/envoy:1.31.0")
        ]
    })
}

/// Creates the realistic pod and gives it its running status; returns the stored pod.
pub async fn install_pod(client: &kube::Client, namespace: &str, name: &str) -> Result<Pod> {
    let pods = Api::<Pod>::namespaced(client.clone(), namespace);
    let mut pod = pods
        .create(&PostParams::default(), &realistic_pod(namespace, name)?)
        .await?;
    pod.status = Some(serde_json::from_value(pod_status())?);
    Ok(pods
        .replace_status(name, &PostParams::default(), &pod)
        .await?)
}

/// The process's resident set (`VmRSS`) in bytes, from `/proc/self/status`.
pub fn vm_rss_bytes() -> Option<u64> {
    proc_status_kib("VmRSS:").map(|kib| kib * 1024)
}

/// The process's peak resident set (`VmHWM`) in bytes.
pub fn vm_hwm_bytes() -> Option<u64> {
    proc_status_kib("VmHWM:").map(|kib| kib * 1024)
}

fn proc_status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_kib(&status, field)
}

/// The value in KiB of `field` in a `/proc/<pid>/status` text.
pub fn parse_kib(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Mebibytes.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cpu_ticks_after_the_command_name() {
        let stat = "42 (a b) c) S 1 42 42 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 1 0 5";
        assert_eq!(cpu_ticks(stat), Some(287));
        assert_eq!(cpu_ticks("garbage"), None);
    }

    #[test]
    fn reads_kib_fields() {
        let text = "Name:\tbench\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n";
        assert_eq!(parse_kib(text, "VmRSS:"), Some(1024));
        assert_eq!(parse_kib(text, "VmHWM:"), Some(2048));
        assert_eq!(parse_kib(text, "VmSwap:"), None);
    }

    #[test]
    fn the_pod_is_a_few_kib() {
        let size = serde_json::to_vec(&realistic_pod("ns", "p").unwrap())
            .unwrap()
            .len()
            + serde_json::to_vec(&pod_status()).unwrap().len();
        assert!((1500..4096).contains(&size), "{size}");
    }
}
