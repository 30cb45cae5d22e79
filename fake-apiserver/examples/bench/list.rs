//! Section 3: LIST latency with 10k ConfigMaps in one namespace: a full list decoded by
//! `Api::list`, the same list as raw bytes (the server's and transport's share), and a list with a
//! label selector that matches a tenth of them (decoded and raw).

use std::time::{Duration, Instant};

use fake_apiserver::FakeApiServer;
use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams};

use crate::fixtures::{self, Result};
use crate::report::{emit, Figure, Samples};

const OBJECTS: u64 = 10_000;
/// Most lists taken per variant; each variant also stops after [`BUDGET`].
const ROUNDS: usize = 50;
const BUDGET: Duration = Duration::from_secs(6);

/// Runs section 3 on a current-thread runtime.
pub fn run(all: &mut Vec<Figure>) -> Result<()> {
    fixtures::current_thread()?.block_on(async {
        // Bare: kube-controller-manager's root CA publisher would add a ConfigMap of its own.
        let server = FakeApiServer::builder().seed(3).bare().build();
        let client = server.client();
        fixtures::create_namespace(&client, "list").await?;
        let start = Instant::now();
        for i in 0..OBJECTS {
            let cm = fixtures::config_map("list", &format!("cm-{i:05}"), i % 10, 256);
            let mut value = serde_json::to_value(&cm)?;
            value["apiVersion"] = "v1".into();
            value["kind"] = "ConfigMap".into();
            server.apply_manifest(value)?;
        }
        emit(
            Figure::info(
                "list.setup_direct_create",
                fixtures::rate(OBJECTS, start.elapsed()),
                "obj/s",
            ),
            all,
        );
        let cms = Api::<ConfigMap>::namespaced(client.clone(), "list");
        let everything = ListParams::default();
        let typed = measure(|| async {
            let list = cms.list(&everything).await?;
            check_len(list.items.len(), OBJECTS as usize)
        })
        .await?;
        report(all, "list.10k.typed", &typed);
        let raw = measure(|| raw_list(&client, "", OBJECTS)).await?;
        report(all, "list.10k.raw", &raw);
        let selected = ListParams::default().labels("shard=s3");
        let by_label = measure(|| async {
            let list = cms.list(&selected).await?;
            check_len(list.items.len(), (OBJECTS / 10) as usize)
        })
        .await?;
        report(all, "list.10k.selector", &by_label);
        let raw_by_label =
            measure(|| raw_list(&client, "?labelSelector=shard%3Ds3", OBJECTS / 10)).await?;
        report(all, "list.10k.selector.raw", &raw_by_label);
        Ok(())
    })
}

/// A list read as bytes, not decoded: what the server and the transport cost.
async fn raw_list(client: &kube::Client, query: &str, at_least: u64) -> Result<()> {
    let request = http::Request::get(format!("/api/v1/namespaces/list/configmaps{query}"))
        .body(kube::client::Body::empty())?;
    let response = client.send(request).await?;
    let body = response.into_body().collect().await?.to_bytes();
    if body.len() < at_least as usize * 256 {
        return Err(format!("list body too short: {} bytes", body.len()).into());
    }
    Ok(())
}

fn check_len(got: usize, want: usize) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(format!("list returned {got} items, expected {want}").into())
    }
}

async fn measure<F, Fut>(mut op: F) -> Result<Samples>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<()>>,
{
    op().await?; // warm-up
    let mut samples = Samples::with_capacity(ROUNDS);
    let start = Instant::now();
    while samples.len() < ROUNDS && start.elapsed() < BUDGET {
        let t = Instant::now();
        op().await?;
        samples.push(t.elapsed());
    }
    Ok(samples)
}

fn report(all: &mut Vec<Figure>, name: &str, samples: &Samples) {
    emit(
        Figure::info(format!("{name}.p50"), samples.percentile_ms(50.0), "ms"),
        all,
    );
    emit(
        Figure::info(format!("{name}.p99"), samples.percentile_ms(99.0), "ms"),
        all,
    );
}
