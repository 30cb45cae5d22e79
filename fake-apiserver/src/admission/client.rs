//! The HTTPS client that posts `AdmissionReview`s to webhooks, as the real server's webhook
//! client does (`util/webhook.ClientManager.HookClient`, client-go's REST client): the server is
//! verified against the webhook's `caBundle` only, HTTP/1.1, `?timeout=Ns` on the URL, and the
//! call bounded by `timeoutSeconds`. A `clientConfig.url` is used as is; a
//! `clientConfig.service` is `https://NAME.NAMESPACE.svc:PORT/PATH`, verified for that name, with
//! the connection going where the server's [`super::ServiceResolver`] says. Failures read as
//! Go's do (`Post "URL": dial tcp ...: connect: connection refused`, `context deadline
//! exceeded`, ...), since they end up in the client's error message.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use serde_json::Value;
use tokio_rustls::rustls;

use super::config::{ServiceReference, ServiceResolver};

/// Why a call failed; the text is what follows `failed to call webhook: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CallError {
    /// The request did not get an answer (`Post "URL": ...`).
    #[error("Post {url:?}: {detail}")]
    Transport {
        /// The URL as the real client prints it (with `?timeout=`).
        url: String,
        /// What went wrong, in Go's words.
        detail: String,
    },
    /// The webhook answered with an error status (the REST client's status error).
    #[error("{0}")]
    Status(String),
    /// The answer was not an object the client could decode.
    #[error("{0}")]
    Decode(String),
}

/// Where and how one webhook is called.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The URL, as printed in errors (with `?timeout=`).
    url: String,
    /// `host:port` to connect to.
    connect: Option<String>,
    /// The name the certificate must be valid for.
    server_name: String,
    /// The `Host` header.
    host: String,
    /// Path and query of the request.
    path_and_query: String,
}

/// Splits `host[:port]` (IPv6 in brackets) into the host and the port (443 by default).
fn host_and_port(authority: &str) -> (String, u16) {
    if let Some(rest) = authority.strip_prefix('[') {
        if let Some((host, after)) = rest.split_once(']') {
            let port = after
                .strip_prefix(':')
                .and_then(|p| p.parse().ok())
                .unwrap_or(443);
            return (host.to_string(), port);
        }
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => {
            (host.to_string(), port.parse().unwrap_or(443))
        }
        _ => (authority.to_string(), 443),
    }
}

/// `host:port` for connecting, IPv6 hosts in brackets.
fn join_host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

