//! Section 5: resident memory holding 100k ConfigMaps of 1 KiB data, created through the
//! in-process client (the full create path: decoding, defaults, validation, history, events).
//! Runs in a fresh process so that earlier sections' heap does not blur the figure.

use std::time::Duration;

use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};

use crate::fixtures::{self, mib, run_for, Result};
use crate::report::{emit, Figure, Target};

const OBJECTS: u64 = 100_000;
const DATA_BYTES: usize = 1024;

/// Runs section 5 in this process.
pub fn run(all: &mut Vec<Figure>) -> Result<()> {
    fixtures::current_thread()?.block_on(async {
        let server = FakeApiServer::builder().seed(5).build();
        let client = server.client();
        fixtures::create_namespace(&client, "mem").await?;
        let before = fixtures::vm_rss_bytes().ok_or("no VmRSS in /proc/self/status")?;
        let cms = &Api::<ConfigMap>::namespaced(client.clone(), "mem");
        let params = &PostParams::default();
        let run = run_for(Duration::from_secs(60), OBJECTS, move |i| {
            let cm = fixtures::config_map("mem", &format!("cm-{i:06}"), i % 10, DATA_BYTES);
            async move {
                cms.create(params, &cm).await?;
                Ok(())
            }
        })
        .await?;
        let after = fixtures::vm_rss_bytes().ok_or("no VmRSS in /proc/self/status")?;
        let n = run.count;
        emit(Figure::info("memory.objects", n as f64, "objects"), all);
        emit(
            Figure::info("memory.create_rate", run.rate(), "req/s").cores(run.cores()),
            all,
        );
        emit(Figure::info("memory.rss_before", mib(before), "MiB"), all);
        emit(
            Figure::new("memory.rss_after", mib(after), "MiB", Target::Below(400.0)),
            all,
        );
        emit(
            Figure::info(
                "memory.per_object",
                after.saturating_sub(before) as f64 / n.max(1) as f64,
                "bytes",
            ),
            all,
        );
        let stored = server
            .get_object("v1", "configmaps", Some("mem"), "cm-000000")
            .map(|cm| serde_json::to_vec(&cm).map(|b| b.len()))
            .transpose()?
            .unwrap_or_default();
        emit(
            Figure::info("memory.object_json", stored as f64, "bytes"),
            all,
        );
        if let Some(hwm) = fixtures::vm_hwm_bytes() {
            emit(Figure::info("memory.rss_peak", mib(hwm), "MiB"), all);
        }
        // The objects were alive for every reading above.
        drop(server);
        Ok(())
    })
}
