//! `resource.Quantity` as the rules need it: parsing (`ParseQuantity`), comparison, and the
//! canonical form a real server prints in messages (`Quantity.String`, `CanonicalizeBytes`).
//!
//! A quantity is held exactly as an integer count of nano-units (binary suffixes multiplied in),
//! which covers every value a pod spec holds; smaller fractions round up to a nano-unit, as
//! upstream rounds them.

use std::cmp::Ordering;

/// How a quantity was written, which decides how it prints (`resource.Format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `1`, `500m`, `2k`, `3M`.
    DecimalSi,
    /// `1Ki`, `128Mi`.
    BinarySi,
    /// `1e3`, `12E6`.
    DecimalExponent,
}

/// A parsed quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {
    /// The value in nano-units (`value * 10^9`).
    nanos: i128,
    /// How it was written.
    pub format: Format,
}

/// The decoder's message for a string that is not a quantity.
pub const QUANTITY_FORMAT_ERROR: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const NANO: i128 = 1_000_000_000;

/// 10^n for every n an `i128` holds (n ≤ 38).
const POW10: [i128; 39] = {
    let mut table = [1i128; 39];
    let mut n = 1;
    while n < table.len() {
        table[n] = table[n - 1] * 10;
        n += 1;
    }
    table
};

/// The decimal digits of `whole` then `fraction` as one integer (`None` past `i128`): in a `u64`
/// while they fit (native arithmetic), in an `i128` beyond.
fn digits_of(whole: &str, fraction: &str) -> Option<i128> {
    let mut small: u64 = 0;
    let mut digits = whole.bytes().chain(fraction.bytes());
    for b in digits.by_ref() {
        match small
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
        {
            Some(v) => small = v,
            None => {
                let mut large = i128::from(small)
                    .checked_mul(10)?
                    .checked_add(i128::from(b - b'0'))?;
                for b in digits {
                    large = large.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
                }
                return Some(large);
            }
        }
    }
    Some(i128::from(small))
}

/// `s` without the white space around it (what `Quantity.UnmarshalJSON` trims): a quantity's
/// text almost always starts and ends with a printable ASCII byte, and then has none to trim.
fn trim(s: &str) -> &str {
    let plain = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_graphic());
    if plain(s.as_bytes().first()) && plain(s.as_bytes().last()) {
        s
    } else {
        s.trim()
    }
}

/// `a * b` for non-negative `a` and `b`, `None` past `i128`: a product of fewer than 127
/// significant bits cannot overflow and is multiplied directly (the checked multiplication is
/// a library call).
fn product(a: i128, b: i128) -> Option<i128> {
    let bits = (128 - a.leading_zeros()) + (128 - b.leading_zeros());
    if bits <= 127 {
        Some(a * b)
    } else {
        a.checked_mul(b)
    }
}

/// How many texts [`remembered`] keeps, and the longest it keeps.
const REMEMBERED: usize = 8;
const REMEMBERED_LEN: usize = 16;

thread_local! {
    /// The texts parsed last on this thread and what they parsed to, the newest first.
    static LAST_PARSED: std::cell::RefCell<std::collections::VecDeque<(Box<str>, Option<Quantity>)>> =
        const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
}

/// `parse(text)`, or what it gave for an equal text among the last [`REMEMBERED`] short texts
/// parsed on this thread (it is a function of the text alone).
fn remembered(text: &str, parse: impl Fn(&str) -> Option<Quantity>) -> Option<Quantity> {
    if text.len() > REMEMBERED_LEN {
        return parse(text);
    }
    let same = |kept: &str| serde_json::short_bytes::eq_bytes(kept.as_bytes(), text.as_bytes());
    let found = LAST_PARSED.try_with(|last| {
        let last = last.borrow();
        last.iter().find(|(kept, _)| same(kept)).map(|(_, q)| *q)
    });
    if let Ok(Some(quantity)) = found {
        return quantity;
    }
    let quantity = parse(text);
    let _ = LAST_PARSED.try_with(|last| {
        let mut last = last.borrow_mut();
        if last.len() == REMEMBERED {
            last.pop_back();
        }
        last.push_front((text.into(), quantity));
    });
    quantity
}