impl Target {
    /// The target of a webhook's `clientConfig`, with `timeout` in the query as the real client
    /// sends it.
    pub fn of(
        client_config: &Value,
        timeout_seconds: u64,
        resolver: Option<&ServiceResolver>,
    ) -> Result<Self, String> {
        let query = format!("?timeout={timeout_seconds}s");
        if let Some(service) = client_config.get("service").filter(|s| s.is_object()) {
            let reference = ServiceReference {
                namespace: service["namespace"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                name: service["name"].as_str().unwrap_or_default().to_string(),
                port: service["port"]
                    .as_u64()
                    .and_then(|p| u16::try_from(p).ok())
                    .unwrap_or(443),
                path: service["path"].as_str().map(str::to_string),
            };
            let server_name = format!("{}.{}.svc", reference.name, reference.namespace);
            let host = join_host_port(&server_name, reference.port);
            let path = reference.path.clone().unwrap_or_default();
            let connect = resolver.and_then(|r| r(&reference)).map(|address| {
                let authority = address
                    .split_once("://")
                    .map_or(address.as_str(), |(_, rest)| rest);
                let authority = authority.split('/').next().unwrap_or_default();
                let (h, p) = host_and_port(authority);
                join_host_port(&h, p)
            });
            return Ok(Target {
                url: format!("https://{host}{path}{query}"),
                connect,
                server_name,
                host,
                path_and_query: format!("{}{query}", if path.is_empty() { "/" } else { &path }),
            });
        }
        let Some(url) = client_config["url"].as_str().filter(|u| !u.is_empty()) else {
            return Err("webhook configuration must have either service or URL".into());
        };
        let rest = url
            .strip_prefix("https://")
            .ok_or_else(|| format!("Unparsable URL: {url:?} is not an https URL"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        let (host, port) = host_and_port(authority);
        Ok(Target {
            url: format!("https://{authority}{path}{query}"),
            connect: Some(join_host_port(&host, port)),
            server_name: host,
            host: authority.to_string(),
            path_and_query: format!("{}{query}", if path.is_empty() { "/" } else { path }),
        })
    }

    fn transport(&self, detail: impl Into<String>) -> CallError {
        CallError::Transport {
            url: self.url.clone(),
            detail: detail.into(),
        }
    }
}

/// Verifies a webhook's certificate against its `caBundle` as Go's `x509.Verify` does: a chain
/// to one of the bundle's certificates, or the certificate itself in the bundle (the usual
/// self-signed webhook certificate, which webpki alone refuses as a CA used as end entity).
#[derive(Debug)]
struct BundleVerifier {
    chains: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    bundle: Vec<CertificateDer<'static>>,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl rustls::client::danger::ServerCertVerifier for BundleVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls_pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        if self
            .bundle
            .iter()
            .any(|c| c.as_ref() == end_entity.as_ref())
        {
            let cert = webpki::EndEntityCert::try_from(end_entity).map_err(|_| {
                rustls::Error::InvalidCertificate(rustls::CertificateError::BadEncoding)
            })?;
            cert.verify_is_valid_for_subject_name(server_name)
                .map_err(|_| {
                    rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName)
                })?;
            return Ok(rustls::client::danger::ServerCertVerified::assertion());
        }
        match &self.chains {
            Some(chains) => chains.verify_server_cert(
                end_entity,
                intermediates,
                server_name,
                ocsp_response,
                now,
            ),
            None => Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::UnknownIssuer,
            )),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The TLS client configuration trusting exactly the PEM certificates of `ca_bundle` (HTTP/1.1,
/// as the real webhook client forces it).
fn tls_config(ca_bundle: &[u8]) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    let mut bundle = Vec::new();
    for cert in CertificateDer::pem_slice_iter(ca_bundle) {
        let cert = cert.map_err(|e| format!("unable to load root certificates: {e}"))?;
        roots
            .add(cert.clone())
            .map_err(|e| format!("unable to load root certificates: {e}"))?;
        bundle.push(cert);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chains = if roots.is_empty() {
        None
    } else {
        rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            provider.clone(),
        )
        .build()
        .ok()
    };
    let verifier = BundleVerifier {
        chains,
        bundle,
        provider: provider.clone(),
    };
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Go's words for a failed TLS handshake.
fn tls_failure(e: &std::io::Error, server_name: &str) -> String {
    let certificate = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .and_then(|e| match e {
            rustls::Error::InvalidCertificate(c) => Some(c.clone()),
            _ => None,
        });
    match certificate {
        Some(rustls::CertificateError::UnknownIssuer) => {
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
                .into()
        }
        Some(rustls::CertificateError::NotValidForName)
        | Some(rustls::CertificateError::NotValidForNameContext { .. }) => format!(
            "tls: failed to verify certificate: x509: certificate is not valid for {server_name}"
        ),
        Some(rustls::CertificateError::Expired)
        | Some(rustls::CertificateError::ExpiredContext { .. }) => {
            "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
                .into()
        }
        Some(other) => format!("tls: failed to verify certificate: x509: {other:?}"),
        None => format!("remote error: tls: {e}"),
    }
}

/// The message the REST client makes of a non-2xx answer: the `Status` the webhook sent, else
/// `NewGenericServerResponse`'s words for the code.
fn status_error(code: u16, body: &[u8]) -> CallError {
    if let Ok(status) = crate::store::json::from_slice(body) {
        if status["kind"] == "Status" {
            if let Some(message) = status["message"].as_str() {
                return CallError::Status(message.to_string());
            }
        }
    }
    let text = String::from_utf8_lossy(body).trim().to_string();
    let message = match code {
        409 => "the server reported a conflict".to_string(),
        404 => "the server could not find the requested resource".to_string(),
        400 => "the server rejected our request for an unknown reason".to_string(),
        401 => "the server has asked for the client to provide credentials".to_string(),
        403 => "the server does not allow access to the requested resource".to_string(),
        405 => "the server does not allow this method on the requested resource".to_string(),
        415 => "the server does not support the requested media type".to_string(),
        422 => "the server rejected our request due to an error in our request".to_string(),
        503 => "the server is currently unable to handle the request".to_string(),
        504 => "the server was unable to return a response in the time allotted, but may still be processing the request".to_string(),
        429 => "the server has received too many requests and has asked us to try again later".to_string(),
        c if c >= 500 => format!(
            "an error on the server ({text:?}) has prevented the request from succeeding"
        ),
        c => format!("the server responded with the status code {c} but did not return more information"),
    };
    CallError::Status(message)
}

/// `clientConfig.caBundle`, decoded from base64 (as it is written in JSON).
pub(crate) fn ca_bundle(client_config: &Value) -> Vec<u8> {
    use base64::Engine;
    client_config["caBundle"]
        .as_str()
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .unwrap_or_default()
}

/// Posts `body` (an `AdmissionReview` or a `ConversionReview`) and returns the decoded answer; the whole call is bounded
/// by `timeout`.
pub(crate) async fn post(
    target: &Target,
    ca_bundle: &[u8],
    body: Vec<u8>,
    timeout: Duration,
) -> Result<Value, CallError> {
    match tokio::time::timeout(timeout, exchange(target, ca_bundle, body)).await {
        Ok(result) => result,
        Err(_) => Err(target.transport("context deadline exceeded")),
    }
}

async fn exchange(target: &Target, ca_bundle: &[u8], body: Vec<u8>) -> Result<Value, CallError> {
    let Some(address) = target.connect.as_deref() else {
        let (host, _) = host_and_port(&target.host);
        return Err(target.transport(format!("dial tcp: lookup {host}: no such host")));
    };
    let config = tls_config(ca_bundle).map_err(|e| target.transport(e))?;
    let server_name = ServerName::try_from(target.server_name.clone())
        .map_err(|e| target.transport(format!("invalid server name: {e}")))?;
    let tcp = tokio::net::TcpStream::connect(address).await.map_err(|e| {
        let detail = match e.kind() {
            std::io::ErrorKind::ConnectionRefused => "connect: connection refused".to_string(),
            _ => e.to_string(),
        };
        target.transport(format!("dial tcp {address}: {detail}"))
    })?;
    let _ = tcp.set_nodelay(true);
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(server_name, tcp)
        .await
        .map_err(|e| target.transport(tls_failure(&e, &target.server_name)))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(|e| target.transport(e.to_string()))?;
    let connection = tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!(error = %e, "webhook connection ended");
        }
    });
    let request = http::Request::post(&target.path_and_query)
        .header(http::header::HOST, &target.host)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json, */*")
        .header(http::header::USER_AGENT, "kube-apiserver-admission")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| target.transport(e.to_string()))?;
    let result = async {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| target.transport(e.to_string()))?;
        let code = response.status().as_u16();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| target.transport(e.to_string()))?
            .to_bytes();
        if !(200..300).contains(&code) {
            return Err(status_error(code, &bytes));
        }
        crate::store::json::from_slice(&bytes).map_err(|e| {
            CallError::Decode(format!("couldn't get version/kind; json parse error: {e}"))
        })
    }
    .await;
    connection.abort();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn url_targets_keep_the_url() {
        let t = Target::of(&json!({"url": "https://127.0.0.1:8443/validate"}), 10, None).unwrap();
        assert_eq!(t.url, "https://127.0.0.1:8443/validate?timeout=10s");
        assert_eq!(t.connect.as_deref(), Some("127.0.0.1:8443"));
        assert_eq!(t.server_name, "127.0.0.1");
        assert_eq!(t.path_and_query, "/validate?timeout=10s");
        let t = Target::of(&json!({"url": "https://hooks.example.com"}), 3, None).unwrap();
        assert_eq!(t.connect.as_deref(), Some("hooks.example.com:443"));
        assert_eq!(t.path_and_query, "/?timeout=3s");
    }

    #[test]
    fn service_targets_resolve_through_the_resolver() {
        let config =
            json!({"service": {"namespace": "ns", "name": "hook", "port": 8443, "path": "/m"}});
        let unresolved = Target::of(&config, 10, None).unwrap();
        assert_eq!(unresolved.url, "https://hook.ns.svc:8443/m?timeout=10s");
        assert_eq!(unresolved.connect, None);
        let resolver: ServiceResolver = Arc::new(|s: &ServiceReference| {
            (s.name == "hook" && s.port == 8443).then(|| "https://127.0.0.1:4000".to_string())
        });
        let t = Target::of(&config, 10, Some(&resolver)).unwrap();
        assert_eq!(t.connect.as_deref(), Some("127.0.0.1:4000"));
        assert_eq!(t.server_name, "hook.ns.svc");
        assert_eq!(t.host, "hook.ns.svc:8443");
        assert_eq!(t.path_and_query, "/m?timeout=10s");
    }

    #[test]
    fn error_statuses_read_as_client_go_reports_them() {
        assert_eq!(
            status_error(404, b"nope").to_string(),
            "the server could not find the requested resource"
        );
        assert_eq!(
            status_error(500, b"boom").to_string(),
            "an error on the server (\"boom\") has prevented the request from succeeding"
        );
        assert_eq!(
            status_error(403, br#"{"kind":"Status","message":"go away"}"#).to_string(),
            "go away"
        );
    }
}
