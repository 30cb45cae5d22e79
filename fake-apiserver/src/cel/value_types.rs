//! The Kubernetes CEL libraries over value types (`k8s.io/apiserver/pkg/cel/library`):
//! `quantity` (`kubernetes.Quantity`), `ip` (`net.IP`) and `cidr` (`net.CIDR`), with their
//! functions and error texts. CRD rules such as `quantity(self.memory).isLessThan(
//! quantity('64Gi'))` or `isCIDR(self.podCIDR)` run as on a real server; without these, every
//! object of such a CRD was refused with `no such attribute(s)`.

use std::net::IpAddr;
use std::sync::Arc;

use cel::common::types::{Type, INT_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::objects::Opaque;
use cel::{DeclarationError, Env, ExecutionError, Value};

use crate::rules::quantity::{Quantity, QUANTITY_FORMAT_ERROR};
use crate::rules::request_uri::{self, RequestUri};

const QUANTITY: &str = "kubernetes.Quantity";
const IP: &str = "net.IP";
const CIDR: &str = "net.CIDR";
const URL: &str = "kubernetes.URL";
const NANO: i128 = 1_000_000_000;

/// A `kubernetes.Quantity`; equal when the amounts are (`Quantity.Equal`).
#[derive(Debug, Clone, Copy)]
struct CelQuantity(Quantity);

impl PartialEq for CelQuantity {
    fn eq(&self, other: &Self) -> bool {
        self.0.nanos() == other.0.nanos()
    }
}
impl Eq for CelQuantity {}
impl Opaque for CelQuantity {
    fn runtime_type_name(&self) -> &str {
        QUANTITY
    }
}

/// A `net.IP` (an address without zone, never IPv4-mapped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CelIp(IpAddr);
impl Opaque for CelIp {
    fn runtime_type_name(&self) -> &str {
        IP
    }
}

/// A `net.CIDR`: the address as written and the prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CelCidr {
    address: IpAddr,
    bits: u8,
}
impl Opaque for CelCidr {
    fn runtime_type_name(&self) -> &str {
        CIDR
    }
}

/// A `kubernetes.URL`: a request URI (`url.ParseRequestURI` accepted it), its fragment dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CelUrl(RequestUri);
impl Opaque for CelUrl {
    fn runtime_type_name(&self) -> &str {
        URL
    }
}

