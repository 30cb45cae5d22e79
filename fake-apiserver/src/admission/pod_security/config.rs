//! The plugin's configuration (`PodSecurityConfiguration`, `pod-security.admission.config.k8s.io/v1`):
//! the policy of namespaces without labels (`defaults`) and who and what is exempt
//! (`exemptions`), read from an `AdmissionConfiguration` file (kube-apiserver's
//! `--admission-control-config-file`) or given to the builder. Without one, every mode is
//! `privileged:latest` and nothing is exempt.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::policy::{Level, LevelVersion, Policy, Version};
use crate::error::StatusCause;

/// The plugin's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodSecurityConfiguration {
    /// The policy of a namespace without Pod Security labels (and the base its labels change).
    pub(crate) defaults: Policy,
    /// Request users whose pods are not checked.
    pub(crate) exempt_usernames: Vec<String>,
    /// Namespaces whose pods are not checked.
    pub(crate) exempt_namespaces: Vec<String>,
    /// Runtime classes whose pods are not checked.
    pub(crate) exempt_runtime_classes: Vec<String>,
}

impl Default for PodSecurityConfiguration {
    fn default() -> Self {
        Self {
            defaults: Policy::DEFAULT,
            exempt_usernames: Vec::new(),
            exempt_namespaces: Vec::new(),
            exempt_runtime_classes: Vec::new(),
        }
    }
}

/// Why a configuration could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("reading {path}: {source}", path = path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not YAML or JSON.
    #[error(transparent)]
    Parse(#[from] crate::manifest::ManifestError),
    /// The configuration is not a `PodSecurityConfiguration` this server reads.
    #[error("{0}")]
    Kind(String),
    /// The configuration does not validate (`ValidatePodSecurityConfiguration`).
    #[error("PodSecurity invalid: {0}")]
    Invalid(String),
}

