//! The `PersistentVolumeClaimResize` admission plugin
//! (`plugin/pkg/admission/storage/persistentvolume/resize`), on by default in every real
//! server: an update that grows a claim's storage request is refused unless the claim is bound
//! and its StorageClass (the same before and after) sets `allowVolumeExpansion: true`.

use serde_json::Value;

use crate::auth::attributes::forbidden_error;
use crate::context::Shared;
use crate::error::ApiError;
use crate::resource::ResourceInfo;
use crate::rules::Quantity;

use super::default_classes::{BETA_STORAGE_CLASS, STORAGE_CLASSES};

/// What an update of a claim needs, read before the store is locked: the names of the
/// StorageClasses that allow expansion.
pub(crate) struct ResizeCheck {
    expandable: Vec<String>,
}

/// Prepares the check for an update through the claim's main endpoint; `None` for any other
/// kind or subresource.
pub(crate) fn prepare_update(
    shared: &Shared,
    info: &ResourceInfo,
    subresource: Option<&str>,
) -> Option<ResizeCheck> {
    if !info.is_builtin("", "PersistentVolumeClaim") || subresource.is_some() {
        return None;
    }
    let expandable = shared
        .store
        .snapshot(STORAGE_CLASSES, None)
        .items
        .iter()
        .filter_map(|(_, bytes)| crate::store::json::from_slice(bytes).ok())
        .filter(|class: &Value| class["allowVolumeExpansion"] == true)
        .filter_map(|class| class["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    Some(ResizeCheck { expandable })
}

fn storage_request(claim: &Value) -> Quantity {
    Quantity::from_value(&claim["spec"]["resources"]["requests"]["storage"])
        .unwrap_or_else(|| Quantity::from_nanos(0, crate::rules::quantity::Format::DecimalSi))
}

/// `GetPersistentVolumeClaimClass`: the older annotation wins over the field.
fn class_of(claim: &Value) -> &str {
    claim["metadata"]["annotations"][BETA_STORAGE_CLASS]
        .as_str()
        .or_else(|| claim["spec"]["storageClassName"].as_str())
        .unwrap_or_default()
}

impl ResizeCheck {
    /// `Validate`: a claim whose storage request grows.
    pub(crate) fn check(
        &self,
        info: &ResourceInfo,
        old: &Value,
        next: &Value,
    ) -> Result<(), ApiError> {
        if storage_request(next).nanos() <= storage_request(old).nanos() {
            return Ok(());
        }
        let forbidden = |why: &str| {
            forbidden_error("", &info.plural, crate::admission::admitted_name(next), why)
        };
        if old["status"]["phase"] != "Bound" {
            return Err(forbidden(
                "Only bound persistent volume claims can be expanded",
            ));
        }
        let (class, old_class) = (class_of(next), class_of(old));
        let allowed =
            !class.is_empty() && class == old_class && self.expandable.iter().any(|c| c == class);
        if !allowed {
            return Err(forbidden(
                "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn claim(storage: &str, class: Option<&str>, phase: &str) -> Value {
        let mut claim = json!({"metadata": {"name": "data"},
            "spec": {"resources": {"requests": {"storage": storage}}},
            "status": {"phase": phase}});
        if let Some(class) = class {
            claim["spec"]["storageClassName"] = json!(class);
        }
        claim
    }

    fn claims() -> ResourceInfo {
        crate::resource::builtin_info("", "PersistentVolumeClaim")
    }

    #[rstest]
    #[case::not_growing(
        claim("5Gi", Some("fast"), "Pending"),
        claim("5Gi", Some("fast"), "Pending"),
        None
    )]
    #[case::shrinking(
        claim("5Gi", Some("slow"), "Bound"),
        claim("1Gi", Some("slow"), "Bound"),
        None
    )]
    #[case::growing_expandable(
        claim("5Gi", Some("fast"), "Bound"),
        claim("10Gi", Some("fast"), "Bound"),
        None
    )]
    #[case::unbound(claim("5Gi", Some("fast"), "Pending"), claim("10Gi", Some("fast"), "Pending"),
        Some("persistentvolumeclaims \"data\" is forbidden: Only bound persistent volume claims can be expanded"))]
    #[case::class_without_expansion(claim("5Gi", Some("slow"), "Bound"), claim("10Gi", Some("slow"), "Bound"),
        Some("persistentvolumeclaims \"data\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"))]
    #[case::no_class(claim("5Gi", None, "Bound"), claim("10Gi", None, "Bound"),
        Some("persistentvolumeclaims \"data\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"))]
    fn growing_a_claim_needs_a_bound_claim_and_an_expandable_class(
        #[case] old: Value,
        #[case] next: Value,
        #[case] refused: Option<&str>,
    ) {
        let check = ResizeCheck {
            expandable: vec!["fast".to_string()],
        };
        let result = check.check(&claims(), &old, &next);
        assert_eq!(result.err().map(|e| e.message), refused.map(str::to_string));
    }
}
