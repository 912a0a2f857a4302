//! The LI.FI rail against LI.FI's own published material (OpenAPI examples,
//! `@lifi/types` enums, `@lifi/sdk` messages, docs error bodies): every case
//! in `tests/fixtures/vendor/` must come out as it says.

use relay_rail_lifi::Lifi;
use relay_rail_sdk::testing::{check_vendor_cases, RELAYER};

#[test]
fn every_vendor_case_maps_as_lifi_documents_it() {
    let ran = check_vendor_cases(
        env!("CARGO_MANIFEST_DIR"),
        &Lifi,
        &[("relayer", RELAYER), ("credential", "lifi")],
    );
    assert!(ran >= 30, "{ran} cases");
}
