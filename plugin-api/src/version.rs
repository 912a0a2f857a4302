//! The contract's semantic version and the range a host accepts.
//!
//! One semver for the whole contract (Rust types, WIT world, native root
//! module). Minor versions only add; a host of `1.y` loads rails built
//! against any `1.x` with `x <= y`.
//!
//! # History
//!
//! - **1.1.0** — `track` may answer [`crate::RailError::no_status_api`]
//!   (kind `UnsupportedLane`): the upstream cannot report delivery and the
//!   host watches the destination chain for the payout instead (see
//!   [`crate::Rail::track`]). Semantics only: no type changed, so the WIT
//!   package stays `relay:rail@1.0.0` and the native root module is the
//!   same; a 1.0 rail loads unchanged (a 1.0 host treats the answer as an
//!   error and asks again until the track timeout).
//! - **1.0.0** — the first frozen contract.

use semver::Version;

/// The contract version this crate defines.
pub const CONTRACT_VERSION: &str = "1.1.0";

/// [`CONTRACT_VERSION`] parsed.
pub fn contract_version() -> Version {
    Version::parse(CONTRACT_VERSION).expect("CONTRACT_VERSION is valid semver")
}

/// Whether a rail built against `built_against` can be loaded by a host that
/// implements [`CONTRACT_VERSION`]: same major, not newer minor. Pre-1.0
/// versions must match exactly on minor, as semver says.
pub fn is_supported_contract(built_against: &Version) -> bool {
    let host = contract_version();
    if built_against.major != host.major || !built_against.pre.is_empty() {
        return false;
    }
    if host.major == 0 {
        return built_against.minor == host.minor && built_against.patch <= host.patch;
    }
    built_against.minor <= host.minor
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_major_older_minor_is_supported() {
        assert_eq!(contract_version(), Version::new(1, 1, 0));
        assert!(
            is_supported_contract(&Version::new(1, 0, 0)),
            "a 1.0 rail loads"
        );
        assert!(is_supported_contract(&Version::new(1, 0, 7)));
        assert!(is_supported_contract(&Version::new(1, 1, 0)));
        assert!(is_supported_contract(&Version::new(1, 1, 3)));
    }

    #[test]
    fn newer_minor_or_other_major_is_refused() {
        assert!(!is_supported_contract(&Version::new(1, 2, 0)));
        assert!(!is_supported_contract(&Version::new(2, 0, 0)));
        assert!(!is_supported_contract(&Version::new(0, 9, 0)));
        assert!(!is_supported_contract(
            &Version::parse("1.0.0-beta").unwrap()
        ));
        assert!(!is_supported_contract(
            &Version::parse("1.1.0-rc.1").unwrap()
        ));
    }
}
