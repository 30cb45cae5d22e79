//! The `eno.azure.io/v1` API types this controller reads and writes: Composition (namespaced),
//! Synthesizer (cluster scoped) and ResourceSlice (namespaced, the executor's output).
//!
//! Field names and JSON shapes follow upstream Eno's `api/v1` so that manifests written for Eno
//! load unchanged. Optional status fields are `Option`s that are omitted when empty, as Go's
//! `omitempty` does, because every write is a whole-object update of what was read.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The API group of every Eno resource.
pub const GROUP: &str = "eno.azure.io";

/// The CRDs of every Eno resource, in a stable order.
pub fn crds(
) -> Vec<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition>
{
    use kube::CustomResourceExt;
    vec![Composition::crd(), Synthesizer::crd(), ResourceSlice::crd()]
}

/// What a Composition asks for: which Synthesizer to run, and the inputs bound to it.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "eno.azure.io",
    version = "v1",
    kind = "Composition",
    namespaced,
    status = "CompositionStatus",
    shortname = "comp",
    printcolumn = r#"{"name":"Synthesizer","type":"string","jsonPath":".spec.synthesizer.name"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct CompositionSpec {
    /// The Synthesizer that turns this composition into resources.
    pub synthesizer: SynthesizerRef,
    /// Named references to input resources, matched to the Synthesizer's `refs` by key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bindings: Vec<Binding>,
}

/// A reference from a Composition to its Synthesizer.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SynthesizerRef {
    /// The Synthesizer's name (Synthesizers are cluster scoped).
    #[serde(default)]
    pub name: String,
    /// The lowest Synthesizer generation acceptable for this composition (set by the rollout
    /// controller to force a resynthesis).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_generation: i64,
}

/// Binds a Synthesizer ref key to a concrete resource.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    /// The key of the Synthesizer's ref this binding satisfies.
    pub key: String,
    /// The bound resource.
    pub resource: ResourceBinding,
}

/// The name and namespace of a bound resource.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceBinding {
    /// Name of the bound resource.
    pub name: String,
    /// Namespace of the bound resource (empty for cluster-scoped resources).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

/// The Composition's status: the synthesis in progress (or last completed) and the one before it.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompositionStatus {
    /// The current synthesis: in progress, or the latest one completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_synthesis: Option<Synthesis>,
    /// The synthesis before the current one, kept until the current one is synthesized so that
    /// the resources it produced are not orphaned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_synthesis: Option<Synthesis>,
}

/// One synthesis of a Composition: one or more pod attempts that produce one set of resources.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Synthesis {
    /// Identifies this synthesis; set by the lifecycle controller before the first pod.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uuid: String,
    /// The Composition generation this synthesis is for.
    #[serde(default)]
    pub observed_composition_generation: i64,
    /// The Synthesizer generation of the latest pod (status controller).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_synthesizer_generation: i64,
    /// Creation time of the latest pod attempt (status controller).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_creation: Option<Time>,
    /// Pods created for this synthesis so far (status controller; reset by the swap).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempts: i64,
    /// When the synthesis output was recorded (executor; faked by the deletion path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthesized: Option<Time>,
    /// When every resource was reconciled (eno-reconciler's aggregation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciled: Option<Time>,
    /// When every resource became ready (eno-reconciler's aggregation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<Time>,
    /// The ResourceSlices that hold this synthesis's output.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_slices: Vec<ResourceSliceRef>,
}

/// A reference to a ResourceSlice in the Composition's namespace.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct ResourceSliceRef {
    /// The ResourceSlice's name.
    pub name: String,
}

