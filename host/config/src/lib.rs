//! The host's configuration: one typed struct, loaded by the `config` crate
//! from a TOML file and `RELAY_*` environment variables (`__` separates
//! levels: `RELAY_RUNTIME__CALL_TIMEOUT_MS=5000`). Defaults are documented
//! next to each field.
//!
//! Secrets never live here: the relayer key comes from `RELAY_RELAYER_KEY`
//! (or a keystore file), upstream credentials from the environment variables
//! that `[capabilities.credentials.*]` name.

use std::{
    collections::BTreeMap,
    net::{IpAddr, SocketAddr},
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

mod admin;
mod capabilities;
mod notify;
mod pricefeeds;
mod primitives;
mod quotebook;
mod retention;
mod sections;
mod sessions;
mod validate;

pub use admin::AdminConfig;
pub use capabilities::{CapabilityConfig, CredentialConfig, Secret};
pub use notify::{parse_allow_entry, AllowPort, NotifyConfig};
pub use pricefeeds::PriceFeedConfig;
pub use primitives::PrimitivesConfig;
pub use quotebook::QuoteBookConfig;
pub use relay_registry::PluginKind as Packaging;
pub use retention::RetentionConfig;
pub use sections::Sections;
pub use sessions::SessionsConfig;
pub use validate::{is_address, validate};

/// A token the host knows on a chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenConfig {
    /// Contract address.
    pub address: String,
    /// Decimals.
    pub decimals: u8,
}

/// One EVM chain the host serves.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChainConfig {
    /// Display name (default: the well-known name of the chain id).
    pub name: Option<String>,
    /// RPC endpoints, tried in order.
    pub rpc: Vec<String>,
    /// Tokens by symbol.
    pub tokens: BTreeMap<String, TokenConfig>,
    /// The `RelayRouter` contract on this chain, when one is deployed: it
    /// enables the one-signature forms (`permit2-witness`, `erc2612`,
    /// `intent`) whose source leg is one router transaction.
    pub router: Option<String>,
    /// The `RelayerAccount` code a relayer key pool delegates the relayer's
    /// address to on this chain (EIP-7702), so the pool's keys send the
    /// relayer's transactions as that address. Without it the chain's
    /// transactions are all signed by the relayer key itself.
    pub relayer_account: Option<String>,
}

/// Operator settings for one rail (`[rails.<id>]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RailConfig {
    /// Extra egress hosts (e.g. a simulator or a self-hosted upstream).
    pub egress: Vec<String>,
    /// Credential names the rail may use.
    pub credentials: Vec<String>,
    /// Values the rail reads with `host.config(key)`.
    pub config: BTreeMap<String, String>,
    /// Contracts the rail's plans may call or approve besides those its
    /// manifest declares: `"0x…"` on any chain, `"<chainId>:0x…"` on one,
    /// or `"*"` for any (an aggregator whose upstream names its own
    /// targets). The executor refuses any other target.
    pub contracts: Vec<String>,
}

impl RailConfig {
    /// Whether the operator lets this rail's plans call `address` on `chain`.
    pub fn allows_contract(&self, chain: u64, address: &str) -> bool {
        self.contracts.iter().any(|c| {
            let (on, addr) = match c.split_once(':') {
                Some((ch, a)) => (ch.parse::<u64>().ok() == Some(chain), a),
                None => (true, c.as_str()),
            };
            on && (addr == "*" || addr.eq_ignore_ascii_case(address))
        })
    }
}

