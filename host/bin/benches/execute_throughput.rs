//! Execute throughput with one relayer key, next to raw transaction
//! ingestion on the same anvil chain, measured in the same run:
//!
//! - `execute/permit2_routes`: a batch of [`BATCH`] gasless routes, 5 USDC
//!   8453 → 42161 on the float lane, each with its own Permit2 signature
//!   from anvil account 1, all signed before the clock starts; the batch is
//!   POSTed to `/api/route/execute` at once and timed until every route is
//!   `DONE` (polled on `/api/route/status`). Per route the relayer signs
//!   the Permit2 pull on 8453 and the payout on 42161, through the host's
//!   journaled sender and nonce manager, behind the full HTTP stack.
//! - `execute/permit2_bridge_routes`: the same batch with `mode:"permit2"`
//!   on the `lifi` rail (`"rail":"lifi"`): per route the relayer signs two
//!   transactions on 8453, the Permit2 pull and the `BridgeDeposit`
//!   deposit call; the rail's one unlimited approval of the deposit
//!   contract is made in warm-up. The LI.FI simulator sees each deposit
//!   and pays out on 42161 itself (the relayer signs nothing there).
//! - `execute/router_bridge_routes`: the same batch through the
//!   `RelayRouter` on the `lifi` rail: each route is its own intent from
//!   `POST /api/route/intent`, prepared and signed (its `permit2-witness`
//!   form, one signature: anvil account 1 has approved Permit2) before the
//!   clock starts, per batch (a prepared intent lives
//!   `execution.intent_ttl_secs`). Per route the relayer signs one
//!   transaction on 8453: the router call that pulls, withholds the fee
//!   and makes the rail's deposit.
//! - `execute/raw_transfers`: [`BATCH`] ERC-20 transfers from anvil
//!   account 2 on 8453, signed offline with consecutive nonces before the
//!   clock starts, sent with `eth_sendRawTransaction` and timed until every
//!   receipt is in: the chain's own ingestion floor.
//!
//! Each batch asserts zero nonce errors: every route `DONE` and the
//! relayer's nonce on each chain advanced by exactly the transactions its
//! routes sign (no gap fills, no replacements: 2 per permit2 bridge route
//! and 1 per router route on 8453, none on 42161); every raw transaction
//! mined successfully and the sender's nonce advanced by the batch. Each
//! route batch also sums the `gasUsed` of the relayer's transactions on
//! 8453 over the blocks the batch mined (every one of them found: as many
//! as its nonce advanced), for the source gas per route. Criterion reports
//! the time per batch and elements per second (routes/s, tx/s); a summary
//! line with the means over every measured batch follows: routes/s and
//! source gas per route of each route kind, raw tx/s.
//!
//! The real host, devnet and simulators are set up as
//! `host/bin/tests/it/common` sets them up (rate limits off), on an
//! ephemeral port.
//!
//! `cargo bench -p relay-host --features devnet --bench execute_throughput`;
//! under `cargo test --benches` each function runs one batch.

// criterion's macros generate undocumented public items.
#![allow(missing_docs)]

mod support;

use std::{
    cell::{Cell, RefCell},
    time::{Duration, Instant},
};

