//! The route primitives served from their own crate, as a client calls
//! them, without chains: the feature started over a SQLite store, the
//! host's routing replaced by the `test-utils` mocks of its planner and
//! live runner. What needs a chain (legs that pay, runs at the host's
//! clock) is `host/bin/tests/it/primitives.rs`.

mod batch;
