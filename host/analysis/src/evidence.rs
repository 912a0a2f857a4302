//! Evidence bundles (spec §4.3 `/api/evidence/bundle`, §2.14): everything
//! needed to check one route without trusting the host — the route's
//! terms, the user's own signature with the typed data it covers, the
//! quote attestation, the plan, every transaction with its receipt and
//! logs, and the chain-checked outcome — sealed by the relayer key.
//!
//! Format `relay-evidence-v1`. The file is the bundle object written as
//! canonical JSON (keys sorted at every level, no whitespace; RFC 8785 for
//! the strings, integers, booleans and nulls it holds), optionally followed
//! by one newline:
//!
//! ```text
//! {"format":"relay-evidence-v1","payload":{…},"signature":"0x…","signer":"0x…"}
//! ```
//!
//! `signature` is the relayer's EIP-191 personal signature of the UTF-8
//! bytes of `payload` written the same canonical way. A verifier
//! ([`verify_file`], `relay verify <bundle.json>`, or a few lines of viem)
//! checks, with no network:
//!
//! 1. the file is exactly the canonical form of what it holds (so any
//!    changed byte either changes a signed value or breaks the form);
//! 2. the relayer signature recovers to `signer` (and to the address the
//!    verifier expects, when given);
//! 3. the user's authorization: its EIP-712 digest recomputed from
//!    `typedData` equals `digest`, and its signature recovers to the
//!    route's sender;
//! 4. the outcome: for `verified`, the source debit and the destination
//!    credit are `Transfer` logs present in the listed receipts (successful
//!    transactions), from the sender and to the recipient, the credit at
//!    least the route's `minOut`.

use alloy::primitives::{b256, Address, B256, U256};
use relay_chain::signer::RelayerSigner;
use relay_engine::{
    attest::{self, AttestError},
    snapshot::canonical_json,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// The format name.
pub const FORMAT: &str = "relay-evidence-v1";

/// `keccak256("Transfer(address,address,uint256)")`: the ERC-20 event.
pub const TRANSFER_TOPIC: B256 =
    b256!("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");

/// A sealed bundle.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceBundle {
    /// [`FORMAT`].
    pub format: String,
    /// What is attested.
    pub payload: Payload,
    /// The relayer address; absent when this host has no key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub signer: Option<Address>,
    /// EIP-191 signature of the canonical `payload`; absent without a key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// What a bundle attests.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Payload {
    /// When the bundle was made, epoch ms.
    pub issued_at: u64,
    /// The route's terms and state.
    pub route: RouteFacts,
    /// The user's signature and what it covers (absent for `mode: self`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization: Option<Authorization>,
    /// The quote attestation the route was executed under, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub attestation: Option<Value>,
    /// The execution plan, as the rail declared it.
    #[schema(value_type = Object)]
    pub plan: Value,
    /// Every transaction the route involved, with its receipt.
    pub transactions: Vec<TxEvidence>,
    /// The chain-checked outcome.
    pub outcome: OutcomeEvidence,
}

/// A route's terms (amounts in smallest units, decimal strings).
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RouteFacts {
    /// Route id.
    pub id: String,
    /// Status when the bundle was made.
    pub status: String,
    /// Rail.
    pub rail: String,
    /// Lane.
    pub lane: String,
    /// Source node.
    pub from_chain: String,
    /// Destination node.
    pub to_chain: String,
    /// Source token.
    pub from_token: String,
    /// Destination token.
    pub to_token: String,
    /// Amount in.
    pub amount: String,
    /// Estimated output.
    pub estimated: String,
    /// Guaranteed minimum output.
    pub min_out: String,
    /// Route fee withheld.
    pub relay_fee: String,
    /// Gas charged.
    pub gas_fee: String,
    /// Whose funds moved.
    pub sender: String,
    /// Who receives.
    pub recipient: String,
    /// Source transaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_tx: Option<String>,
    /// Destination transaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dest_tx: Option<String>,
    /// Created, epoch ms.
    pub created_ms: u64,
}

/// The user's signature and the EIP-712 data it signs.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Authorization {
    /// `permit2`, `permit2-witness`, `intent` or `erc2612`.
    pub kind: String,
    /// `eth_signTypedData_v4` JSON (`types`, `primaryType`, `domain`,
    /// `message`).
    #[schema(value_type = Object)]
    pub typed_data: Value,
    /// Its EIP-712 signing hash.
    #[schema(value_type = String)]
    pub digest: B256,
    /// The user's signature, 0x-hex.
    pub signature: String,
    /// Who signed (the route's sender).
    #[schema(value_type = String)]
    pub signer: Address,
}

/// One transaction and its receipt.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TxEvidence {
    /// `source` (the relayer's steps on the source chain) or
    /// `destination` (the delivery).
    pub role: String,
    /// EVM chain id.
    pub chain: u64,
    /// Transaction hash.
    #[schema(value_type = String)]
    pub hash: B256,
    /// Plan step (relayer transactions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    /// The receipt; absent when the chain did not return one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<ReceiptEvidence>,
}