use alloy::{
    eips::{BlockId, BlockNumberOrTag, Encodable2718},
    network::{Ethereum, EthereumWallet, NetworkTransactionBuilder, TransactionBuilder},
    primitives::{Address, Bytes, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionRequest,
    sol_types::SolCall,
};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use relay_devnet::{contracts::TestToken, keys, Devnet};
use serde_json::{json, Value};
use support::Served;
use tokio::runtime::Runtime;

const SRC: u64 = 8453;
const DST: u64 = 42161;
/// Routes (or raw transactions) per measured batch.
const BATCH: usize = 20;
/// USDC base units per route (5 USDC).
const AMOUNT: u64 = 5_000_000;
/// The anvil account that signs the permits and the router intents.
const USER: usize = 1;
/// The anvil account that sends the raw transfers.
const RAW_SENDER: usize = 2;
/// The bridge rail of the permit2 and router bridge routes.
const BRIDGE_RAIL: &str = "lifi";
/// Relayer transactions per permit2 bridge route on the source and
/// destination chains, once the deposit contract is approved: the pull and
/// the deposit call; the rail's upstream pays out.
const BRIDGE_SIGNS: (u64, u64) = (2, 0);
/// Relayer transactions per router bridge route: one router call (pull,
/// fee and deposit); the rail's upstream pays out.
const ROUTER_SIGNS: (u64, u64) = (1, 0);
/// How often a batch's routes and receipts are polled.
const POLL: Duration = Duration::from_millis(10);
/// How long one batch may take before the bench fails.
const BATCH_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a sent raw transfer may wait for its block before the bench asks
/// anvil to mine one: anvil's automine now and then leaves a ready transaction
/// in its pool until the next one arrives (foundry-rs/foundry#10122), where a
/// real sender would replace it (the host's sender bumps after 30 s).
const STALL: Duration = Duration::from_secs(2);

/// The routes a batch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `mode:"permit2"` on the float lane.
    Float,
    /// `mode:"permit2"` on [`BRIDGE_RAIL`]: pull, then deposit.
    Permit2Bridge,
    /// A prepared `permit2-witness` intent on [`BRIDGE_RAIL`] through the
    /// `RelayRouter`: one source transaction.
    RouterBridge,
}

/// Measured batches of one subject, for the summary: their durations and
/// the relayer's gas on the source chain.
#[derive(Default)]
struct Tally {
    times: RefCell<Vec<Duration>>,
    gas: Cell<u64>,
}

impl Tally {
    fn add(&self, d: Duration, gas: u64) {
        self.times.borrow_mut().push(d);
        self.gas.set(self.gas.get() + gas);
    }

    /// Elements per second over every recorded batch (NaN without any:
    /// a filtered run).
    fn per_sec(&self) -> f64 {
        let batches = self.times.borrow();
        let total: Duration = batches.iter().sum();
        (batches.len() * BATCH) as f64 / total.as_secs_f64()
    }

    /// The relayer's mean source-chain gas per route (NaN without any batch).
    fn gas_per_route(&self) -> f64 {
        self.gas.get() as f64 / (self.batches() * BATCH) as f64
    }

    fn batches(&self) -> usize {
        self.times.borrow().len()
    }
}

/// Where the Permit2 nonces the bench signs itself start: far above the
/// bitmap words the host hands router intents their nonces from (the
/// owner's lowest unused nonce, so consecutive routes share a warm word).
/// Starting at 1, a run's float-lane routes filled the first words before
/// the router ran; the host then handed out nonces in fresh words (~17k
/// gas more), and the router's gas per route depended on how many float
/// batches the machine managed.
const OWN_NONCES_FROM: u64 = 1 << 40;

/// Everything measured; fields drop in order, the runtime last.
struct Stack {
    client: reqwest::Client,
    base: String,
    src: DynProvider,
    dst: DynProvider,
    /// The next Permit2 nonce the bench signs itself (float-lane and
    /// two-transaction routes), from [`OWN_NONCES_FROM`] up.
    permit_nonce: Cell<u64>,
    /// The raw sender's next account nonce.
    raw_nonce: Cell<u64>,
    raw_wallet: EthereumWallet,
    usdc: Address,
    max_fee: u128,
    /// Relayer transactions per float-lane route on the source and
    /// destination chains (learned in warm-up).
    signs_per_route: (u64, u64),
    routes: Tally,
    bridge: Tally,
    router: Tally,
    raw: Tally,
    _served: Served,
    devnet: Devnet,
    _dir: tempfile::TempDir,
    rt: Runtime,
}

impl Stack {
    fn start() -> Self {
        let (rt, dir, devnet, served) = support::start([SRC, DST]);
        let chain = |id| devnet.chain(id).expect("chain");
        let (src, dst) = (chain(SRC).provider(), chain(DST).provider());
        let usdc = chain(SRC).deployment.usdc;
        let (raw_nonce, gas_price) = rt.block_on(async {
            support::approve_permit2(&src, usdc, USER).await;
            let nonce = src
                .get_transaction_count(keys::anvil_address(RAW_SENDER))
                .await
                .expect("nonce");
            (nonce, src.get_gas_price().await.expect("gas price"))
        });
        let mut stack = Stack {
            client: reqwest::Client::new(),
            base: served.base.clone(),
            src,
            dst,
            permit_nonce: Cell::new(OWN_NONCES_FROM),
            raw_nonce: Cell::new(raw_nonce),
            raw_wallet: EthereumWallet::from(keys::anvil_signer(RAW_SENDER)),
            usdc,
            max_fee: gas_price * 2 + 1_000_000_000,
            signs_per_route: (0, 0),
            routes: Tally::default(),
            bridge: Tally::default(),
            router: Tally::default(),
            raw: Tally::default(),
            _served: served,
            devnet,
            _dir: dir,
            rt,
        };
        stack.signs_per_route = stack.warm_up();
        stack
    }