/// Adds the functions to `env`.
pub(crate) fn add(env: &mut Env) -> Result<(), DeclarationError> {
    let quantity = Type::new_opaque_type(QUANTITY);
    let ip = Type::new_opaque_type(IP);
    let cidr = Type::new_opaque_type(CIDR);
    let url = Type::new_opaque_type(URL);
    let globals: Vec<(&str, &str, Vec<Type>, cel::common::functions::Function)> = vec![
        (
            "quantity",
            "string_to_quantity",
            vec![STRING_TYPE],
            to_quantity,
        ),
        (
            "isQuantity",
            "is_quantity_string",
            vec![STRING_TYPE],
            is_quantity,
        ),
        ("ip", "string_to_ip", vec![STRING_TYPE], to_ip),
        ("isIP", "is_ip", vec![STRING_TYPE], is_ip),
        (
            "ip.isCanonical",
            "ip_is_canonical",
            vec![STRING_TYPE],
            ip_is_canonical,
        ),
        ("string", "ip_to_string", vec![ip.to_owned()], ip_to_string),
        ("cidr", "string_to_cidr", vec![STRING_TYPE], to_cidr),
        ("isCIDR", "is_cidr", vec![STRING_TYPE], is_cidr),
        (
            "string",
            "cidr_to_string",
            vec![cidr.to_owned()],
            cidr_to_string,
        ),
        ("url", "string_to_url", vec![STRING_TYPE], to_url),
        ("isURL", "is_url_string", vec![STRING_TYPE], is_url),
    ];
    for (name, id, args, f) in globals {
        env.add_overload(name, id, args, f)?;
    }
    let members: Vec<MemberOverload<'_>> = vec![
        ("sign", "quantity_sign", quantity.to_owned(), vec![], sign),
        (
            "isInteger",
            "quantity_is_integer",
            quantity.to_owned(),
            vec![],
            q_is_integer,
        ),
        (
            "asInteger",
            "quantity_as_integer",
            quantity.to_owned(),
            vec![],
            as_integer,
        ),
        (
            "asApproximateFloat",
            "quantity_as_float",
            quantity.to_owned(),
            vec![],
            as_float,
        ),
        (
            "add",
            "quantity_add",
            quantity.to_owned(),
            vec![quantity.to_owned()],
            add_quantity,
        ),
        (
            "add",
            "quantity_add_int",
            quantity.to_owned(),
            vec![INT_TYPE],
            add_quantity,
        ),
        (
            "sub",
            "quantity_sub",
            quantity.to_owned(),
            vec![quantity.to_owned()],
            sub_quantity,
        ),
        (
            "sub",
            "quantity_sub_int",
            quantity.to_owned(),
            vec![INT_TYPE],
            sub_quantity,
        ),
        (
            "isLessThan",
            "quantity_less",
            quantity.to_owned(),
            vec![quantity.to_owned()],
            less,
        ),
        (
            "isGreaterThan",
            "quantity_greater",
            quantity.to_owned(),
            vec![quantity.to_owned()],
            greater,
        ),
        (
            "compareTo",
            "quantity_compare",
            quantity.to_owned(),
            vec![quantity],
            compare_to,
        ),
        ("family", "ip_family", ip.to_owned(), vec![], family),
        (
            "isUnspecified",
            "ip_is_unspecified",
            ip.to_owned(),
            vec![],
            is_unspecified,
        ),
        (
            "isLoopback",
            "ip_is_loopback",
            ip.to_owned(),
            vec![],
            is_loopback,
        ),
        (
            "isLinkLocalMulticast",
            "ip_is_link_local_multicast",
            ip.to_owned(),
            vec![],
            is_link_local_multicast,
        ),
        (
            "isLinkLocalUnicast",
            "ip_is_link_local_unicast",
            ip.to_owned(),
            vec![],
            is_link_local_unicast,
        ),
        (
            "isGlobalUnicast",
            "ip_is_global_unicast",
            ip.to_owned(),
            vec![],
            is_global_unicast,
        ),
        (
            "containsIP",
            "cidr_contains_ip_string",
            cidr.to_owned(),
            vec![STRING_TYPE],
            contains_ip,
        ),
        (
            "containsIP",
            "cidr_contains_ip_ip",
            cidr.to_owned(),
            vec![ip],
            contains_ip,
        ),
        (
            "containsCIDR",
            "cidr_contains_cidr_string",
            cidr.to_owned(),
            vec![STRING_TYPE],
            contains_cidr,
        ),
        (
            "containsCIDR",
            "cidr_contains_cidr",
            cidr.to_owned(),
            vec![cidr.to_owned()],
            contains_cidr,
        ),
        ("ip", "cidr_ip", cidr.to_owned(), vec![], cidr_ip),
        ("masked", "cidr_masked", cidr.to_owned(), vec![], masked),
        (
            "prefixLength",
            "cidr_prefix_length",
            cidr,
            vec![],
            prefix_length,
        ),
        (
            "getScheme",
            "url_get_scheme",
            url.to_owned(),
            vec![],
            get_scheme,
        ),
        ("getHost", "url_get_host", url.to_owned(), vec![], get_host),
        (
            "getHostname",
            "url_get_hostname",
            url.to_owned(),
            vec![],
            get_hostname,
        ),
        ("getPort", "url_get_port", url.to_owned(), vec![], get_port),
        (
            "getEscapedPath",
            "url_get_escaped_path",
            url.to_owned(),
            vec![],
            get_escaped_path,
        ),
        ("getQuery", "url_get_query", url, vec![], get_query),
    ];
    add_members(env, members)
}

/// A member function's overload: name, overload id, receiver type, argument types, body.
pub(crate) type MemberOverload<'a> = (
    &'a str,
    &'a str,
    Type,
    Vec<Type>,
    cel::common::functions::Function,
);

/// Declares each of `members` in `env`.
pub(crate) fn add_members(
    env: &mut Env,
    members: Vec<MemberOverload<'_>>,
) -> Result<(), DeclarationError> {
    for (name, id, target, args, f) in members {
        env.add_member_overload(name, id, target, args, f)?;
    }
    Ok(())
}

pub(super) type Answer<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

pub(super) fn out<'b, 'v>(v: Value) -> Answer<'b, 'v> {
    let boxed: Box<dyn Val> = v.try_into()?;
    Ok(CowVal::Owned(boxed))
}

pub(super) fn opaque<'b, 'v>(v: impl Opaque) -> Answer<'b, 'v> {
    out(Value::Opaque(Arc::new(v)))
}

