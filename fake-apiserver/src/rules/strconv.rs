//! Numbers in query parameters and `resourceVersion`s, read as the real server reads them: Go's
//! `strconv.ParseInt` / `ParseUint` (base 10), whose error text reaches the client unchanged,
//! and storage's `APIObjectVersioner.ParseResourceVersion`.

use crate::rules::validation::go_quote;

/// `strconv.ParseInt(text, 10, 64)`: an optional `+` or `-`, then decimal digits. The error is
/// Go's `NumError` text, e.g. `strconv.ParseInt: parsing "abc": invalid syntax`.
pub fn parse_int(text: &str) -> Result<i64, String> {
    text.parse::<i64>()
        .map_err(|e| num_error("ParseInt", text, e.kind()))
}

/// `strconv.ParseUint(text, 10, 64)`: decimal digits only (no sign, unlike Rust's `u64` parser,
/// which takes a `+`).
pub fn parse_uint(text: &str) -> Result<u64, String> {
    if text.starts_with('+') {
        return Err(num_error(
            "ParseUint",
            text,
            &std::num::IntErrorKind::InvalidDigit,
        ));
    }
    text.parse::<u64>()
        .map_err(|e| num_error("ParseUint", text, e.kind()))
}

fn num_error(function: &str, text: &str, kind: &std::num::IntErrorKind) -> String {
    use std::num::IntErrorKind;
    let why = match kind {
        IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => "value out of range",
        _ => "invalid syntax",
    };
    format!("strconv.{function}: parsing {}: {why}", go_quote(text))
}

/// `ParseResourceVersion` of storage's versioner: empty and `0` are 0 (any version); anything
/// else must be an unsigned integer, or the error is storage's `InvalidError` on the field
/// `resourceVersion` (its text, which the verbs wrap or pass on as they each do).
pub fn parse_resource_version(rv: &str) -> Result<u64, String> {
    if rv.is_empty() || rv == "0" {
        return Ok(0);
    }
    parse_uint(rv).map_err(|e| format!("resourceVersion: Invalid value: {}: {e}", go_quote(rv)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("42", Ok(42))]
    #[case("+42", Ok(42))]
    #[case("-7", Ok(-7))]
    #[case("", Err(r#"strconv.ParseInt: parsing "": invalid syntax"#))]
    #[case("abc", Err(r#"strconv.ParseInt: parsing "abc": invalid syntax"#))]
    #[case("1.5", Err(r#"strconv.ParseInt: parsing "1.5": invalid syntax"#))]
    #[case("-", Err(r#"strconv.ParseInt: parsing "-": invalid syntax"#))]
    #[case(
        "9223372036854775808",
        Err(r#"strconv.ParseInt: parsing "9223372036854775808": value out of range"#)
    )]
    #[case(
        "-9223372036854775809",
        Err(r#"strconv.ParseInt: parsing "-9223372036854775809": value out of range"#)
    )]
    fn integers_parse_as_go_parses_them(#[case] text: &str, #[case] expected: Result<i64, &str>) {
        assert_eq!(parse_int(text), expected.map_err(str::to_string));
    }

    #[rstest]
    #[case("", Ok(0))]
    #[case("0", Ok(0))]
    #[case("17", Ok(17))]
    #[case(
        "+17",
        Err(r#"resourceVersion: Invalid value: "+17": strconv.ParseUint: parsing "+17": invalid syntax"#)
    )]
    #[case(
        "-1",
        Err(r#"resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax"#)
    )]
    #[case(
        "abc",
        Err(r#"resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax"#)
    )]
    #[case(
        "18446744073709551616",
        Err(r#"resourceVersion: Invalid value: "18446744073709551616": strconv.ParseUint: parsing "18446744073709551616": value out of range"#)
    )]
    fn resource_versions_parse_as_the_versioner_parses_them(
        #[case] rv: &str,
        #[case] expected: Result<u64, &str>,
    ) {
        assert_eq!(parse_resource_version(rv), expected.map_err(str::to_string));
    }
}