    /// One route of each kind end to end before measuring: warms the host,
    /// learns how many transactions the relayer signs per float-lane route
    /// on each chain, has the bridge rail's deposit contract approved, and
    /// checks the router route signs one.
    fn warm_up(&self) -> (u64, u64) {
        let signs = |kind| {
            let bodies = self.bodies(kind, 1);
            let before = self.rt.block_on(self.relayer_nonces());
            self.rt.block_on(self.run_routes(bodies));
            let after = self.rt.block_on(self.relayer_nonces());
            (after.0 - before.0, after.1 - before.1)
        };
        let float = signs(Kind::Float);
        assert!(
            float.0 >= 1 && float.1 >= 1,
            "the float lane signs on both chains: {float:?}"
        );
        let bridge = signs(Kind::Permit2Bridge);
        assert_eq!(
            bridge,
            (BRIDGE_SIGNS.0 + 1, BRIDGE_SIGNS.1),
            "the first {BRIDGE_RAIL} route pulls, approves the deposit contract once and deposits"
        );
        let router = signs(Kind::RouterBridge);
        assert_eq!(
            router, ROUTER_SIGNS,
            "one router transaction for pull, fee and deposit"
        );
        float
    }

    fn next_permit_nonce(&self) -> u64 {
        let n = self.permit_nonce.get();
        self.permit_nonce.set(n + 1);
        n
    }

    /// `n` execute bodies of `kind`, every signature made: permits signed
    /// here, router intents prepared and their forms signed. [`USER`] must
    /// hold what they move.
    fn bodies(&self, kind: Kind, n: usize) -> Vec<Value> {
        let user = keys::anvil_address(USER);
        let held = self.rt.block_on(async {
            TestToken::new(self.usdc, &self.src)
                .balanceOf(user)
                .call()
                .await
                .expect("balance")
        });
        let needed = U256::from(AMOUNT) * U256::from(n);
        assert!(
            held >= needed,
            "account {USER} holds {held} USDC units, the batch moves {needed}"
        );
        match kind {
            Kind::Float | Kind::Permit2Bridge => {
                let rail = (kind == Kind::Permit2Bridge).then_some(BRIDGE_RAIL);
                (0..n)
                    .map(|_| {
                        let nonce = self.next_permit_nonce();
                        support::permit_body(&self.devnet, (SRC, DST), (USER, AMOUNT), nonce, rail)
                    })
                    .collect()
            }
            Kind::RouterBridge => {
                let prepared = self
                    .rt
                    .block_on(futures::future::join_all((0..n).map(|_| self.prepare())));
                let key = keys::anvil_signer(USER);
                prepared
                    .iter()
                    .map(|p| {
                        let form = &p["forms"]["permit2Witness"];
                        assert_eq!(form["usable"], true, "{p}");
                        assert_eq!(
                            form["fill"],
                            json!(["permit2.signature"]),
                            "Permit2 is approved: one signature, {p}"
                        );
                        let body = relay_chain::typed::sign_form(form, &key).expect("signs");
                        assert_eq!(body["intentId"], p["intentId"]);
                        body
                    })
                    .collect()
            }
        }
    }