/// A program (a container image and a command) that turns a Composition into resources.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "eno.azure.io",
    version = "v1",
    kind = "Synthesizer",
    status = "SynthesizerStatus",
    shortname = "synth",
    printcolumn = r#"{"name":"Image","type":"string","jsonPath":".spec.image"}"#
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "duration(self.execTimeout) <= duration(self.podTimeout)",
    "message": "podTimeout must be greater than execTimeout"
}]))]
pub struct SynthesizerSpec {
    /// The container image holding the synthesizer program.
    pub image: String,
    /// The command run inside the image: a KRM function reading a ResourceList on stdin and
    /// writing one on stdout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("default" = ["synthesize"]))]
    pub command: Vec<String>,
    /// How long one run of `command` may take. The CRD defaults it to 10s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_duration"
    )]
    #[schemars(extend("default" = "10s"))]
    pub exec_timeout: Option<GoDuration>,
    /// How long a synthesizer pod may live before it is replaced. The CRD defaults it to 2m.
    /// `None` (a server that does not apply CRD defaults) means "no timeout".
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_duration"
    )]
    #[schemars(extend("default" = "2m"))]
    pub pod_timeout: Option<GoDuration>,
    /// How long the rollout controller waits between resynthesizing compositions after this
    /// Synthesizer changes. The CRD defaults it to 30s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_duration"
    )]
    #[schemars(extend("default" = "30s"))]
    pub rollout_cooldown: Option<GoDuration>,
    /// Inputs the synthesizer expects, bound by the Composition's `bindings`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refs: Vec<SynthesizerInputRef>,
}

/// An input a Synthesizer expects.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SynthesizerInputRef {
    /// The key a Composition binding uses to satisfy this ref.
    pub key: String,
    /// The kind of resource expected.
    pub resource: ResourceKind,
}

/// Group, version and kind of an input resource.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceKind {
    /// API group ("" for the core group).
    #[serde(default)]
    pub group: String,
    /// API version.
    #[serde(default)]
    pub version: String,
    /// Kind.
    pub kind: String,
}

/// The Synthesizer's status, written by the rollout controller.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SynthesizerStatus {
    /// When the rollout controller last started resynthesizing compositions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_rollout_time: Option<Time>,
    /// The Synthesizer generation that has been rolled out to every composition using it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub current_generation: i64,
}

/// A chunk of a synthesis's output: the manifests the reconciler applies.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "eno.azure.io",
    version = "v1",
    kind = "ResourceSlice",
    namespaced,
    status = "ResourceSliceStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSliceSpec {
    /// The Composition generation whose synthesis produced this slice.
    #[serde(default)]
    pub composition_generation: i64,
    /// The synthesis that produced this slice.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        rename = "synthesisUUID"
    )]
    pub synthesis_uuid: String,
    /// The manifests.
    #[serde(default)]
    pub resources: Vec<Manifest>,
}

/// One manifest in a ResourceSlice.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// The object, as JSON text.
    pub manifest: String,
    /// Set when the resource should be deleted rather than applied.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

/// The reconciler's per-resource status for a slice (not written by this port).
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSliceStatus {
    /// One entry per `spec.resources` item.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "resource_states_schema")]
    pub resources: Vec<serde_json::Value>,
}

/// The schema of `status.resources`: a list of objects this port keeps as they are. A real API
/// server refuses array items without a `type` ("must not be empty for specified array items"),
/// which is what a plain `serde_json::Value` would generate.
fn resource_states_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
    })
}

