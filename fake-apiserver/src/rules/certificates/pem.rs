//! Go's `encoding/pem.Decode`, as the certificates validation reads a request or an issued
//! certificate: the first well-formed block after any leading text, its headers and its
//! base64 body. A malformed block is skipped, as Go skips it, and the search goes on after its
//! `BEGIN` line.

use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;

/// One decoded PEM block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The word(s) after `BEGIN`, e.g. `CERTIFICATE REQUEST`.
    pub kind: String,
    /// `Key: value` header lines, in order.
    pub headers: Vec<(String, String)>,
    /// The decoded body.
    pub bytes: Vec<u8>,
}

const START: &[u8] = b"\n-----BEGIN ";
const END: &[u8] = b"\n-----END ";
const DASHES: &[u8] = b"-----";

/// Go's `base64.StdEncoding`: padded, and lenient about the unused bits of the last character.
const STD: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical)
        .with_decode_allow_trailing_bits(true),
);

/// The first PEM block in `data` and what follows it; `None` when there is none.
pub fn decode(data: &[u8]) -> Option<(Block, &[u8])> {
    let mut rest = data;
    loop {
        rest = if let Some(after) = rest.strip_prefix(&START[1..]) {
            after
        } else {
            let at = find(rest, START)?;
            &rest[at + START.len()..]
        };
        let (type_line, after_type) = line(rest);
        rest = after_type;
        let Some(kind) = type_line.strip_suffix(DASHES) else {
            continue;
        };
        let mut headers = Vec::new();
        loop {
            if rest.is_empty() {
                return None;
            }
            let (header, next) = line(rest);
            let Some(colon) = header.iter().position(|&b| b == b':') else {
                break;
            };
            let key = String::from_utf8_lossy(header[..colon].trim_ascii()).into_owned();
            let value = String::from_utf8_lossy(header[colon + 1..].trim_ascii()).into_owned();
            headers.push((key, value));
            rest = next;
        }
        // Without headers the END line may follow at once, with no newline before it.
        let (end_at, trailer_at) = if headers.is_empty() && rest.starts_with(&END[1..]) {
            (0, END.len() - 1)
        } else {
            match find(rest, END) {
                Some(at) => (at, at + END.len()),
                None => continue,
            }
        };
        let trailer = &rest[trailer_at..];
        let trailer_len = kind.len() + DASHES.len();
        if trailer.len() < trailer_len {
            continue;
        }
        let (expected, rest_of_line) = trailer.split_at(trailer_len);
        if !expected.starts_with(kind) || !expected.ends_with(DASHES) {
            continue;
        }
        if !line(rest_of_line).0.is_empty() {
            continue;
        }
        let body: Vec<u8> = rest[..end_at]
            .iter()
            .copied()
            .filter(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
            .collect();
        let Ok(bytes) = STD.decode(&body) else {
            continue;
        };
        let (_, after) = line(&rest[end_at + END.len() - 1..]);
        let block = Block {
            kind: String::from_utf8_lossy(kind).into_owned(),
            headers,
            bytes,
        };
        return Some((block, after));
    }
}

/// Go's `getLine`: up to the next newline (trailing spaces, tabs and carriage returns trimmed),
/// and what follows the newline.
fn line(data: &[u8]) -> (&[u8], &[u8]) {
    let (line, rest) = match data.iter().position(|&b| b == b'\n') {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &data[data.len()..]),
    };
    let trimmed = line
        .iter()
        .rposition(|b| !matches!(b, b' ' | b'\t' | b'\r'))
        .map_or(&line[..0], |last| &line[..=last]);
    (trimmed, rest)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    const CSR: &str = include_str!("testdata/ec.csr");

    #[test]
    fn a_request_decodes_with_its_type_and_der_body() {
        let (block, rest) = decode(CSR.as_bytes()).unwrap();
        assert_eq!(block.kind, "CERTIFICATE REQUEST");
        assert!(block.headers.is_empty());
        assert_eq!(block.bytes[0], 0x30, "a DER SEQUENCE");
        assert!(rest.is_empty());
    }

    #[test]
    fn text_around_a_block_is_skipped_and_the_rest_returned() {
        let data = format!("explanatory text\n{CSR}trailing");
        let (block, rest) = decode(data.as_bytes()).unwrap();
        assert_eq!(block.kind, "CERTIFICATE REQUEST");
        assert_eq!(rest, b"trailing");
    }

    #[test]
    fn headers_are_read() {
        let data = "-----BEGIN X-----\nProc-Type: 4,ENCRYPTED\n\nAAEC\n-----END X-----\n";
        let (block, _) = decode(data.as_bytes()).unwrap();
        assert_eq!(
            block.headers,
            vec![("Proc-Type".to_string(), "4,ENCRYPTED".to_string())]
        );
        assert_eq!(block.bytes, vec![0, 1, 2]);
    }

    #[rstest]
    #[case::no_block("not pem at all")]
    #[case::no_end("-----BEGIN X-----\nAAEC\n")]
    #[case::end_of_another_type("-----BEGIN X-----\nAAEC\n-----END Y-----\n")]
    #[case::bad_base64("-----BEGIN X-----\nA!EC\n-----END X-----\n")]
    #[case::text_after_end("-----BEGIN X-----\nAAEC\n-----END X----- more\n")]
    #[case::empty("")]
    fn malformed_input_has_no_block(#[case] data: &str) {
        assert_eq!(decode(data.as_bytes()), None);
    }

    #[test]
    fn a_malformed_block_is_skipped_for_the_next_one() {
        let data = format!("-----BEGIN X-----\nA!EC\n-----END X-----\n{CSR}");
        let (block, _) = decode(data.as_bytes()).unwrap();
        assert_eq!(block.kind, "CERTIFICATE REQUEST");
    }
}