/// Route execution (`[execution]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExecutionConfig {
    /// How often a BRIDGING route asks its rail's `track`, ms (default 2000).
    pub track_interval_ms: u64,
    /// How long a route may wait on its upstream (or a deposit) before it
    /// fails with `UPSTREAM_TIMEOUT`, ms (default 6 hours).
    pub track_timeout_ms: u64,
    /// How often each replica picks up open routes nobody holds (a replica
    /// died, or the host restarted), ms (default 10000).
    pub resume_interval_ms: u64,
    /// How often the relayer's nonce gaps are looked for and filled, ms
    /// (default 15000; 0 disables).
    pub gap_check_interval_ms: u64,
    /// A replica's lease on a route it runs, renewed before every step and
    /// upstream poll; a route whose replica died is picked up by another
    /// (or the restarted one) once it lapses, ms (default 30000). A step
    /// taken over mid-send is finished from its journal, never re-signed.
    pub route_lease_ms: u64,
    /// An idempotency key whose first request neither answered nor created
    /// a route for this long is presumed dead and may be retried, ms
    /// (default 60000; must exceed the slowest execute).
    pub idempotency_stale_ms: u64,
    /// Replace a relayer transaction still unmined after this long with the
    /// same nonce and fees × 1.125, ms (default 30000).
    pub gas_bump_after_ms: u64,
    /// Give up waiting for a receipt after this long (the outcome is then
    /// unknown and the route waits for an operator), ms (default 300000).
    pub receipt_timeout_ms: u64,
    /// Most transactions one relayer key has pending on a chain at once;
    /// the next waits for one to be mined (default 16, what nodes keep
    /// executable per sender: geth's `txpool.accountslots`; 0 no limit).
    /// Past it, more keys (a relayer key pool) send more.
    pub max_pending_per_key: usize,
    /// Timeout of one RPC call before the next endpoint is tried, ms
    /// (default 10000).
    pub rpc_timeout_ms: u64,
    /// How long a prepared router intent (`POST /api/route/intent`, a
    /// quote's `signRequest`) may be signed and executed, seconds (default
    /// 600): its deadline, and how long the host keeps its plan.
    pub intent_ttl_secs: u64,
}

impl Default for ExecutionConfig {
    fn default() -> Self {
        ExecutionConfig {
            track_interval_ms: 2_000,
            track_timeout_ms: 6 * 3_600_000,
            resume_interval_ms: 10_000,
            gap_check_interval_ms: 15_000,
            route_lease_ms: 30_000,
            idempotency_stale_ms: 60_000,
            gas_bump_after_ms: 30_000,
            receipt_timeout_ms: 300_000,
            max_pending_per_key: 16,
            rpc_timeout_ms: 10_000,
            intent_ttl_secs: 600,
        }
    }
}

/// Plugin runtime settings (`[runtime]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RuntimeConfig {
    /// Deadline of one plugin call, ms (default 10000).
    pub call_timeout_ms: u64,
    /// Memory limit of one wasm call, MiB (default 64).
    pub wasm_memory_mib: u64,
    /// Instance slots of wasmtime's pooling allocator (default 256): at
    /// most this many wasm calls at once, each in a fresh instance whose
    /// memory is a copy-on-write image; 0 allocates on demand.
    pub wasm_pool_slots: u32,
    /// How often the plugins directory is rescanned for hot reload, ms
    /// (default 2000; 0 disables).
    pub reload_interval_ms: u64,
    /// Which packaging serves a rail installed in both at the same version
    /// (default wasm: sandboxed).
    pub prefer: Packaging,
    /// First quarantine after a plugin fault, ms (default 2000), doubling up
    /// to five minutes.
    pub quarantine_base_ms: u64,
    /// How long one health reading of the rails and chains is reused by
    /// quoting, the mesh and status, ms (default 30000). An older one is
    /// still served while one background reading replaces it.
    pub health_ttl_ms: u64,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            call_timeout_ms: 10_000,
            wasm_memory_mib: 64,
            wasm_pool_slots: 256,
            reload_interval_ms: 2_000,
            prefer: Packaging::Wasm,
            quarantine_base_ms: 2_000,
            health_ttl_ms: 30_000,
        }
    }
}

