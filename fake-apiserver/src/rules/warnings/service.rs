//! A Service's warnings (`pkg/api/service/warnings.go`, `GetWarningsForService`, which the
//! Service strategy gives on create and on every update): deprecated annotations and fields,
//! fields a headless or `ExternalName` Service ignores, and addresses written in a form other
//! than the standard one (`GetWarningsForIP`, `GetWarningsForCIDR` of
//! `apimachinery/pkg/util/validation`).
//!
//! The address checks see only what this server's validation let through: it parses addresses
//! strictly (no leading zeros), so the warnings for leading zeros that a real server gives
//! (its legacy fields parse them sloppily) do not arise here; IPv4-mapped IPv6 addresses,
//! IPv6 addresses not in RFC 5952 form and CIDR values with host bits set do.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde_json::Value;

use super::{arr, str_of};

/// `api.DeprecatedAnnotationTopologyAwareHints` and its replacement, `api.AnnotationTopologyMode`.
const TOPOLOGY_AWARE_HINTS: &str = "service.kubernetes.io/topology-aware-hints";
const TOPOLOGY_MODE: &str = "service.kubernetes.io/topology-mode";

/// `GetWarningsForService` of a Service (defaults filled in).
pub fn warnings(service: &Value) -> Vec<String> {
    let spec = &service["spec"];
    let mut warnings = Vec::new();
    if service["metadata"]["annotations"]
        .get(TOPOLOGY_AWARE_HINTS)
        .is_some()
    {
        warnings.push(format!(
            "annotation {TOPOLOGY_AWARE_HINTS} is deprecated, please use {TOPOLOGY_MODE} instead"
        ));
    }
    let cluster_ip = str_of(spec, "clusterIP");
    // `helper.IsServiceIPSet`.
    if !cluster_ip.is_empty() && cluster_ip != "None" {
        for (i, ip) in arr(spec, "clusterIPs").iter().enumerate() {
            warnings.extend(ip_warnings(
                &format!("spec.clusterIPs[{i}]"),
                ip.as_str().unwrap_or_default(),
            ));
        }
    }
    let service_type = str_of(spec, "type");
    let headless = service_type == "ClusterIP" && cluster_ip == "None";
    let external_ips = arr(spec, "externalIPs");
    let load_balancer_ip = str_of(spec, "loadBalancerIP");
    if headless {
        if !load_balancer_ip.is_empty() {
            warnings.push("spec.loadBalancerIP is ignored for headless services".into());
        }
        if !external_ips.is_empty() {
            warnings.push("spec.externalIPs is ignored for headless services".into());
        }
        if str_of(spec, "sessionAffinity") != "None" {
            warnings.push("spec.SessionAffinity is ignored for headless services".into());
        }
    }
    for (i, ip) in external_ips.iter().enumerate() {
        warnings.extend(ip_warnings(
            &format!("spec.externalIPs[{i}]"),
            ip.as_str().unwrap_or_default(),
        ));
    }
    if !external_ips.is_empty() && !headless && service_type != "ExternalName" {
        warnings.push(
            "spec.externalIPs is deprecated and may no longer be implemented in some clusters"
                .into(),
        );
    }
    if !load_balancer_ip.is_empty() {
        warnings.extend(ip_warnings("spec.loadBalancerIP", load_balancer_ip));
    }
    for (i, cidr) in arr(spec, "loadBalancerSourceRanges").iter().enumerate() {
        warnings.extend(cidr_warnings(
            &format!("spec.loadBalancerSourceRanges[{i}]"),
            cidr.as_str().unwrap_or_default(),
        ));
    }
    if service_type == "ExternalName" && !external_ips.is_empty() {
        warnings.push("spec.externalIPs is ignored when spec.type is \"ExternalName\"".into());
    }
    if service_type != "ExternalName" && !str_of(spec, "externalName").is_empty() {
        warnings.push("spec.externalName is ignored when spec.type is not \"ExternalName\"".into());
    }
    if str_of(spec, "trafficDistribution") == "PreferClose" {
        warnings.push(
            "spec.trafficDistribution: \"PreferClose\" is deprecated; use \"PreferSameZone\""
                .into(),
        );
    }
    warnings
}

/// `GetWarningsForIP` of an address this server accepted (nothing for one it cannot parse).
fn ip_warnings(path: &str, value: &str) -> Vec<String> {
    let Ok(ip) = value.parse::<IpAddr>() else {
        return Vec::new();
    };
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => vec![format!(
                "{path}: non-standard IP address \"{value}\" will be considered invalid in a future Kubernetes release: use \"{v4}\""
            )],
            None if v6.to_string() != value => vec![format!(
                "{path}: IPv6 address \"{value}\" should be in RFC 5952 canonical format (\"{v6}\")"
            )],
            None => Vec::new(),
        },
        IpAddr::V4(_) => Vec::new(),
    }
}

