//! Go's `time.ParseDuration`, exactly: what it accepts, what it makes of it, and its error
//! text, which reaches clients unchanged (the `timeout` query parameter) and decides which
//! strings are durations (the `duration` schema format).

/// Nanoseconds of each unit `ParseDuration` knows (`µs` as U+00B5 and as U+03BC).
const UNITS: [(&str, u64); 8] = [
    ("ns", 1),
    ("us", 1_000),
    ("\u{b5}s", 1_000),
    ("\u{3bc}s", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// The largest magnitude a duration may reach before its sign (`1<<63`, for the most negative).
const LIMIT: u64 = 1 << 63;

/// `time.ParseDuration(text)`: an optional sign, then one or more decimal numbers (a fraction
/// allowed) each with a unit; `0` alone needs none. The value is in nanoseconds; the error is
/// Go's text, e.g. `time: invalid duration "abc"`, `time: missing unit in duration "1"`,
/// `time: unknown unit "d" in duration "1d"`.
pub fn parse_duration(text: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", quote(text));
    let mut s = text.as_bytes();
    let mut negative = false;
    if let Some((&sign, rest)) = s.split_first() {
        if sign == b'-' || sign == b'+' {
            negative = sign == b'-';
            s = rest;
        }
    }
    if s == b"0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while let Some(&first) = s.first() {
        if !(first == b'.' || first.is_ascii_digit()) {
            return Err(invalid());
        }
        let before = s.len();
        let (whole, rest) = leading_int(s).ok_or_else(invalid)?;
        s = rest;
        let had_whole = before != s.len();
        let mut fraction: (u64, f64) = (0, 1.0);
        let mut had_fraction = false;
        if let Some(rest) = s.strip_prefix(b".") {
            let before = rest.len();
            let (digits, scale, rest) = leading_fraction(rest);
            fraction = (digits, scale);
            had_fraction = before != rest.len();
            s = rest;
        }
        if !had_whole && !had_fraction {
            return Err(invalid());
        }
        let unit_len = s
            .iter()
            .position(|&c| c == b'.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", quote(text)));
        }
        let (unit, rest) = s.split_at(unit_len);
        s = rest;
        let Some(&(_, nanos)) = UNITS.iter().find(|(name, _)| name.as_bytes() == unit) else {
            return Err(format!(
                "time: unknown unit {} in duration {}",
                quote_bytes(unit),
                quote(text)
            ));
        };
        if whole > LIMIT / nanos {
            return Err(invalid());
        }
        let mut value = whole * nanos;
        if fraction.0 > 0 {
            // As Go: float64 keeps fractions of hours nanosecond-accurate.
            value += (fraction.0 as f64 * (nanos as f64 / fraction.1)) as u64;
            if value > LIMIT {
                return Err(invalid());
            }
        }
        total += value;
        if total > LIMIT {
            return Err(invalid());
        }
    }
    if negative {
        return Ok((total as i64).wrapping_neg());
    }
    if total > LIMIT - 1 {
        return Err(invalid());
    }
    Ok(total as i64)
}

/// `leadingInt`: the leading decimal digits' value and the rest; `None` past `1<<63`.
fn leading_int(s: &[u8]) -> Option<(u64, &[u8])> {
    let mut value: u64 = 0;
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        if !c.is_ascii_digit() {
            break;
        }
        if value > LIMIT / 10 {
            return None;
        }
        value = value * 10 + u64::from(c - b'0');
        if value > LIMIT {
            return None;
        }
        i += 1;
    }
    Some((value, &s[i..]))
}

/// `leadingFraction`: the leading digits after a decimal point as a value and its scale (digits
/// past what fits are read and dropped), and the rest.
fn leading_fraction(s: &[u8]) -> (u64, f64, &[u8]) {
    let mut value: u64 = 0;
    let mut scale = 1.0;
    let mut overflow = false;
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        if !c.is_ascii_digit() {
            break;
        }
        i += 1;
        if overflow {
            continue;
        }
        if value > (LIMIT - 1) / 10 {
            overflow = true;
            continue;
        }
        let next = value * 10 + u64::from(c - b'0');
        if next > LIMIT {
            overflow = true;
            continue;
        }
        value = next;
        scale *= 10.0;
    }
    (value, scale, &s[i..])
}

