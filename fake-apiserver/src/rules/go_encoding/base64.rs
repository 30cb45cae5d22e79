//! `[]byte` fields as Go's JSON decoder reads them: `base64.StdEncoding.Decode`, which is not
//! `Strict` (bits after the last symbol are ignored: `YR==` is `a`), skips `\r` and `\n`
//! anywhere, and reports the first fault as `illegal base64 data at input byte N` at the offset
//! its quantum-by-quantum reading stops at. The object then holds the decoded bytes, so they are
//! written back in the canonical encoding.

use base64::Engine;

/// The standard alphabet's value of each byte (`0xff` for bytes outside it).
const DECODE: [u8; 256] = {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut map = [0xffu8; 256];
    let mut i = 0;
    while i < alphabet.len() {
        map[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    map
};

/// `base64.CorruptInputError`'s text.
fn corrupt(at: usize) -> String {
    format!("illegal base64 data at input byte {at}")
}

/// Decodes `src` as `base64.StdEncoding.DecodeString` does, with its error text.
pub fn decode_std(src: &[u8]) -> Result<Vec<u8>, String> {
    let is_newline = |b: u8| b == b'\n' || b == b'\r';
    let mut out = Vec::with_capacity(src.len() / 4 * 3 + 3);
    let mut si = 0;
    loop {
        // One quantum (`decodeQuantum`): up to four symbols, newlines skipped.
        let mut quantum = [0u8; 4];
        let mut symbols = 0;
        let mut trailing_garbage = None;
        let mut last = false;
        while symbols < 4 {
            if si == src.len() {
                if symbols == 0 {
                    return Ok(out);
                }
                // The standard encoding pads: a short final quantum is an error.
                return Err(corrupt(si - symbols));
            }
            let byte = src[si];
            si += 1;
            let value = DECODE[usize::from(byte)];
            if value != 0xff {
                quantum[symbols] = value;
                symbols += 1;
                continue;
            }
            if is_newline(byte) {
                continue;
            }
            if byte != b'=' {
                return Err(corrupt(si - 1));
            }
            // Padding: the end of the input.
            match symbols {
                0 | 1 => return Err(corrupt(si - 1)),
                2 => {
                    // "==" is expected; the first is read.
                    while si < src.len() && is_newline(src[si]) {
                        si += 1;
                    }
                    if si == src.len() {
                        return Err(corrupt(src.len()));
                    }
                    if src[si] != b'=' {
                        return Err(corrupt(si - 1));
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && is_newline(src[si]) {
                si += 1;
            }
            if si < src.len() {
                trailing_garbage = Some(si);
            }
            last = true;
            break;
        }
        let value = u32::from(quantum[0]) << 18
            | u32::from(quantum[1]) << 12
            | u32::from(quantum[2]) << 6
            | u32::from(quantum[3]);
        let bytes = [(value >> 16) as u8, (value >> 8) as u8, value as u8];
        out.extend_from_slice(&bytes[..symbols - 1]);
        if let Some(at) = trailing_garbage {
            return Err(corrupt(at));
        }
        if last {
            return Ok(out);
        }
    }
}

/// A `[]byte` field's text as the server writes it back: the canonical encoding of what
/// [`decode_std`] read, or its error. `None` when the text is canonical already.
pub fn canonical(text: &str) -> Result<Option<String>, String> {
    let bytes = decode_std(text.as_bytes())?;
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    Ok((encoded != text).then_some(encoded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("", Ok(""))]
    #[case("aGVsbG8=", Ok("hello"))]
    #[case("aGVs\nbG8=", Ok("hello"))]
    #[case("aGVsbG8=\r\n", Ok("hello"))]
    #[case("d29ybGQ=", Ok("world"))]
    // Not `Strict`: bits after the last symbol do not matter.
    #[case("YR==", Ok("a"))]
    #[case("ab.c", Err(2))]
    // Padding is required.
    #[case("abc", Err(0))]
    #[case("abcde", Err(4))]
    #[case("YQ=x", Err(2))]
    #[case("YQ=", Err(3))]
    #[case("Y===", Err(1))]
    #[case("YQ==YQ==", Err(4))]
    #[case("=", Err(0))]
    fn decodes_as_go_s_standard_encoding(#[case] text: &str, #[case] expected: Result<&str, usize>) {
        assert_eq!(
            decode_std(text.as_bytes()),
            expected
                .map(|s| s.as_bytes().to_vec())
                .map_err(corrupt),
            "{text:?}"
        );
    }

    #[test]
    fn written_back_in_the_canonical_encoding() {
        assert_eq!(canonical("aGVsbG8="), Ok(None));
        assert_eq!(canonical("aGVs\nbG8="), Ok(Some("aGVsbG8=".into())));
        assert_eq!(canonical("YR=="), Ok(Some("YQ==".into())));
        assert_eq!(canonical("a"), Err(corrupt(0)));
    }
}
