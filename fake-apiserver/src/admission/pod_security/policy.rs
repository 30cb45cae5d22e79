//! Pod Security levels, versions and a namespace's policy from its labels (upstream's
//! `pod-security-admission/api`: `ParseLevel`, `ParseVersion`, `PolicyToEvaluate`).

use std::collections::BTreeMap;
use std::fmt;

use crate::error::StatusCause;

/// The prefix of the Pod Security labels of a namespace.
pub(crate) const LABEL_PREFIX: &str = "pod-security.kubernetes.io/";
/// The enforced level.
pub(crate) const ENFORCE_LEVEL_LABEL: &str = "pod-security.kubernetes.io/enforce";
/// The version of the enforced level.
pub(crate) const ENFORCE_VERSION_LABEL: &str = "pod-security.kubernetes.io/enforce-version";
/// The audited level.
pub(crate) const AUDIT_LEVEL_LABEL: &str = "pod-security.kubernetes.io/audit";
/// The version of the audited level.
pub(crate) const AUDIT_VERSION_LABEL: &str = "pod-security.kubernetes.io/audit-version";
/// The level warned about.
pub(crate) const WARN_LEVEL_LABEL: &str = "pod-security.kubernetes.io/warn";
/// The version of the level warned about.
pub(crate) const WARN_VERSION_LABEL: &str = "pod-security.kubernetes.io/warn-version";

/// A Pod Security Standard, from least to most restrictive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Level {
    /// No restrictions.
    Privileged,
    /// Known privilege escalations prevented.
    Baseline,
    /// Hardening best practices.
    Restricted,
}

impl Level {
    /// The level's label value.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }

    /// `ParseLevel`: an unknown value is an error, and `restricted` (the caller decides whether
    /// to fail open).
    pub(crate) fn parse(value: &str) -> Result<Level, (Level, String)> {
        match value {
            "privileged" => Ok(Level::Privileged),
            "baseline" => Ok(Level::Baseline),
            "restricted" => Ok(Level::Restricted),
            _ => Err((
                Level::Restricted,
                "must be one of privileged, baseline, restricted".into(),
            )),
        }
    }
}

/// A policy version: `v1.<minor>` or `latest` (newer than any numbered version).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Version {
    /// `v1.<minor>` (any minor Go's `Atoi` reads: up to `i64::MAX`).
    V1(u64),
    /// `latest`.
    Latest,
}

impl Version {
    /// `ParseVersion`: `latest` or `v1.<minor>` (no leading zeros); anything else is an error
    /// and `latest`.
    pub(crate) fn parse(value: &str) -> Result<Version, (Version, String)> {
        if value == "latest" {
            return Ok(Version::Latest);
        }
        let invalid = || {
            (
                Version::Latest,
                "must be \"latest\" or \"v1.x\"".to_string(),
            )
        };
        let minor = value.strip_prefix("v1.").ok_or_else(invalid)?;
        let well_formed = !minor.is_empty()
            && minor.bytes().all(|b| b.is_ascii_digit())
            && (minor == "0" || !minor.starts_with('0'));
        if !well_formed {
            return Err(invalid());
        }
        match minor.parse::<i64>() {
            Ok(minor) => Ok(Version::V1(minor.unsigned_abs())),
            Err(_) => Err(invalid()),
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Version::V1(minor) => write!(f, "v1.{minor}"),
            Version::Latest => f.write_str("latest"),
        }
    }
}

/// A level at a version, e.g. `restricted:latest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct LevelVersion {
    /// The standard.
    pub level: Level,
    /// Its version.
    pub version: Version,
}

impl LevelVersion {
    /// `privileged:latest`, every mode's default.
    pub(crate) const PRIVILEGED_LATEST: LevelVersion = LevelVersion {
        level: Level::Privileged,
        version: Version::Latest,
    };
}

impl fmt::Display for LevelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.level.as_str(), self.version)
    }
}

/// The levels a namespace enforces, audits and warns about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Policy {
    /// Pods violating it are refused.
    pub enforce: LevelVersion,
    /// Violations are recorded in the audit log.
    pub audit: LevelVersion,
    /// Violations are returned as warnings.
    pub warn: LevelVersion,
}

impl Policy {
    /// The plugin's defaults with no admission configuration: `privileged:latest` everywhere.
    pub(crate) const DEFAULT: Policy = Policy {
        enforce: LevelVersion::PRIVILEGED_LATEST,
        audit: LevelVersion::PRIVILEGED_LATEST,
        warn: LevelVersion::PRIVILEGED_LATEST,
    };

    /// Whether each mode is the same as `other`'s, any two `privileged` levels being the same
    /// whatever their versions (`Equivalent`).
    pub(crate) fn equivalent(&self, other: &Policy) -> bool {
        let same = |a: LevelVersion, b: LevelVersion| {
            (a.level == Level::Privileged && b.level == Level::Privileged) || a == b
        };
        same(self.enforce, other.enforce)
            && same(self.audit, other.audit)
            && same(self.warn, other.warn)
    }

    /// Whether every mode is `privileged` (`FullyPrivileged`).
    pub(crate) fn fully_privileged(&self) -> bool {
        self.enforce.level == Level::Privileged
            && self.audit.level == Level::Privileged
            && self.warn.level == Level::Privileged
    }

