//! The Bungee rail against Socket's own published material (the Socket Swap
//! V3 docs' examples and the Socket provider Socket wrote for the CoW SDK):
//! every case in `tests/fixtures/vendor/` must come out as it says.

use relay_rail_bungee::Bungee;
use relay_rail_sdk::testing::{check_vendor_cases, RELAYER};

#[test]
fn every_vendor_case_maps_as_socket_documents_it() {
    let ran = check_vendor_cases(
        env!("CARGO_MANIFEST_DIR"),
        &Bungee,
        &[("relayer", RELAYER), ("credential", "bungee")],
    );
    assert!(ran >= 21, "{ran} cases");
}
