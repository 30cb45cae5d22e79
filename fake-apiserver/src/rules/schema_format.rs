//! The `format`s a custom resource's string values are checked against, as the apiextensions
//! server checks them: the formats it supports (`validation/formats.go`; any other is stripped
//! from the schema and checks nothing), each by the function kube-openapi's `strfmt.Default`
//! registers for it. A format's name is compared without dashes (`date-time` is `datetime`).

use std::net::{IpAddr, Ipv4Addr};
use std::sync::OnceLock;

use regex::Regex;

/// Whether `text` is valid in `format`; `None` when the format is not one the server checks
/// (the value is then not checked at all).
pub fn check(format: &str, text: &str) -> Option<bool> {
    let valid = match format.replace('-', "").as_str() {
        "bsonobjectid" => text.len() == 24 && text.bytes().all(|b| b.is_ascii_hexdigit()),
        // govalidator's `IsRequestURI`.
        "uri" => crate::rules::request_uri::parse(text).is_ok(),
        "email" => is_email(text),
        "hostname" => is_hostname(text),
        "ipv4" => parse_ip_sloppy(text).is_some() && text.contains('.'),
        "ipv6" => text.parse::<IpAddr>().is_ok() && text.contains(':'),
        "cidr" => is_cidr_sloppy(text),
        "mac" => is_mac(text),
        "uuid" => matches(&UUID, text),
        "uuid3" => matches(&UUID3, text),
        "uuid4" => matches(&UUID4, text),
        "uuid5" => matches(&UUID5, text),
        "isbn" => is_isbn10(text) || is_isbn13(text),
        "isbn10" => is_isbn10(text),
        "isbn13" => is_isbn13(text),
        "creditcard" => is_credit_card(text),
        "ssn" => text.len() == 11 && matches(&SSN, text),
        "hexcolor" => matches(&HEX_COLOR, text),
        "rgbcolor" => matches(&RGB_COLOR, text),
        "byte" => matches(&BASE64, text),
        "password" => true,
        "date" => is_date(text),
        "duration" => is_duration(text),
        "datetime" => is_date_time(text),
        _ => return None,
    };
    Some(valid)
}

/// A lazily compiled pattern.
struct Pattern(&'static str, OnceLock<Regex>);

impl Pattern {
    const fn new(source: &'static str) -> Self {
        Self(source, OnceLock::new())
    }
}

fn matches(pattern: &Pattern, text: &str) -> bool {
    pattern
        .1
        .get_or_init(|| Regex::new(pattern.0).expect("the format patterns compile"))
        .is_match(text)
}

static UUID: Pattern =
    Pattern::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$");
static UUID3: Pattern =
    Pattern::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$");
static UUID4: Pattern =
    Pattern::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$");
static UUID5: Pattern =
    Pattern::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$");
static SSN: Pattern = Pattern::new(r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$");
static HEX_COLOR: Pattern = Pattern::new(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$");
static RGB_COLOR: Pattern = Pattern::new(
    r"^rgb\(\s*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])\s*,\s*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])\s*,\s*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])\s*\)$",
);
static BASE64: Pattern = Pattern::new(
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$",
);
static HOSTNAME: Pattern = Pattern::new(
    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
);
static CREDIT_CARD: Pattern = Pattern::new(
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$",
);
static EMAIL_ADDRESS: Pattern = Pattern::new(
    r#"^(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*|"(?:[^"\\\r\n]|\\.)*")@(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*|\[[^\[\]\\\r\n]*\])$"#,
);

/// `strfmt.IsHostname`: the pattern, at most 255 bytes, no label over 63.
fn is_hostname(text: &str) -> bool {
    matches(&HOSTNAME, text) && text.len() <= 255 && text.split('.').all(|p| p.len() <= 63)
}

/// `netutils.ParseIPSloppy`: an IPv4 address may have leading zeros (read as decimal).
fn parse_ip_sloppy(text: &str) -> Option<IpAddr> {
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(ip);
    }
    let octets: Vec<&str> = text.split('.').collect();
    if octets.len() != 4 {
        return None;
    }
    let mut bytes = [0u8; 4];
    for (byte, octet) in bytes.iter_mut().zip(&octets) {
        if octet.is_empty() || octet.len() > 3 || !octet.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *byte = octet.parse().ok()?;
    }
    Some(IpAddr::V4(Ipv4Addr::from(bytes)))
}

/// `netutils.ParseCIDRSloppy`: an address (IPv4 leading zeros allowed) and a prefix length in
/// range.
fn is_cidr_sloppy(text: &str) -> bool {
    let Some((address, prefix)) = text.split_once('/') else {
        return false;
    };
    let Some(ip) = parse_ip_sloppy(address) else {
        return false;
    };
    let bits = match ip {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    };
    !prefix.is_empty()
        && prefix.bytes().all(|b| b.is_ascii_digit())
        && prefix.parse::<u32>().is_ok_and(|p| p <= bits)
}

/// `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx:…` or `xx-xx-…`, or as dot-separated groups of
/// four hex digits.
fn is_mac(text: &str) -> bool {
    let octets = |separator: char| -> Option<usize> {
        let parts: Vec<&str> = text.split(separator).collect();
        parts
            .iter()
            .all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_hexdigit()))
            .then_some(parts.len())
    };
    let groups = || -> Option<usize> {
        let parts: Vec<&str> = text.split('.').collect();
        parts
            .iter()
            .all(|p| p.len() == 4 && p.bytes().all(|b| b.is_ascii_hexdigit()))
            .then_some(parts.len() * 2)
    };
    let count = match text.as_bytes().get(2) {
        Some(b':') => octets(':'),
        Some(b'-') => octets('-'),
        _ if text.as_bytes().get(4) == Some(&b'.') => groups(),
        _ => None,
    };
    matches!(count, Some(6 | 8 | 20))
}