impl Quantity {
    /// `resource.ParseQuantity`; `None` when the string is not a quantity.
    ///
    /// The last few short texts parsed on this thread are remembered with what they parsed
    /// to ([`remembered`]): a pod's quantities are read by its validation, its defaults (the
    /// QoS class) and its warnings, and a template's pods repeat them.
    pub fn parse(s: &str) -> Option<Quantity> {
        remembered(s, Quantity::parse_text)
    }

    /// [`Quantity::parse`], not remembered.
    fn parse_text(s: &str) -> Option<Quantity> {
        let s = trim(s);
        if s.is_empty() {
            return None;
        }
        let (negative, rest) = match s.as_bytes()[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        // The number: digits with at most one point among them, read in one pass.
        let mut point = None;
        let mut number_len = 0;
        for (i, b) in rest.bytes().enumerate() {
            match b {
                b'0'..=b'9' => {}
                b'.' if point.is_none() => point = Some(i),
                b'.' => return None,
                _ => break,
            }
            number_len = i + 1;
        }
        let (number, suffix_text) = rest.split_at(number_len);
        if number.is_empty() {
            return None;
        }
        let (whole, fraction) = match point {
            Some(at) => (&number[..at], &number[at + 1..]),
            None => (number, ""),
        };
        if whole.is_empty() && fraction.is_empty() {
            return None;
        }
        let (format, binary_exp, exp10) = suffix(suffix_text)?;
        let binary: i128 = 1 << binary_exp;
        // digits as an integer, scaled by 10^(exp10 - fraction digits + 9).
        let digits = digits_of(whole, fraction)?;
        let scale = exp10 - fraction.len() as i32 + 9;
        let mut nanos = product(digits, binary)?;
        if scale >= 0 {
            nanos = product(nanos, *POW10.get(scale as usize)?)?;
        } else {
            let div = *POW10.get((-scale) as usize)?;
            // Below a nano-unit rounds up, as `ParseQuantity` does.
            nanos = nanos / div + i128::from(nanos % div != 0);
        }
        Some(Quantity {
            nanos: if negative { -nanos } else { nanos },
            format,
        })
    }

    /// A quantity written as a JSON string or number (how resource lists hold them); `None` for
    /// anything else or a string that is not a quantity.
    pub fn from_value(v: &serde_json::Value) -> Option<Quantity> {
        match v {
            serde_json::Value::String(s) => Quantity::parse(s),
            serde_json::Value::Number(n) => Quantity::parse(&n.to_string()),
            _ => None,
        }
    }

    /// A quantity of `nanos` nano-units written in `format` (what a sum or a difference is).
    pub fn from_nanos(nanos: i128, format: Format) -> Self {
        Self { nanos, format }
    }

    /// The value in nano-units (`value * 10^9`), for sums and comparisons.
    pub fn nanos(&self) -> i128 {
        self.nanos
    }

    /// Whether the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    /// Whether the value is a whole number (`MilliValue() % 1000 == 0`).
    pub fn is_integer(&self) -> bool {
        self.nanos % NANO == 0
    }

    /// The canonical text (`Quantity.String()`).
    pub fn canonical(&self) -> String {
        let negative = self.nanos < 0;
        let abs = self.nanos.unsigned_abs();
        let sign = if negative { "-" } else { "" };
        let mut format = self.format;
        if format == Format::BinarySi {
            // Small or fractional binary quantities print as decimal ones.
            if abs < 1024 * NANO as u128 || !abs.is_multiple_of(NANO as u128) {
                format = Format::DecimalSi;
            }
        }
        match format {
            Format::BinarySi => {
                let mut units = abs / NANO as u128;
                let mut suffix = 0;
                while suffix < 6 && units.is_multiple_of(1024) && units != 0 {
                    units /= 1024;
                    suffix += 1;
                }
                let name = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][suffix];
                format!("{sign}{units}{name}")
            }
            Format::DecimalSi | Format::DecimalExponent => {
                if abs == 0 {
                    return "0".into();
                }
                // mantissa * 10^exp with exp a multiple of 3, starting from nano-units.
                let mut mantissa = abs;
                let mut exp: i32 = -9;
                while mantissa.is_multiple_of(1000) && exp < 18 {
                    mantissa /= 1000;
                    exp += 3;
                }
                if format == Format::DecimalExponent {
                    return if exp == 0 {
                        format!("{sign}{mantissa}")
                    } else {
                        format!("{sign}{mantissa}e{exp}")
                    };
                }
                let suffix = match exp {
                    -9 => "n",
                    -6 => "u",
                    -3 => "m",
                    0 => "",
                    3 => "k",
                    6 => "M",
                    9 => "G",
                    12 => "T",
                    15 => "P",
                    _ => "E",
                };
                format!("{sign}{mantissa}{suffix}")
            }
        }
    }
}

