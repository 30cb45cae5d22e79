//! Trimming watched objects before they enter a reflector cache.
//!
//! A controller's caches hold every watched object for as long as it exists, so whatever the
//! controller never reads is memory spent per object. The largest such part of almost every
//! object is `metadata.managedFields` (the server-side apply bookkeeping: one entry per writer,
//! each a tree of field paths); controller-runtime's caches drop it with
//! `cache.TransformStripManagedFields()`, which Karpenter's operator sets as the default
//! transform of its manager's cache.
//!
//! Use with kube-runtime's `WatchStreamExt::modify` on the watch stream that feeds a store:
//! `watcher(api, config).modify(strip_managed_fields)`. What else a controller can drop is
//! its own business (it must keep every field its reconciles read, and every field a write
//! built from the cached copy sends back); this module only has what any controller can use.
//!
//! The server keeps an object's managedFields when a write omits them (an update or patch
//! without `metadata.managedFields` leaves the stored ones as they are), so a write built from a
//! trimmed copy loses nothing.

use kube::Resource;

/// Drops `metadata.managedFields`.
pub fn strip_managed_fields<K: Resource>(obj: &mut K) {
    obj.meta_mut().managed_fields = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
    use kube::api::ObjectMeta;

    #[test]
    fn drops_managed_fields_and_nothing_else() {
        let mut cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                resource_version: Some("7".into()),
                labels: Some([("k".to_string(), "v".to_string())].into()),
                managed_fields: Some(vec![ManagedFieldsEntry {
                    manager: Some("kubectl".into()),
                    ..Default::default()
                }]),
                ..Default::default()
            },
            data: Some([("x".to_string(), "y".to_string())].into()),
            ..Default::default()
        };
        let mut want = cm.clone();
        want.metadata.managed_fields = None;
        strip_managed_fields(&mut cm);
        assert_eq!(cm, want);
    }
}