/// Quoting, fees and pricing (`[quote]`, spec §2.6, §4.3, §8.2).
///
/// Relayer gas is charged at cost plus a markup and converted to the token
/// in flight: `gas units × source-chain gas price (RPC) × native USD price
/// of that chain ÷ the token's USD price`, stablecoins at par. Prices are
/// integer micro-USD (`usd_e6`); amounts stay integers end to end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct QuoteConfig {
    /// One deadline for a quote's whole rail fan-out, ms (default 8000). A
    /// rail that has not answered by then is reported as not answering.
    pub deadline_ms: u64,
    /// Route fee withheld from the token in flight, bps (default 25).
    pub route_fee_bps: u32,
    /// Route fee for members, bps (default 15).
    pub member_route_fee_bps: u32,
    /// Markup over relayer gas cost, bps (default 2500 = 25 %).
    pub gas_markup_bps: u32,
    /// Markup over gas cost for members, bps (default 1000 = 10 %).
    pub member_gas_markup_bps: u32,
    /// Gas of the host's own Permit2 pull on an EVM source chain, added to
    /// every rail's own gas estimate (default 90000: a cold
    /// `permitTransferFrom` with a fresh nonce word and a cold balance slot).
    pub permit2_pull_gas: u64,
    /// Native-asset USD price by chain id, micro-USD. Chains not listed use
    /// [`default_native_usd_e6`] (ETH chains 3000 USD, BNB 600, POL 0.5 …).
    pub native_usd_e6: BTreeMap<String, u64>,
    /// USD price of tokens that are not stablecoins, by symbol, micro-USD
    /// (default `WBTC` and `BTC` at 60000 USD). A chain's native asset uses
    /// `native_usd_e6` instead.
    pub token_usd_e6: BTreeMap<String, u64>,
    /// Symbols priced at exactly 1 USD (default `USDC`, `USDT`, `DAI`).
    pub stablecoins: Vec<String>,
    /// Slippage when the request gives none, bps (default 50).
    pub default_slippage_bps: u32,
    /// Lifetime of a quote's attestation, ms (default 60000), never past
    /// the winning rail's own expiry.
    pub validity_ms: u64,
    /// Compare cache lifetime per lane and amount, ms (default 12000).
    pub compare_cache_ms: u64,
    /// Compare guard: effective fee above this percentage is flagged (default 3).
    pub guard_threshold_pct: u32,
    /// Timeout of the host's own chain reads (gas price, membership), ms
    /// (default 2000).
    pub chain_read_timeout_ms: u64,
    /// How often every `[[pricefeeds]]` feed is read into the host's price
    /// book, ms (default 5000).
    pub feed_refresh_ms: u64,
}

impl Default for QuoteConfig {
    fn default() -> Self {
        QuoteConfig {
            deadline_ms: 8_000,
            route_fee_bps: 25,
            member_route_fee_bps: 15,
            gas_markup_bps: 2_500,
            member_gas_markup_bps: 1_000,
            permit2_pull_gas: 90_000,
            native_usd_e6: BTreeMap::new(),
            token_usd_e6: [("WBTC", 60_000_000_000u64), ("BTC", 60_000_000_000)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            stablecoins: ["USDC", "USDT", "DAI"].map(String::from).to_vec(),
            default_slippage_bps: 50,
            validity_ms: 60_000,
            compare_cache_ms: 12_000,
            guard_threshold_pct: 3,
            chain_read_timeout_ms: 2_000,
            feed_refresh_ms: 5_000,
        }
    }
}

impl QuoteConfig {
    /// The native-asset USD price of an EVM chain, micro-USD.
    pub fn native_usd_e6(&self, chain: u64) -> u64 {
        self.native_usd_e6
            .get(&chain.to_string())
            .copied()
            .unwrap_or_else(|| default_native_usd_e6(chain))
    }
}

/// Built-in native-asset prices, micro-USD, by chain id: deliberately round
/// figures; operators set current ones in `[quote.native_usd_e6]`.
pub fn default_native_usd_e6(chain: u64) -> u64 {
    match chain {
        56 => 600_000_000,
        100 | 5000 | 33139 => 1_000_000,
        137 | 146 => 500_000,
        43114 => 30_000_000,
        999 => 20_000_000,
        _ => 3_000_000_000,
    }
}

/// One recognised membership collection (an ERC-721 on an EVM chain).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VipCollection {
    /// Chain id it lives on.
    pub chain: u64,
    /// Contract address.
    pub address: String,
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
}