/// The `time` package's own `quote`: in double quotes, `"` and `\` backslashed, and every byte
/// of a non-ASCII or control character written `\xHH`.
fn quote(text: &str) -> String {
    quote_bytes(text.as_bytes())
}

fn quote_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for &b in bytes {
        match b {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(char::from(b));
            }
            b' '..=0x7f => out.push(char::from(b)),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// Go's own table (`time_test.go`, `parseDurationTests`).
    #[rstest]
    #[case("0", 0)]
    #[case("5s", 5_000_000_000)]
    #[case("30s", 30_000_000_000)]
    #[case("1478s", 1_478_000_000_000)]
    #[case("-5s", -5_000_000_000)]
    #[case("+5s", 5_000_000_000)]
    #[case("-0", 0)]
    #[case("+0", 0)]
    #[case("5.0s", 5_000_000_000)]
    #[case("5.6s", 5_600_000_000)]
    #[case("5.s", 5_000_000_000)]
    #[case(".5s", 500_000_000)]
    #[case("1.004s", 1_004_000_000)]
    #[case("100.00100s", 100_001_000_000)]
    #[case("10ns", 10)]
    #[case("11us", 11_000)]
    #[case("12\u{b5}s", 12_000)]
    #[case("12\u{3bc}s", 12_000)]
    #[case("13ms", 13_000_000)]
    #[case("15m", 900_000_000_000)]
    #[case("16h", 57_600_000_000_000)]
    #[case("3h30m", 12_600_000_000_000)]
    #[case("10.5s4m", 250_500_000_000)]
    #[case("-2m3.4s", -123_400_000_000)]
    #[case("1h2m3s4ms5us6ns", 3_723_004_005_006)]
    #[case("39h9m14.425s", 140_954_425_000_000)]
    #[case("0.3333333333333333333h", 1_200_000_000_000)]
    #[case("9007199254740993ns", 9_007_199_254_740_993)]
    #[case("9223372036854775807ns", i64::MAX)]
    #[case("9223372036854775.807us", i64::MAX)]
    #[case("9223372036s854ms775us807ns", i64::MAX)]
    #[case("-9223372036854775808ns", i64::MIN)]
    #[case("-9223372036854775.808us", i64::MIN)]
    #[case("-2562047h47m16.854775808s", i64::MIN)]
    #[case("0.100000000000000000000h", 360_000_000_000)]
    #[case("0.830103483285477580700h", 2_988_372_539_827)]
    fn durations_read_as_go_reads_them(#[case] text: &str, #[case] nanos: i64) {
        assert_eq!(parse_duration(text), Ok(nanos), "{text}");
    }

    #[rstest]
    #[case("", r#"time: invalid duration """#)]
    #[case("3", r#"time: missing unit in duration "3""#)]
    #[case("-", r#"time: invalid duration "-""#)]
    #[case("s", r#"time: invalid duration "s""#)]
    #[case(".", r#"time: invalid duration ".""#)]
    #[case("-.", r#"time: invalid duration "-.""#)]
    #[case(".s", r#"time: invalid duration ".s""#)]
    #[case("+.s", r#"time: invalid duration "+.s""#)]
    #[case("abc", r#"time: invalid duration "abc""#)]
    #[case("1d", r#"time: unknown unit "d" in duration "1d""#)]
    #[case("3000000h", r#"time: invalid duration "3000000h""#)]
    #[case(
        "9223372036854775808ns",
        r#"time: invalid duration "9223372036854775808ns""#
    )]
    #[case(
        "9223372036854775.808us",
        r#"time: invalid duration "9223372036854775.808us""#
    )]
    #[case(
        "-9223372036854775809ns",
        r#"time: invalid duration "-9223372036854775809ns""#
    )]
    #[case("1\u{e9}", r#"time: unknown unit "\xc3\xa9" in duration "1\xc3\xa9""#)]
    #[case("1s\"", r#"time: unknown unit "s\"" in duration "1s\"""#)]
    fn errors_are_go_s_words(#[case] text: &str, #[case] message: &str) {
        assert_eq!(parse_duration(text), Err(message.to_string()), "{text}");
    }
}
