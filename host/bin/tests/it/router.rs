//! One signature that binds the whole route, end to end on the devnet: a
//! wallet asks `POST /api/route/intent` for the typed data, signs what it
//! is served (nothing assembled by hand), POSTs the execute body, and the
//! relayer moves the route in one `RelayRouter` transaction. Balances are
//! asserted on chain, and the router holds nothing after any route.
//!
//! Tampering (a changed toAddress, toChain, minOut or rail against the
//! signed witness; a reused nonce; an expired deadline; a witness signed
//! for another chain; a high-s signature; a contract wallet whose ERC-1271
//! check fails) is refused with a typed 4xx before anything is sent: the
//! relayer's nonce does not move.

use crate::common::{self, get, post, serve, until_terminal, usdc_balance, Running};
use alloy::{
    primitives::{Address, U256},
    providers::Provider,
    signers::local::PrivateKeySigner,
};
use relay_devnet::{
    contracts::Permit2,
    deploy::{set_balance, wallet_provider},
    keys, Devnet, DevnetConfig, Token,
};
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const AMOUNT: u64 = 5_000_000;

fn addr(v: &Value) -> Address {
    v.as_str().unwrap().parse().unwrap()
}

fn num(v: &Value) -> U256 {
    v.as_str().unwrap().parse().unwrap()
}

/// Signs every entry of a served form with `key` and fills its body.
pub(crate) fn signed_body(form: &Value, key: &PrivateKeySigner) -> Value {
    relay_chain::typed::sign_form(form, key).unwrap()
}

/// A devnet on `chains` and a host serving it.
async fn up<const N: usize>(chains: [u64; N]) -> (Devnet, tempfile::TempDir, Running) {
    up_with(chains, |_| {}).await
}

/// [`up`], with the host's configuration edited by `tweak`.
async fn up_with<const N: usize>(
    chains: [u64; N],
    tweak: impl FnOnce(&mut relay_config::HostConfig),
) -> (Devnet, tempfile::TempDir, Running) {
    let devnet = Devnet::start(DevnetConfig::with_chains(chains))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), tweak).await;
    (devnet, dir, h)
}

pub(crate) async fn prepare(
    h: &Running,
    owner: Address,
    recipient: Address,
    rail: Option<&str>,
) -> Value {
    let mut body = json!({
        "fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC",
        "amount": AMOUNT.to_string(), "fromAddress": owner, "toAddress": recipient,
    });
    if let Some(r) = rail {
        body["rail"] = json!(r);
    }
    let (code, text) = post(&h.base, "/api/route/intent", &body, &[]).await;
    assert_eq!(code, 200, "{text}");
    serde_json::from_str(&text).unwrap()
}

async fn execute(h: &Running, body: &Value) -> (u16, Value) {
    let (code, text) = post(&h.base, "/api/route/execute", body, &[]).await;
    (
        code,
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("{text}")),
    )
}

async fn relayer_nonce(devnet: &Devnet) -> u64 {
    let c = devnet.chain(SRC).unwrap();
    c.provider()
        .get_transaction_count(keys::relayer().address())
        .await
        .unwrap()
}

async fn router_holds_nothing(devnet: &Devnet) {
    let router = devnet.deployment(SRC).unwrap().router;
    for token in Token::ALL {
        let held = common::token_balance(devnet, SRC, token, router).await;
        assert_eq!(held, U256::ZERO, "the router holds {held} {token}");
    }
    let eth = devnet
        .chain(SRC)
        .unwrap()
        .provider()
        .get_balance(router)
        .await
        .unwrap();
    assert_eq!(eth, U256::ZERO);
}