impl PodSecurityConfiguration {
    /// The `PodSecurity` plugin's configuration in an `AdmissionConfiguration` file (inline
    /// `configuration`, or a `path` relative to the file); `None` when the file does not
    /// configure the plugin.
    pub fn from_admission_configuration_file(path: &Path) -> Result<Option<Self>, ConfigError> {
        let read = |path: &Path| {
            std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
                path: path.to_path_buf(),
                source,
            })
        };
        let documents = crate::manifest::parse(&read(path)?, path)?;
        let Some(admission) = documents.first() else {
            return Err(ConfigError::Kind(format!(
                "{}: no AdmissionConfiguration",
                path.display()
            )));
        };
        if admission["kind"] != "AdmissionConfiguration" {
            return Err(ConfigError::Kind(format!(
                "{}: expected kind AdmissionConfiguration, got {}",
                path.display(),
                admission["kind"]
            )));
        }
        let plugin = admission["plugins"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == "PodSecurity");
        let Some(plugin) = plugin else {
            return Ok(None);
        };
        let configuration = match (&plugin["configuration"], plugin["path"].as_str()) {
            (inline, _) if inline.is_object() => inline.clone(),
            (_, Some(relative)) => {
                let file = path.parent().unwrap_or(Path::new(".")).join(relative);
                let documents = crate::manifest::parse(&read(&file)?, &file)?;
                documents.into_iter().next().unwrap_or(Value::Null)
            }
            _ => return Ok(None),
        };
        Self::from_value(&configuration).map(Some)
    }

    /// A `PodSecurityConfiguration` object (`v1`, `v1beta1` or `v1alpha1`), defaulted
    /// (`SetDefaults_PodSecurityDefaults`: privileged, latest) and validated.
    pub fn from_value(object: &Value) -> Result<Self, ConfigError> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let known = matches!(
            api_version,
            "pod-security.admission.config.k8s.io/v1"
                | "pod-security.admission.config.k8s.io/v1beta1"
                | "pod-security.admission.config.k8s.io/v1alpha1"
        );
        if !known || object["kind"] != "PodSecurityConfiguration" {
            return Err(ConfigError::Kind(format!(
                "expected a pod-security.admission.config.k8s.io/v1 PodSecurityConfiguration, got {} {}",
                object["apiVersion"], object["kind"]
            )));
        }
        let defaults = &object["defaults"];
        let text = |key: &str, default: &str| {
            defaults[key]
                .as_str()
                .filter(|v| !v.is_empty())
                .unwrap_or(default)
                .to_string()
        };
        let mut errors: Vec<StatusCause> = Vec::new();
        let mut level_version = |mode: &str| {
            let (level, version) = (
                text(mode, "privileged"),
                text(&format!("{mode}-version"), "latest"),
            );
            let level = Level::parse(&level).unwrap_or_else(|(parsed, why)| {
                errors.push(StatusCause::invalid_str(
                    format!("defaults.{mode}"),
                    &level,
                    &why,
                ));
                parsed
            });
            let version = Version::parse(&version).unwrap_or_else(|(parsed, why)| {
                errors.push(StatusCause::invalid_str(
                    format!("defaults.{mode}-version"),
                    &version,
                    &why,
                ));
                parsed
            });
            LevelVersion { level, version }
        };
        // Validation's order: enforce, warn, audit.
        let enforce = level_version("enforce");
        let warn = level_version("warn");
        let audit = level_version("audit");
        let list = |key: &str| -> Vec<String> {
            object["exemptions"][key]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect()
        };
        let namespaces = list("namespaces");
        let runtime_classes = list("runtimeClasses");
        let usernames = list("usernames");
        validate_names(&mut errors, "namespaces", &namespaces, |n| {
            crate::rules::validation::is_dns1123_label(n)
        });
        validate_names(&mut errors, "runtimeClasses", &runtime_classes, |n| {
            crate::rules::validation::is_dns1123_subdomain(n)
        });
        validate_names(&mut errors, "usernames", &usernames, |n| {
            match n.is_empty() {
                true => vec!["username must not be empty".to_string()],
                false => Vec::new(),
            }
        });
        if !errors.is_empty() {
            let texts: Vec<String> = errors
                .iter()
                .map(|e| format!("{}: {}", e.field, e.message))
                .collect();
            return Err(ConfigError::Invalid(match texts.len() {
                1 => texts[0].clone(),
                _ => format!("[{}]", texts.join(", ")),
            }));
        }
        Ok(Self {
            defaults: Policy {
                enforce,
                audit,
                warn,
            },
            exempt_usernames: usernames,
            exempt_namespaces: namespaces,
            exempt_runtime_classes: runtime_classes,
        })
    }

    /// Whether pods in `namespace` are exempt (`exemptNamespace`).
    pub(crate) fn exempt_namespace(&self, namespace: &str) -> bool {
        !namespace.is_empty() && self.exempt_namespaces.iter().any(|n| n == namespace)
    }

    /// Whether requests of `username` are exempt (`exemptUser`).
    pub(crate) fn exempt_user(&self, username: &str) -> bool {
        !username.is_empty() && self.exempt_usernames.iter().any(|n| n == username)
    }

    /// Whether pods of the runtime class `spec.runtimeClassName` are exempt
    /// (`exemptRuntimeClass`).
    pub(crate) fn exempt_runtime_class(&self, spec: &Value) -> bool {
        spec["runtimeClassName"]
            .as_str()
            .is_some_and(|rc| !rc.is_empty() && self.exempt_runtime_classes.iter().any(|n| n == rc))
    }
}

