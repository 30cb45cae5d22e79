//! Go's `url.ParseRequestURI`: an absolute URI or an absolute path as an HTTP request line
//! carries it (no fragment split off). What the `uri` schema format and CEL's `url` library
//! accept, and the parts the library reads.

use std::net::Ipv6Addr;

/// A parsed request URI.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestUri {
    /// The scheme, lowercased (`https`); empty for a path.
    pub scheme: String,
    /// The host and port as written (`example.com:8443`, `[::1]:80`); empty without authority.
    pub host: String,
    /// The path as written (escapes kept).
    pub path: String,
    /// What follows `?`, as written.
    pub raw_query: String,
}

impl RequestUri {
    /// `url.URL.Hostname`: the host without its port, an IPv6 address without brackets.
    pub fn hostname(&self) -> &str {
        let host = &self.host;
        if let Some(bracketed) = host.strip_prefix('[') {
            return bracketed.split(']').next().unwrap_or_default();
        }
        host.rsplit_once(':').map_or(host.as_str(), |(h, _)| h)
    }

    /// `url.URL.Port`: the digits after the host's last `:`, or empty.
    pub fn port(&self) -> &str {
        let after_host = match self.host.strip_prefix('[') {
            Some(bracketed) => bracketed.split_once(']').map_or("", |(_, rest)| rest),
            None => self.host.as_str(),
        };
        match after_host.rsplit_once(':') {
            Some((_, port)) if port.bytes().all(|b| b.is_ascii_digit()) => port,
            _ => "",
        }
    }

    /// `url.URL.Query`: the query's `key=value` pairs, unescaped (`+` is a space), values of one
    /// key in order; a pair with a `;` or a bad escape is dropped, as Go drops it.
    pub fn query(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for pair in self.raw_query.split('&').filter(|p| !p.is_empty()) {
            if pair.contains(';') {
                continue;
            }
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let (Some(key), Some(value)) = (unescape_query(key), unescape_query(value)) else {
                continue;
            };
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some((_, values)) => values.push(value),
                None => out.push((key, vec![value])),
            }
        }
        out
    }
}

/// Whether every `%` starts a two-hex-digit escape.
fn valid_escapes(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            if !(bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
            {
                return false;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    true
}

/// `url.QueryUnescape`.
fn unescape_query(text: &str) -> Option<String> {
    if !valid_escapes(text) {
        return None;
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// Parses `text` as `url.ParseRequestURI` does; the error is Go's reason.
pub fn parse(text: &str) -> Result<RequestUri, &'static str> {
    if text.is_empty() {
        return Err("empty url");
    }
    if text.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL");
    }
    if text == "*" {
        return Ok(RequestUri {
            path: "*".into(),
            ..RequestUri::default()
        });
    }
    let (scheme, rest) =
        match text.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))) {
            Some(0) if text.starts_with(':') => return Err("missing protocol scheme"),
            Some(i)
                if text[i..].starts_with(':')
                    && text.starts_with(|c: char| c.is_ascii_alphabetic()) =>
            {
                (text[..i].to_ascii_lowercase(), &text[i + 1..])
            }
            _ => (String::new(), text),
        };
    let (rest, raw_query) = rest.split_once('?').unwrap_or((rest, ""));
    if scheme.is_empty() && !rest.starts_with('/') {
        return Err("invalid URI for request");
    }
    let (host, path) = match rest.strip_prefix("//") {
        // Without a scheme a request URI has no authority: `//x/y` is a path.
        Some(after) if !scheme.is_empty() => {
            let (authority, path) = after.find('/').map_or((after, ""), |i| after.split_at(i));
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            check_host(host)?;
            (host.to_string(), path.to_string())
        }
        _ => (String::new(), rest.to_string()),
    };
    if !valid_escapes(&path) {
        return Err("invalid URL escape");
    }
    Ok(RequestUri {
        scheme,
        host,
        path,
        raw_query: raw_query.to_string(),
    })
}

/// `parseHost`: a bracketed IPv6 address with an optional `:port`, or a name with an
/// optional numeric `:port`.
fn check_host(host: &str) -> Result<(), &'static str> {
    let port = if let Some(bracketed) = host.strip_prefix('[') {
        let (inside, after) = bracketed.split_once(']').ok_or("missing ']' in host")?;
        let address = inside.split('%').next().unwrap_or_default();
        if address.parse::<Ipv6Addr>().is_err() {
            return Err("invalid IPv6 host");
        }
        match after.strip_prefix(':') {
            Some(port) => Some(port),
            None if after.is_empty() => None,
            None => return Err("invalid port after host"),
        }
    } else {
        host.rsplit_once(':').map(|(_, port)| port)
    };
    if port.is_some_and(|p| !p.bytes().all(|b| b.is_ascii_digit())) {
        return Err("invalid port after host");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("https://Example.com:8443/a%20b?x=1&x=2&y=a+b", true)]
    #[case("HTTP://[::1]:80/", true)]
    #[case("/just/a/path", true)]
    #[case("mailto:someone@example.com", true)]
    #[case("*", true)]
    #[case("example.com", false)]
    #[case("", false)]
    #[case("http://host:port/", false)]
    #[case("http://x/%zz", false)]
    #[case("http://x/\u{7f}", false)]
    fn parses_as_parse_request_uri(#[case] text: &str, #[case] valid: bool) {
        assert_eq!(parse(text).is_ok(), valid, "{text:?}");
    }

    #[test]
    fn the_parts_read_as_go_reads_them() {
        let uri = parse("HTTPS://user@Example.com:8443/a%20b?x=1&x=2&y=a+b&bad;=1").unwrap();
        assert_eq!(uri.scheme, "https");
        assert_eq!(uri.host, "Example.com:8443");
        assert_eq!((uri.hostname(), uri.port()), ("Example.com", "8443"));
        assert_eq!(uri.path, "/a%20b");
        assert_eq!(
            uri.query(),
            [
                ("x".to_string(), vec!["1".to_string(), "2".to_string()]),
                ("y".to_string(), vec!["a b".to_string()])
            ]
        );
        let v6 = parse("http://[fe80::1]:80/").unwrap();
        assert_eq!((v6.hostname(), v6.port()), ("fe80::1", "80"));
    }
}
