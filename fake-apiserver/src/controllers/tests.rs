//! Tests of the controllers against an in-process server.