/// Membership (`[vip]`): a sender holding any recognised collection
/// (`balanceOf(fromAddress) > 0`) pays the member fee tier.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct VipConfig {
    /// Recognised collections (default none: nobody is a member).
    pub registry: Vec<VipCollection>,
}

/// Rate limits and client identity (`[limits]`, spec §8.1, §5.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LimitsConfig {
    /// Whether limits are enforced (default true).
    pub enabled: bool,
    /// Overrides of the buckets counted per minute, by bucket name
    /// (`status`, `quote`, `execute`, `compare`, `solve`, `recent`,
    /// `batch`, `schedule`, the host's own such as `intent`,
    /// `admin-login`, `balance`, or a default bucket's `"<METHOD> <route>"`,
    /// e.g. `"GET /api/route/status"`); the defaults are the spec's (§8.1:
    /// 60, 40, 8, 30, 20, 60, 30, 30) and the host's (`relay_api::limits`).
    pub per_minute: BTreeMap<String, u32>,
    /// Overrides of the buckets counted per hour, by bucket name (none by
    /// default).
    pub per_hour: BTreeMap<String, u32>,
    /// Overrides of the buckets counted per day, by bucket name (`keys`:
    /// keys created per IP per day, default 10).
    pub per_day: BTreeMap<String, u32>,
    /// Per-minute limit of every matched route no bucket names, each route
    /// (method and template) in its own bucket, and of unknown paths, all
    /// in one (default 120). `0` refuses them all.
    pub default_per_minute: u32,
    /// Peers whose `X-Forwarded-For` is believed (default none: the TCP
    /// peer is the client).
    pub trusted_proxies: Vec<IpAddr>,
    /// Live sessions of the hosted MCP endpoint one IP may hold (default
    /// 8); past it `initialize` is 429 `RATE_LIMITED`.
    pub mcp_sessions_per_ip: usize,
    /// Live sessions of the hosted MCP endpoint in all (default 256); past
    /// it `initialize` is 429 `RATE_LIMITED`.
    pub mcp_sessions_total: usize,
    /// Open (prepared, not lapsed) router intents one IP may hold, each of
    /// which reserves its owner's Permit2 and router nonces (default 16);
    /// past it a prepare is 429 `RATE_LIMITED`.
    pub intents_per_ip: usize,
    /// Nonces this host holds reserved for one owner on one bitmap
    /// (default 64): past it an owner's intent is handed a random 64-bit
    /// nonce (a fresh bitmap word, ~17k gas more), never one another open
    /// intent holds — so nobody can push an owner's low nonces up or lock
    /// it out by preparing intents in its name, and no two routes of one
    /// host ever carry one nonce (the later would revert on chain).
    pub intent_nonces_per_owner: usize,
    /// Where the counts live: `memory` (the default: this process, for one
    /// node) or `store` (the host's database: every replica on it counts a
    /// client once, so N replicas behind a balancer still give a client
    /// the limit, not N times it). `store` also shares the quote book:
    /// one upstream budget per rail for the deployment, one refresher per
    /// lane, the same answers on every replica.
    pub backend: LimitsBackend,
    /// What a request meets while the `store` backend cannot be reached:
    /// `open` (the default: served uncounted; `/api/status` and `relay
    /// doctor` say so) or `closed` (503 `RATE_LIMITS_UNAVAILABLE`,
    /// retryable).
    pub on_backend_failure: FailMode,
}

