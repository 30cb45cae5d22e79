//! Parsing of resource request paths and query parameters.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::error::ApiError;

/// A request path as the real server reads it: Go's `net/http` parses the request target with
/// `url.ParseRequestURI`, and everything after it (the request info, authorization, routing)
/// reads `URL.Path`, its `%XX` escapes decoded (`+` stays a plus: it means a space only in a
/// query). `None` when an escape is not `%` and two hex digits: Go then refuses the request
/// before any handler sees it (see [`malformed_request`]). Bytes that decode to no UTF-8 are
/// replaced (Go keeps them; no valid name or path holds them).
pub fn decode_path(raw: &str) -> Option<Cow<'_, str>> {
    unescape(raw, false)
}

/// Go's `url.PathUnescape` of `raw`, or `raw` itself when an escape is malformed (how the
/// impersonation filter reads the keys of `Impersonate-Extra-` headers).
pub fn path_unescape_or_raw(raw: &str) -> String {
    unescape(raw, false).map_or_else(|| raw.to_string(), Cow::into_owned)
}

/// A query component decoded for display (`+` a space, `%XX` decoded), a malformed escape
/// left as written: how the harness prints the targets it traces.
pub fn percent_decode(raw: &str) -> String {
    unescape_as(raw, true, true).map_or_else(|| raw.to_string(), Cow::into_owned)
}

/// Go's `url.PathUnescape` (`plus_is_space` false) and `url.QueryUnescape` (true): `%XX`
/// escapes decoded; `None` when one is not `%` and two hex digits.
fn unescape(raw: &str, plus_is_space: bool) -> Option<Cow<'_, str>> {
    unescape_as(raw, plus_is_space, false)
}

/// [`unescape`], or with `lenient` a malformed escape kept as written instead of refused.
fn unescape_as(raw: &str, plus_is_space: bool, lenient: bool) -> Option<Cow<'_, str>> {
    // Every request's path passes here, most without an escape: one `memchr` pass.
    let bytes = raw.as_bytes();
    let escaped = match plus_is_space {
        true => memchr::memchr2(b'%', b'+', bytes).is_some(),
        false => memchr::memchr(b'%', bytes).is_some(),
    };
    if !escaped {
        return Some(Cow::Borrowed(raw));
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let value = bytes
                    .get(i + 1..i + 3)
                    .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))
                    .and_then(|hex| std::str::from_utf8(hex).ok())
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok());
                match value {
                    Some(value) => {
                        out.push(value);
                        i += 3;
                    }
                    None if lenient => {
                        out.push(b'%');
                        i += 1;
                    }
                    None => return None,
                }
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Some(Cow::Owned(String::from_utf8_lossy(&out).into_owned()))
}

/// The answer Go's `net/http` server writes itself, before any handler, to a request it cannot
/// parse (here: a path with a malformed `%` escape): `400 Bad Request` in plain text, and the
/// connection closed.
pub fn malformed_request() -> axum::response::Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    (
        StatusCode::BAD_REQUEST,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CONNECTION, "close"),
        ],
        "400 Bad Request",
    )
        .into_response()
}

/// The parts of a resource URL: `/api/v1/namespaces/{ns}/{plural}/{name}/{subresource}` and the
/// `/apis/{group}/{version}/...` forms.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourcePath {
    /// API group (empty for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Namespace from the URL, if the path had one.
    pub namespace: Option<String>,
    /// Resource plural.
    pub plural: String,
    /// Object name, for item requests.
    pub name: Option<String>,
    /// Subresource, e.g. `status`.
    pub subresource: Option<String>,
    /// For `.../proxy/...`: the path after `proxy`.
    pub proxy_path: Option<String>,
}

