//! Go's `net/netip.ParseAddr` and `ParsePrefix`: the addresses they accept (dotted IPv4
//! without leading zeros, IPv6 with `::`, an embedded IPv4 tail and a `%zone`; a prefix length
//! without sign or leading zero) and their error texts (`ParseAddr("1.2.3"): IPv4 address too
//! short`), which the Kubernetes CEL `ip` and `cidr` libraries pass on.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::validation::go_quote;

/// A parsed address and its IPv6 zone (empty when none was given).
pub type Parsed = (IpAddr, String);

/// `netip.ParseAddr(s)`; the error is Go's text.
pub fn parse_addr(s: &str) -> Result<Parsed, String> {
    for b in s.bytes() {
        match b {
            b'.' => return parse_ipv4(s).map(|a| (IpAddr::V4(a), String::new())),
            b':' => return parse_ipv6(s),
            b'%' => return Err(error(s, "missing IPv6 address", None)),
            _ => {}
        }
    }
    Err(error(s, "unable to parse IP", None))
}

/// `netip.ParsePrefix(s)`: the address and the prefix length; the error is Go's text.
pub fn parse_prefix(s: &str) -> Result<(IpAddr, u8), String> {
    let error = |message: &str| format!("netip.ParsePrefix({}): {message}", go_quote(s));
    let Some(slash) = s.rfind('/') else {
        return Err(error("no '/'"));
    };
    let (address, zone) = parse_addr(&s[..slash]).map_err(|e| error(&e))?;
    if !zone.is_empty() {
        return Err(error("IPv6 zones cannot be present in a prefix"));
    }
    let bits = &s[slash + 1..];
    let bad_bits = || error(&format!("bad bits after slash: {}", go_quote(bits)));
    // Like `strconv.Atoi` but without a sign or leading zeros.
    if bits.len() > 1 && !matches!(bits.as_bytes()[0], b'1'..=b'9') {
        return Err(bad_bits());
    }
    if bits.is_empty() || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad_bits());
    }
    let max = if address.is_ipv4() { 32 } else { 128 };
    match bits.parse::<u64>() {
        Ok(n) if n <= max => Ok((address, n as u8)),
        Ok(_) => Err(error("prefix length out of range")),
        // More digits than an int holds: `strconv.Atoi`'s range error.
        Err(_) => Err(bad_bits()),
    }
}

/// `parseAddrError.Error()`.
fn error(input: &str, message: &str, at: Option<&str>) -> String {
    match at.filter(|a| !a.is_empty()) {
        Some(at) => format!(
            "ParseAddr({}): {message} (at {})",
            go_quote(input),
            go_quote(at)
        ),
        None => format!("ParseAddr({}): {message}", go_quote(input)),
    }
}

fn parse_ipv4(s: &str) -> Result<Ipv4Addr, String> {
    parse_ipv4_fields(s, 0, s.len()).map(Ipv4Addr::from)
}

/// `parseIPv4Fields`: the four octets of `input[off..end]`; errors name all of `input`.
fn parse_ipv4_fields(input: &str, off: usize, end: usize) -> Result<[u8; 4], String> {
    let s = &input[off..end];
    let bytes = s.as_bytes();
    let mut fields = [0u8; 4];
    let (mut value, mut pos, mut digits) = (0u32, 0usize, 0usize);
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'0'..=b'9' => {
                if digits == 1 && value == 0 {
                    return Err(error(input, "IPv4 field has octet with leading zero", None));
                }
                value = value * 10 + u32::from(c - b'0');
                digits += 1;
                if value > 255 {
                    return Err(error(input, "IPv4 field has value >255", None));
                }
            }
            b'.' => {
                if i == 0 || i == bytes.len() - 1 || bytes[i - 1] == b'.' {
                    let message = "IPv4 field must have at least one digit";
                    return Err(error(input, message, Some(&s[i..])));
                }
                if pos == 3 {
                    return Err(error(input, "IPv4 address too long", None));
                }
                fields[pos] = value as u8;
                pos += 1;
                value = 0;
                digits = 0;
            }
            _ => return Err(error(input, "unexpected character", Some(&s[i..]))),
        }
    }
    if pos < 3 {
        return Err(error(input, "IPv4 address too short", None));
    }
    fields[3] = value as u8;
    Ok(fields)
}