/// Where rate-limit counts live (`[limits] backend`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LimitsBackend {
    /// In this process.
    #[default]
    Memory,
    /// In the host's database, shared by its replicas.
    Store,
}

/// What a shared backend that cannot be reached does to a request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailMode {
    /// Serve it, uncounted.
    #[default]
    Open,
    /// Refuse it (503, retryable).
    Closed,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            enabled: true,
            per_minute: BTreeMap::new(),
            per_hour: BTreeMap::new(),
            per_day: BTreeMap::new(),
            default_per_minute: 120,
            trusted_proxies: Vec::new(),
            mcp_sessions_per_ip: 8,
            mcp_sessions_total: 256,
            intents_per_ip: 16,
            intent_nonces_per_owner: 64,
            backend: LimitsBackend::Memory,
            on_backend_failure: FailMode::Open,
        }
    }
}

/// The HTTP edge (`[http]`): what one request may cost the host before
/// a handler sees it. Every refusal is the JSON error object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HttpConfig {
    /// Largest request body any endpoint reads, bytes (default 65536 =
    /// 64 KiB); a larger one is 413 `BODY_TOO_LARGE`.
    pub body_limit_bytes: usize,
    /// Longest request target (path and query), bytes (default 8192 =
    /// 8 KiB); a longer one is 414 `URI_TOO_LONG`.
    pub uri_limit_bytes: usize,
    /// Largest request header block (names and values), bytes (default
    /// 16384 = 16 KiB), and at most [`HttpConfig::MAX_HEADERS`] headers;
    /// beyond either, 431 `HEADERS_TOO_LARGE`.
    pub header_limit_bytes: usize,
    /// Time a client has to send a request's whole header block, ms
    /// (default 10000); a slower client's connection is closed. It also
    /// bounds how long an idle keep-alive connection waits for its next
    /// request.
    pub header_read_timeout_ms: u64,
    /// Time a client has to send a request's whole body, ms (default
    /// 10000); a slower one is answered 408 `REQUEST_TIMEOUT`.
    pub body_read_timeout_ms: u64,
    /// Time the host has to answer a request (until the response starts;
    /// a stream's events are not limited), ms (default 30000); past it the
    /// answer is 503 `HANDLER_TIMEOUT`.
    pub request_timeout_ms: u64,
    /// `Host` names (or `host:port`) the hosted MCP endpoint (`/mcp`)
    /// answers for (default empty: any — it serves only public reads, as
    /// the API does; list the public names to pin it).
    pub mcp_allowed_hosts: Vec<String>,
    /// Browser origins (`https://app.example:443`, `http://localhost:*`)
    /// allowed to call `/mcp` (default empty: a request carrying an
    /// `Origin` header is refused 403; agents send none).
    pub mcp_allowed_origins: Vec<String>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            body_limit_bytes: 64 * 1024,
            uri_limit_bytes: 8 * 1024,
            header_limit_bytes: 16 * 1024,
            header_read_timeout_ms: 10_000,
            body_read_timeout_ms: 10_000,
            request_timeout_ms: 30_000,
            mcp_allowed_hosts: Vec::new(),
            mcp_allowed_origins: Vec::new(),
        }
    }
}

impl HttpConfig {
    /// Most request headers the host reads; more are 431
    /// `HEADERS_TOO_LARGE`. (hyper parses up to twice as many, so the
    /// refusal is the host's JSON answer, not hyper's empty one.)
    pub const MAX_HEADERS: usize = 100;

    /// Refuses a zero limit or timeout, naming the key.
    pub fn check(&self) -> Result<(), ConfigError> {
        let keys = [
            ("http.body_limit_bytes", self.body_limit_bytes as u64),
            ("http.uri_limit_bytes", self.uri_limit_bytes as u64),
            ("http.header_limit_bytes", self.header_limit_bytes as u64),
            ("http.header_read_timeout_ms", self.header_read_timeout_ms),
            ("http.body_read_timeout_ms", self.body_read_timeout_ms),
            ("http.request_timeout_ms", self.request_timeout_ms),
        ];
        match keys.iter().find(|(_, v)| *v == 0) {
            Some((key, _)) => Err(ConfigError(format!("{key} must be greater than 0"))),
            None => Ok(()),
        }
    }
}