/// `strfmt.IsEmail` (`mail.ParseAddress`, an address found): a bare address, or one in angle
/// brackets after a display name.
fn is_email(text: &str) -> bool {
    let text = text.trim();
    let address = match (text.rfind('<'), text.ends_with('>')) {
        (Some(open), true) => &text[open + 1..text.len() - 1],
        (None, false) => text,
        _ => return false,
    };
    matches(&EMAIL_ADDRESS, address)
}

/// govalidator's `IsISBN10`: spaces and dashes dropped, nine digits and a check digit (or `X`)
/// whose weighted sum is a multiple of 11.
fn is_isbn10(text: &str) -> bool {
    let digits: Vec<u8> = text
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'-')
        .collect();
    if digits.len() != 10
        || !digits[..9].iter().all(u8::is_ascii_digit)
        || !(digits[9].is_ascii_digit() || digits[9] == b'X')
    {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let value = if *d == b'X' { 10 } else { u32::from(d - b'0') };
            (i as u32 + 1) * value
        })
        .sum();
    sum.is_multiple_of(11)
}

/// govalidator's `IsISBN13`: thirteen digits whose alternately weighted sum is a multiple of 10.
fn is_isbn13(text: &str) -> bool {
    let digits: Vec<u8> = text
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'-')
        .collect();
    if digits.len() != 13 || !digits.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = digits[..12]
        .iter()
        .enumerate()
        .map(|(i, d)| u32::from(d - b'0') * if i % 2 == 0 { 1 } else { 3 })
        .sum();
    (10 - sum % 10) % 10 == u32::from(digits[12] - b'0')
}

