//! The X.509 checks of `pkg/apis/certificates`: a request must be a PEM `CERTIFICATE REQUEST`
//! holding a PKCS#10 request whose self-signature verifies (`certificates.ParseCSR` and
//! `CertificateRequest.CheckSignature`), and an issued `status.certificate` one or more PEM
//! `CERTIFICATE` blocks without headers, each holding parsable certificates
//! (`validateCertificate`). Errors carry Go's words where Go's are fixed strings; the detail of
//! an ASN.1 structure error is this parser's.

use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::error::X509Error;
use x509_parser::oid_registry::{
    OID_KEY_TYPE_EC_PUBLIC_KEY, OID_PKCS1_RSAENCRYPTION, OID_SIG_ED25519,
};
use x509_parser::prelude::FromDer;

use super::pem;

/// What the certificates rules read of a parsed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The subject's organizations (`Subject.Organization`), in order.
    pub organizations: Vec<String>,
}

/// `certificates.ParseCSR` followed by `CheckSignature`: the request's subject, or Go's error.
pub fn parse_and_verify_request(pem_bytes: &[u8]) -> Result<Request, String> {
    let der = request_der(pem_bytes)?;
    let csr = parse_der(&der)?;
    check_signature(&csr)?;
    Ok(subject_of(&csr))
}

/// `certificates.ParseCSR`: the first PEM block must be a `CERTIFICATE REQUEST` whose body is
/// one PKCS#10 request and nothing after it. The signature is not checked.
pub fn parse_request(pem_bytes: &[u8]) -> Result<Request, String> {
    let der = request_der(pem_bytes)?;
    Ok(subject_of(&parse_der(&der)?))
}

fn parse_der(der: &[u8]) -> Result<X509CertificationRequest<'_>, String> {
    let (rest, csr) = X509CertificationRequest::from_der(der).map_err(asn1_error)?;
    if !rest.is_empty() {
        return Err("asn1: syntax error: trailing data".into());
    }
    Ok(csr)
}

fn subject_of(csr: &X509CertificationRequest<'_>) -> Request {
    let organizations = csr
        .certification_request_info
        .subject
        .iter_organization()
        .filter_map(|attr| attr.as_str().ok().map(str::to_string))
        .collect();
    Request { organizations }
}

fn request_der(pem_bytes: &[u8]) -> Result<Vec<u8>, String> {
    match pem::decode(pem_bytes) {
        Some((block, _)) if block.kind == "CERTIFICATE REQUEST" => Ok(block.bytes),
        _ => Err("PEM block type must be CERTIFICATE REQUEST".into()),
    }
}

/// `CertificateRequest.CheckSignature`, with Go's message for a signature that does not verify
/// under the request's own key.
fn check_signature(csr: &X509CertificationRequest<'_>) -> Result<(), String> {
    match csr.verify_signature() {
        Ok(()) => Ok(()),
        Err(X509Error::SignatureUnsupportedAlgorithm) => {
            Err("x509: cannot verify signature: algorithm unimplemented".into())
        }
        Err(_) => {
            let key = &csr
                .certification_request_info
                .subject_pki
                .algorithm
                .algorithm;
            let message = if *key == OID_PKCS1_RSAENCRYPTION {
                "crypto/rsa: verification error"
            } else if *key == OID_KEY_TYPE_EC_PUBLIC_KEY {
                "x509: ECDSA verification failure"
            } else if *key == OID_SIG_ED25519 {
                "x509: Ed25519 verification failure"
            } else {
                "x509: cannot verify signature: algorithm unimplemented"
            };
            Err(message.into())
        }
    }
}