pub(super) fn arg(args: &[CowVal<'_, '_>], i: usize) -> Result<Value, ExecutionError> {
    args.get(i)
        .ok_or_else(|| ExecutionError::no_such_overload("argument", vec![]))
        .and_then(|a| Value::try_from(a.as_ref()))
}

pub(super) fn string_arg(
    args: &[CowVal<'_, '_>],
    i: usize,
    function: &str,
) -> Result<String, ExecutionError> {
    match arg(args, i)? {
        Value::String(s) => Ok(s.to_string()),
        _ => Err(ExecutionError::no_such_overload(function, vec![])),
    }
}

pub(super) fn typed<T: Clone + 'static>(
    args: &[CowVal<'_, '_>],
    i: usize,
    function: &str,
) -> Result<T, ExecutionError> {
    match arg(args, i)? {
        Value::Opaque(o) => o
            .downcast_ref::<T>()
            .cloned()
            .ok_or_else(|| ExecutionError::no_such_overload(function, vec![])),
        _ => Err(ExecutionError::no_such_overload(function, vec![])),
    }
}

// ---- quantity ----

fn to_quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let text = string_arg(&args, 0, "quantity")?;
    match Quantity::parse(&text) {
        Some(q) => opaque(CelQuantity(q)),
        None => Err(ExecutionError::function_error(
            "quantity",
            QUANTITY_FORMAT_ERROR,
        )),
    }
}

fn is_quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Bool(
        Quantity::parse(&string_arg(&args, 0, "isQuantity")?).is_some(),
    ))
}

fn quantity_arg(
    args: &[CowVal<'_, '_>],
    i: usize,
    function: &str,
) -> Result<Quantity, ExecutionError> {
    typed::<CelQuantity>(args, i, function).map(|q| q.0)
}

fn sign<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Int(
        quantity_arg(&args, 0, "sign")?.nanos().signum() as i64
    ))
}

/// `Quantity.AsInt64`: a whole amount that fits an int64.
fn as_int64(q: &Quantity) -> Option<i64> {
    (q.nanos() % NANO == 0)
        .then(|| i64::try_from(q.nanos() / NANO).ok())
        .flatten()
}

fn q_is_integer<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Bool(
        as_int64(&quantity_arg(&args, 0, "isInteger")?).is_some(),
    ))
}

fn as_integer<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    match as_int64(&quantity_arg(&args, 0, "asInteger")?) {
        Some(n) => out(Value::Int(n)),
        None => Err(ExecutionError::function_error(
            "asInteger",
            "cannot convert value to integer",
        )),
    }
}

fn as_float<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let q = quantity_arg(&args, 0, "asApproximateFloat")?;
    out(Value::Float(q.nanos() as f64 / NANO as f64))
}

/// The right-hand side of `add`/`sub`: a quantity, or an integer (a `DecimalExponent` one).
fn operand(args: &[CowVal<'_, '_>], function: &str) -> Result<i128, ExecutionError> {
    match arg(args, 1)? {
        Value::Int(n) => Ok(i128::from(n) * NANO),
        _ => quantity_arg(args, 1, function).map(|q| q.nanos()),
    }
}

fn add_quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let q = quantity_arg(&args, 0, "add")?;
    let rhs = operand(&args, "add")?;
    opaque(CelQuantity(Quantity::from_nanos(q.nanos() + rhs, q.format)))
}

fn sub_quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let q = quantity_arg(&args, 0, "sub")?;
    let rhs = operand(&args, "sub")?;
    opaque(CelQuantity(Quantity::from_nanos(q.nanos() - rhs, q.format)))
}

fn cmp(args: &[CowVal<'_, '_>], function: &str) -> Result<std::cmp::Ordering, ExecutionError> {
    let a = quantity_arg(args, 0, function)?;
    let b = quantity_arg(args, 1, function)?;
    Ok(a.nanos().cmp(&b.nanos()))
}

fn less<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Bool(cmp(&args, "isLessThan")?.is_lt()))
}

fn greater<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Bool(cmp(&args, "isGreaterThan")?.is_gt()))
}

fn compare_to<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Int(cmp(&args, "compareTo")? as i64))
}

// ---- ip ----