    /// The policy a namespace's labels set over `defaults` (`PolicyToEvaluate`), with an
    /// `Invalid` cause for each label whose value does not parse. An invalid enforce level
    /// enforces `restricted`; an invalid audit or warn level fails open (`privileged`); an
    /// invalid version is `latest`. An explicit enforce level stricter than the warn level
    /// raises the warn level to it (and its version, unless a warn version is set).
    pub(crate) fn from_labels(
        labels: &BTreeMap<String, String>,
        defaults: Policy,
    ) -> (Policy, Vec<StatusCause>) {
        let mut policy = defaults;
        let mut errors = Vec::new();
        let mut error = |label: &str, value: &str, why: String| {
            errors.push(StatusCause::invalid_str(
                format!("metadata.labels[{label}]"),
                value,
                &why,
            ))
        };
        let mut has_enforce_level = false;
        if let Some(value) = labels.get(ENFORCE_LEVEL_LABEL) {
            match Level::parse(value) {
                Ok(level) => {
                    policy.enforce.level = level;
                    has_enforce_level = true;
                }
                Err((level, why)) => {
                    policy.enforce.level = level;
                    error(ENFORCE_LEVEL_LABEL, value, why);
                }
            }
        }
        if let Some(value) = labels.get(ENFORCE_VERSION_LABEL) {
            policy.enforce.version = Version::parse(value).unwrap_or_else(|(version, why)| {
                error(ENFORCE_VERSION_LABEL, value, why);
                version
            });
        }
        if let Some(value) = labels.get(AUDIT_LEVEL_LABEL) {
            policy.audit.level = Level::parse(value).unwrap_or_else(|(_, why)| {
                error(AUDIT_LEVEL_LABEL, value, why);
                Level::Privileged
            });
        }
        if let Some(value) = labels.get(AUDIT_VERSION_LABEL) {
            policy.audit.version = Version::parse(value).unwrap_or_else(|(version, why)| {
                error(AUDIT_VERSION_LABEL, value, why);
                version
            });
        }
        let has_warn_level = labels.contains_key(WARN_LEVEL_LABEL);
        if let Some(value) = labels.get(WARN_LEVEL_LABEL) {
            policy.warn.level = Level::parse(value).unwrap_or_else(|(_, why)| {
                error(WARN_LEVEL_LABEL, value, why);
                Level::Privileged
            });
        }
        let has_warn_version = labels.contains_key(WARN_VERSION_LABEL);
        if let Some(value) = labels.get(WARN_VERSION_LABEL) {
            policy.warn.version = Version::parse(value).unwrap_or_else(|(version, why)| {
                error(WARN_VERSION_LABEL, value, why);
                version
            });
        }
        if !has_warn_level && has_enforce_level && policy.enforce.level > policy.warn.level {
            policy.warn.level = policy.enforce.level;
            if !has_warn_version {
                policy.warn.version = policy.enforce.version;
            }
        }
        (policy, errors)
    }
}

/// A namespace's labels as a sorted map (absent or malformed labels are none).
pub(crate) fn labels_of(object: &serde_json::Value) -> BTreeMap<String, String> {
    object["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[rstest]
    #[case("latest", Ok(Version::Latest))]
    #[case("v1.0", Ok(Version::V1(0)))]
    #[case("v1.25", Ok(Version::V1(25)))]
    #[case("v1.9223372036854775807", Ok(Version::V1(9223372036854775807)))]
    #[case("v1.9223372036854775808", Err(()))]
    #[case("v1.01", Err(()))]
    #[case("v2.0", Err(()))]
    #[case("1.25", Err(()))]
    #[case("v1.", Err(()))]
    #[case("v1.x", Err(()))]
    #[case("", Err(()))]
    fn versions_parse_as_upstream(#[case] input: &str, #[case] expected: Result<Version, ()>) {
        assert_eq!(Version::parse(input).map_err(|_| ()), expected);
    }

    #[test]
    fn no_labels_is_the_default() {
        let (policy, errors) = Policy::from_labels(&labels(&[]), Policy::DEFAULT);
        assert_eq!(policy, Policy::DEFAULT);
        assert!(errors.is_empty());
        assert!(policy.fully_privileged());
    }

    #[test]
    fn enforce_raises_warn_to_its_level_and_version() {
        let (policy, errors) = Policy::from_labels(
            &labels(&[
                (ENFORCE_LEVEL_LABEL, "baseline"),
                (ENFORCE_VERSION_LABEL, "v1.24"),
            ]),
            Policy::DEFAULT,
        );
        assert!(errors.is_empty());
        assert_eq!(policy.warn.to_string(), "baseline:v1.24");
        assert_eq!(policy.audit.to_string(), "privileged:latest");
    }

    #[test]
    fn an_explicit_warn_level_is_kept() {
        let (policy, _) = Policy::from_labels(
            &labels(&[
                (ENFORCE_LEVEL_LABEL, "restricted"),
                (WARN_LEVEL_LABEL, "baseline"),
            ]),
            Policy::DEFAULT,
        );
        assert_eq!(policy.warn.to_string(), "baseline:latest");
    }

    #[test]
    fn invalid_values_restrict_enforce_and_open_audit_and_warn() {
        let (policy, errors) = Policy::from_labels(
            &labels(&[
                (ENFORCE_LEVEL_LABEL, "bogus"),
                (WARN_LEVEL_LABEL, "bogus"),
                (AUDIT_VERSION_LABEL, "v2"),
            ]),
            Policy::DEFAULT,
        );
        assert_eq!(policy.enforce.level, Level::Restricted);
        assert_eq!(policy.warn.level, Level::Privileged);
        assert_eq!(policy.audit.version, Version::Latest);
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "metadata.labels[pod-security.kubernetes.io/enforce]",
                "metadata.labels[pod-security.kubernetes.io/audit-version]",
                "metadata.labels[pod-security.kubernetes.io/warn]",
            ]
        );
        assert_eq!(
            errors[0].message,
            "Invalid value: \"bogus\": must be one of privileged, baseline, restricted"
        );
        assert_eq!(
            errors[1].message,
            "Invalid value: \"v2\": must be \"latest\" or \"v1.x\""
        );
    }
}
