//! The Kubernetes CEL `semver` library (`k8s.io/apiserver/pkg/cel/library/semverlib.go`):
//! `semver(string[, normalize])`, `isSemver(string[, normalize])`, `major`, `minor`, `patch`,
//! `isGreaterThan`, `isLessThan`, `compareTo`, parsed and ordered as `github.com/blang/semver/v4`
//! does, with its error texts.

use std::cmp::Ordering;
use std::sync::Arc;

use cel::common::types::{Type, BOOL_TYPE, STRING_TYPE};
use cel::common::value::CowVal;
use cel::objects::Opaque;
use cel::{DeclarationError, Env, ExecutionError, Value};

use super::value_types::{arg, out, string_arg, Answer};

const SEMVER: &str = "kubernetes.Semver";

/// A prerelease identifier: numeric ones sort below alphanumeric ones.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Prerelease {
    Number(u64),
    Text(String),
}

/// A parsed version (its build metadata is checked, but plays no part in any function).
#[derive(Debug, Clone)]
struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<Prerelease>,
}

/// Equal when neither sorts above the other (`Version.EQ`: build metadata does not count).
impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        compare(self, other) == Ordering::Equal
    }
}
impl Eq for Version {}

impl Opaque for Version {
    fn runtime_type_name(&self) -> &str {
        SEMVER
    }
}

fn only(text: &str, allowed: impl Fn(char) -> bool) -> bool {
    text.chars().all(allowed)
}

fn alphanumeric(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

/// A numeric part: digits only, no leading zero, then `strconv.ParseUint`.
fn number(text: &str, what: &str, capital: &str) -> Result<u64, String> {
    if !only(text, |c| c.is_ascii_digit()) {
        return Err(format!(
            "Invalid character(s) found in {what} number {text:?}"
        ));
    }
    if text.len() > 1 && text.starts_with('0') {
        return Err(format!(
            "{capital} number must not contain leading zeroes {text:?}"
        ));
    }
    crate::rules::strconv::parse_uint(text)
}

/// blang/semver's `Parse`.
fn parse(text: &str) -> Result<Version, String> {
    if text.is_empty() {
        return Err("Version string empty".into());
    }
    let parts: Vec<&str> = text.splitn(3, '.').collect();
    if parts.len() != 3 {
        return Err("No Major.Minor.Patch elements found".into());
    }
    let major = number(parts[0], "major", "Major")?;
    let minor = number(parts[1], "minor", "Minor")?;
    let mut patch_text = parts[2];
    let mut build: Vec<&str> = Vec::new();
    let mut pre: Vec<&str> = Vec::new();
    if let Some((before, after)) = patch_text.split_once('+') {
        build = after.split('.').collect();
        patch_text = before;
    }
    if let Some((before, after)) = patch_text.split_once('-') {
        pre = after.split('.').collect();
        patch_text = before;
    }
    let patch = number(patch_text, "patch", "Patch")?;
    let pre = pre
        .into_iter()
        .map(|p| {
            if p.is_empty() {
                Err("Prerelease is empty".to_string())
            } else if only(p, |c| c.is_ascii_digit()) {
                if p.len() > 1 && p.starts_with('0') {
                    return Err(format!(
                        "Numeric PreRelease version must not contain leading zeroes {p:?}"
                    ));
                }
                crate::rules::strconv::parse_uint(p).map(Prerelease::Number)
            } else if only(p, alphanumeric) {
                Ok(Prerelease::Text(p.to_string()))
            } else {
                Err(format!("Invalid character(s) found in prerelease {p:?}"))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    for b in build {
        if b.is_empty() {
            return Err("Build meta data is empty".to_string());
        }
        if !only(b, alphanumeric) {
            return Err(format!(
                "Invalid character(s) found in build meta data {b:?}"
            ));
        }
    }
    Ok(Version {
        major,
        minor,
        patch,
        pre,
    })
}

/// The library's `normalizeAndParse`: no leading `v`, leading zeros dropped from each part,
/// missing minor and patch numbers filled with 0.
fn normalize_and_parse(text: &str) -> Result<Version, String> {
    let text = text.strip_prefix('v').unwrap_or(text);
    let mut parts: Vec<String> = text
        .splitn(3, '.')
        .map(|p| {
            if p.len() <= 1 {
                return p.to_string();
            }
            let trimmed = p.trim_start_matches('0');
            if trimmed.is_empty() || !trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                format!("0{trimmed}")
            } else {
                trimmed.to_string()
            }
        })
        .collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".into());
        }
        parts.resize(3, "0".to_string());
    }
    parse(&parts.join("."))
}

/// blang/semver's `Compare`: numbers, then prerelease (none sorts above any).
fn compare(a: &Version, b: &Version) -> Ordering {
    let numbers = (a.major, a.minor, a.patch).cmp(&(b.major, b.minor, b.patch));
    if numbers != Ordering::Equal {
        return numbers;
    }
    match (a.pre.is_empty(), b.pre.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    for (x, y) in a.pre.iter().zip(&b.pre) {
        let order = match (x, y) {
            (Prerelease::Number(_), Prerelease::Text(_)) => Ordering::Less,
            (Prerelease::Text(_), Prerelease::Number(_)) => Ordering::Greater,
            (Prerelease::Number(m), Prerelease::Number(n)) => m.cmp(n),
            (Prerelease::Text(m), Prerelease::Text(n)) => m.cmp(n),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    a.pre.len().cmp(&b.pre.len())
}

/// Adds the functions to `env`.
pub(crate) fn add(env: &mut Env) -> Result<(), DeclarationError> {
    let semver = Type::new_opaque_type(SEMVER);
    env.add_overload("semver", "string_to_semver", vec![STRING_TYPE], to_semver)?;
    env.add_overload(
        "semver",
        "string_bool_to_semver",
        vec![STRING_TYPE, BOOL_TYPE],
        to_semver,
    )?;
    env.add_overload("isSemver", "is_semver_string", vec![STRING_TYPE], is_semver)?;
    env.add_overload(
        "isSemver",
        "is_semver_string_bool",
        vec![STRING_TYPE, BOOL_TYPE],
        is_semver,
    )?;
    let members: [(&str, &str, Vec<Type>, cel::common::functions::Function); 6] = [
        ("major", "semver_major", vec![], major),
        ("minor", "semver_minor", vec![], minor),
        ("patch", "semver_patch", vec![], patch),
        (
            "isGreaterThan",
            "semver_is_greater_than",
            vec![semver.to_owned()],
            greater,
        ),
        (
            "isLessThan",
            "semver_is_less_than",
            vec![semver.to_owned()],
            less,
        ),
        (
            "compareTo",
            "semver_compare_to",
            vec![semver.to_owned()],
            compare_to,
        ),
    ];
    for (name, id, args, f) in members {
        env.add_member_overload(name, id, semver.to_owned(), args, f)?;
    }
    Ok(())
}

/// The text and the `normalize` flag of `semver(...)`/`isSemver(...)`.
fn parse_args(
    args: &[CowVal<'_, '_>],
    function: &str,
) -> Result<Result<Version, String>, ExecutionError> {
    let text = string_arg(args, 0, function)?;
    let normalize = match args.len() {
        1 => false,
        _ => matches!(arg(args, 1)?, Value::Bool(true)),
    };
    Ok(if normalize {
        normalize_and_parse(&text)
    } else {
        parse(&text)
    })
}

fn to_semver<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let version =
        parse_args(&args, "semver")?.map_err(|e| ExecutionError::function_error("semver", e))?;
    out(Value::Opaque(Arc::new(version)))
}

fn is_semver<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Bool(parse_args(&args, "isSemver")?.is_ok()))
}

fn version_arg(
    args: &[CowVal<'_, '_>],
    i: usize,
    function: &str,
) -> Result<Version, ExecutionError> {
    match arg(args, i)? {
        Value::Opaque(o) => o
            .downcast_ref::<Version>()
            .cloned()
            .ok_or_else(|| ExecutionError::no_such_overload(function, vec![])),
        _ => Err(ExecutionError::no_such_overload(function, vec![])),
    }
}

fn int_of(n: u64) -> Value {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

fn major<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(int_of(version_arg(&args, 0, "major")?.major))
}

fn minor<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(int_of(version_arg(&args, 0, "minor")?.minor))
}