/// `parseIPAddr`: `netip.ParseAddr` as the library takes it, then no zone and no IPv4-mapped
/// IPv6 address.
fn parse_ip(text: &str) -> Result<IpAddr, String> {
    let quoted = crate::rules::validation::go_quote(text);
    let (address, zone) = crate::rules::netip::parse_addr(text).map_err(|e| {
        format!("IP Address {quoted} parse error during conversion from string: {e}")
    })?;
    if !zone.is_empty() {
        return Err(format!(
            "IP address {quoted} with zone value is not allowed"
        ));
    }
    if let IpAddr::V6(v6) = address {
        if v6.to_ipv4_mapped().is_some() {
            return Err(format!("IPv4-mapped IPv6 address {quoted} is not allowed"));
        }
    }
    Ok(address)
}

fn to_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let text = string_arg(&args, 0, "ip")?;
    let address = parse_ip(&text).map_err(|e| ExecutionError::function_error("ip", e))?;
    opaque(CelIp(address))
}

fn is_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Bool(
        parse_ip(&string_arg(&args, 0, "isIP")?).is_ok(),
    ))
}

fn ip_is_canonical<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let text = string_arg(&args, 0, "ip.isCanonical")?;
    let address =
        parse_ip(&text).map_err(|e| ExecutionError::function_error("ip.isCanonical", e))?;
    out(Value::Bool(address.to_string() == text))
}

fn ip_arg(args: &[CowVal<'_, '_>], i: usize, function: &str) -> Result<IpAddr, ExecutionError> {
    typed::<CelIp>(args, i, function).map(|ip| ip.0)
}

fn ip_to_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::String(
        ip_arg(&args, 0, "string")?.to_string().into(),
    ))
}

fn family<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Int(match ip_arg(&args, 0, "family")? {
        IpAddr::V4(_) => 4,
        IpAddr::V6(_) => 6,
    }))
}

fn is_unspecified<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Bool(
        ip_arg(&args, 0, "isUnspecified")?.is_unspecified(),
    ))
}

fn is_loopback<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Bool(ip_arg(&args, 0, "isLoopback")?.is_loopback()))
}

/// `netip.Addr.IsLinkLocalMulticast`: 224.0.0.0/24, ff02::/16.
fn link_local_multicast(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }
}

/// `netip.Addr.IsLinkLocalUnicast`: 169.254.0.0/16, fe80::/10.
fn link_local_unicast(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => v4.octets()[..2] == [169, 254],
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

fn is_link_local_multicast<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Bool(link_local_multicast(ip_arg(
        &args,
        0,
        "isLinkLocalMulticast",
    )?)))
}

fn is_link_local_unicast<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Bool(link_local_unicast(ip_arg(
        &args,
        0,
        "isLinkLocalUnicast",
    )?)))
}

/// `netip.Addr.IsGlobalUnicast`: not unspecified, loopback, multicast, link-local or the IPv4
/// broadcast address (private addresses are global unicast).
fn is_global_unicast<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let address = ip_arg(&args, 0, "isGlobalUnicast")?;
    let broadcast = matches!(address, IpAddr::V4(v4) if v4.is_broadcast());
    out(Value::Bool(
        !address.is_unspecified()
            && !address.is_loopback()
            && !address.is_multicast()
            && !link_local_unicast(address)
            && !broadcast,
    ))
}

// ---- cidr ----

/// `netip.ParsePrefix` as the library takes it: an address (no zone, not IPv4-mapped) and a
/// decimal prefix length without leading zeros, within the family's bits.
/// `parseCIDR`: `netip.ParsePrefix`, then no IPv4-mapped IPv6 address.
fn parse_cidr(text: &str) -> Result<CelCidr, String> {
    let (address, bits) = crate::rules::netip::parse_prefix(text)
        .map_err(|e| format!("network address parse error during conversion from string: {e}"))?;
    if let IpAddr::V6(v6) = address {
        if v6.to_ipv4_mapped().is_some() {
            let quoted = crate::rules::validation::go_quote(text);
            return Err(format!("IPv4-mapped IPv6 address {quoted} is not allowed"));
        }
    }
    Ok(CelCidr { address, bits })
}

fn to_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let text = string_arg(&args, 0, "cidr")?;
    let cidr = parse_cidr(&text).map_err(|e| ExecutionError::function_error("cidr", e))?;
    opaque(cidr)
}

fn is_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Bool(
        parse_cidr(&string_arg(&args, 0, "isCIDR")?).is_ok(),
    ))
}

/// The address with the bits beyond the prefix cleared.
fn mask(address: IpAddr, bits: u8) -> IpAddr {
    match address {
        IpAddr::V4(v4) => {
            let keep = if bits == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(bits))
            };
            IpAddr::V4((u32::from(v4) & keep).into())
        }
        IpAddr::V6(v6) => {
            let keep = if bits == 0 {
                0
            } else {
                u128::MAX << (128 - u32::from(bits))
            };
            IpAddr::V6((u128::from(v6) & keep).into())
        }
    }
}

