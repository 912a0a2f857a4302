//! Chainflip's own material (chainflip-sdk-monorepo's swap backend tests
//! and snapshots, see `tests/fixtures/vendor/SOURCES`) through the rail:
//! every status state, the fill-or-kill refund, the failed refund, the CCM
//! fallback, quote examples and documented error bodies.

use relay_rail_btc::Btc;
use relay_rail_sdk::testing::check_vendor_cases;

#[test]
fn chainflip_vendor_cases() {
    let ran = check_vendor_cases(
        env!("CARGO_MANIFEST_DIR"),
        &Btc,
        &[
            ("broker_url", "https://broker.internal/rpc"),
            ("bitcoin_network", "mainnet"),
        ],
    );
    assert!(ran >= 30, "{ran} cases");
}

/// What `track` answers for the vendor case `name`.
fn tracked(name: &str) -> relay_plugin_api::TrackStatus {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vendor");
    let cases = relay_rail_sdk::vendor::load(&dir).unwrap();
    let (_, case) = cases.iter().find(|(n, _)| n == name).unwrap();
    let host = relay_rail_sdk::testing::RecordingHost::from_fixture(&case.fixture());
    relay_plugin_api::Rail::track(&Btc, &host, &case.track_request().unwrap()).unwrap()
}

#[test]
fn refunds_and_failed_refunds_say_what_happened() {
    let m = |name: &str| tracked(name).message.unwrap_or_default();
    for name in [
        "status_failed_refund_ignored.json",
        "status_failed_refund_aborted.json",
        "status_failed_dca_refund_ignored.json",
    ] {
        assert!(m(name).contains("refund failed"), "{name}: {}", m(name));
    }
    let fok = m("status_completed_refund.json");
    assert!(
        fok.contains("fill-or-kill")
            && fok.contains("0xd2398250c9fa869f0eb7659015549ed46178c95cedd444c3539f655068f6a7d9"),
        "{fok}"
    );
    assert!(
        m("status_failed_fallback.json").contains("3rCsvPRapbPL1GNCeatESyMd5AWZeDjc8DbSfhGJRmJU"),
        "names the fallback address"
    );
    assert!(m("status_unknown_state.json").contains("REFUNDING"));
    let refused = tracked("status_failed_deposit_refunded.json");
    assert!(
        refused.dest_tx.is_none() && refused.message.unwrap().contains("rejected by the broker")
    );
}
