//! Tests of the core rules.