/// Connect timeout of every outbound HTTP client the host builds (upstream
/// APIs, RPC endpoints).
pub const OUTBOUND_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Idle connections an outbound HTTP client keeps per upstream host.
pub const OUTBOUND_MAX_IDLE_PER_HOST: usize = 8;

/// The whole configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostConfig {
    /// HTTP listen address (default 127.0.0.1:8787).
    pub listen: SocketAddr,
    /// Data directory: SQLite database, compiled-module cache (default `.relay`).
    pub data_dir: PathBuf,
    /// Database URL; default `sqlite://<data_dir>/relay.db`. A
    /// `postgres://…` URL switches to Postgres.
    pub database_url: Option<String>,
    /// Directory of installed plugins (default `plugins/dist`).
    pub plugins_dir: PathBuf,
    /// The relayer's public address (its key comes from the environment).
    pub relayer: Option<String>,
    /// The Permit2 contract (default the canonical address).
    pub permit2: String,
    /// EVM chains by chain id.
    pub chains: BTreeMap<String, ChainConfig>,
    /// Capability broker settings.
    pub capabilities: CapabilityConfig,
    /// Per-rail operator settings.
    pub rails: BTreeMap<String, RailConfig>,
    /// Plugin runtime settings.
    pub runtime: RuntimeConfig,
    /// Quoting, fees and pricing.
    pub quote: QuoteConfig,
    /// Membership collections.
    pub vip: VipConfig,
    /// Rate limits.
    pub limits: LimitsConfig,
    /// The HTTP edge: body, URI and time limits.
    pub http: HttpConfig,
    /// Route execution.
    pub execution: ExecutionConfig,
    /// Webhooks and event subscriptions.
    #[serde(default)]
    pub notify: NotifyConfig,
    /// Policy-gated agent sessions.
    #[serde(default)]
    pub sessions: SessionsConfig,
    /// Route primitives: the watcher and the live gate.
    #[serde(default)]
    pub primitives: PrimitivesConfig,
    /// Retention of counterparty addresses (spec §8.2).
    #[serde(default)]
    pub retention: RetentionConfig,
    /// On-chain price feeds the host reads (`[[pricefeeds]]`; default none:
    /// every price comes from `[quote]`).
    #[serde(default)]
    pub pricefeeds: Vec<PriceFeedConfig>,
    /// The operator's dashboard (`[admin]`).
    #[serde(default)]
    pub admin: AdminConfig,
    /// The relayer's key as an encrypted JSON keystore file (the standard
    /// Ethereum keystore), decrypted at start with the passphrase in the
    /// environment variable `relayer_keystore_passphrase_env` (default
    /// unset: the key comes from `RELAY_RELAYER_KEY`).
    #[serde(default)]
    pub relayer_keystore: Option<PathBuf>,
    /// The environment variable holding the keystore's passphrase
    /// (default `RELAY_KEYSTORE_PASSPHRASE`).
    #[serde(default)]
    pub relayer_keystore_passphrase_env: Option<String>,
    /// The relayer key pool's keys as encrypted JSON keystore files, each
    /// decrypted at start with the same passphrase as `relayer_keystore`
    /// (default empty: the pool's keys come from `RELAY_RELAYER_POOL_KEYS`,
    /// hex keys separated by commas, or there is no pool).
    #[serde(default)]
    pub relayer_pool_keystores: Vec<PathBuf>,
    /// Trace export (`[telemetry]`; default off).
    #[serde(default)]
    pub telemetry: TelemetryConfig,
    /// The warm quote book and the hedged cold fan-out (`[quote_book]`).
    #[serde(default)]
    pub quote_book: QuoteBookConfig,
    /// Every other top-level table: a feature's own section (`[netting]`),
    /// parsed by the feature that claims it.
    #[serde(flatten)]
    pub sections: Sections,
}

