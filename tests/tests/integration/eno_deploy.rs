//! The Eno manifests in `deploy/eno`: the CRDs match the Rust types, and every manifest loads
//! into the fake API server. `UPDATE_GOLDEN=1 cargo test -p tests --test integration eno_deploy::`
//! rewrites `deploy/eno/crds.yaml` from the types.

use std::path::PathBuf;

use fake_apiserver::FakeApiServer;
use k8s_openapi::serde::Deserialize;

fn deploy_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/eno")
}

fn documents(file: &str) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(deploy_dir().join(file)).unwrap();
    serde_yaml::Deserializer::from_str(&text)
        .map(|doc| serde_json::Value::deserialize(doc).unwrap())
        .filter(|doc| !doc.is_null())
        .collect()
}

#[test]
fn crds_yaml_matches_the_types() {
    let generated = controllers::crds::to_yaml(&controllers::eno::types::crds()).unwrap();
    let path = deploy_dir().join("crds.yaml");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert!(
        on_disk == generated,
        "deploy/eno/crds.yaml is stale: rerun with UPDATE_GOLDEN=1"
    );
}

#[tokio::test]
async fn every_manifest_loads_into_an_api_server() {
    let server = FakeApiServer::new();
    let kustomization = documents("kustomization.yaml");
    let files: Vec<String> = kustomization[0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    assert_eq!(files.len(), 4);
    let mut loaded = Vec::new();
    for file in &files {
        for doc in documents(file) {
            let kind = doc["kind"].as_str().unwrap().to_string();
            server
                .apply_manifest(doc)
                .unwrap_or_else(|e| panic!("{file}: {kind}: {e:?}"));
            loaded.push(kind);
        }
    }
    for kind in [
        "Namespace",
        "CustomResourceDefinition",
        "ClusterRole",
        "Role",
        "ServiceAccount",
        "Deployment",
    ] {
        assert!(
            loaded.iter().any(|k| k == kind),
            "{kind} missing from {loaded:?}"
        );
    }
    let deployment = server
        .get_object(
            "apps/v1",
            "deployments",
            Some("eno-system"),
            "eno-controller",
        )
        .unwrap();
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    let executor_image = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "EXECUTOR_IMAGE")
        .unwrap()["value"]
        .clone();
    assert_eq!(
        executor_image, container["image"],
        "pods copy the executor from the controller's own image"
    );
    assert_eq!(container["args"][0], "eno");
}
