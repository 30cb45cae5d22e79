//! Tests of the apps rules.