/// A transaction receipt, as the chain returned it.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptEvidence {
    /// Block number.
    pub block_number: u64,
    /// Block hash.
    #[schema(value_type = String)]
    pub block_hash: B256,
    /// Succeeded.
    pub success: bool,
    /// Sender of the transaction.
    #[schema(value_type = String)]
    pub from: Address,
    /// Its target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub to: Option<Address>,
    /// Gas used.
    pub gas_used: u64,
    /// Its logs.
    pub logs: Vec<LogEvidence>,
}

/// One log.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogEvidence {
    /// Index in the block.
    pub log_index: u64,
    /// Emitting contract.
    #[schema(value_type = String)]
    pub address: Address,
    /// Topics.
    #[schema(value_type = Vec<String>)]
    pub topics: Vec<B256>,
    /// Data, 0x-hex.
    pub data: String,
}

/// The outcome verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Source debit and destination credit found on chain, matching.
    Verified,
    /// The chain shows the route did not deliver.
    Failed,
    /// Not (yet) decidable from the chain.
    Undetermined,
}

impl Verdict {
    /// As the JSON names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Verified => "verified",
            Verdict::Failed => "failed",
            Verdict::Undetermined => "undetermined",
        }
    }
}

/// One ERC-20 transfer, located in a receipt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransferRef {
    /// Chain.
    pub chain: u64,
    /// Transaction.
    #[schema(value_type = String)]
    pub tx: B256,
    /// Log index.
    pub log_index: u64,
    /// Token contract.
    #[schema(value_type = String)]
    pub token: Address,
    /// From.
    #[schema(value_type = String)]
    pub from: Address,
    /// To.
    #[schema(value_type = String)]
    pub to: Address,
    /// Amount, smallest units.
    pub amount: String,
}

/// The outcome as the chain shows it.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutcomeEvidence {
    /// The verdict.
    pub verdict: Verdict,
    /// The user's tokens leaving the sender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_debit: Option<TransferRef>,
    /// The tokens reaching the recipient.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination_credit: Option<TransferRef>,
    /// Why the verdict is what it is, one line per finding.
    pub reasons: Vec<String>,
}

/// Seals `payload` with the relayer key (unsigned when there is none).
pub fn seal(
    payload: Payload,
    signer: Option<&RelayerSigner>,
) -> Result<EvidenceBundle, AttestError> {
    let canonical = canonical_json(&serde_json::to_value(&payload).unwrap_or_default());
    let signed = attest::personal_sign(signer, canonical.as_bytes())?;
    Ok(EvidenceBundle {
        format: FORMAT.into(),
        payload,
        signer: signed.signer,
        signature: signed.signature,
    })
}

/// The bundle as its file: canonical JSON and one newline.
pub fn to_file(bundle: &EvidenceBundle) -> String {
    let mut s = canonical_json(&serde_json::to_value(bundle).unwrap_or_default());
    s.push('\n');
    s
}

/// Why a bundle does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvidenceError {
    /// Not JSON, or not a bundle.
    #[error("not an evidence bundle: {0}")]
    Malformed(String),
    /// Bytes differ from the canonical form of what they hold.
    #[error("the file is not in canonical form (it was edited after signing)")]
    NotCanonical,
    /// Another format.
    #[error("unknown format {0:?} (want {FORMAT})")]
    Format(String),
    /// Unsigned (made by a host without a relayer key).
    #[error("the bundle is unsigned")]
    Unsigned,
    /// The relayer signature does not hold.
    #[error("the relayer signature does not verify: {0}")]
    Seal(String),
    /// The user's authorization does not hold.
    #[error("the user's authorization does not verify: {0}")]
    Authorization(String),
    /// The outcome is not backed by the receipts.
    #[error("the outcome is not backed by the receipts: {0}")]
    Outcome(String),
}

/// What a verified bundle says.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verified {
    /// The relayer that sealed it.
    pub signer: Address,
    /// The route.
    pub route_id: String,
    /// The outcome verdict (backed by the receipts when `verified`).
    pub verdict: Verdict,
    /// What was checked, one line each.
    pub checks: Vec<String>,
}

/// Verifies a bundle file offline; `expected` is the relayer address the
/// verifier trusts (any signer when `None`: the answer names it).
pub fn verify_file(bytes: &[u8], expected: Option<Address>) -> Result<Verified, EvidenceError> {
    let text = std::str::from_utf8(bytes).map_err(|e| EvidenceError::Malformed(e.to_string()))?;
    let text = text.strip_suffix('\n').unwrap_or(text);
    let value: Value =
        serde_json::from_str(text).map_err(|e| EvidenceError::Malformed(e.to_string()))?;
    if canonical_json(&value) != text {
        return Err(EvidenceError::NotCanonical);
    }
    let bundle: EvidenceBundle = serde_json::from_value(value.clone())
        .map_err(|e| EvidenceError::Malformed(e.to_string()))?;
    if bundle.format != FORMAT {
        return Err(EvidenceError::Format(bundle.format));
    }
    let mut checks = vec!["the file is canonical JSON".to_string()];
    let signer = check_seal(&bundle, &value["payload"], expected)?;
    checks.push(format!("sealed by the relayer {signer}"));
    if let Some(a) = &bundle.payload.authorization {
        check_authorization(a, &bundle.payload.route)?;
        checks.push(format!(
            "the {} signature recovers to the sender {}",
            a.kind, a.signer
        ));
    }
    let o = &bundle.payload.outcome;
    if o.verdict == Verdict::Verified {
        check_outcome(&bundle.payload)?;
        checks.push("the source debit and destination credit are in the receipts".into());
    }
    Ok(Verified {
        signer,
        route_id: bundle.payload.route.id.clone(),
        verdict: o.verdict,
        checks,
    })
}

