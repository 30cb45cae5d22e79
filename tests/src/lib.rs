//! Integration tests live in tests/tests/integration (one test binary, one module per subject).
