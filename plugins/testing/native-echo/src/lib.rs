//! `native-echo`: a minimal rail for testing the native packaging.
//!
//! `quote` echoes the amount (`amountOut = amountIn`) and reports in
//! `detail.calls` how many quotes this loaded copy of the library has
//! answered, so a test can tell two loaded copies apart. Magic amounts make
//! it misbehave the ways a host must contain: [`PANIC_AMOUNT`] panics,
//! [`HANG_AMOUNT`] blocks past the call's deadline, and
//! [`UNDECLARED_EGRESS_AMOUNT`] calls a host it never declared and returns
//! the host's refusal. Test code only: never install it.

mod rail;

pub use rail::{
    EchoRail, HANG_AMOUNT, HANG_OVERSHOOT_MS, PANIC_AMOUNT, UNDECLARED_EGRESS_AMOUNT,
    UNDECLARED_HOST,
};

relay_plugin_native::export_native_rail!(EchoRail, EchoRail);