/// `quantitySuffixer.interpret`: a suffix's format, power of two and power of ten (`Ki`: 10, 0;
/// `m`: 0, -3; `e3`: 0, 3); `None` for a suffix that is none of them.
fn suffix(text: &str) -> Option<(Format, u32, i32)> {
    Some(match text {
        "" => (Format::DecimalSi, 0, 0),
        "n" => (Format::DecimalSi, 0, -9),
        "u" => (Format::DecimalSi, 0, -6),
        "m" => (Format::DecimalSi, 0, -3),
        "k" => (Format::DecimalSi, 0, 3),
        "M" => (Format::DecimalSi, 0, 6),
        "G" => (Format::DecimalSi, 0, 9),
        "T" => (Format::DecimalSi, 0, 12),
        "P" => (Format::DecimalSi, 0, 15),
        "E" => (Format::DecimalSi, 0, 18),
        "Ki" => (Format::BinarySi, 10, 0),
        "Mi" => (Format::BinarySi, 20, 0),
        "Gi" => (Format::BinarySi, 30, 0),
        "Ti" => (Format::BinarySi, 40, 0),
        "Pi" => (Format::BinarySi, 50, 0),
        "Ei" => (Format::BinarySi, 60, 0),
        other => {
            let exp: i32 = other.strip_prefix(['e', 'E'])?.parse().ok()?;
            if !(-40..=40).contains(&exp) {
                return None;
            }
            (Format::DecimalExponent, 0, exp)
        }
    })
}

/// What a real server writes for a quantity it read from `text` (a JSON string's contents or a
/// JSON number's text): `Quantity.UnmarshalJSON` then `MarshalJSON`. That is the canonical form
/// ([`Quantity::canonical`]), except where `ParseQuantity` keeps the text as written because it
/// judges it canonical already (its fast path caches the trimmed input, sign and leading zeros
/// included: `+1`, `0100Ki`, `1E3` come back as sent). `None` when `text` is not a quantity.
pub fn go_json_text(text: &str) -> Option<std::borrow::Cow<'_, str>> {
    let text = text.trim();
    let quantity = Quantity::parse(text)?;
    if text == "0" || parse_keeps_text(text) {
        return Some(std::borrow::Cow::Borrowed(text));
    }
    Some(std::borrow::Cow::Owned(quantity.canonical()))
}