impl ResourcePath {
    /// Parses a path; `None` when it is not a resource path.
    pub fn parse(path: &str) -> Option<Self> {
        // Split by a set of one `char`, not the `char`: a `char` pattern searches with
        // `memchr`, whose set-up costs more than the few bytes of a segment; a set is tested
        // char by char.
        let segments: Vec<&str> = path.trim_matches('/').split(['/']).collect();
        let (group, version, rest) = match segments.as_slice() {
            ["api", version, rest @ ..] => (String::new(), version.to_string(), rest),
            ["apis", group, version, rest @ ..] => (group.to_string(), version.to_string(), rest),
            _ => return None,
        };
        if rest.iter().any(|s| s.is_empty()) {
            return None;
        }
        let mut out = ResourcePath {
            group,
            version,
            ..Default::default()
        };
        // A proxy request carries the path to forward after `proxy`.
        let proxied = |ns: Option<&str>, plural: &str, name: &str, tail: &[&str]| ResourcePath {
            group: out.group.clone(),
            version: out.version.clone(),
            namespace: ns.map(str::to_string),
            plural: plural.to_string(),
            name: Some(name.to_string()),
            subresource: Some("proxy".into()),
            proxy_path: Some(tail.join("/")),
        };
        match rest {
            [plural, name, "proxy", tail @ ..] if !tail.is_empty() && *plural != "namespaces" => {
                return Some(proxied(None, plural, name, tail))
            }
            ["namespaces", ns, plural, name, "proxy", tail @ ..] if !tail.is_empty() => {
                return Some(proxied(Some(ns), plural, name, tail))
            }
            _ => {}
        }
        match rest {
            [plural] => out.plural = plural.to_string(),
            [plural, name] => {
                out.plural = plural.to_string();
                out.name = Some(name.to_string());
            }
            ["namespaces", name, sub] if matches!(*sub, "status" | "finalize") => {
                out.plural = "namespaces".into();
                out.name = Some(name.to_string());
                out.subresource = Some(sub.to_string());
            }
            ["namespaces", ns, plural] => {
                out.namespace = Some(ns.to_string());
                out.plural = plural.to_string();
            }
            [plural, name, sub] => {
                out.plural = plural.to_string();
                out.name = Some(name.to_string());
                out.subresource = Some(sub.to_string());
            }
            ["namespaces", ns, plural, name] => {
                out.namespace = Some(ns.to_string());
                out.plural = plural.to_string();
                out.name = Some(name.to_string());
            }
            ["namespaces", ns, plural, name, sub] => {
                out.namespace = Some(ns.to_string());
                out.plural = plural.to_string();
                out.name = Some(name.to_string());
                out.subresource = Some(sub.to_string());
            }
            _ => return None,
        }
        Some(out)
    }
}

/// Decoded query parameters. A parameter given more than once keeps every value: a scalar
/// option reads the first (as Go's `Convert_Slice_string_To_string` does), a list option such
/// as `dryRun` reads them all.
#[derive(Debug, Clone, Default)]
pub struct Query(BTreeMap<String, Vec<String>>);

impl Query {
    /// Parses a raw query string.
    pub fn parse(raw: Option<&str>) -> Self {
        let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for pair in raw.unwrap_or_default().split('&') {
            // As Go's `url.ParseQuery`: a pair holding `;` (no longer a separator) or a
            // malformed escape is dropped, the rest is read.
            if pair.is_empty() || pair.contains(';') {
                continue;
            }
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let (Some(k), Some(v)) = (unescape(k, true), unescape(v, true)) else {
                continue;
            };
            map.entry(k.into_owned()).or_default().push(v.into_owned());
        }
        Query(map)
    }