/// govalidator's `IsCreditCard`: the digits (anything else dropped) match a card pattern and
/// pass the Luhn check.
fn is_credit_card(text: &str) -> bool {
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    if !matches(&CREDIT_CARD, &digits) {
        return false;
    }
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, d)| {
            let d = u32::from(d - b'0');
            if i % 2 == 1 {
                let doubled = d * 2;
                if doubled > 9 {
                    doubled - 9
                } else {
                    doubled
                }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// `time.Parse("2006-01-02", text)`: a four-digit year, two-digit month and day, the day within
/// its month.
fn is_date(text: &str) -> bool {
    crate::rules::civil_time::civil_date(text.as_bytes()).is_some()
}

static TIME_OF_DAY: Pattern =
    Pattern::new(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$");

/// `strfmt.IsDateTime`: lowercased and split at every `t`, the first part a date and the second
/// a time of day (hour, minute and second compared as text with 23, 59 and 59).
fn is_date_time(text: &str) -> bool {
    if text.len() < 4 {
        return false;
    }
    let lower = text.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let Some(time) = TIME_OF_DAY
        .1
        .get_or_init(|| Regex::new(TIME_OF_DAY.0).expect("the format patterns compile"))
        .captures(parts[1])
    else {
        return false;
    };
    &time[1] <= "23" && &time[2] <= "59" && &time[3] <= "59"
}

/// `strfmt.ParseDuration`: Go's `time.ParseDuration`, else any number followed by a unit word
/// (`5 days`, `1 week`) found in the text.
fn is_duration(text: &str) -> bool {
    crate::rules::go_duration::parse_duration(text).is_ok() || loose_duration(text)
}

static DURATION_TERM: Pattern = Pattern::new(r"(([0-9]+)\s*([A-Za-zµ]+))");

/// The fallback of `strfmt.ParseDuration`: some `<digits><space><letters>` term whose unit is
/// one of the known names (the last name of each unit also as a prefix: `days`, `weeks`).
fn loose_duration(text: &str) -> bool {
    const UNITS: &[&[&str]] = &[
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let terms = DURATION_TERM
        .1
        .get_or_init(|| Regex::new(DURATION_TERM.0).expect("the format patterns compile"));
    let mut found = false;
    for term in terms.captures_iter(text) {
        // `strconv.Atoi` of the digits: one that overflows makes the whole value invalid.
        if term[2].parse::<i64>().is_err() {
            return false;
        }
        let unit = term[3].trim().to_lowercase();
        for names in UNITS {
            let last = names.len() - 1;
            if names
                .iter()
                .enumerate()
                .any(|(i, name)| (i == last && unit.starts_with(name)) || unit == *name)
            {
                found = true;
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("date-time", "2024-02-29T10:00:00Z", true)]
    #[case("date-time", "2024-02-29t10:00:00.123+02:00", true)]
    #[case("date-time", "2023-02-29T10:00:00Z", false)]
    #[case("date-time", "2024-01-01T24:00:00Z", false)]
    #[case("date-time", "2024-01-01 10:00:00Z", false)]
    #[case("date", "2024-01-31", true)]
    #[case("date", "2024-1-31", false)]
    #[case("date", "2024-04-31", false)]
    #[case("duration", "1h30m", true)]
    #[case("duration", "-1.5s", true)]
    #[case("duration", "0", true)]
    #[case("duration", "3 days", true)]
    #[case("duration", "soon", false)]
    #[case("duration", "10", false)]
    #[case("uri", "https://example.com:8443/a%20b", true)]
    #[case("uri", "/just/a/path", true)]
    #[case("uri", "example.com", false)]
    #[case("uri", "http://host:port/", false)]
    #[case("uri", "http://x/%zz", false)]
    #[case("email", "a.b@example.com", true)]
    #[case("email", "Someone <a@example.com>", true)]
    #[case("email", "not-an-email", false)]
    #[case("hostname", "example.com", true)]
    #[case("hostname", "-bad.com", false)]
    #[case("ipv4", "10.0.0.1", true)]
    #[case("ipv4", "010.0.0.1", true)]
    #[case("ipv4", "::1", false)]
    #[case("ipv6", "fe80::1", true)]
    #[case("ipv6", "10.0.0.1", false)]
    #[case("cidr", "10.0.0.0/8", true)]
    #[case("cidr", "10.0.0.0/33", false)]
    #[case("cidr", "fd00::/64", true)]
    #[case("mac", "00:1a:2b:3c:4d:5e", true)]
    #[case("mac", "001a.2b3c.4d5e", true)]
    #[case("mac", "00:1a:2b:3c:4d", false)]
    #[case("uuid", "550E8400-E29B-41D4-A716-446655440000", true)]
    #[case("uuid4", "550e8400-e29b-31d4-a716-446655440000", false)]
    #[case("byte", "aGVsbG8=", true)]
    #[case("byte", "", false)]
    #[case("byte", "abc", false)]
    #[case("hexcolor", "#fff", true)]
    #[case("rgbcolor", "rgb(255, 0, 10)", true)]
    #[case("rgbcolor", "rgb(256,0,0)", false)]
    #[case("ssn", "123-45-6789", true)]
    #[case("isbn10", "0-321-75104-3", true)]
    #[case("isbn13", "978-0321751041", true)]
    #[case("isbn", "978-0321751042", false)]
    #[case("creditcard", "4111 1111 1111 1111", true)]
    #[case("creditcard", "4111 1111 1111 1112", false)]
    #[case("bsonobjectid", "507f1f77bcf86cd799439011", true)]
    #[case("password", "anything", true)]
    fn formats_are_checked_as_strfmt_checks_them(
        #[case] format: &str,
        #[case] text: &str,
        #[case] valid: bool,
    ) {
        assert_eq!(check(format, text), Some(valid), "{format} {text:?}");
    }

    #[rstest]
    #[case("int32")]
    #[case("k8s-short-name")]
    #[case("my-own-format")]
    fn other_formats_check_nothing(#[case] format: &str) {
        assert_eq!(check(format, "whatever"), None);
    }
}