/// An optional Go duration that reads an unparsable value as unset (and logs it), so that one
/// Synthesizer with a malformed duration cannot stop the whole Synthesizer cache from decoding.
/// The CRD's `pattern` makes a real API server refuse such values in the first place.
fn lenient_duration<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<GoDuration>, D::Error> {
    let text: Option<String> = Option::deserialize(deserializer)?;
    Ok(text.and_then(|text| match GoDuration::parse(&text) {
        Ok(duration) => Some(duration),
        Err(e) => {
            tracing::warn!(error = %e, "ignoring a malformed duration");
            None
        }
    }))
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// A duration in Go's `time.Duration` text form (`"10s"`, `"2m"`, `"1h30m"`, `"250ms"`), as
/// `metav1.Duration` serializes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct GoDuration(pub Duration);

/// The CRD pattern of a (non-negative) Go duration.
pub const DURATION_PATTERN: &str = r"^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$";

/// A string that is not a Go duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {0:?}: expected Go duration syntax such as \"10s\", \"2m\" or \"1h30m\"")]
pub struct InvalidDuration(pub String);

impl GoDuration {
    /// Parse Go's duration syntax: a sequence of decimal numbers, each with a unit
    /// (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`). Negative durations are rejected.
    pub fn parse(text: &str) -> Result<Self, InvalidDuration> {
        let invalid = || InvalidDuration(text.to_string());
        let mut rest = text.trim();
        if let Some(stripped) = rest.strip_prefix('+') {
            rest = stripped;
        }
        if rest == "0" {
            return Ok(Self(Duration::ZERO));
        }
        if rest.is_empty() {
            return Err(invalid());
        }
        let mut total_nanos: f64 = 0.0;
        while !rest.is_empty() {
            let number_len = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .ok_or_else(invalid)?;
            let number: f64 = rest[..number_len].parse().map_err(|_| invalid())?;
            rest = &rest[number_len..];
            let unit_len = rest
                .find(|c: char| c.is_ascii_digit() || c == '.')
                .unwrap_or(rest.len());
            let nanos_per_unit = match &rest[..unit_len] {
                "ns" => 1.0,
                "us" | "µs" | "μs" => 1e3,
                "ms" => 1e6,
                "s" => 1e9,
                "m" => 60e9,
                "h" => 3600e9,
                _ => return Err(invalid()),
            };
            rest = &rest[unit_len..];
            total_nanos += number * nanos_per_unit;
        }
        if !total_nanos.is_finite() || total_nanos > u64::MAX as f64 {
            return Err(invalid());
        }
        Ok(Self(Duration::from_nanos(total_nanos.round() as u64)))
    }

    /// Build from milliseconds.
    pub fn from_millis(millis: u64) -> Self {
        Self(Duration::from_millis(millis))
    }
}

impl fmt::Display for GoDuration {
    /// Go's canonical form: `1h2m3.5s`, `250ms`, `0s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nanos = self.0.as_nanos();
        if nanos == 0 {
            return f.write_str("0s");
        }
        if nanos < 1_000 {
            return write!(f, "{nanos}ns");
        }
        if nanos < 1_000_000 {
            return write!(f, "{}us", trim_fraction(nanos, 1_000));
        }
        if nanos < 1_000_000_000 {
            return write!(f, "{}ms", trim_fraction(nanos, 1_000_000));
        }
        let hours = nanos / 3_600_000_000_000;
        let minutes = (nanos / 60_000_000_000) % 60;
        let second_nanos = nanos % 60_000_000_000;
        if hours > 0 {
            write!(f, "{hours}h")?;
        }
        if hours > 0 || minutes > 0 {
            write!(f, "{minutes}m")?;
        }
        write!(f, "{}s", trim_fraction(second_nanos, 1_000_000_000))
    }
}

/// `value / unit` as a decimal with trailing zeros removed.
fn trim_fraction(value: u128, unit: u128) -> String {
    let whole = value / unit;
    let fraction = value % unit;
    if fraction == 0 {
        return whole.to_string();
    }
    let digits = unit.ilog10() as usize;
    let fraction_text = format!("{fraction:0digits$}");
    format!("{whole}.{}", fraction_text.trim_end_matches('0'))
}

