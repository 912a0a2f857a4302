//! The CCTP rail against Circle's own published material (the attestation
//! API reference's examples, Circle's Go client's mocks): every case in
//! `tests/fixtures/vendor/` must come out as it says.

use relay_rail_cctp::Cctp;
use relay_rail_sdk::testing::check_vendor_cases;

#[test]
fn every_vendor_case_maps_as_circle_documents_it() {
    let ran = check_vendor_cases(env!("CARGO_MANIFEST_DIR"), &Cctp, &[]);
    assert!(ran >= 10, "{ran} cases");
}