/// `validateCertificate`: empty is fine; otherwise every PEM block must be a header-less
/// `CERTIFICATE` of parsable certificates, and there must be at least one.
pub fn validate_certificate(pem_bytes: &[u8]) -> Result<(), String> {
    if pem_bytes.is_empty() {
        return Ok(());
    }
    let mut rest = pem_bytes;
    let mut blocks = 0;
    while let Some((block, after)) = pem::decode(rest) {
        if block.kind != "CERTIFICATE" {
            return Err(format!(
                "only CERTIFICATE PEM blocks are allowed, found {}",
                crate::rules::validation::go_quote(&block.kind)
            ));
        }
        if !block.headers.is_empty() {
            return Err("no PEM block headers are permitted".into());
        }
        blocks += 1;
        parse_certificates(&block.bytes)?;
        rest = after;
    }
    if blocks == 0 {
        return Err("must contain at least one CERTIFICATE PEM block".into());
    }
    Ok(())
}

/// client-go's `rootCertPool`, what `transport.TLSConfigFor` does with a webhook's `caBundle`
/// (and what `webhook.ValidateCABundle` checks): the bundle is usable when at least one
/// header-less `CERTIFICATE` block holds a parsable certificate (`AppendCertsFromPEM`);
/// otherwise the error is `createErrorParsingCAData`'s, found by walking the blocks again,
/// wrapped as `unable to load root certificates: ...`.
pub fn validate_ca_bundle(bundle: &[u8]) -> Result<(), String> {
    if bundle.is_empty() {
        return Ok(());
    }
    let is_certificate =
        |block: &pem::Block| block.kind == "CERTIFICATE" && block.headers.is_empty();
    let mut rest = bundle;
    while let Some((block, after)) = pem::decode(rest) {
        rest = after;
        if is_certificate(&block) && parse_certificate(&block.bytes).is_ok() {
            return Ok(());
        }
    }
    let mut rest = bundle;
    let error = loop {
        if rest.is_empty() {
            break "no valid certificate authority data seen".to_string();
        }
        let Some((block, after)) = pem::decode(rest) else {
            break "unable to parse bytes as PEM block".to_string();
        };
        rest = after;
        if !is_certificate(&block) {
            continue;
        }
        if let Err(e) = parse_certificate(&block.bytes) {
            break format!("failed to parse certificate: {e}");
        }
    };
    Err(format!("unable to load root certificates: {error}"))
}

/// `x509.ParseCertificate`: exactly one DER certificate.
fn parse_certificate(der: &[u8]) -> Result<(), String> {
    let (rest, _) = x509_parser::parse_x509_certificate(der)
        .map_err(|_| "x509: malformed certificate".to_string())?;
    if !rest.is_empty() {
        return Err("x509: trailing data".into());
    }
    Ok(())
}

/// `x509.ParseCertificates`: concatenated DER certificates, at least one.
fn parse_certificates(mut der: &[u8]) -> Result<usize, String> {
    let mut count = 0;
    while !der.is_empty() {
        let (rest, _) = x509_parser::parse_x509_certificate(der)
            .map_err(|_| "x509: malformed certificate".to_string())?;
        der = rest;
        count += 1;
    }
    if count == 0 {
        return Err("found CERTIFICATE PEM block containing 0 certificates".into());
    }
    Ok(count)
}