fn patch<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(int_of(version_arg(&args, 0, "patch")?.patch))
}

fn order(args: &[CowVal<'_, '_>], function: &str) -> Result<Ordering, ExecutionError> {
    Ok(compare(
        &version_arg(args, 0, function)?,
        &version_arg(args, 1, function)?,
    ))
}

fn greater<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Bool(order(&args, "isGreaterThan")?.is_gt()))
}

fn less<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Bool(order(&args, "isLessThan")?.is_lt()))
}

fn compare_to<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Int(order(&args, "compareTo")? as i64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("1.2.3", Ok(()))]
    #[case("1.2.3-alpha.1+build.5", Ok(()))]
    #[case("", Err("Version string empty"))]
    #[case("1.2", Err("No Major.Minor.Patch elements found"))]
    #[case("v1.2.3", Err("Invalid character(s) found in major number \"v1\""))]
    #[case("01.2.3", Err("Major number must not contain leading zeroes \"01\""))]
    #[case("1.2.03", Err("Patch number must not contain leading zeroes \"03\""))]
    #[case(
        "1.2.3-01",
        Err("Numeric PreRelease version must not contain leading zeroes \"01\"")
    )]
    #[case("1.2.3-a..b", Err("Prerelease is empty"))]
    #[case(
        "1.2.3+a_b",
        Err("Invalid character(s) found in build meta data \"a_b\"")
    )]
    fn versions_parse_as_blang_semver_parses_them(
        #[case] text: &str,
        #[case] expected: Result<(), &str>,
    ) {
        assert_eq!(parse(text).map(|_| ()), expected.map_err(str::to_string));
    }

    #[rstest]
    #[case("v1.0", "1.0.0")]
    #[case("01.01.01", "1.1.1")]
    #[case("2", "2.0.0")]
    fn normalizing_fills_and_trims(#[case] text: &str, #[case] same_as: &str) {
        assert_eq!(normalize_and_parse(text), parse(same_as));
    }

    #[rstest]
    #[case("1.0.0", "2.0.0", Ordering::Less)]
    #[case("1.0.0-alpha", "1.0.0", Ordering::Less)]
    #[case("1.0.0-alpha.1", "1.0.0-alpha.beta", Ordering::Less)]
    #[case("1.0.0-beta.11", "1.0.0-beta.2", Ordering::Greater)]
    #[case("1.0.0+a", "1.0.0+b", Ordering::Equal)]
    fn versions_order_as_semver_orders_them(
        #[case] a: &str,
        #[case] b: &str,
        #[case] expected: Ordering,
    ) {
        assert_eq!(compare(&parse(a).unwrap(), &parse(b).unwrap()), expected);
    }
}
