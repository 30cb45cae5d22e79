//! The `controllers eno` subcommand as a user runs it against the fake API server over TCP: a
//! kubeconfig, leader election on a Lease, `/healthz` `/readyz` `/metrics`, and the kubelet
//! stand-in (`--simulate-kubelet`); plus the `run_demo` building block.

use crate::eno_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use controllers::eno::cli::{run_eno, EnoArgs};
use controllers::eno::demo::{run_demo, DemoOptions};
use controllers::operator::runner::OperatorArgs;
use eno_support::*;
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn http_get(addr: std::net::SocketAddr, path: &str) -> Option<String> {
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await.ok()?;
    Some(response)
}

#[tokio::test]
async fn the_eno_subcommand_synthesizes_against_a_server_over_tcp() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let server = FakeApiServer::new();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let api_addr = listener.local_addr().unwrap();
        let serving = tokio::spawn(server.clone().serve(listener, futures::future::pending()));
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            fake_apiserver::kubeconfig::kubeconfig_yaml(&format!("http://{api_addr}")),
        )
        .unwrap();
        let http_addr = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap()
        };

        let client = server.client();
        controllers::eno::demo::install_crds(&client).await.unwrap();
        controllers::eno::demo::ensure_namespace(&client, "eno-system")
            .await
            .unwrap();
        let args = EnoArgs {
            pod_namespace: "eno-system".into(),
            pod_service_account: Some("eno-synthesizer".into()),
            executor_image: "controllers:test".into(),
            simulate_kubelet: true,
            max_error_backoff_seconds: 1,
            operator: OperatorArgs {
                kubeconfig: Some(kubeconfig),
                http_address: http_addr,
                leader_elect: true,
                leader_election_namespace: None,
            },
        };
        let controller = tokio::spawn(run_eno(args));

        create_synthesizer(&client, &output_synthesizer("syn")).await;
        create_composition(&client, "default", "web", "syn").await;
        let api = Api::<controllers::eno::Composition>::namespaced(client.clone(), "default");
        wait_for("web synthesized", WAIT, || async {
            let comp = api.get("web").await.ok()?;
            synthesized_at(&comp, 1).then_some(())
        })
        .await;

        let lease = Api::<Lease>::namespaced(client.clone(), "eno-system")
            .get("eno-controller-lease")
            .await
            .unwrap();
        assert!(lease
            .spec
            .unwrap()
            .holder_identity
            .is_some_and(|h| !h.is_empty()));
        assert!(http_get(http_addr, "/healthz")
            .await
            .unwrap()
            .starts_with("HTTP/1.1 200"));
        wait_for("ready", WAIT, || async {
            http_get(http_addr, "/readyz")
                .await?
                .starts_with("HTTP/1.1 200")
                .then_some(())
        })
        .await;
        let metrics = http_get(http_addr, "/metrics").await.unwrap();
        assert!(metrics.contains("eno_syntheses_total 1"), "{metrics}");
        assert!(
            metrics.contains("eno_synthesis_pod_recreations_total 0"),
            "{metrics}"
        );

        controller.abort();
        serving.abort();
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn run_demo_reports_a_synthesized_composition() {
    let server = FakeApiServer::new();
    let written: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = written.clone();
    let report = run_demo(
        server.client(),
        DemoOptions {
            timeout: Duration::from_secs(30),
            pod_logs: Some(Arc::new(move |pod, container, text| {
                sink.lock().unwrap().push(format!(
                    "{}/{container}: {text}",
                    pod.metadata.name.as_deref().unwrap_or_default()
                ))
            })),
            ..DemoOptions::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(report.pods_left, 0);
    // The kubelet stand-in wrote the synthesizer container's start and exit to its log.
    let written = written.lock().unwrap().clone();
    assert!(
        written
            .iter()
            .any(|l| l.contains(": stand-in kubelet: started container")),
        "{written:?}"
    );
    assert!(
        written.iter().any(|l| l.ends_with("exited with code 0")),
        "{written:?}"
    );
    assert!(synthesized_at(&report.composition, 1));
    assert_eq!(report.slices.len(), 1);
    assert!(report.slices[0].spec.resources[0]
        .manifest
        .contains("demo-output"));
    let text = report.to_string();
    assert!(text.contains("synthesized:"), "{text}");
    assert!(text.contains("demo-output"), "{text}");
}
