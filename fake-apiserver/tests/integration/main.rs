//! The fake-apiserver crate's integration tests, one module per subject, linked into one binary
//! (one link and one copy of the dependencies instead of one per file).

mod accept_negotiation;
mod admission_policy;
mod admission_webhooks;
mod cel_rules;
mod chain_headers;
mod claim_resize;
mod conversion_webhooks;
mod crd_deletion;
mod crd_storage_rebuild;
mod custom_list_kind;
mod custom_update_reading;
mod default_classes;
mod ephemeral_containers;
mod fuzz;
mod go_encoding;
mod http_support;
mod kube_client;
mod layers;
mod limit_ranges;
mod metadata_only;
mod model;
mod node_taints;
mod pod_security;
mod pod_update_decoding;
mod pod_update_validation;
mod pretty_answers;
mod read_options;
mod robustness;
mod state_file;
mod token_auth_file;
mod token_review;
mod unrouted_paths;
mod update_strategies;
mod volume_protection;
mod watcher;