    /// A parameter's (first) value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.first()).map(String::as_str)
    }

    /// Every value of a parameter, in the order given (empty when absent).
    pub fn all(&self, key: &str) -> &[String] {
        self.0.get(key).map(Vec::as_slice).unwrap_or_default()
    }

    /// Drops a parameter.
    pub fn remove(&mut self, key: &str) {
        self.0.remove(key);
    }

    /// A boolean parameter, read as the real server converts one (see [`go_bool`]); absent is
    /// `false`.
    pub fn flag(&self, key: &str) -> bool {
        self.get(key).is_some_and(go_bool)
    }

    /// An integer parameter, read as the real server's parameter codec reads one
    /// (`Convert_Slice_string_To_int64`: the first value, by `strconv.ParseInt`, so an empty
    /// value is malformed too). A malformed value is a 400 with strconv's error as the message.
    pub fn int(&self, key: &str) -> Result<Option<i64>, ApiError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => crate::rules::strconv::parse_int(v)
                .map(Some)
                .map_err(ApiError::bad_request),
        }
    }
}

/// A boolean query value as apimachinery's `Convert_Slice_string_To_bool` reads it: only `0`
/// and `false` (any case) are false; anything else, the empty value included, is true.
pub fn go_bool(value: &str) -> bool {
    value != "0" && !value.eq_ignore_ascii_case("false")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("/api/v1/pods", "", None, "pods", None, None)]
    #[case("/api/v1/namespaces", "", None, "namespaces", None, None)]
    #[case("/api/v1/namespaces/a", "", None, "namespaces", Some("a"), None)]
    #[case(
        "/api/v1/namespaces/a/status",
        "",
        None,
        "namespaces",
        Some("a"),
        Some("status")
    )]
    #[case("/api/v1/namespaces/a/pods", "", Some("a"), "pods", None, None)]
    #[case("/api/v1/namespaces/a/pods/p", "", Some("a"), "pods", Some("p"), None)]
    #[case(
        "/api/v1/namespaces/a/pods/p/status",
        "",
        Some("a"),
        "pods",
        Some("p"),
        Some("status")
    )]
    #[case("/api/v1/nodes/n/status", "", None, "nodes", Some("n"), Some("status"))]
    #[case(
        "/apis/apps/v1/namespaces/x/deployments",
        "apps",
        Some("x"),
        "deployments",
        None,
        None
    )]
    fn parses_resource_paths(
        #[case] path: &str,
        #[case] group: &str,
        #[case] ns: Option<&str>,
        #[case] plural: &str,
        #[case] name: Option<&str>,
        #[case] sub: Option<&str>,
    ) {
        let p = ResourcePath::parse(path).unwrap();
        assert_eq!(p.group, group);
        assert_eq!(p.namespace.as_deref(), ns);
        assert_eq!(p.plural, plural);
        assert_eq!(p.name.as_deref(), name);
        assert_eq!(p.subresource.as_deref(), sub);
    }

    #[rstest]
    #[case("/api")]
    #[case("/api/v1")]
    #[case("/healthz")]
    #[case("/api/v1/a/b/c/d/e/f")]
    #[case("/api/v1/pods//x")]
    fn rejects_other_paths(#[case] path: &str) {
        assert_eq!(ResourcePath::parse(path), None);
    }

    #[test]
    fn decodes_queries() {
        let q = Query::parse(Some("labelSelector=a%3Db%2Cc+in+(x)&watch=1&limit=5&bad%"));
        assert_eq!(q.get("labelSelector"), Some("a=b,c in (x)"));
        assert!(q.flag("watch"));
        assert_eq!(q.int("limit").unwrap(), Some(5));
        // A malformed escape drops its pair, as `url.ParseQuery` drops it.
        assert_eq!(q.get("bad%"), None);
        let malformed = Query::parse(Some("limit=x")).int("limit").unwrap_err();
        assert_eq!(
            (malformed.code, malformed.message.as_str()),
            (400, r#"strconv.ParseInt: parsing "x": invalid syntax"#)
        );
        // Present but empty is malformed too, as `strconv.ParseInt("")` is.
        assert!(Query::parse(Some("limit=")).int("limit").is_err());
    }

    #[rstest]
    #[case("watch=true", true)]
    #[case("watch=1", true)]
    #[case("watch", true)]
    #[case("watch=yes", true)]
    #[case("watch=FALSE", false)]
    #[case("watch=false", false)]
    #[case("watch=0", false)]
    #[case("", false)]
    fn booleans_read_as_the_real_server_reads_them(#[case] query: &str, #[case] on: bool) {
        assert_eq!(Query::parse(Some(query)).flag("watch"), on);
    }

    /// A repeated parameter: a scalar reads the first value, a list reads them all.
    #[test]
    fn repeated_parameters_keep_every_value() {
        let mut q = Query::parse(Some("dryRun=All&limit=5&dryRun=Bogus&limit=7"));
        assert_eq!(q.get("limit"), Some("5"));
        assert_eq!(q.all("dryRun"), ["All", "Bogus"]);
        assert!(q.all("missing").is_empty());
        q.remove("dryRun");
        assert_eq!(q.get("dryRun"), None);
    }

    /// Queries read as Go's `url.ParseQuery` reads them: `+` is a space, and a pair with a `;`
    /// or a malformed escape is dropped while the others are kept.
    #[rstest]
    #[case::plus_is_space("labelSelector=a+in+(b)", "labelSelector", Some("a in (b)"))]
    #[case::escaped(
        "fieldSelector=metadata.name%3Dx",
        "fieldSelector",
        Some("metadata.name=x")
    )]
    #[case::semicolon_drops_the_pair("limit=1;x=y", "limit", None)]
    #[case::others_kept("limit=1;x=y&watch=1", "watch", Some("1"))]
    #[case::malformed_value_drops_the_pair("labelSelector=%zz&limit=2", "labelSelector", None)]
    #[case::malformed_key_drops_the_pair("a%=1&limit=2", "limit", Some("2"))]
    #[case::no_value("watch", "watch", Some(""))]
    fn queries_read_as_go_reads_them(
        #[case] raw: &str,
        #[case] key: &str,
        #[case] value: Option<&str>,
    ) {
        assert_eq!(Query::parse(Some(raw)).get(key), value, "{raw}");
    }

    /// Display decoding keeps what it cannot decode.
    #[rstest]
    #[case("labelSelector=app%3Deno+x", "labelSelector=app=eno x")]
    #[case("a=%zz%4", "a=%zz%4")]
    #[case("plain", "plain")]
    fn display_decoding_is_lenient(#[case] raw: &str, #[case] shown: &str) {
        assert_eq!(percent_decode(raw), shown);
    }

    /// `Impersonate-Extra-` keys: `url.PathUnescape` (a plus stays), raw when malformed.
    #[rstest]
    #[case("scopes", "scopes")]
    #[case("example.com%2fscope", "example.com/scope")]
    #[case("a+b", "a+b")]
    #[case("bad%zz", "bad%zz")]
    fn extra_keys_unescape_as_paths(#[case] raw: &str, #[case] key: &str) {
        assert_eq!(path_unescape_or_raw(raw), key);
    }

    /// Paths decode as Go's `url.ParseRequestURI` decodes `URL.Path`.
    #[rstest]
    #[case::plain("/api/v1/pods", Some("/api/v1/pods"))]
    #[case::space("/a%20b", Some("/a b"))]
    #[case::slash("/a%2Fb", Some("/a/b"))]
    #[case::percent("/%25", Some("/%"))]
    #[case::lower_hex("/%2e%2E", Some("/.."))]
    #[case::plus_stays("/a+b", Some("/a+b"))]
    #[case::at_the_end("/a%41", Some("/aA"))]
    #[case::not_hex("/%zz", None)]
    #[case::one_digit("/a%4", None)]
    #[case::bare("/a%", None)]
    #[case::sign_is_not_a_digit("/%+1", None)]
    #[case::not_utf8("/%ff", Some("/\u{fffd}"))]
    fn paths_decode_as_go_reads_them(#[case] raw: &str, #[case] decoded: Option<&str>) {
        assert_eq!(decode_path(raw).as_deref(), decoded);
    }
}
