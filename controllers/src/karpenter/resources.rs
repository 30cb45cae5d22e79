//! Resource quantities as far as the lifecycle needs them: "is this zero?" (Initialization's
//! device-plugin check) and "does this request fit?" (the providers' instance-type choice).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// Parses a Kubernetes quantity (`100m`, `2`, `1.5Gi`, `1e3`, `4k`) into a number. `None` for
/// anything unparsable.
pub fn parse_quantity(q: &str) -> Option<f64> {
    let q = q.trim();
    let split = q
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(q.len());
    let (number, suffix) = q.split_at(split);
    let number: f64 = number.parse().ok()?;
    let factor = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        s if s.starts_with(['e', 'E']) => 10f64.powi(s[1..].parse::<i32>().ok()?),
        _ => return None,
    };
    Some(number * factor)
}

/// `resources.IsZero`: a missing or zero quantity. An unparsable quantity counts as non-zero.
pub fn is_zero(q: Option<&Quantity>) -> bool {
    match q {
        None => true,
        Some(q) => parse_quantity(&q.0).is_some_and(|v| v == 0.0),
    }
}

/// `resources.Fits`: every request is at most the matching allocatable (a missing allocatable
/// fits only a zero request; an unparsable request never fits).
pub fn fits(
    requests: &BTreeMap<String, Quantity>,
    allocatable: &BTreeMap<String, Quantity>,
) -> bool {
    requests.iter().all(|(name, want)| {
        let Some(want) = parse_quantity(&want.0) else {
            return false;
        };
        let have = allocatable
            .get(name)
            .and_then(|q| parse_quantity(&q.0))
            .unwrap_or(0.0);
        want <= have
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("100m", Some(0.1))]
    #[case("2", Some(2.0))]
    #[case("1Gi", Some(1073741824.0))]
    #[case("1e3", Some(1000.0))]
    #[case("4k", Some(4000.0))]
    #[case("0", Some(0.0))]
    #[case("abc", None)]
    #[case("", None)]
    fn parses(#[case] q: &str, #[case] want: Option<f64>) {
        assert_eq!(parse_quantity(q), want);
    }

    #[rstest]
    #[case(None, true)]
    #[case(Some("0"), true)]
    #[case(Some("0Gi"), true)]
    #[case(Some("1"), false)]
    #[case(Some("garbage"), false)]
    fn zero(#[case] q: Option<&str>, #[case] want: bool) {
        assert_eq!(is_zero(q.map(|s| Quantity(s.into())).as_ref()), want);
    }

    #[test]
    fn fits_compares_each_request() {
        let m = |kv: &[(&str, &str)]| {
            kv.iter()
                .map(|(k, v)| (k.to_string(), Quantity(v.to_string())))
                .collect::<BTreeMap<_, _>>()
        };
        assert!(fits(&m(&[("cpu", "500m")]), &m(&[("cpu", "1")])));
        assert!(!fits(&m(&[("cpu", "2")]), &m(&[("cpu", "1")])));
        assert!(!fits(&m(&[("nvidia.com/gpu", "1")]), &m(&[("cpu", "1")])));
        assert!(fits(&m(&[]), &m(&[])));
    }
}