    /// Prepares one router intent of [`AMOUNT`] USDC from [`USER`] to
    /// itself on 42161 over [`BRIDGE_RAIL`].
    async fn prepare(&self) -> Value {
        let user = keys::anvil_address(USER);
        let body = json!({
            "fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC",
            "amount": AMOUNT.to_string(), "fromAddress": user, "toAddress": user,
            "rail": BRIDGE_RAIL,
        });
        let resp = self
            .client
            .post(format!("{}/api/route/intent", self.base))
            .json(&body)
            .send()
            .await
            .expect("intent");
        let status = resp.status();
        let text = resp.text().await.expect("body");
        assert!(status.is_success(), "intent: {status}: {text}");
        let v: Value = serde_json::from_str(&text).expect("JSON intent");
        assert_eq!(v["rail"], BRIDGE_RAIL, "{v}");
        v
    }

    /// The relayer's account nonces on the source and destination chains.
    async fn relayer_nonces(&self) -> (u64, u64) {
        let relayer = keys::relayer().address();
        let (s, d) = tokio::join!(
            self.src.get_transaction_count(relayer),
            self.dst.get_transaction_count(relayer)
        );
        (s.expect("source nonce"), d.expect("destination nonce"))
    }

    /// The relayer's transactions on the source chain in blocks `from..=to`
    /// and the gas they used.
    async fn relayer_gas(&self, from: u64, to: u64) -> (u64, u64) {
        let relayer = keys::relayer().address();
        let blocks = futures::future::join_all((from..=to).map(|n| {
            self.src
                .get_block_receipts(BlockId::Number(BlockNumberOrTag::Number(n)))
        }))
        .await;
        let mut count = 0;
        let mut gas = 0;
        for receipts in blocks {
            for r in receipts.expect("block receipts").expect("a mined block") {
                if r.from == relayer {
                    count += 1;
                    gas += r.gas_used;
                }
            }
        }
        (count, gas)
    }

    /// Executes every route of `bodies` at once and waits until all are
    /// `DONE`; the time from the first POST to the last `DONE`.
    async fn run_routes(&self, bodies: Vec<Value>) -> Duration {
        let started = Instant::now();
        support::run_routes(&self.client, &self.base, &bodies, BATCH_TIMEOUT).await;
        started.elapsed()
    }

    /// One measured batch of routes of `kind`, with its nonce check and the
    /// relayer's source gas.
    fn route_batch(&self, kind: Kind) -> Duration {
        let (tally, (src, dst)) = match kind {
            Kind::Float => (&self.routes, self.signs_per_route),
            Kind::Permit2Bridge => (&self.bridge, BRIDGE_SIGNS),
            Kind::RouterBridge => (&self.router, ROUTER_SIGNS),
        };
        let bodies = self.bodies(kind, BATCH);
        let block = || {
            self.rt
                .block_on(self.src.get_block_number())
                .expect("block number")
        };
        let before = self.rt.block_on(self.relayer_nonces());
        let first = block() + 1;
        let took = self.rt.block_on(self.run_routes(bodies));
        let last = block();
        let after = self.rt.block_on(self.relayer_nonces());
        let n = BATCH as u64;
        assert_eq!(
            (after.0 - before.0, after.1 - before.1),
            (n * src, n * dst),
            "{kind:?}: the relayer signed exactly its routes' transactions: no gap fills, no \
             replacements"
        );
        let (sent, gas) = self.rt.block_on(self.relayer_gas(first, last));
        assert_eq!(
            sent,
            after.0 - before.0,
            "{kind:?}: every relayer transaction of the batch is in blocks {first}..={last}"
        );
        tally.add(took, gas);
        took
    }

    /// [`BATCH`] signed USDC transfers from [`RAW_SENDER`] with the next
    /// consecutive nonces.
    fn sign_raw(&self) -> Vec<(B256, Bytes)> {
        let to = keys::anvil_address(RAW_SENDER + 1);
        let input = TestToken::transferCall::new((to, U256::from(1u64))).abi_encode();
        self.rt.block_on(async {
            let mut out = Vec::with_capacity(BATCH);
            for _ in 0..BATCH {
                let nonce = self.raw_nonce.get();
                self.raw_nonce.set(nonce + 1);
                let tx = TransactionRequest::default()
                    .with_to(self.usdc)
                    .with_input(input.clone())
                    .with_nonce(nonce)
                    .with_chain_id(SRC)
                    .with_gas_limit(100_000)
                    .with_max_fee_per_gas(self.max_fee)
                    .with_max_priority_fee_per_gas(1_000_000_000);
                let envelope = <TransactionRequest as NetworkTransactionBuilder<Ethereum>>::build(
                    tx,
                    &self.raw_wallet,
                )
                .await
                .expect("signs");
                out.push((*envelope.tx_hash(), envelope.encoded_2718().into()));
            }
            out
        })
    }

