//! What a controller's caches need not keep: `metadata.managedFields`, which no controller of
//! this crate reads, is dropped from watched objects before they are cached (controller-runtime's
//! `cache.TransformStripManagedFields()`, used with kube's `WatchStreamExt::modify`).
//!
//! Writing back a trimmed copy is safe: an update or status update that carries no
//! `managedFields` leaves the stored ones as they are (the API server keeps them unless the
//! request sets them to something non-empty).

use kube::Resource;

/// Drop `metadata.managedFields` (to `None`, so that a write of the object omits the field).
pub fn strip_managed_fields<K: Resource>(object: &mut K) {
    object.meta_mut().managed_fields = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

    #[test]
    fn managed_fields_are_dropped_and_the_rest_kept() {
        let mut pod = Pod::default();
        pod.metadata.name = Some("p".into());
        pod.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
            manager: Some("m".into()),
            ..Default::default()
        }]);
        strip_managed_fields(&mut pod);
        assert_eq!(pod.metadata.managed_fields, None);
        assert_eq!(pod.metadata.name.as_deref(), Some("p"));
        let json = serde_json::to_value(&pod).unwrap();
        assert!(json["metadata"].get("managedFields").is_none(), "{json}");
    }
}
