//! Every CustomResourceDefinition this crate's controllers serve, for `controllers crds` and
//! for installing them in tests and demos. Each controller adds its CRDs to [`all`].

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

use crate::eno;

/// Every CRD, in a stable order.
pub fn all() -> Vec<CustomResourceDefinition> {
    let mut crds = eno::types::crds();
    crds.push(crate::karpenter::NodeClaim::crd());
    crds
}

/// CRDs as a multi-document YAML stream (`---` between documents).
pub fn to_yaml(crds: &[CustomResourceDefinition]) -> Result<String, serde_yaml::Error> {
    let mut out = String::new();
    for crd in crds {
        out.push_str("---\n");
        out.push_str(&serde_yaml::to_string(crd)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_crd_prints_as_yaml_and_parses_back() {
        let yaml = to_yaml(&all()).unwrap();
        let names: Vec<String> = serde_yaml::Deserializer::from_str(&yaml)
            .map(|doc| {
                let crd = CustomResourceDefinition::deserialize(doc).unwrap();
                crd.metadata.name.unwrap()
            })
            .collect();
        for expected in [
            "compositions.eno.azure.io",
            "synthesizers.eno.azure.io",
            "resourceslices.eno.azure.io",
        ] {
            assert!(
                names.iter().any(|n| n == expected),
                "{expected} missing from {names:?}"
            );
        }
    }

    use serde::Deserialize;
}