impl Serialize for GoDuration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for GoDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        GoDuration::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for GoDuration {
    fn schema_name() -> Cow<'static, str> {
        "Duration".into()
    }
    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": DURATION_PATTERN,
            "description": "A duration in Go syntax, e.g. \"10s\", \"2m\", \"1h30m\"."
        })
    }
    fn inline_schema() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::CustomResourceExt;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case("10s", 10_000)]
    #[case("2m", 120_000)]
    #[case("1h30m", 5_400_000)]
    #[case("250ms", 250)]
    #[case("1.5s", 1_500)]
    #[case("0", 0)]
    #[case("2ms", 2)]
    fn parses_go_durations(#[case] text: &str, #[case] millis: u64) {
        assert_eq!(
            GoDuration::parse(text).unwrap(),
            GoDuration::from_millis(millis)
        );
    }

    #[rstest]
    #[case("")]
    #[case("10")]
    #[case("10x")]
    #[case("s")]
    #[case("-5s")]
    #[case("1e400h")]
    fn rejects_garbage_durations(#[case] text: &str) {
        assert!(GoDuration::parse(text).is_err());
    }

    #[rstest]
    #[case(120_000, "2m0s")]
    #[case(10_000, "10s")]
    #[case(250, "250ms")]
    #[case(5_400_500, "1h30m0.5s")]
    #[case(0, "0s")]
    fn formats_like_go(#[case] millis: u64, #[case] text: &str) {
        let duration = GoDuration::from_millis(millis);
        assert_eq!(duration.to_string(), text);
        assert_eq!(GoDuration::parse(text).unwrap(), duration);
    }

    #[test]
    fn synthesizer_crd_carries_upstream_defaults_and_cel_rule() {
        let crd = serde_json::to_value(Synthesizer::crd()).unwrap();
        assert_eq!(crd["spec"]["scope"], "Cluster");
        let version = &crd["spec"]["versions"][0];
        assert!(version["subresources"]["status"].is_object());
        let spec = &version["schema"]["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(spec["properties"]["execTimeout"]["default"], "10s");
        assert_eq!(spec["properties"]["podTimeout"]["default"], "2m");
        assert_eq!(spec["properties"]["rolloutCooldown"]["default"], "30s");
        assert_eq!(
            spec["x-kubernetes-validations"][0]["rule"],
            "duration(self.execTimeout) <= duration(self.podTimeout)"
        );
    }

    #[test]
    fn composition_crd_is_namespaced_with_status() {
        let crd = serde_json::to_value(Composition::crd()).unwrap();
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        assert_eq!(crd["metadata"]["name"], "compositions.eno.azure.io");
        assert!(crd["spec"]["versions"][0]["subresources"]["status"].is_object());
    }

    #[rstest]
    #[case(json!({"image": "x", "podTimeout": "garbage"}), None)]
    #[case(json!({"image": "x", "podTimeout": "-1s"}), None)]
    #[case(json!({"image": "x", "podTimeout": "1.5m"}), Some(90_000))]
    #[case(json!({"image": "x", "podTimeout": null}), None)]
    fn malformed_durations_read_as_unset(
        #[case] spec: serde_json::Value,
        #[case] millis: Option<u64>,
    ) {
        let spec: SynthesizerSpec = serde_json::from_value(spec).unwrap();
        assert_eq!(spec.pod_timeout, millis.map(GoDuration::from_millis));
    }

    #[rstest]
    #[case("10s", true)]
    #[case("1h30m", true)]
    #[case("1.5m", true)]
    #[case("0", true)]
    #[case("garbage", false)]
    #[case("-1s", false)]
    #[case("10", false)]
    fn the_parser_accepts_what_the_crd_pattern_describes(#[case] text: &str, #[case] valid: bool) {
        assert_eq!(GoDuration::parse(text).is_ok(), valid, "{text}");
        let crd = serde_json::to_value(Synthesizer::crd()).unwrap();
        let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
        for field in ["execTimeout", "podTimeout", "rolloutCooldown"] {
            assert_eq!(spec["properties"][field]["pattern"], DURATION_PATTERN);
        }
    }

    #[test]
    fn missing_pod_timeout_stays_none() {
        let syn: SynthesizerSpec =
            serde_json::from_value(serde_json::json!({"image": "x"})).unwrap();
        assert_eq!(syn.pod_timeout, None);
        let status: CompositionStatus = serde_json::from_value(serde_json::json!({
            "currentSynthesis": {"uuid": "u", "observedCompositionGeneration": 3, "attempts": 2}
        }))
        .unwrap();
        let current = status.current_synthesis.unwrap();
        assert_eq!((current.uuid.as_str(), current.attempts), ("u", 2));
    }
}
