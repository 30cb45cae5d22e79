//! Both controllers at once on one API server: Eno's processes (controllers and kubelet
//! stand-in) and Karpenter's (lifecycle, termination and garbage collection on a kwok cloud,
//! with its kubelet stand-in and users deleting NodeClaims), every fault kind on,
//! every invariant of both checked after every step and both goals reached once faults stop.
//! What one controller does to the server (its writes, its watch traffic, its load on the
//! schedule) must not break the other.

use crate::scenario::Scenario;
use crate::sim::Faults;
use crate::world::World;

use super::{eno, karpenter_gc};

/// Builds the shared world.
pub fn world(world: &mut World) {
    eno::world(world, eno::Guards::default());
    karpenter_gc::world(world, karpenter_gc::Guards::default());
}

/// The scenarios of this module.
pub fn scenarios() -> Vec<Scenario> {
    vec![Scenario::new(
        "both/every-guard",
        "Eno and Karpenter on one server, every fault kind on: no invariant of either breaks, both converge",
        world,
    )
    .configure(|c| {
        c.faults = Faults::all(5);
        c.steps = 250;
    })]
}
