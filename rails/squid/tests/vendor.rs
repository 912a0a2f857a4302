//! The Squid rail against Squid's own published material: every value of
//! its `SquidTransactionStatus` enum, a missing and an unknown status, the
//! documented error answers and route shapes (`tests/fixtures/vendor/`,
//! sources in its `SOURCES`).

use relay_rail_sdk::testing::{check_vendor_cases, RELAYER};
use relay_rail_squid::Squid;

#[test]
fn squids_published_examples_map_as_documented() {
    let ran = check_vendor_cases(
        env!("CARGO_MANIFEST_DIR"),
        &Squid,
        &[("relayer", RELAYER), ("credential", "squid")],
    );
    assert!(ran >= 28, "only {ran} vendor cases ran");
}
