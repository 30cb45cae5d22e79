//! A kubeconfig that points `kubectl` (or any client-go / kube-rs client) at this server.
//!
//! One cluster, one user and one context, all named [`NAME`]: plain HTTP, no credentials, the
//! `default` namespace. Write it to a file and pass `--kubeconfig FILE` or set `KUBECONFIG`.

use serde_json::json;

/// The name of the cluster, user and context in the generated kubeconfig.
pub const NAME: &str = "fake";

/// A kubeconfig (YAML) whose current context talks to `server_url`, e.g. `http://127.0.0.1:6443`.
pub fn kubeconfig_yaml(server_url: &str) -> String {
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": NAME, "cluster": {"server": server_url}}],
        "users": [{"name": NAME, "user": {}}],
        "contexts": [{
            "name": NAME,
            "context": {"cluster": NAME, "user": NAME, "namespace": "default"},
        }],
        "current-context": NAME,
        "preferences": {},
    });
    // Serialising a `serde_json::Value` to YAML cannot fail: every key is a string.
    serde_yaml::to_string(&config).unwrap_or_default()
}

/// A kubeconfig like [`kubeconfig_yaml`] whose user authenticates with a bearer `token` (e.g.
/// a service account's, from [`crate::FakeApiServer::service_account_token`]) and whose context
/// defaults to `namespace`.
pub fn kubeconfig_yaml_with_token(server_url: &str, token: &str, namespace: &str) -> String {
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": NAME, "cluster": {"server": server_url}}],
        "users": [{"name": NAME, "user": {"token": token}}],
        "contexts": [{
            "name": NAME,
            "context": {"cluster": NAME, "user": NAME, "namespace": namespace},
        }],
        "current-context": NAME,
        "preferences": {},
    });
    serde_yaml::to_string(&config).unwrap_or_default()
}

/// A kubeconfig for a server served over HTTPS (`server_url` is `https://...`) whose
/// certificate `certificate_authority` (a PEM file) verifies, with a bearer `token` if given.
/// kubectl sends credentials only over TLS.
pub fn kubeconfig_yaml_tls(
    server_url: &str,
    certificate_authority: &std::path::Path,
    token: Option<&str>,
    namespace: &str,
) -> String {
    let user = match token {
        Some(token) => json!({"token": token}),
        None => json!({}),
    };
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": NAME, "cluster": {
            "server": server_url,
            "certificate-authority": certificate_authority.to_string_lossy(),
        }}],
        "users": [{"name": NAME, "user": user}],
        "contexts": [{
            "name": NAME,
            "context": {"cluster": NAME, "user": NAME, "namespace": namespace},
        }],
        "current-context": NAME,
        "preferences": {},
    });
    serde_yaml::to_string(&config).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::Value;

    #[rstest]
    #[case("http://127.0.0.1:6443")]
    #[case("http://[::1]:8080")]
    #[case("http://127.0.0.1:1234/prefix?x=a: b#c")]
    fn kubeconfig_round_trips_the_server_url(#[case] url: &str) {
        let yaml = kubeconfig_yaml(url);
        let parsed: Value = serde_yaml::from_str(&yaml).unwrap();
        assert_eq!(parsed["kind"], "Config");
        assert_eq!(parsed["current-context"], "fake");
        assert_eq!(parsed["clusters"][0]["cluster"]["server"], url);
        assert_eq!(parsed["contexts"][0]["context"]["cluster"], "fake");
        assert_eq!(parsed["contexts"][0]["context"]["user"], "fake");
        assert_eq!(parsed["users"][0]["user"], json!({}));
    }

    #[test]
    fn kube_rs_accepts_it() {
        let yaml = kubeconfig_yaml("http://127.0.0.1:6443");
        let config = kube::config::Kubeconfig::from_yaml(&yaml).unwrap();
        assert_eq!(config.current_context.as_deref(), Some("fake"));
        let cluster = config.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("http://127.0.0.1:6443"));
    }
}