fn asn1_error(e: x509_parser::nom::Err<X509Error>) -> String {
    format!("asn1: structure error: {e}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::ecdsa(include_str!("testdata/ec.csr"), &["dev"])]
    #[case::ed25519(include_str!("testdata/ed.csr"), &[])]
    #[case::rsa(include_str!("testdata/rsa.csr"), &[])]
    #[case::masters(include_str!("testdata/masters.csr"), &["system:masters"])]
    fn signed_requests_verify(#[case] pem: &str, #[case] organizations: &[&str]) {
        let request = parse_and_verify_request(pem.as_bytes()).unwrap();
        assert_eq!(request.organizations, organizations);
    }

    #[rstest]
    #[case::ecdsa(include_str!("testdata/tampered.csr"), "x509: ECDSA verification failure")]
    #[case::rsa(include_str!("testdata/rsa_tampered.csr"), "crypto/rsa: verification error")]
    #[case::certificate(include_str!("testdata/cert.pem"), "PEM block type must be CERTIFICATE REQUEST")]
    #[case::not_pem("hello", "PEM block type must be CERTIFICATE REQUEST")]
    fn bad_requests_fail_with_gos_words(#[case] pem: &str, #[case] message: &str) {
        assert_eq!(
            parse_and_verify_request(pem.as_bytes()).unwrap_err(),
            message
        );
    }

    #[test]
    fn a_tampered_request_still_parses() {
        // `ParseCSR` alone (the subject restriction's read) does not check the signature.
        let pem = include_str!("testdata/tampered.csr");
        assert_eq!(
            parse_request(pem.as_bytes()).unwrap().organizations,
            ["dev"]
        );
    }

    #[test]
    fn garbage_der_is_an_asn1_error() {
        let pem = "-----BEGIN CERTIFICATE REQUEST-----\nAAEC\n-----END CERTIFICATE REQUEST-----\n";
        let err = parse_and_verify_request(pem.as_bytes()).unwrap_err();
        assert!(err.starts_with("asn1: structure error: "), "{err}");
    }

    #[rstest]
    #[case::empty("", None)]
    #[case::one(include_str!("testdata/cert.pem"), None)]
    #[case::text_around(concat!("issued:\n", include_str!("testdata/cert.pem"), "end\n"), None)]
    #[case::request(include_str!("testdata/ec.csr"), Some("only CERTIFICATE PEM blocks are allowed, found \"CERTIFICATE REQUEST\""))]
    #[case::no_block(
        "not a certificate",
        Some("must contain at least one CERTIFICATE PEM block")
    )]
    #[case::headers(
        "-----BEGIN CERTIFICATE-----\nA: b\n\nAAEC\n-----END CERTIFICATE-----\n",
        Some("no PEM block headers are permitted")
    )]
    #[case::garbage(
        "-----BEGIN CERTIFICATE-----\nAAEC\n-----END CERTIFICATE-----\n",
        Some("x509: malformed certificate")
    )]
    #[case::empty_block(
        "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
        Some("found CERTIFICATE PEM block containing 0 certificates")
    )]
    fn issued_certificates(#[case] pem: &str, #[case] error: Option<&str>) {
        assert_eq!(validate_certificate(pem.as_bytes()).err().as_deref(), error);
    }
}

#[cfg(test)]
mod ca_bundle_tests {
    use super::*;
    use crate::controllers::service_accounts::ROOT_CA_PEM;
    use rstest::rstest;

    #[rstest]
    #[case::empty("", None)]
    #[case::one_certificate(ROOT_CA_PEM, None)]
    // One usable certificate is enough: the other blocks are skipped.
    #[case::with_garbage_around(&format!("junk\n{ROOT_CA_PEM}-----BEGIN KEY-----\nAAEC\n-----END KEY-----\n"), None)]
    #[case::not_pem("hello", Some("unable to parse bytes as PEM block"))]
    // The END line's newline is consumed with the block.
    #[case::only_other_blocks(
        "-----BEGIN KEY-----\nAAEC\n-----END KEY-----\n",
        Some("no valid certificate authority data seen")
    )]
    #[case::junk_after_other_blocks(
        "-----BEGIN KEY-----\nAAEC\n-----END KEY-----\njunk",
        Some("unable to parse bytes as PEM block")
    )]
    #[case::bad_certificate(
        "-----BEGIN CERTIFICATE-----\nAAEC\n-----END CERTIFICATE-----\n",
        Some("failed to parse certificate: x509: malformed certificate")
    )]
    fn ca_bundles_load_as_client_go_loads_them(#[case] bundle: &str, #[case] error: Option<&str>) {
        assert_eq!(
            validate_ca_bundle(bundle.as_bytes()).err(),
            error.map(|e| format!("unable to load root certificates: {e}"))
        );
    }
}
