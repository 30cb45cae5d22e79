//! Production controllers, ported from Go: Eno's synthesis pod lifecycle controller and
//! Karpenter's NodeClaim lifecycle controller.
//!
//! Each controller is cut into three parts (see DESIGN.md, "the seam"): what it watches and how an
//! event maps to the keys it reconciles, its reconcile function, and its context. Production wires
//! them into `kube::runtime::Controller`; the race harness wires the same parts into its own
//! scheduler.

pub mod clock;
pub mod crds;
pub mod demo;
pub mod eno;
pub mod ids;
pub mod karpenter;
pub mod operator;
