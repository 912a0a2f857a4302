//! The stable bridge against Allbridge's own published material
//! (`tests/fixtures/vendor/`, sources in its `SOURCES`): the REST API's
//! Swagger examples (quote, transfer status), the SDK's status mock and the
//! vendor CLI's status test bodies, the status of a transfer not indexed
//! yet (the generic `400 "Bad request"`, and the older wording), every
//! `errorCode` of the SDK's `ErrorCode` enum, and the REST API's own 400s.

use relay_rail_sdk::testing::check_vendor_cases;
use relay_rail_stablebridge::StableBridge;

#[test]
fn allbridges_published_examples_map_as_documented() {
    let ran = check_vendor_cases(
        env!("CARGO_MANIFEST_DIR"),
        &StableBridge,
        &[("base_url", "http://allbridge.internal:3000")],
    );
    assert!(ran >= 36, "only {ran} vendor cases ran");
}