/// `GetWarningsForCIDR` of a CIDR value this server accepted (nothing for one it cannot parse;
/// an IPv4-mapped IPv6 prefix is left alone).
fn cidr_warnings(path: &str, value: &str) -> Vec<String> {
    let Some((ip, bits)) = value
        .split_once('/')
        .and_then(|(ip, bits)| Some((ip.parse::<IpAddr>().ok()?, bits.parse::<u8>().ok()?)))
    else {
        return Vec::new();
    };
    let (network, width) = match ip {
        IpAddr::V4(v4) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            (IpAddr::V4(Ipv4Addr::from(u32::from(v4) & mask)), 32)
        }
        IpAddr::V6(v6) if bits <= 128 && v6.to_ipv4_mapped().is_none() => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            (IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask)), 128)
        }
        _ => return Vec::new(),
    };
    if network != ip {
        return vec![format!(
            "{path}: CIDR value \"{value}\" is ambiguous in this context (should be \"{network}/{bits}\" or \"{ip}/{width}\"?)"
        )];
    }
    let canonical = format!("{ip}/{bits}");
    if ip.is_ipv6() && canonical != value {
        return vec![format!(
            "{path}: IPv6 CIDR value \"{value}\" should be in RFC 5952 canonical format (\"{canonical}\")"
        )];
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    //! Each case: a defaulted Service and the warnings a real server gives for it.

    use rstest::rstest;
    use serde_json::{json, Value};

    use super::*;

    fn service(spec: Value) -> Value {
        let mut spec = spec;
        for (key, default) in [
            ("type", json!("ClusterIP")),
            ("sessionAffinity", json!("None")),
        ] {
            if spec.get(key).is_none() {
                spec[key] = default;
            }
        }
        json!({"metadata": {"name": "s"}, "spec": spec})
    }

    #[rstest]
    #[case::plain(service(json!({"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"]})), vec![])]
    #[case::external_ips(service(json!({"clusterIP": "10.96.0.10", "externalIPs": ["192.0.2.4"]})),
        vec!["spec.externalIPs is deprecated and may no longer be implemented in some clusters"])]
    #[case::headless(service(json!({"clusterIP": "None", "externalIPs": ["192.0.2.4"],
            "loadBalancerIP": "192.0.2.5", "sessionAffinity": "ClientIP"})),
        vec!["spec.loadBalancerIP is ignored for headless services",
            "spec.externalIPs is ignored for headless services",
            "spec.SessionAffinity is ignored for headless services"])]
    #[case::external_name(service(json!({"type": "ExternalName", "externalName": "db.example.com",
            "externalIPs": ["192.0.2.4"]})),
        vec!["spec.externalIPs is ignored when spec.type is \"ExternalName\""])]
    #[case::stray_external_name(service(json!({"clusterIP": "10.96.0.10", "externalName": "x.example.com"})),
        vec!["spec.externalName is ignored when spec.type is not \"ExternalName\""])]
    #[case::prefer_close(service(json!({"clusterIP": "10.96.0.10", "trafficDistribution": "PreferClose"})),
        vec!["spec.trafficDistribution: \"PreferClose\" is deprecated; use \"PreferSameZone\""])]
    #[case::prefer_same_zone(service(json!({"clusterIP": "10.96.0.10", "trafficDistribution": "PreferSameZone"})), vec![])]
    #[case::non_canonical_ipv6(service(json!({"clusterIP": "2001:DB8::A", "clusterIPs": ["2001:DB8::A"]})),
        vec!["spec.clusterIPs[0]: IPv6 address \"2001:DB8::A\" should be in RFC 5952 canonical format (\"2001:db8::a\")"])]
    #[case::mapped_ipv4(service(json!({"type": "LoadBalancer", "clusterIP": "10.96.0.10", "loadBalancerIP": "::ffff:192.0.2.7"})),
        vec!["spec.loadBalancerIP: non-standard IP address \"::ffff:192.0.2.7\" will be considered invalid in a future Kubernetes release: use \"192.0.2.7\""])]
    #[case::ambiguous_cidr(service(json!({"type": "LoadBalancer", "clusterIP": "10.96.0.10",
            "loadBalancerSourceRanges": ["10.0.0.1/24", "10.1.0.0/16", "2001:db8::1/64", "2001:DB8::/64"]})),
        vec!["spec.loadBalancerSourceRanges[0]: CIDR value \"10.0.0.1/24\" is ambiguous in this context (should be \"10.0.0.0/24\" or \"10.0.0.1/32\"?)",
            "spec.loadBalancerSourceRanges[2]: CIDR value \"2001:db8::1/64\" is ambiguous in this context (should be \"2001:db8::/64\" or \"2001:db8::1/128\"?)",
            "spec.loadBalancerSourceRanges[3]: IPv6 CIDR value \"2001:DB8::/64\" should be in RFC 5952 canonical format (\"2001:db8::/64\")"])]
    fn services_warn_as_a_real_server_does(#[case] service: Value, #[case] expected: Vec<&str>) {
        assert_eq!(warnings(&service), expected);
    }

    #[test]
    fn the_topology_hints_annotation_is_deprecated() {
        let mut s = service(json!({"clusterIP": "10.96.0.10"}));
        s["metadata"]["annotations"] = json!({TOPOLOGY_AWARE_HINTS: "auto"});
        assert_eq!(
            warnings(&s),
            vec!["annotation service.kubernetes.io/topology-aware-hints is deprecated, please use service.kubernetes.io/topology-mode instead"]
        );
    }
}
