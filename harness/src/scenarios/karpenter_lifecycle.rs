//! (Being written.) More scenarios; see [`super`].

use crate::scenario::Scenario;

/// The scenarios of this module.
pub fn scenarios() -> Vec<Scenario> {
    Vec::new()
}