fn parse_ipv6(input: &str) -> Result<Parsed, String> {
    let (mut s, zone) = match input.find('%') {
        Some(i) => {
            let zone = &input[i + 1..];
            if zone.is_empty() {
                return Err(error(input, "zone must be a non-empty string", None));
            }
            (&input[..i], zone)
        }
        None => (input, ""),
    };
    let done = |ip: [u8; 16]| Ok((IpAddr::V6(Ipv6Addr::from(ip)), zone.to_string()));
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if s.starts_with("::") {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return done(ip);
        }
    }
    let mut i = 0;
    while i < 16 {
        let bytes = s.as_bytes();
        let mut off = 0;
        let mut acc: u32 = 0;
        while off < bytes.len() {
            let Some(digit) = (bytes[off] as char).to_digit(16) else {
                break;
            };
            acc = (acc << 4) + digit;
            if off > 3 {
                return Err(error(
                    input,
                    "each group must have 4 or less digits",
                    Some(s),
                ));
            }
            if acc > u32::from(u16::MAX) {
                return Err(error(input, "IPv6 field has value >=2^16", Some(s)));
            }
            off += 1;
        }
        if off == 0 {
            let message = "each colon-separated field must have at least one digit";
            return Err(error(input, message, Some(s)));
        }
        if bytes.get(off) == Some(&b'.') {
            if ellipsis.is_none() && i != 12 {
                let message =
                    "embedded IPv4 address must replace the final 2 fields of the address";
                return Err(error(input, message, Some(s)));
            }
            if i + 4 > 16 {
                let message =
                    "too many hex fields to fit an embedded IPv4 at the end of the address";
                return Err(error(input, message, Some(s)));
            }
            let end = if zone.is_empty() {
                input.len()
            } else {
                input.len() - zone.len() - 1
            };
            let octets = parse_ipv4_fields(input, end - s.len(), end)?;
            ip[i..i + 4].copy_from_slice(&octets);
            s = "";
            i += 4;
            break;
        }
        ip[i] = (acc >> 8) as u8;
        ip[i + 1] = acc as u8;
        i += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if !s.starts_with(':') {
            return Err(error(input, "unexpected character, want colon", Some(s)));
        }
        if s.len() == 1 {
            return Err(error(
                input,
                "colon must be followed by more characters",
                Some(s),
            ));
        }
        s = &s[1..];
        if s.starts_with(':') {
            if ellipsis.is_some() {
                return Err(error(input, "multiple :: in address", Some(s)));
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return Err(error(input, "trailing garbage after address", Some(s)));
    }
    if i < 16 {
        let Some(at) = ellipsis else {
            return Err(error(input, "address string too short", None));
        };
        let n = 16 - i;
        ip.copy_within(at..i, at + n);
        ip[at..at + n].fill(0);
    } else if ellipsis.is_some() {
        return Err(error(
            input,
            "the :: must expand to at least one field of zeros",
            None,
        ));
    }
    done(ip)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("10.1.2.3", "10.1.2.3", "")]
    #[case("::", "::", "")]
    #[case("2001:db8::68", "2001:db8::68", "")]
    #[case("::ffff:1.2.3.4", "::ffff:1.2.3.4", "")]
    #[case("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304", "")]
    #[case("fe80::1%eth0", "fe80::1", "eth0")]
    #[case("1::", "1::", "")]
    fn parses_as_go(#[case] text: &str, #[case] address: &str, #[case] zone: &str) {
        let (parsed, parsed_zone) = parse_addr(text).unwrap();
        assert_eq!(
            (parsed.to_string().as_str(), parsed_zone.as_str()),
            (address, zone)
        );
    }

    #[rstest]
    #[case("", "ParseAddr(\"\"): unable to parse IP")]
    #[case("abc", "ParseAddr(\"abc\"): unable to parse IP")]
    #[case("%eth0", "ParseAddr(\"%eth0\"): missing IPv6 address")]
    #[case("1.2.3", "ParseAddr(\"1.2.3\"): IPv4 address too short")]
    #[case("1.2.3.4.5", "ParseAddr(\"1.2.3.4.5\"): IPv4 address too long")]
    #[case("1.2.3.256", "ParseAddr(\"1.2.3.256\"): IPv4 field has value >255")]
    #[case(
        "01.2.3.4",
        "ParseAddr(\"01.2.3.4\"): IPv4 field has octet with leading zero"
    )]
    #[case(
        "1..2.3",
        "ParseAddr(\"1..2.3\"): IPv4 field must have at least one digit (at \".2.3\")"
    )]
    #[case("1.2.3.x", "ParseAddr(\"1.2.3.x\"): unexpected character (at \"x\")")]
    #[case("1:2", "ParseAddr(\"1:2\"): address string too short")]
    #[case(
        "12345::",
        "ParseAddr(\"12345::\"): each group must have 4 or less digits (at \"12345::\")"
    )]
    #[case(
        "1:::2",
        "ParseAddr(\"1:::2\"): each colon-separated field must have at least one digit (at \":2\")"
    )]
    #[case(
        "1::2::3",
        "ParseAddr(\"1::2::3\"): multiple :: in address (at \":3\")"
    )]
    #[case(
        "1:2:",
        "ParseAddr(\"1:2:\"): colon must be followed by more characters (at \":\")"
    )]
    #[case(
        "1:2x",
        "ParseAddr(\"1:2x\"): unexpected character, want colon (at \"x\")"
    )]
    #[case("fe80::1%", "ParseAddr(\"fe80::1%\"): zone must be a non-empty string")]
    #[case(
        "1:2:3:4:5:6:7:8:9",
        "ParseAddr(\"1:2:3:4:5:6:7:8:9\"): trailing garbage after address (at \"9\")"
    )]
    #[case(
        "1:2:3:4::5:6:7:8",
        "ParseAddr(\"1:2:3:4::5:6:7:8\"): the :: must expand to at least one field of zeros"
    )]
    #[case("1:2:1.2.3.4", "ParseAddr(\"1:2:1.2.3.4\"): embedded IPv4 address must replace the final 2 fields of the address (at \"1.2.3.4\")")]
    #[case(
        "::1.2.3.01",
        "ParseAddr(\"::1.2.3.01\"): IPv4 field has octet with leading zero"
    )]
    fn refuses_as_go(#[case] text: &str, #[case] message: &str) {
        assert_eq!(parse_addr(text).unwrap_err(), message);
    }

    #[rstest]
    #[case("10.0.0.0/8", Ok(("10.0.0.0", 8)))]
    #[case("2001:db8::/32", Ok(("2001:db8::", 32)))]
    #[case("1.2.3.4", Err("netip.ParsePrefix(\"1.2.3.4\"): no '/'"))]
    #[case(
        "1.2.3/24",
        Err("netip.ParsePrefix(\"1.2.3/24\"): ParseAddr(\"1.2.3\"): IPv4 address too short")
    )]
    #[case(
        "fe80::1%eth0/64",
        Err("netip.ParsePrefix(\"fe80::1%eth0/64\"): IPv6 zones cannot be present in a prefix")
    )]
    #[case(
        "1.2.3.4/",
        Err("netip.ParsePrefix(\"1.2.3.4/\"): bad bits after slash: \"\"")
    )]
    #[case(
        "1.2.3.4/08",
        Err("netip.ParsePrefix(\"1.2.3.4/08\"): bad bits after slash: \"08\"")
    )]
    #[case(
        "1.2.3.4/-1",
        Err("netip.ParsePrefix(\"1.2.3.4/-1\"): bad bits after slash: \"-1\"")
    )]
    #[case(
        "1.2.3.4/33",
        Err("netip.ParsePrefix(\"1.2.3.4/33\"): prefix length out of range")
    )]
    #[case(
        "::/129",
        Err("netip.ParsePrefix(\"::/129\"): prefix length out of range")
    )]
    fn prefixes_parse_as_go(#[case] text: &str, #[case] expected: Result<(&str, u8), &str>) {
        let got = parse_prefix(text).map(|(a, b)| (a.to_string(), b));
        let expected = expected
            .map(|(a, b)| (a.to_string(), b))
            .map_err(str::to_string);
        assert_eq!(got, expected);
    }
}