    /// Sends `txs` in nonce order and waits for every receipt.
    async fn ingest(&self, txs: &[(B256, Bytes)]) -> Duration {
        let started = Instant::now();
        for (hash, raw) in txs {
            let sent = self
                .src
                .send_raw_transaction(raw)
                .await
                .expect("eth_sendRawTransaction");
            assert_eq!(sent.tx_hash(), hash, "the node took the signed bytes");
        }
        let deadline = Instant::now() + BATCH_TIMEOUT;
        let mut nudge_at = Instant::now() + STALL;
        for (hash, _) in txs {
            loop {
                if let Some(r) = self
                    .src
                    .get_transaction_receipt(*hash)
                    .await
                    .expect("receipt")
                {
                    assert!(r.status(), "raw transfer {hash} reverted");
                    nudge_at = Instant::now() + STALL;
                    break;
                }
                assert!(Instant::now() < deadline, "raw transfer {hash} not mined");
                if Instant::now() >= nudge_at {
                    let _: Value = self
                        .src
                        .raw_request("evm_mine".into(), ())
                        .await
                        .expect("evm_mine");
                    nudge_at = Instant::now() + STALL;
                }
                tokio::time::sleep(POLL).await;
            }
        }
        started.elapsed()
    }

    /// One measured batch of raw transfers, with its nonce check.
    fn raw_batch(&self) -> Duration {
        let txs = self.sign_raw();
        let took = self.rt.block_on(self.ingest(&txs));
        let sender = keys::anvil_address(RAW_SENDER);
        let mined = self
            .rt
            .block_on(async { self.src.get_transaction_count(sender).await })
            .expect("nonce");
        assert_eq!(mined, self.raw_nonce.get(), "every raw transfer mined");
        self.raw.add(took, 0);
        took
    }

    fn summary(&self) -> String {
        let routes = self.routes.per_sec();
        let (src, dst) = self.signs_per_route;
        format!(
            "execute_throughput: router {BRIDGE_RAIL} {:.2} routes/s, {:.0} gas/route on {SRC} \
             ({} tx/route) vs permit2 {BRIDGE_RAIL} {:.2} routes/s, {:.0} gas/route on {SRC} ({} \
             tx/route); float-lane permit2 {routes:.2} routes/s, {:.0} gas/route on {SRC} ({:.2} \
             relayer tx/s: {src} on {SRC} + {dst} on {DST} per route) vs {:.1} raw tx/s; \
             batches of {BATCH}: {} router, {} permit2 bridge, {} float, {} raw; zero nonce \
             errors",
            self.router.per_sec(),
            self.router.gas_per_route(),
            ROUTER_SIGNS.0,
            self.bridge.per_sec(),
            self.bridge.gas_per_route(),
            BRIDGE_SIGNS.0,
            self.routes.gas_per_route(),
            routes * (src + dst) as f64,
            self.raw.per_sec(),
            self.router.batches(),
            self.bridge.batches(),
            self.routes.batches(),
            self.raw.batches(),
        )
    }
}

/// Lets Permit2 spend [`USER`]'s USDC on the source chain (once, as a
/// wallet does).
fn execute_throughput(c: &mut Criterion) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let s = Stack::start();
    let mut g = c.benchmark_group("execute");
    // A batch takes seconds: ten flat samples of one batch each.
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(10))
        .throughput(Throughput::Elements(BATCH as u64));
    for (name, kind) in [
        ("permit2_routes", Kind::Float),
        ("permit2_bridge_routes", Kind::Permit2Bridge),
        ("router_bridge_routes", Kind::RouterBridge),
    ] {
        g.bench_function(name, |b| {
            b.iter_custom(|iters| (0..iters).map(|_| s.route_batch(kind)).sum())
        });
    }
    g.bench_function("raw_transfers", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| s.raw_batch()).sum())
    });
    g.finish();
    eprintln!("{}", s.summary());
}

criterion_group!(benches, execute_throughput);
criterion_main!(benches);
