//! Building a [`kube::Client`] for a real cluster.

use std::path::Path;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

/// Why no client could be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The kubeconfig file could not be read or parsed.
    #[error("reading kubeconfig {path}: {source}")]
    Kubeconfig {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// Neither a kubeconfig nor an in-cluster environment was found.
    #[error("inferring cluster configuration: {0}")]
    Infer(#[from] kube::config::InferConfigError),
    /// The configuration could not become a client (TLS, proxy…).
    #[error("building client: {0}")]
    Build(#[from] kube::Error),
}

/// A client from `kubeconfig` when given, else `$KUBECONFIG` / `~/.kube/config`, else the
/// in-cluster service account.
pub async fn client_from_env(kubeconfig: Option<&Path>) -> Result<Client, ClientError> {
    let config = match kubeconfig {
        Some(path) => {
            let kubeconfig =
                Kubeconfig::read_from(path).map_err(|source| ClientError::Kubeconfig {
                    path: path.display().to_string(),
                    source,
                })?;
            Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|source| ClientError::Kubeconfig {
                    path: path.display().to_string(),
                    source,
                })?
        }
        None => Config::infer().await?,
    };
    Ok(Client::try_from(config)?)
}
