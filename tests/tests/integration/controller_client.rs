//! The controllers' production client (`controllers::operator::client`, which both binaries
//! build from `--kubeconfig`) against the fake API server over HTTPS, as against a real
//! cluster: the kubeconfig's CA verifies the server (and only it), its bearer token
//! authenticates, and a kubeconfig with a client certificate and key builds a working client.

use std::path::{Path, PathBuf};

use controllers::operator::client::{client_from_env, ClientError};
use fake_apiserver::auth::{AuthorizationMode, StaticTokens};
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::ListParams;
use kube::Api;

/// Runs `openssl` with `args` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let output = std::process::Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl runs");
    assert!(
        output.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A CA and a certificate it signs for `name` (P-256, one day) in `dir`, as a cluster's: the
/// fake's own self-signed certificate is its own CA, which rustls (unlike Go) refuses as a
/// server certificate. Returns (CA certificate, certificate, key).
fn ca_signed(dir: &Path, name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    if !dir.join("ca.crt").exists() {
        let mut args = vec!["req", "-x509"];
        args.extend(ec);
        args.extend(["-days", "1", "-subj", "/CN=test-ca"]);
        args.extend(["-keyout", "ca.key", "-out", "ca.crt"]);
        openssl(dir, &args);
    }
    let (key, csr, crt) = (
        format!("{name}.key"),
        format!("{name}.csr"),
        format!("{name}.crt"),
    );
    let mut args = vec!["req"];
    args.extend(ec);
    args.extend(["-subj", "/CN=fake-apiserver", "-keyout", &key, "-out", &csr]);
    openssl(dir, &args);
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n",
    )
    .expect("write extensions");
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            "ext.cnf",
            "-out",
            &crt,
        ],
    );
    (dir.join("ca.crt"), dir.join(crt), dir.join(key))
}

/// A server over HTTPS with one static token (a cluster admin), RBAC and no anonymous access.
struct Secured {
    runtime: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
    url: String,
    ca: PathBuf,
}

impl Secured {
    fn start() -> Self {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        let dir = tempfile::tempdir().expect("temporary directory");
        let (ca, cert, key) = ca_signed(dir.path(), "server");
        let tls = fake_apiserver::tls::TlsConfig::from_pem_files(&cert, &key).expect("TLS");
        let url = runtime.block_on(async {
            let server = FakeApiServer::builder()
                .static_tokens(
                    StaticTokens::parse("tokens.csv", "admin-token,admin,u-admin,system:masters\n")
                        .expect("token file"),
                )
                .anonymous_auth(false)
                .authorization_mode(AuthorizationMode::Rbac)
                .build();
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let url = format!("https://{}", listener.local_addr().expect("address"));
            tokio::spawn(server.serve_tls(listener, tls, std::future::pending()));
            url
        });
        Secured {
            runtime,
            dir,
            url,
            ca,
        }
    }

    /// A kubeconfig trusting `ca` with the bearer `token`.
    fn kubeconfig(&self, name: &str, ca: &Path, token: &str) -> PathBuf {
        let path = self.dir.path().join(format!("{name}.kubeconfig"));
        let yaml =
            fake_apiserver::kubeconfig::kubeconfig_yaml_tls(&self.url, ca, Some(token), "default");
        std::fs::write(&path, yaml).expect("write kubeconfig");
        path
    }

    /// Lists namespaces through the production client built from `kubeconfig`.
    fn list_namespaces(
        &self,
        kubeconfig: &Path,
    ) -> Result<Result<Vec<String>, kube::Error>, ClientError> {
        self.runtime.block_on(async {
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
}

fn status_code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

#[test]
fn token_over_tls_authenticates() {
    let cluster = Secured::start();
    let admin = cluster.kubeconfig("admin", &cluster.ca, "admin-token");
    let namespaces = cluster
        .list_namespaces(&admin)
        .expect("client")
        .expect("the admin lists namespaces");
    assert!(
        namespaces.contains(&"default".to_string()),
        "{namespaces:?}"
    );

    // The token is what authenticates: an unknown one is refused with 401.
    let stranger = cluster.kubeconfig("stranger", &cluster.ca, "no-such-token");
    let refused = cluster
        .list_namespaces(&stranger)
        .expect("client")
        .expect_err("an unknown token is refused");
    assert_eq!(status_code(&refused), Some(401), "{refused:?}");
}

#[test]
fn the_kubeconfig_ca_is_verified() {
    let cluster = Secured::start();
    // Another CA: the handshake fails.
    let other = tempfile::tempdir().expect("temporary directory");
    let (other_ca, _, _) = ca_signed(other.path(), "other");
    let untrusting = cluster.kubeconfig("untrusting", &other_ca, "admin-token");
    let error = cluster
        .list_namespaces(&untrusting)
        .expect("client")
        .expect_err("a server the CA does not sign is refused");
    assert_eq!(status_code(&error), None, "not an API answer: {error:?}");
}

#[test]
fn client_certificate_kubeconfig_builds_and_connects() {
    let cluster = Secured::start();
    let (_, cert, key) = ca_signed(cluster.dir.path(), "client");
    let yaml = std::fs::read_to_string(cluster.kubeconfig("admin", &cluster.ca, "admin-token"))
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
    let kubeconfig = cluster.dir.path().join("client.kubeconfig");
    std::fs::write(&kubeconfig, &yaml).expect("write kubeconfig");
    // The fake asks for no client certificate; what is checked is that the identity loads
    // into the TLS stack and the handshake still completes.
    let namespaces = cluster
        .list_namespaces(&kubeconfig)
        .expect("a client with a client certificate")
        .expect("lists namespaces");
    assert!(
        namespaces.contains(&"default".to_string()),
        "{namespaces:?}"
    );

    // A key that is not one is refused when the client is built.
    let bad_key = cluster.dir.path().join("bad.key");
    std::fs::write(&bad_key, "not a key").expect("write key");
    let broken = cluster.dir.path().join("broken.kubeconfig");
    std::fs::write(
        &broken,
        yaml.replace(&key.display().to_string(), &bad_key.display().to_string()),
    )
    .expect("write kubeconfig");
    assert!(cluster.list_namespaces(&broken).is_err());
}