fn check_seal(
    b: &EvidenceBundle,
    payload: &Value,
    expected: Option<Address>,
) -> Result<Address, EvidenceError> {
    let (Some(signer), Some(sig)) = (b.signer, b.signature.as_deref()) else {
        return Err(EvidenceError::Unsigned);
    };
    let recovered = attest::recover(canonical_json(payload).as_bytes(), sig)
        .map_err(|e| EvidenceError::Seal(e.to_string()))?;
    if recovered != signer {
        return Err(EvidenceError::Seal(format!(
            "it recovers to {recovered}, not the stated signer {signer}"
        )));
    }
    match expected {
        Some(want) if want != signer => Err(EvidenceError::Seal(format!(
            "signed by {signer}, not the expected relayer {want}"
        ))),
        _ => Ok(signer),
    }
}

fn check_authorization(a: &Authorization, route: &RouteFacts) -> Result<(), EvidenceError> {
    let bad = |m: String| EvidenceError::Authorization(m);
    let digest = relay_chain::typed::signing_hash(&a.typed_data).map_err(|e| bad(e.to_string()))?;
    if digest != a.digest {
        return Err(bad("typedData does not hash to `digest`".into()));
    }
    let sig: alloy::primitives::Signature = a
        .signature
        .parse()
        .map_err(|_| bad("malformed signature".into()))?;
    let who = sig
        .recover_address_from_prehash(&digest)
        .map_err(|e| bad(e.to_string()))?;
    if who != a.signer || !route.sender.eq_ignore_ascii_case(&who.to_string()) {
        return Err(bad(format!(
            "it recovers to {who}, not the route's sender {}",
            route.sender
        )));
    }
    Ok(())
}

fn check_outcome(p: &Payload) -> Result<(), EvidenceError> {
    let bad = |m: &str| EvidenceError::Outcome(m.to_string());
    let debit = p
        .outcome
        .source_debit
        .as_ref()
        .ok_or_else(|| bad("no source debit"))?;
    let credit = p
        .outcome
        .destination_credit
        .as_ref()
        .ok_or_else(|| bad("no destination credit"))?;
    for (what, t) in [("source debit", debit), ("destination credit", credit)] {
        if !log_backs(&p.transactions, t) {
            return Err(EvidenceError::Outcome(format!(
                "the {what} is not a Transfer log of a successful listed transaction"
            )));
        }
    }
    if !p.route.sender.eq_ignore_ascii_case(&debit.from.to_string()) {
        return Err(bad("the source debit is not from the sender"));
    }
    if !p
        .route
        .recipient
        .eq_ignore_ascii_case(&credit.to.to_string())
    {
        return Err(bad("the destination credit is not to the recipient"));
    }
    let min: U256 = p
        .route
        .min_out
        .parse()
        .map_err(|_| bad("minOut is not a number"))?;
    let got: U256 = credit
        .amount
        .parse()
        .map_err(|_| bad("credit amount is not a number"))?;
    if got < min {
        return Err(bad("the destination credit is below minOut"));
    }
    Ok(())
}

/// Whether `t` is an ERC-20 `Transfer` log in a successful transaction of
/// `txs`, field for field.
pub fn log_backs(txs: &[TxEvidence], t: &TransferRef) -> bool {
    let Some(r) = txs
        .iter()
        .find(|x| x.chain == t.chain && x.hash == t.tx)
        .and_then(|x| x.receipt.as_ref())
    else {
        return false;
    };
    r.success
        && r.logs
            .iter()
            .any(|l| l.log_index == t.log_index && transfer_of(l) == Some(strip(t)))
}

fn strip(t: &TransferRef) -> (Address, Address, Address, String) {
    (t.token, t.from, t.to, t.amount.clone())
}

/// The ERC-20 `Transfer` a log records: `(token, from, to, amount)`.
pub fn transfer_of(l: &LogEvidence) -> Option<(Address, Address, Address, String)> {
    if l.topics.len() != 3 || l.topics[0] != TRANSFER_TOPIC {
        return None;
    }
    let data = hex::decode(l.data.trim_start_matches("0x")).ok()?;
    if data.len() != 32 {
        return None;
    }
    let amount = U256::from_be_slice(&data);
    let addr = |t: &B256| Address::from_slice(&t[12..]);
    Some((
        l.address,
        addr(&l.topics[1]),
        addr(&l.topics[2]),
        amount.to_string(),
    ))
}

#[cfg(test)]
mod tests;