/// Trace export (`[telemetry]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TelemetryConfig {
    /// OTLP/HTTP endpoint traces are exported to, e.g.
    /// `http://otel-collector:4318` (`/v1/traces` is appended); default
    /// none: no export.
    pub otlp_endpoint: Option<String>,
    /// The `service.name` resource attribute (default `relay`).
    pub service_name: Option<String>,
}

/// The canonical Permit2 address.
pub const CANONICAL_PERMIT2: &str = "0x000000000022D473030F116dDEE9F6B43aC78BA3";

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            listen: "127.0.0.1:8787".parse().expect("valid address"),
            data_dir: PathBuf::from(".relay"),
            database_url: None,
            plugins_dir: PathBuf::from("plugins/dist"),
            relayer: None,
            permit2: CANONICAL_PERMIT2.into(),
            chains: BTreeMap::new(),
            capabilities: CapabilityConfig::default(),
            rails: BTreeMap::new(),
            runtime: RuntimeConfig::default(),
            quote: QuoteConfig::default(),
            vip: VipConfig::default(),
            limits: LimitsConfig::default(),
            http: HttpConfig::default(),
            execution: ExecutionConfig::default(),
            notify: NotifyConfig::default(),
            sessions: SessionsConfig::default(),
            primitives: PrimitivesConfig::default(),
            retention: RetentionConfig::default(),
            pricefeeds: Vec::new(),
            admin: AdminConfig::default(),
            sections: Sections::default(),
            relayer_keystore: None,
            relayer_keystore_passphrase_env: None,
            relayer_pool_keystores: Vec::new(),
            telemetry: TelemetryConfig::default(),
            quote_book: QuoteBookConfig::default(),
        }
    }
}

/// Why configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct ConfigError(String);

impl HostConfig {
    /// Loads `file` (if given; it must exist) and the `RELAY_*` environment.
    pub fn load(file: Option<&Path>) -> Result<Self, ConfigError> {
        let mut b = config::Config::builder();
        if let Some(f) = file {
            if !f.is_file() {
                return Err(ConfigError(format!("{} does not exist", f.display())));
            }
            b = b.add_source(config::File::from(f).format(config::FileFormat::Toml));
        }
        b = b.add_source(
            config::Environment::with_prefix("RELAY")
                .separator("__")
                .prefix_separator("_")
                .try_parsing(true),
        );
        let raw = b.build().map_err(|e| ConfigError(e.to_string()))?;
        let cfg: HostConfig = raw
            .try_deserialize()
            .map_err(|e| ConfigError(e.to_string()))?;
        cfg.http.check()?;
        validate::validate(&cfg)?;
        Ok(cfg)
    }

    /// The database URL in effect.
    pub fn database_url(&self) -> String {
        self.database_url.clone().unwrap_or_else(|| {
            format!(
                "sqlite://{}?mode=rwc",
                self.data_dir.join("relay.db").display()
            )
        })
    }

    /// The `RelayRouter` on `chain`, when one is configured.
    pub fn router(&self, chain: u64) -> Option<&str> {
        self.chains.get(&chain.to_string())?.router.as_deref()
    }

    /// EVM chain ids configured, ascending.
    pub fn chain_ids(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self.chains.keys().filter_map(|k| k.parse().ok()).collect();
        ids.sort_unstable();
        ids
    }

    /// The well-known or configured name of a chain.
    pub fn chain_name(&self, id: u64) -> String {
        self.chains
            .get(&id.to_string())
            .and_then(|c| c.name.clone())
            .unwrap_or_else(|| relay_types::chains::well_known_name(id).to_string())
    }
}
