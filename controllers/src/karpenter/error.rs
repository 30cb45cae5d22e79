//! Errors of the NodeClaim controllers.

use super::cloudprovider::CloudProviderError;

/// An error from a reconcile pass.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A call to the API server failed.
    #[error("{action}: {source}")]
    Api {
        /// What we were doing.
        action: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// The cloud provider failed.
    #[error("{action}: {source}")]
    CloudProvider {
        /// What we were doing.
        action: String,
        /// The provider error.
        #[source]
        source: CloudProviderError,
    },
    /// An object could not be converted to or from JSON.
    #[error("encoding {what}: {source}")]
    Encode {
        /// Which object.
        what: String,
        /// The serde error.
        #[source]
        source: serde_json::Error,
    },
    /// The object lacks something every stored object has (a name or a UID).
    #[error("invalid object: {0}")]
    InvalidObject(String),
    /// Several sub-reconcilers failed (upstream's multierr).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Multiple(Vec<Error>),
}

impl Error {
    /// Wraps an API error with what we were doing.
    pub fn api(action: impl Into<String>, source: kube::Error) -> Self {
        Self::Api {
            action: action.into(),
            source,
        }
    }

    /// Whether this is (only) an API NotFound.
    pub fn is_not_found(&self) -> bool {
        match self {
            Self::Api {
                source: kube::Error::Api(status),
                ..
            } => status.is_not_found(),
            Self::Multiple(errs) => !errs.is_empty() && errs.iter().all(Error::is_not_found),
            _ => false,
        }
    }

    /// Whether this is an API conflict (409).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Api { source: kube::Error::Api(status), .. } if status.is_conflict())
    }
}

/// Whether a client error is a NotFound.
pub fn is_not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(status) if status.is_not_found())
}

/// Whether a client error is a Conflict.
pub fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(status) if status.is_conflict())
}

/// Collects errors the way multierr does, but drops only the NotFound ones.
///
/// Sharp edge fixed (spec §6.5): upstream returns `client.IgnoreNotFound(multierr.Append(errs,
/// err))`, and since `errors.As` walks every wrapped error, one NotFound anywhere drops *all* of
/// them, including a launch failure. Here each NotFound is dropped on its own and every other
/// error is returned.
pub fn ignore_not_found(errs: Vec<Error>) -> Option<Error> {
    let mut rest: Vec<Error> = errs
        .into_iter()
        .flat_map(|e| match e {
            Error::Multiple(inner) => inner,
            other => vec![other],
        })
        .filter(|e| !e.is_not_found())
        .collect();
    match rest.len() {
        0 => None,
        1 => rest.pop(),
        _ => Some(Error::Multiple(rest)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn not_found() -> Error {
        Error::api(
            "patching",
            kube::Error::Api(Box::new(
                kube::core::Status::failure("gone", "NotFound").with_code(404),
            )),
        )
    }

    fn launch_failed() -> Error {
        Error::CloudProvider {
            action: "launching nodeclaim".into(),
            source: CloudProviderError::Other("boom".into()),
        }
    }

    #[test]
    fn drops_only_the_not_found_errors() {
        // Upstream's IgnoreNotFound(multierr) would return nil here and lose the launch failure.
        let kept = ignore_not_found(vec![launch_failed(), not_found()]).unwrap();
        assert!(kept.to_string().contains("boom"), "{kept}");
        assert!(!kept.to_string().contains("gone"), "{kept}");
        assert!(ignore_not_found(vec![not_found()]).is_none());
        assert!(ignore_not_found(vec![]).is_none());
    }

    #[test]
    fn multiple_reports_every_error() {
        let e = ignore_not_found(vec![launch_failed(), launch_failed()]).unwrap();
        assert!(matches!(&e, Error::Multiple(v) if v.len() == 2));
        assert!(!e.is_not_found());
    }
}