fn cidr_arg(args: &[CowVal<'_, '_>], i: usize, function: &str) -> Result<CelCidr, ExecutionError> {
    typed::<CelCidr>(args, i, function)
}

fn cidr_to_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let cidr = cidr_arg(&args, 0, "string")?;
    out(Value::String(
        format!("{}/{}", cidr.address, cidr.bits).into(),
    ))
}

/// `Prefix.Contains`: the same family, and equal under the prefix's mask.
fn contains(cidr: CelCidr, address: IpAddr) -> bool {
    cidr.address.is_ipv4() == address.is_ipv4()
        && mask(cidr.address, cidr.bits) == mask(address, cidr.bits)
}

fn contains_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let cidr = cidr_arg(&args, 0, "containsIP")?;
    let address = match arg(&args, 1)? {
        Value::String(s) => {
            parse_ip(&s).map_err(|e| ExecutionError::function_error("containsIP", e))?
        }
        _ => ip_arg(&args, 1, "containsIP")?,
    };
    out(Value::Bool(contains(cidr, address)))
}

fn contains_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let cidr = cidr_arg(&args, 0, "containsCIDR")?;
    let other = match arg(&args, 1)? {
        Value::String(s) => {
            parse_cidr(&s).map_err(|e| ExecutionError::function_error("containsCIDR", e))?
        }
        _ => cidr_arg(&args, 1, "containsCIDR")?,
    };
    out(Value::Bool(
        other.bits >= cidr.bits && contains(cidr, other.address),
    ))
}

fn cidr_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    opaque(CelIp(cidr_arg(&args, 0, "ip")?.address))
}

fn masked<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let cidr = cidr_arg(&args, 0, "masked")?;
    opaque(CelCidr {
        address: mask(cidr.address, cidr.bits),
        bits: cidr.bits,
    })
}

fn prefix_length<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Int(i64::from(
        cidr_arg(&args, 0, "prefixLength")?.bits,
    )))
}

// ---- url ----

/// `url(string)`: checked by `url.ParseRequestURI`, then read without its fragment, as the
/// library parses it again with `url.Parse`.
fn parse_url(text: &str) -> Result<RequestUri, String> {
    // `*url.Error` quotes the URL with `strconv.Quote`.
    let error = |why: &str| {
        let quoted = crate::rules::validation::go_quote(text);
        format!("URL parse error during conversion from string: parse {quoted}: {why}")
    };
    request_uri::parse(text).map_err(error)?;
    let without_fragment = text.split('#').next().unwrap_or_default();
    request_uri::parse(without_fragment).map_err(error)
}

fn to_url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let text = string_arg(&args, 0, "url")?;
    let uri = parse_url(&text).map_err(|e| ExecutionError::function_error("url", e))?;
    opaque(CelUrl(uri))
}

fn is_url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    out(Value::Bool(
        request_uri::parse(&string_arg(&args, 0, "isURL")?).is_ok(),
    ))
}

fn url_arg(args: &[CowVal<'_, '_>], function: &str) -> Result<RequestUri, ExecutionError> {
    match arg(args, 0)? {
        Value::Opaque(o) => o
            .downcast_ref::<CelUrl>()
            .map(|u| u.0.clone())
            .ok_or_else(|| ExecutionError::no_such_overload(function, vec![])),
        _ => Err(ExecutionError::no_such_overload(function, vec![])),
    }
}

fn text<'b, 'v>(value: &str) -> Answer<'b, 'v> {
    out(Value::String(value.to_string().into()))
}

fn get_scheme<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    text(&url_arg(&args, "getScheme")?.scheme)
}

fn get_host<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    text(&url_arg(&args, "getHost")?.host)
}

fn get_hostname<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    text(url_arg(&args, "getHostname")?.hostname())
}

fn get_port<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    text(url_arg(&args, "getPort")?.port())
}

fn get_escaped_path<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    text(&url_arg(&args, "getEscapedPath")?.path)
}

fn get_query<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let query: std::collections::HashMap<String, Value> = url_arg(&args, "getQuery")?
        .query()
        .into_iter()
        .map(|(key, values)| {
            let values: Vec<Value> = values
                .into_iter()
                .map(|v| Value::String(v.into()))
                .collect();
            (key, Value::List(values.into()))
        })
        .collect();
    out(Value::from(query))
}
