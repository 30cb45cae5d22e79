//! The controllers' production client (`controllers::operator::client`, which both binaries
//! build from `--kubeconfig`) against the fake API server over HTTPS, as against a real
//! cluster: the kubeconfig's CA verifies the server (and only it), its bearer token
//! authenticates, and a kubeconfig with a client certificate and key builds a working client.

mod kubectl_support;

use controllers::operator::client::{client_from_env, ClientError};
use fake_apiserver::auth::{AuthorizationMode, StaticTokens};
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::ListParams;
use kube::Api;
use kubectl_support::{self_signed_certificate, Cluster};

/// A server over HTTPS with one static token (a cluster admin), RBAC and no anonymous access.
fn secured() -> Cluster {
    Cluster::start_tls_with(|| {
        FakeApiServer::builder()
            .static_tokens(
                StaticTokens::parse("tokens.csv", "admin-token,admin,u-admin,system:masters\n")
                    .expect("token file"),
            )
            .anonymous_auth(false)
            .authorization_mode(AuthorizationMode::Rbac)
            .build()
    })
}

/// Lists namespaces through the production client built from `kubeconfig`.
fn list_namespaces(
    cluster: &Cluster,
    kubeconfig: &std::path::Path,
) -> Result<Result<Vec<String>, kube::Error>, ClientError> {
    cluster.block_on(async {
        let client = client_from_env(Some(kubeconfig)).await?;
        let answer = Api::<Namespace>::all(client)
            .list(&ListParams::default())
            .await
            .map(|list| {
                list.items
                    .into_iter()
                    .filter_map(|ns| ns.metadata.name)
                    .collect()
            });
        Ok(answer)
    })
}

fn status_code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

#[test]
fn token_over_tls_authenticates() {
    let cluster = secured();
    let admin = cluster.token_kubeconfig("admin", "admin-token");
    let namespaces = list_namespaces(&cluster, &admin)
        .expect("client")
        .expect("the admin lists namespaces");
    assert!(
        namespaces.contains(&"default".to_string()),
        "{namespaces:?}"
    );

    // The token is what authenticates: an unknown one is refused with 401.
    let stranger = cluster.token_kubeconfig("stranger", "no-such-token");
    let refused = list_namespaces(&cluster, &stranger)
        .expect("client")
        .expect_err("an unknown token is refused");
    assert_eq!(status_code(&refused), Some(401), "{refused:?}");
}

#[test]
fn the_kubeconfig_ca_is_verified() {
    let cluster = secured();
    let admin = cluster.token_kubeconfig("admin", "admin-token");
    // The same kubeconfig trusting another self-signed certificate: the handshake fails.
    let other = tempfile::tempdir().expect("temporary directory");
    let (other_cert, _) = self_signed_certificate(other.path());
    let yaml = std::fs::read_to_string(&admin).expect("kubeconfig");
    let ours = yaml
        .lines()
        .find_map(|l| l.trim().strip_prefix("certificate-authority: "))
        .expect("the kubeconfig names its CA")
        .to_string();
    let untrusting = other.path().join("kubeconfig");
    std::fs::write(
        &untrusting,
        yaml.replace(&ours, &other_cert.to_string_lossy()),
    )
    .expect("write kubeconfig");
    let error = list_namespaces(&cluster, &untrusting)
        .expect("client")
        .expect_err("a server the CA does not sign is refused");
    assert_eq!(status_code(&error), None, "not an API answer: {error:?}");
}

#[test]
fn client_certificate_kubeconfig_builds_and_connects() {
    let cluster = secured();
    let admin = cluster.token_kubeconfig("admin", "admin-token");
    let dir = tempfile::tempdir().expect("temporary directory");
    let (cert, key) = self_signed_certificate(dir.path());
    let yaml = std::fs::read_to_string(&admin)
        .expect("kubeconfig")
        .replace(
            "token: admin-token",
            &format!(
                "token: admin-token\n    client-certificate: {}\n    client-key: {}",
                cert.display(),
                key.display()
            ),
        );
    assert!(yaml.contains("client-key"), "{yaml}");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, yaml).expect("write kubeconfig");
    // The fake asks for no client certificate; what is checked is that the identity loads
    // into the TLS stack and the handshake still completes.
    let namespaces = list_namespaces(&cluster, &kubeconfig)
        .expect("a client with a client certificate")
        .expect("lists namespaces");
    assert!(
        namespaces.contains(&"default".to_string()),
        "{namespaces:?}"
    );

    // A key that is not one is refused when the client is built.
    let broken = dir.path().join("broken.kubeconfig");
    let bad_key = dir.path().join("bad.key");
    std::fs::write(&bad_key, "not a key").expect("write key");
    std::fs::write(
        &broken,
        std::fs::read_to_string(&kubeconfig)
            .expect("kubeconfig")
            .replace(&key.display().to_string(), &bad_key.display().to_string()),
    )
    .expect("write kubeconfig");
    assert!(list_namespaces(&cluster, &broken).is_err());
}