/// Whether `ParseQuantity`'s int64 fast path caches `text` as the quantity's string: the value
/// fits its precision and scale checks and the text reads as canonical (a decimal at a scale
/// that is a multiple of three without three trailing zeros or a leading zero digit; a binary
/// multiple of 1024 whose count is not a multiple of 8).
fn parse_keeps_text(text: &str) -> bool {
    // parseQuantityString: sign, leading zeros dropped, numerator, denominator, suffix.
    let rest = text.strip_prefix(['+', '-']).unwrap_or(text);
    let rest = rest.trim_start_matches('0');
    let num_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (num, rest) = rest.split_at(num_len);
    let num = if num.is_empty() { "0" } else { num };
    let (denom, suffix_text) = match rest.strip_prefix('.') {
        Some(after) => after.split_at(after.bytes().take_while(u8::is_ascii_digit).count()),
        None => ("", rest),
    };
    let (format, binary_exp, exp10) = match suffix(suffix_text) {
        Some(interpreted) => interpreted,
        None => return false,
    };
    let binary = format == Format::BinarySi;
    // The exponent `interpret` gives: of two for a binary suffix, of ten otherwise.
    let exponent = if binary { binary_exp as i32 } else { exp10 };
    let digits = (num.len() + denom.len()) as i32;
    let (precision, mut scale, mantissa) = if binary {
        if !denom.is_empty() {
            return false;
        }
        // float32(exponent)*3/10, truncated, as Go computes it.
        let binary_digits = (exponent as f32 * 3.0 / 10.0) as i32;
        (
            15 - num.len() as i32 - binary_digits - 1,
            0,
            1i64 << exponent,
        )
    } else {
        (18 - digits, exponent, 1)
    };
    if precision < 0 {
        return false;
    }
    scale -= denom.len() as i32;
    if scale < -9 {
        return false;
    }
    // `shifted` is the numerator's digits then the denominator's.
    let shifted = || num.bytes().chain(denom.bytes());
    let Some(value) = shifted().try_fold(0i64, |v, d| {
        v.checked_mul(10)?.checked_add(i64::from(d - b'0'))
    }) else {
        return false;
    };
    if value.checked_mul(mantissa).is_none() {
        return false;
    }
    if binary {
        exponent % 10 == 0 && value & 0x07 != 0
    } else {
        let digits = num.len() + denom.len();
        let three_zeros = digits >= 3 && shifted().skip(digits - 3).all(|d| d == b'0');
        scale % 3 == 0 && !three_zeros && !num.starts_with('0')
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.nanos.cmp(&other.nanos))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[test]
    fn remembered_texts_parse_as_they_did() {
        // More texts than are remembered, valid and not, short and long, in turn and again,
        // so that every text is parsed while remembered and after it was pushed out.
        let texts = [
            "250m",
            "256Mi",
            "500m",
            "512Mi",
            "1",
            "0",
            "-1",
            "1.5Gi",
            "x",
            "",
            "1e3",
            "1E3",
            "+1",
            "0100Ki",
            "12345678901234567",
            "1Ki ",
            " 2",
            "3.",
            ".5",
            "1..2",
        ];
        let forwards = texts.iter();
        let backwards = texts.iter().rev();
        let strided = (0..texts.len()).map(|i| &texts[(i * 7) % texts.len()]);
        for text in forwards.chain(backwards).chain(strided) {
            assert_eq!(
                Quantity::parse(text),
                Quantity::parse_text(text),
                "{text:?}"
            );
        }
        assert!(Quantity::parse("250m").is_some() && Quantity::parse("x").is_none());
    }

    /// The nano-units of `digits`·2^`binary_exp`·10^`scale` by checked `i128` arithmetic at
    /// every step (how `parse` computed them before its native fast path).
    fn nanos_reference(whole: &str, fraction: &str, binary_exp: u32, scale: i32) -> Option<i128> {
        let mut digits: i128 = 0;
        for b in whole.bytes().chain(fraction.bytes()) {
            digits = digits.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
        }
        let nanos = digits.checked_mul(1i128 << binary_exp)?;
        if scale >= 0 {
            nanos.checked_mul(10i128.checked_pow(scale as u32)?)
        } else {
            let div = 10i128.checked_pow((-scale) as u32)?;
            Some(nanos / div + i128::from(nanos % div != 0))
        }
    }

    /// Every digit count up to past `i128`, every suffix: the fast arithmetic gives the checked
    /// one's value, overflow (`None`) included.
    #[test]
    fn the_native_arithmetic_gives_the_checked_value() {
        let suffixes = [
            "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
            "e3", "e-7", "E20", "e30",
        ];
        for len in 1..45 {
            for fill in ['1', '9', '5'] {
                let whole: String = std::iter::repeat_n(fill, len).collect();
                for fraction in ["", "5", "123456789", "0000000001"] {
                    for suffix_text in suffixes {
                        let (_, binary_exp, exp10) = suffix(suffix_text).expect("a suffix");
                        let scale = exp10 - fraction.len() as i32 + 9;
                        let text = if fraction.is_empty() {
                            format!("{whole}{suffix_text}")
                        } else {
                            format!("{whole}.{fraction}{suffix_text}")
                        };
                        assert_eq!(
                            Quantity::parse(&text).map(|q| q.nanos()),
                            nanos_reference(&whole, fraction, binary_exp, scale),
                            "{text}"
                        );
                    }
                }
            }
        }
    }

    #[rstest]
    #[case("1", "1")]
    #[case("500m", "500m")]
    #[case("1000m", "1")]
    #[case("0.5", "500m")]
    #[case("1.5", "1500m")]
    #[case("2000", "2k")]
    #[case("1100", "1100")]
    #[case("128Mi", "128Mi")]
    #[case("1024Mi", "1Gi")]
    #[case("1536", "1536")]
    #[case("0.5Gi", "512Mi")]
    #[case("100Ki", "100Ki")]
    #[case("1e3", "1e3")]
    #[case("-1", "-1")]
    #[case("0", "0")]
    #[case("1G", "1G")]
    fn canonical_form(#[case] input: &str, #[case] canonical: &str) {
        assert_eq!(Quantity::parse(input).unwrap().canonical(), canonical);
    }

    /// What a real server writes back for a quantity sent as this text (checked against
    /// `resource.Quantity`'s JSON round trip).
    #[rstest]
    #[case("1000m", "1")]
    #[case("1500m", "1500m")]
    #[case("1500000u", "1500m")]
    #[case("0.5", "500m")]
    #[case("0.5Gi", "512Mi")]
    #[case("1.5Gi", "1536Mi")]
    #[case("1024Mi", "1Gi")]
    #[case("2048Ki", "2Mi")]
    #[case("100Ki", "100Ki")]
    #[case("1000", "1k")]
    #[case("1024", "1024")]
    #[case("0", "0")]
    #[case("0m", "0")]
    #[case("00", "0")]
    #[case(" 2 ", "2")]
    #[case("+1", "+1")]
    #[case("01", "01")]
    #[case("0100Ki", "0100Ki")]
    #[case("1e3", "1e3")]
    #[case("1E3", "1E3")]
    #[case("10e2", "1e3")]
    #[case("1.", "1.")]
    #[case("1.0", "1")]
    #[case("-500m", "-500m")]
    #[case("123456789012345678901", "123456789012345678901")]
    fn written_back_as_go_does(#[case] input: &str, #[case] written: &str) {
        assert_eq!(go_json_text(input).as_deref(), Some(written));
        // What a real server writes reads back the same.
        assert_eq!(go_json_text(written).as_deref(), Some(written));
    }

    #[rstest]
    #[case("")]
    #[case("abc")]
    #[case("1x")]
    #[case("1.2.3")]
    #[case("Mi")]
    #[case("1 Gi")]
    #[case(".")]
    #[case("-")]
    #[case("1..5")]
    #[case(".5.")]
    #[case("5.Mi.")]
    fn not_quantities(#[case] input: &str) {
        assert_eq!(Quantity::parse(input), None);
    }

    /// The white space `Quantity.UnmarshalJSON` trims, ASCII or not, around any quantity.
    #[rstest]
    #[case("\t3m\n", "3m")]
    #[case("\u{a0}4Mi\u{2003}", "4Mi")]
    #[case(" .5", ".5")]
    #[case("7 ", "7")]
    fn white_space_around_is_trimmed(#[case] input: &str, #[case] same_as: &str) {
        assert_eq!(Quantity::parse(input), Quantity::parse(same_as));
        assert!(Quantity::parse(same_as).is_some());
    }

    #[test]
    fn comparison_is_exact() {
        let a = Quantity::parse("1").unwrap();
        let b = Quantity::parse("1000m").unwrap();
        assert_eq!(a.partial_cmp(&b), Some(Ordering::Equal));
        assert!(Quantity::parse("1Gi").unwrap() > Quantity::parse("1G").unwrap());
    }
}
