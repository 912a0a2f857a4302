//! The relay devnet: real EVM chains (anvil) on loopback with the project's own contracts.
//!
//! What it brings up, per chain: a Permit2-compatible SignatureTransfer at the canonical
//! address, USDC/USDT/WBTC test tokens, CCTP-style burn-and-mint contracts (on the seven
//! CCTP chains), the bridge-deposit contract the aggregator simulators settle through, an
//! ERC-721 membership collection, the `RelayRouter` (the one-signature forms; the relayer is
//! its only caller), the EIP-7702 batch executor `RelayDelegate` at [`DELEGATE_ADDRESS`], for
//! tests `TestWallet` (ERC-1271), and Chainlink-style price feeds
//! (ETH/USD, BTC/USD, USDC/USD, USDT/USD and the native pair; [`Devnet::set_price`] moves
//! one), the ERC-4626 yield vault over USDC at [`deploy::vault_address`] (seeded, its share
//! price rising with block time: [`deploy::deploy_vault`]); plus funded accounts (the relayer and anvil's ten
//! well-known test accounts). Start it with [`Devnet::start`].
//!
//! What clients of the relay sign in its paid flows (sponsorships, x402 payments, yield
//! spends) is built in [`client`], shared by the integration tests and the soak.
//!
//! What it must never do: listen anywhere but 127.0.0.1, reach outside the machine, or hold
//! a key that is not publicly known ([`keys`] are devnet-only by construction).
//!
//! The contracts' sources live in `conformance/devnet/contracts/`, their compiled artifacts
//! in `conformance/devnet/artifacts/` (rebuilt with `node contracts/build.mjs`), and anvil is
//! installed by `conformance/devnet/tools/install.sh`.

pub mod anvil;
pub mod chains;
pub mod client;
pub mod contracts;
pub mod deploy;
mod error;
pub mod keys;
pub mod mesh;

pub use anvil::{AnvilConfig, AnvilNode};
pub use contracts::{DELEGATE_ADDRESS, PERMIT2_ADDRESS, RELAYER_ACCOUNT_ADDRESS};
pub use deploy::{CctpDeployment, ChainDeployment, FeedDeployment, Token};
pub use error::{DevnetError, Result};
pub use mesh::{Devnet, DevnetChain, DevnetConfig};

/// The HTTP client of every devnet provider. Building one loads the
/// system's trust store (tens of milliseconds of CPU), which a provider
/// per deployment, per wallet and per readiness probe did many times over
/// in a test run. It keeps no idle connection: a pooled one would be
/// driven by the runtime of the test that opened it, and a later node on
/// the reused port would be handed a dead one.
pub fn rpc_client() -> alloy::transports::http::reqwest::Client {
    static CLIENT: std::sync::OnceLock<alloy::transports::http::reqwest::Client> =
        std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            alloy::transports::http::reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .build()
                .expect("an HTTP client")
        })
        .clone()
}