/// A fresh key holding `AMOUNT` USDC on the source chain and nothing else.
pub(crate) async fn fresh_wallet(devnet: &Devnet, seed: &str) -> PrivateKeySigner {
    let key = keys::seeded_signer(seed);
    devnet
        .mint(SRC, Token::Usdc, key.address(), U256::from(AMOUNT))
        .await
        .unwrap();
    key
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wallet_with_no_gas_and_no_approval_completes_its_first_route() {
    let (devnet, _dir, h) = up([SRC, DST]).await;
    let user = fresh_wallet(&devnet, "router-first-route").await;
    let recipient = keys::seeded_signer("router-first-route-recipient").address();
    let provider = devnet.chain(SRC).unwrap().provider();
    assert_eq!(
        provider.get_balance(user.address()).await.unwrap(),
        U256::ZERO
    );

    let prepared = prepare(&h, user.address(), recipient, None).await;
    let form = &prepared["forms"]["permit2Witness"];
    assert_eq!(form["usable"], true, "{prepared}");
    assert_eq!(
        form["fill"],
        json!(["erc2612.signature", "permit2.signature"]),
        "no approval yet: a permit for Permit2 first"
    );
    let (code, receipt) = execute(&h, &signed_body(form, &user)).await;
    assert_eq!(code, 200, "{receipt}");
    let id = receipt["id"].as_str().unwrap();
    assert_eq!(id, prepared["intentId"]);
    let done = until_terminal(&h.base, id).await;
    assert_eq!(done["status"], "DONE", "{done}");

    let delivered: U256 = done["to"]["estimated"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        usdc_balance(&devnet, SRC, user.address()).await,
        U256::ZERO,
        "the whole amount pulled"
    );
    assert_eq!(
        usdc_balance(&devnet, DST, recipient).await,
        delivered,
        "paid out what was quoted"
    );
    assert!(delivered >= num(&prepared["intent"]["minOut"]));
    assert_eq!(
        provider.get_balance(user.address()).await.unwrap(),
        U256::ZERO,
        "the user never paid gas"
    );
    router_holds_nothing(&devnet).await;

    // The same signed body again answers the same route and moves nothing.
    let (code, again) = execute(&h, &signed_body(form, &user)).await;
    assert_eq!((code, again["id"].as_str()), (200, Some(id)), "{again}");
    assert_eq!(usdc_balance(&devnet, DST, recipient).await, delivered);
    devnet.stop();
}

/// An owner that has used its first six words of Permit2 nonces (1,536
/// signatures for other apps) is not handed a random nonce on every
/// route, each writing a fresh bitmap word (~17k gas more): once a prepare
/// has found words 0–3 full, the next take the lowest free nonces above
/// them, consecutive ones in one word, and such a route runs.
#[tokio::test(flavor = "multi_thread")]
async fn an_owner_whose_first_nonce_words_are_used_is_handed_the_next_free_ones() {
    let (devnet, _dir, h) = up([SRC, DST]).await;
    let user = fresh_wallet(&devnet, "router-used-nonces").await;
    let chain = devnet.chain(SRC).unwrap();
    let gas = U256::from(10u64.pow(17));
    set_balance(&chain.provider(), user.address(), gas)
        .await
        .unwrap();
    let own = wallet_provider(devnet.rpc_url(SRC).unwrap(), user.clone());
    let permit2 = Permit2::new(chain.deployment.permit2, &own);
    for word in 0..6u64 {
        let sent = permit2.invalidateUnorderedNonces(U256::from(word), U256::MAX);
        sent.send().await.unwrap().get_receipt().await.unwrap();
    }
    let recipient = keys::seeded_signer("router-used-nonces-recipient").address();
    let mut bodies = Vec::new();
    for _ in 0..3 {
        let prepared = prepare(&h, user.address(), recipient, None).await;
        bodies.push(signed_body(&prepared["forms"]["permit2Witness"], &user));
    }
    let nonces: Vec<U256> = bodies.iter().map(|b| num(&b["permit2"]["nonce"])).collect();
    assert!(nonces[0] >= U256::from(6 * 256), "a used nonce: {nonces:?}");
    assert_eq!(
        nonces[1..],
        [U256::from(6 * 256), U256::from(6 * 256 + 1)],
        "the lowest free nonces after the used words"
    );

    let (code, receipt) = execute(&h, &bodies[1]).await;
    assert_eq!(code, 200, "{receipt}");
    let done = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let word = permit2
        .nonceBitmap(user.address(), U256::from(6))
        .call()
        .await
        .unwrap();
    assert_eq!(word, U256::from(1), "the route spent nonce 1,536");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bridge_rail_deposits_through_the_router_in_one_transaction() {
    let (devnet, _dir, h) = up([SRC, DST]).await;
    let user = fresh_wallet(&devnet, "router-bridge").await;
    let recipient = keys::seeded_signer("router-bridge-recipient").address();
    let prepared = prepare(&h, user.address(), recipient, Some("lifi")).await;
    assert_eq!(prepared["rail"], "lifi", "{prepared}");
    assert_ne!(
        prepared["deposit"]["data"], "0x",
        "a deposit call, not an intake: {prepared}"
    );
    let before = relayer_nonce(&devnet).await;
    let (code, receipt) = execute(
        &h,
        &signed_body(&prepared["forms"]["permit2Witness"], &user),
    )
    .await;
    assert_eq!(code, 200, "{receipt}");
    let done = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(
        relayer_nonce(&devnet).await - before,
        1,
        "one source transaction for pull, fee and deposit"
    );
    let delivered = usdc_balance(&devnet, DST, recipient).await;
    assert!(
        delivered >= num(&prepared["intent"]["minOut"]),
        "{delivered} {prepared}"
    );
    assert_eq!(usdc_balance(&devnet, SRC, user.address()).await, U256::ZERO);
    router_holds_nothing(&devnet).await;
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_eip712_intent_route_spends_an_approval_to_the_router() {
    let (devnet, _dir, h) = up([SRC, DST]).await;
    let index = 2;
    let user = keys::anvil_signer(index);
    let c = devnet.chain(SRC).unwrap();
    let router = c.deployment.router;
    relay_devnet::contracts::TestToken::new(c.deployment.usdc, c.provider())
        .approve(router, U256::MAX)
        .from(user.address())
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    let recipient = keys::seeded_signer("router-intent-recipient").address();
    let src0 = usdc_balance(&devnet, SRC, user.address()).await;

    let prepared = prepare(&h, user.address(), recipient, None).await;
    let form = &prepared["forms"]["intent"];
    assert_eq!(form["usable"], true, "{prepared}");
    let (code, receipt) = execute(&h, &signed_body(form, &user)).await;
    assert_eq!(code, 200, "{receipt}");
    let done = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(
        src0 - usdc_balance(&devnet, SRC, user.address()).await,
        U256::from(AMOUNT)
    );
    let delivered: U256 = done["to"]["estimated"].as_str().unwrap().parse().unwrap();
    assert_eq!(usdc_balance(&devnet, DST, recipient).await, delivered);
    router_holds_nothing(&devnet).await;
    devnet.stop();
}

/// Asserts a refusal's status and errorCode, and that nothing was sent.
async fn refused(h: &Running, devnet: &Devnet, body: &Value, want: (u16, &str, &str)) {
    let before = relayer_nonce(devnet).await;
    let (code, err) = execute(h, body).await;
    assert_eq!(
        (code, err["errorCode"].as_str(), err["field"].as_str()),
        (want.0, Some(want.1), Some(want.2)),
        "{err}"
    );
    assert_eq!(
        relayer_nonce(devnet).await,
        before,
        "nothing was sent for {err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tampering_is_refused_before_anything_is_sent() {
    let (devnet, _dir, h) = up([SRC, DST, 10]).await;
    let user = fresh_wallet(&devnet, "router-tamper").await;
    let recipient = keys::seeded_signer("router-tamper-recipient").address();
    let prepared = prepare(&h, user.address(), recipient, None).await;
    let form = &prepared["forms"]["permit2Witness"];
    let good = signed_body(form, &user);

    let mut b = good.clone();
    b["toAddress"] = json!(keys::seeded_signer("thief").address());
    refused(&h, &devnet, &b, (422, "INTENT_MISMATCH", "toAddress")).await;
    let mut b = good.clone();
    b["toChain"] = json!(10);
    refused(&h, &devnet, &b, (422, "INTENT_MISMATCH", "toChain")).await;
    let mut b = good.clone();
    b["intent"]["minOut"] = json!("1");
    refused(&h, &devnet, &b, (422, "INTENT_MISMATCH", "intent.minOut")).await;
    let mut b = good.clone();
    b["rail"] = json!("lifi");
    refused(&h, &devnet, &b, (422, "INTENT_MISMATCH", "rail")).await;
    let mut b = good.clone();
    b["intent"]["rail"] = json!("lifi");
    refused(&h, &devnet, &b, (422, "INTENT_MISMATCH", "intent.rail")).await;

    // A witness signed for another chain (the same terms, Permit2's domain on DST).
    let mut other_chain = form.clone();
    other_chain["sign"][1]["domain"]["chainId"] = json!(DST);
    refused(
        &h,
        &devnet,
        &signed_body(&other_chain, &user),
        (400, "SIGNATURE_INVALID", "permit2.signature"),
    )
    .await;
    // Signed by someone else.
    refused(
        &h,
        &devnet,
        &signed_body(form, &keys::seeded_signer("not-the-owner")),
        (400, "SIGNATURE_INVALID", "permit2.signature"),
    )
    .await;
    // The same signature made high-s: (r, n − s, v flipped) still recovers, but is malleable.
    let mut b = good.clone();
    b["permit2"]["signature"] = json!(high_s(good["permit2"]["signature"].as_str().unwrap()));
    refused(
        &h,
        &devnet,
        &b,
        (400, "SIGNATURE_INVALID", "permit2.signature"),
    )
    .await;
    // An expired Permit2 deadline, correctly signed.
    let mut expired = form.clone();
    expired["sign"][1]["message"]["deadline"] = json!("1000");
    let mut b = signed_body(&expired, &user);
    b["permit2"]["deadline"] = json!("1000");
    refused(
        &h,
        &devnet,
        &b,
        (400, "SIGNATURE_EXPIRED", "permit2.deadline"),
    )
    .await;

    // The untampered body runs; its nonce is then spent.
    let (code, receipt) = execute(&h, &good).await;
    assert_eq!(code, 200, "{receipt}");
    let done = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    // A new intent signed with the spent Permit2 nonce.
    devnet
        .mint(SRC, Token::Usdc, user.address(), U256::from(AMOUNT))
        .await
        .unwrap();
    let next = prepare(&h, user.address(), recipient, None).await;
    let mut reuse = next["forms"]["permit2Witness"].clone();
    let spent = good["permit2"]["nonce"].clone();
    let last = reuse["sign"].as_array().unwrap().len() - 1;
    reuse["sign"][last]["message"]["nonce"] = spent.clone();
    let mut b = signed_body(&reuse, &user);
    b["permit2"]["nonce"] = spent;
    refused(&h, &devnet, &b, (409, "NONCE_USED", "permit2.nonce")).await;

    // Bodies that name no prepared intent, or leave out what a form needs.
    let mut b = good.clone();
    b["intentId"] = json!("rt_00000000000000000000");
    refused(&h, &devnet, &b, (404, "INTENT_NOT_FOUND", "intentId")).await;
    for (field, code) in [
        ("intent", "MISSING_FIELD"),
        ("intentId", "MISSING_FIELD"),
        ("permit2", "MISSING_FIELD"),
    ] {
        let mut b = good.clone();
        b.as_object_mut().unwrap().remove(field);
        refused(&h, &devnet, &b, (400, code, field)).await;
    }
    let mut b = good.clone();
    b["intent"]["planHash"] = json!("0x12");
    refused(&h, &devnet, &b, (400, "INVALID_FIELD", "intent.planHash")).await;
    router_holds_nothing(&devnet).await;
    devnet.stop();
}

/// The high-s twin of a 65-byte signature.
fn high_s(sig: &str) -> String {
    let mut b = hex::decode(sig.trim_start_matches("0x")).unwrap();
    let n = U256::from_str_radix(
        "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141",
        16,
    )
    .unwrap();
    let s = U256::from_be_slice(&b[32..64]);
    b[32..64].copy_from_slice(&(n - s).to_be_bytes::<32>());
    b[64] = if b[64] == 27 { 28 } else { 27 };
    format!("0x{}", hex::encode(b))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_contract_wallet_signs_through_erc1271_and_a_refused_check_sends_nothing() {
    let (devnet, _dir, h) = up([SRC, DST]).await;
    let c = devnet.chain(SRC).unwrap();
    let owner = keys::anvil_signer(3);
    let deployer = relay_devnet::deploy::wallet_provider(c.url(), owner.clone());
    let wallet = relay_devnet::contracts::TestWallet::deploy(&deployer, owner.address())
        .await
        .unwrap();
    let wallet_addr = *wallet.address();
    devnet
        .mint(SRC, Token::Usdc, wallet_addr, U256::from(AMOUNT))
        .await
        .unwrap();
    let approve = relay_devnet::contracts::TestToken::approveCall {
        spender: relay_devnet::PERMIT2_ADDRESS,
        value: U256::MAX,
    };
    wallet
        .execute(
            c.deployment.usdc,
            U256::ZERO,
            alloy::sol_types::SolCall::abi_encode(&approve).into(),
        )
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    let recipient = keys::seeded_signer("router-1271-recipient").address();
    let prepared = prepare(&h, wallet_addr, recipient, None).await;
    let form = &prepared["forms"]["permit2Witness"];
    assert_eq!(
        form["fill"],
        json!(["permit2.signature"]),
        "the wallet approved Permit2: {form}"
    );

    let stranger = keys::seeded_signer("not-the-wallet-owner");
    refused(
        &h,
        &devnet,
        &signed_body(form, &stranger),
        (400, "SIGNATURE_INVALID", "permit2.signature"),
    )
    .await;

    let (code, receipt) = execute(&h, &signed_body(form, &owner)).await;
    assert_eq!(code, 200, "{receipt}");
    let done = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(usdc_balance(&devnet, SRC, wallet_addr).await, U256::ZERO);
    router_holds_nothing(&devnet).await;
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn discovery_reports_the_router_and_bad_or_lapsed_intents_are_refused() {
    // Intents lapse the moment they are prepared on this host.
    let (devnet, _dir, h) = up_with([SRC, DST], |c| c.execution.intent_ttl_secs = 0).await;
    let router = devnet.deployment(SRC).unwrap().router;
    let (_, info) = get(&format!("{}/api/gasless/info?chainId={SRC}", h.base)).await;
    assert_eq!(addr(&info["router"]), router, "{info}");
    assert_eq!(info["domain"]["name"], "RelayRouter");
    assert_eq!(info["domain"]["version"], "3.1");
    assert_eq!(info["domain"]["chainId"], SRC);
    assert_eq!(addr(&info["domain"]["verifyingContract"]), router);
    assert_eq!(
        addr(&info["gaslessChains"][SRC.to_string()]["address"]),
        router
    );
    assert_eq!(addr(&info["relayer"]), keys::relayer().address());
    assert!(info["witnessTypeString"]
        .as_str()
        .unwrap()
        .contains("RelayIntent("));
    let (_, mesh) = get(&format!("{}/api/route/chains", h.base)).await;
    assert_eq!(addr(&mesh["routers"][SRC.to_string()]), router, "{mesh}");
    assert_eq!(
        addr(&mesh["relayer"]),
        keys::relayer().address(),
        "the Permit2 spender of mode permit2"
    );

    // Preparing: fromAddress is required, mode is not the caller's to pick.
    let base = json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC", "amount": AMOUNT.to_string()});
    let (code, text) = post(&h.base, "/api/route/intent", &base, &[]).await;
    let err: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (code, &err["errorCode"], &err["field"]),
        (400, &json!("MISSING_FIELD"), &json!("fromAddress")),
        "{err}"
    );
    let mut moded = base.clone();
    moded["fromAddress"] = json!(keys::anvil_address(4));
    moded["mode"] = json!("intent");
    let (code, text) = post(&h.base, "/api/route/intent", &moded, &[]).await;
    let err: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (code, &err["errorCode"], &err["field"]),
        (400, &json!("INVALID_FIELD"), &json!("mode")),
        "{err}"
    );

    // A correctly signed intent past its deadline is refused, nothing sent.
    let user = fresh_wallet(&devnet, "router-lapsed").await;
    let prepared = prepare(&h, user.address(), user.address(), None).await;
    let body = signed_body(&prepared["forms"]["permit2Witness"], &user);
    refused(&h, &devnet, &body, (422, "INTENT_EXPIRED", "intentId")).await;
    assert_eq!(
        usdc_balance(&devnet, SRC, user.address()).await,
        U256::from(AMOUNT)
    );
    devnet.stop();
}

/// Runs `node conformance/tools/<script> <viem dir> <args…>`, a checker
/// that prints `OK …` or `FAILED <why>`: passed or not.
pub(crate) fn viem_script(script: &str, args: &[&std::ffi::OsStr]) -> bool {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/tools")
        .join(script);
    let out = std::process::Command::new("node")
        .arg(script)
        .arg(viem_dir())
        .args(args)
        .output()
        .expect("node runs");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with("OK") || said.starts_with("FAILED"),
        "viem script: {said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.status.success()
}

/// `$RELAY_VIEM`, else `<repo>/.tools/js` (conformance/tools/viem.sh installs it).
pub(crate) fn viem_dir() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("RELAY_VIEM").filter(|p| !p.is_empty()) {
        return p.into();
    }
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap();
    let dir = repo.join(".tools/js");
    assert!(
        dir.join("node_modules/viem").is_dir(),
        "viem not found in {} (run conformance/tools/viem.sh, or set RELAY_VIEM)",
        dir.display()
    );
    dir
}

/// Signs `form` with viem (`conformance/tools/sign-typed.mjs`).
fn viem_signed(form: &Value, key: &PrivateKeySigner) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("form.json");
    std::fs::write(&path, form.to_string()).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/tools/sign-typed.mjs");
    let out = std::process::Command::new("node")
        .arg(script)
        .arg(viem_dir())
        .arg(format!("0x{}", hex::encode(key.to_bytes())))
        .arg(&path)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "viem: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_no_one_here_wrote_signs_every_form_with_viem() {
    let (devnet, _dir, h) = up([SRC, DST]).await;
    // permit2-witness with an EIP-2612 permit for Permit2 (a wallet with no gas).
    let user = fresh_wallet(&devnet, "router-viem").await;
    let recipient = keys::seeded_signer("router-viem-recipient").address();
    let prepared = prepare(&h, user.address(), recipient, None).await;
    let body = viem_signed(&prepared["forms"]["permit2Witness"], &user);
    assert_eq!(
        body,
        signed_body(&prepared["forms"]["permit2Witness"], &user),
        "viem and alloy sign the same bytes"
    );
    let (code, receipt) = execute(&h, &body).await;
    assert_eq!(code, 200, "{receipt}");
    let done = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(usdc_balance(&devnet, SRC, user.address()).await, U256::ZERO);

    // erc2612: a permit for the router and a RelayOrder, served by the quote itself.
    let user = fresh_wallet(&devnet, "router-viem-2612").await;
    let quote = json!({
        "fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC",
        "amount": AMOUNT.to_string(), "fromAddress": user.address(), "toAddress": recipient,
    });
    let (code, text) = post(&h.base, "/api/route/quote", &quote, &[]).await;
    assert_eq!(code, 200, "{text}");
    let quoted: Value = serde_json::from_str(&text).unwrap();
    let form = &quoted["intent"]["forms"]["erc2612"];
    assert_eq!(form["usable"], true, "{quoted}");
    let before = usdc_balance(&devnet, DST, recipient).await;
    let (code, receipt) = execute(&h, &viem_signed(form, &user)).await;
    assert_eq!(code, 200, "{receipt}");
    let done = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let delivered: U256 = done["to"]["estimated"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        usdc_balance(&devnet, DST, recipient).await - before,
        delivered
    );
    assert_eq!(usdc_balance(&devnet, SRC, user.address()).await, U256::ZERO);
    router_holds_nothing(&devnet).await;
    devnet.stop();
}

/// The permit2-witness nonce an intent answer (as served) hands out.
pub(crate) fn witness_nonce(answer: &Value) -> U256 {
    num(&answer["forms"]["permit2Witness"]["submitBody"]["permit2"]["nonce"])
}

/// The API's prepares and the service the jobs and sessions hold in
/// process are one execute service: an intent prepared over HTTP holds its
/// nonce against a prepare made directly on the host's routing, and the
/// next HTTP prepare skips both.
#[tokio::test(flavor = "multi_thread")]
async fn every_adapter_shares_one_set_of_nonce_reservations() {
    let (devnet, _dir, h) = up([SRC, DST]).await;
    let owner = fresh_wallet(&devnet, "router-one-reservation-set").await;
    let recipient = keys::seeded_signer("router-one-reservation-set-to").address();
    let first = witness_nonce(&prepare(&h, owner.address(), recipient, None).await);

    let routing = h.host_state.routing.clone();
    let body = json!({
        "fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC",
        "amount": AMOUNT.to_string(), "fromAddress": owner.address(), "toAddress": recipient,
    });
    let request = relay_wire::ExecuteRequest::decode(&body).unwrap();
    let ask =
        relay_engine::request::ExecuteAsk::from_request(&request, &h.host_state.config).unwrap();
    let direct = routing
        .execute()
        .prepare_intent(routing.as_ref(), ask)
        .await
        .unwrap();
    let direct = witness_nonce(&serde_json::to_value(&direct).unwrap());
    let third = witness_nonce(&prepare(&h, owner.address(), recipient, None).await);

    assert_eq!(
        (first, direct, third),
        (U256::ZERO, U256::from(1), U256::from(2)),
        "one reservation set across the HTTP API and the in-process service"
    );
    devnet.stop();
}