/// `validateNamespaces` / `validateRuntimeClasses` / `validateUsernames`: each entry valid and
/// not repeated.
fn validate_names(
    errors: &mut Vec<StatusCause>,
    field: &str,
    names: &[String],
    check: impl Fn(&str) -> Vec<String>,
) {
    let mut seen: Vec<&str> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let path = format!("exemptions.{field}[{i}]");
        let problems = check(name);
        if !problems.is_empty() {
            errors.push(StatusCause::invalid_str(path, name, &problems.join(", ")));
        } else if seen.contains(&name.as_str()) {
            errors.push(StatusCause::new(
                crate::rules::validation::FieldErrorType::Duplicate,
                path,
                Some(crate::rules::validation::render_value(&Value::String(
                    name.clone(),
                ))),
                "",
            ));
        } else {
            seen.push(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_are_privileged_latest_and_set_fields_parse() {
        let config = PodSecurityConfiguration::from_value(&json!({
            "apiVersion": "pod-security.admission.config.k8s.io/v1",
            "kind": "PodSecurityConfiguration",
            "defaults": {"enforce": "baseline", "warn": "restricted", "warn-version": "v1.30"},
            "exemptions": {"namespaces": ["kube-system"], "usernames": ["ci"], "runtimeClasses": ["kata"]},
        }))
        .expect("valid");
        assert_eq!(config.defaults.enforce.to_string(), "baseline:latest");
        assert_eq!(config.defaults.warn.to_string(), "restricted:v1.30");
        assert_eq!(config.defaults.audit.to_string(), "privileged:latest");
        assert!(config.exempt_namespace("kube-system"));
        assert!(!config.exempt_namespace("default"));
        assert!(config.exempt_user("ci"));
        assert!(config.exempt_runtime_class(&json!({"runtimeClassName": "kata"})));
        assert!(!config.exempt_runtime_class(&json!({})));
    }

    #[test]
    fn invalid_values_are_refused_with_their_fields() {
        let err = PodSecurityConfiguration::from_value(&json!({
            "apiVersion": "pod-security.admission.config.k8s.io/v1",
            "kind": "PodSecurityConfiguration",
            "defaults": {"enforce": "strict", "audit-version": "1.2"},
            "exemptions": {"namespaces": ["a", "a", "Bad_NS"], "usernames": [""]},
        }))
        .expect_err("invalid");
        let text = err.to_string();
        for part in [
            "defaults.enforce: Invalid value: \"strict\": must be one of privileged, baseline, restricted",
            "defaults.audit-version: Invalid value: \"1.2\": must be \"latest\" or \"v1.x\"",
            "exemptions.namespaces[1]: Duplicate value: \"a\"",
            "exemptions.namespaces[2]: Invalid value: \"Bad_NS\"",
            "exemptions.usernames[0]: Invalid value: \"\": username must not be empty",
        ] {
            assert!(text.contains(part), "{part} not in {text}");
        }
    }

    #[test]
    fn another_kind_is_refused() {
        assert!(PodSecurityConfiguration::from_value(&json!({"kind": "Pod"})).is_err());
    }

    #[test]
    fn an_admission_configuration_file_is_read_inline_or_by_path() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let inline = dir.path().join("admission.yaml");
        std::fs::write(
            &inline,
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n    kind: PodSecurityConfiguration\n    defaults:\n      enforce: restricted\n",
        )
        .expect("written");
        let config = PodSecurityConfiguration::from_admission_configuration_file(&inline)
            .expect("read")
            .expect("configured");
        assert_eq!(config.defaults.enforce.level, Level::Restricted);

        std::fs::write(
            dir.path().join("psa.yaml"),
            "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\nexemptions:\n  namespaces: [ops]\n",
        )
        .expect("written");
        let by_path = dir.path().join("by-path.yaml");
        std::fs::write(
            &by_path,
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: psa.yaml\n",
        )
        .expect("written");
        let config = PodSecurityConfiguration::from_admission_configuration_file(&by_path)
            .expect("read")
            .expect("configured");
        assert!(config.exempt_namespace("ops"));

        let other = dir.path().join("other.yaml");
        std::fs::write(
            &other,
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  path: erl.yaml\n",
        )
        .expect("written");
        assert!(
            PodSecurityConfiguration::from_admission_configuration_file(&other)
                .expect("read")
                .is_none()
        );
    }
}
