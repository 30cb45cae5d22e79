//! Errors of the Eno controllers' reconciles.

/// Why a reconcile failed; the controller logs it and retries with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Composition names a Synthesizer the cache does not hold (upstream returns this error
    /// too, step 4).
    #[error("getting synthesizer {name:?}: not found")]
    SynthesizerNotFound {
        /// The Synthesizer name the Composition asks for.
        name: String,
    },
    /// An API request failed.
    #[error("{action}: {source}")]
    Api {
        /// What the controller was doing, in upstream's words ("creating pod", …).
        action: &'static str,
        /// The client's error.
        #[source]
        source: Box<kube::Error>,
    },
    /// An object from the cache cannot be addressed (no name or namespace).
    #[error("object without {0}")]
    MissingMetadata(&'static str),
}

impl Error {
    /// Wrap a client error with what the controller was doing.
    pub fn api(action: &'static str) -> impl FnOnce(kube::Error) -> Self {
        move |source| Self::Api {
            action,
            source: Box::new(source),
        }
    }

    /// Whether this is a 409 Conflict (a write carried a stale resourceVersion).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Api { source, .. } if is_status(source, 409))
    }
}

/// Whether a client error is an API status with this HTTP code.
pub fn is_status(error: &kube::Error, code: u16) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == code)
}
