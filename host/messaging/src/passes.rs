//! Plus passes (spec §4.10, §8.2): anonymous tokens that lift a sender
//! over the free send ceiling without saying who they are.
//!
//! **The token**: Privacy Pass (RFC 9576–9578), the publicly verifiable
//! type `0x0002` — a blind RSA signature (RFC 9474, RSABSSA-SHA384-PSS-
//! Deterministic, 2048-bit keys) over `token_type ‖ nonce ‖
//! challenge_digest ‖ token_key_id`. Chosen over the privately verifiable
//! VOPRF type because anyone holding the published key — a replica, a
//! client, an auditor reading the witness log — can check a token without
//! the issuer's secret, and the key in the log is the whole story of what
//! the issuer can sign. The cryptography is the `privacypass` and
//! `blind-rsa-signatures` crates'; this module decides keys, limits and
//! spending.
//!
//! **Claiming** (`POST /api/messages/v2/passes/claim`): a client makes up
//! to [`MAX_PER_CLAIM`] blinded token requests against the current key
//! (`GET /api/messages/v2/passes/issuer`, the RFC 9578 §4 directory) and
//! gets a blind signature for each. One client IP may make
//! `claims_per_day` claims (5) of `free_per_day` tokens (20) in all per UTC
//! day; the counts are kept under an HMAC of the IP for that day, shared
//! by every replica. The issuer sees blinded messages only: it cannot tell
//! which claim a token it later sees came from.
//!
//! **Spending**: a send carrying a token (`pass`, or `x-relay-pass`) is
//! not counted against the free ceiling. The token must carry this
//! issuer's challenge (issuer name, no redemption context, no origin
//! info: tokens may be claimed ahead of use), be signed by the current
//! key or the one before, and its nonce must not be in the spent set; the
//! row is stored and the nonce spent in one transaction, so twenty
//! concurrent sends with one token store one row.
//!
//! **Keys**: one per epoch (`epoch_days`, 7), derived from the relayer
//! key (so every replica signs with the same key and none is stored),
//! logged in the witness log (entry kind `issuer`) the first time it is
//! used; a key whose epoch is logged with a different key is refused
//! rather than used, so the log names every key the issuer ever signed
//! with. A token of a key two or more epochs old is `PASS_EXPIRED`.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use base64::{
    alphabet::URL_SAFE,
    engine::{
        general_purpose::URL_SAFE_NO_PAD, DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig,
    },
    Engine as _,
};
use blind_rsa_signatures::{Deterministic, Sha384, Signature, PSS};
use hmac::{Hmac, Mac};
use privacypass::{
    auth::authenticate::TokenChallenge,
    public_tokens::{server::IssuerServer, PublicToken, TokenRequest},
    Deserialize as _, Serialize as _, TokenType,
};
use relay_store::StoreError;
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use utoipa::ToSchema;

use crate::{config::PassesConfig, store::Messages, witness::Witness};

mod keys;

pub mod client;

pub use keys::{EpochKey, OneKey};

/// The most token requests one claim carries (spec §8.2).
pub const MAX_PER_CLAIM: usize = 100;
/// The largest claim body, bytes (spec §8.2: 40 KB).
pub const CLAIM_BODY_MAX: usize = 40 * 1024;
/// What a refused claim is told to wait, ms (spec §7: a day).
pub const CLAIM_RETRY_MS: u64 = 86_400_000;
/// One UTC day, ms.
const DAY_MS: u64 = 86_400_000;
/// A serialized type-2 token: type, nonce, challenge digest, key id, and
/// the 256-byte authenticator.
pub const TOKEN_LEN: usize = 2 + 32 + 32 + 32 + 256;

/// Base64url with or without padding (what clients send).
const B64_ANY: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Decodes base64url, padded or not.
pub fn unbase64(s: &str) -> Option<Vec<u8>> {
    B64_ANY.decode(s.trim()).ok()
}

/// Encodes base64url without padding.
pub fn base64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// An issuer key as the witness log records it (entry kind `issuer`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IssuerKey {
    /// The key's epoch (ms since 1970 divided by the epoch length).
    pub epoch: u64,
    /// Always 2 (RFC 9578 publicly verifiable tokens).
    pub token_type: u16,
    /// The key: base64url of its SubjectPublicKeyInfo (RSASSA-PSS, RFC
    /// 9578 §6.5).
    pub token_key: String,
    /// SHA-256 of the SubjectPublicKeyInfo, hex: the tokens' `token_key_id`.
    pub key_id: String,
    /// When it starts signing, ms.
    pub not_before: u64,
    /// When the last token it signed stops being accepted, ms.
    pub redeem_until: u64,
}

/// Why a pass is not accepted.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// Passes are off here.
    #[error("this host accepts no Plus passes")]
    Disabled,
    /// Not a token.
    #[error("pass: not a Privacy Pass token ({0})")]
    Malformed(&'static str),
    /// A token for another issuer or challenge.
    #[error(
        "pass: made for another challenge than this issuer's (GET /api/messages/v2/passes/issuer)"
    )]
    WrongChallenge,
    /// Signed by a key this host never logged.
    #[error("pass: signed by no key of this issuer")]
    UnknownKey,
    /// Signed by a key too old to redeem.
    #[error("pass: its key (epoch {epoch}) no longer redeems; claim new passes")]
    Expired {
        /// The key's epoch.
        epoch: u64,
    },
    /// The signature does not verify.
    #[error("pass: the signature does not verify under its key")]
    BadSignature,
    /// The issuer key of an epoch disagrees with the one logged.
    #[error("the issuer key of epoch {0} differs from the one in the witness log; passes are off until an operator looks")]
    KeyConflict(u64),
    /// The witness log could not take the key.
    #[error("the witness log did not take the issuer key: {0}")]
    Log(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<crate::witness::PublishOutcome> for PassError {
    fn from(e: crate::witness::PublishOutcome) -> Self {
        match e {
            crate::witness::PublishOutcome::Store(e) => PassError::Store(e),
            other => PassError::Log(other.to_string()),
        }
    }
}

/// Why a claim is refused.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    /// Passes are off here.
    #[error("this host issues no Plus passes")]
    Disabled,
    /// Too few or too many requests.
    #[error("tokenRequests: {0}")]
    Count(String),
    /// A request that is not a type-2 token request.
    #[error("tokenRequests[{0}]: not a type 2 token request")]
    Malformed(usize),
    /// A request for a key that is not the current one.
    #[error("tokenRequests[{0}]: made for a key that does not sign now; fetch GET /api/messages/v2/passes/issuer again")]
    StaleKey(usize),
    /// The caller's day is used up.
    #[error(
        "this IP's Plus passes for today are claimed ({claims} claims, {tokens} passes a day)"
    )]
    Over {
        /// Claims a day.
        claims: u32,
        /// Passes a day.
        tokens: u32,
    },
    /// The key could not be used.
    #[error(transparent)]
    Key(#[from] PassError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A claim's answer.
#[derive(Debug)]
pub struct Claimed {
    /// The blind signatures, base64url, in request order.
    pub responses: Vec<String>,
    /// Passes this caller may still claim today.
    pub remaining_today: u32,
    /// The key that signed.
    pub key: IssuerKey,
}

/// A token that verified, to be spent with its row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spend {
    /// Its nonce, hex: the spent set's key.
    pub nonce: String,
    /// Its key's epoch.
    pub epoch: u64,
}

/// The issuer and redeemer.
pub struct Passes {
    config: PassesConfig,
    store: Messages,
    /// The secret epoch keys and caller tags are derived from.
    seed: [u8; 32],
    challenge: TokenChallenge,
    digest: [u8; 32],
    /// The keys of the epochs in use, by epoch.
    keys: Mutex<BTreeMap<u64, Arc<EpochKey>>>,
}

impl std::fmt::Debug for Passes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Passes")
            .field("issuer", &self.config.issuer_name)
            .finish_non_exhaustive()
    }
}

impl Passes {
    /// The issuer of `config` over `store`, its keys derived from `seed`.
    pub fn new(config: PassesConfig, store: Messages, seed: [u8; 32]) -> Self {
        let challenge = challenge(&config.issuer_name);
        let digest = challenge.digest().expect("a short issuer name serializes");
        Passes {
            config,
            store,
            seed,
            challenge,
            digest,
            keys: Mutex::new(BTreeMap::new()),
        }
    }

    /// The table in effect.
    pub fn config(&self) -> &PassesConfig {
        &self.config
    }

    /// The challenge every pass answers, base64url (RFC 9577 §2.1).
    pub fn challenge(&self) -> String {
        base64(&self.challenge.serialize().expect("serializes"))
    }

    /// The epoch length, ms.
    fn epoch_ms(&self) -> u64 {
        u64::from(self.config.epoch_days) * DAY_MS
    }

    /// The epoch at `now_ms`.
    pub fn epoch_at(&self, now_ms: u64) -> u64 {
        now_ms / self.epoch_ms()
    }

    /// What the log says of `epoch`'s key.
    fn record(&self, key: &EpochKey) -> IssuerKey {
        let start = key.epoch * self.epoch_ms();
        IssuerKey {
            epoch: key.epoch,
            token_type: TokenType::Public as u16,
            token_key: base64(&key.spki),
            key_id: hex::encode(key.key_id),
            not_before: start,
            redeem_until: start + 2 * self.epoch_ms(),
        }
    }

    /// The key of `epoch`, derived once per process.
    async fn derived(&self, epoch: u64) -> Arc<EpochKey> {
        let cached = self
            .keys
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&epoch)
            .cloned();
        if let Some(k) = cached {
            return k;
        }
        let seed = self.tag(b"issuer-key", &epoch.to_be_bytes());
        let key = tokio::task::spawn_blocking(move || EpochKey::derive(epoch, seed))
            .await
            .expect("key derivation does not panic");
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        keys.retain(|e, _| *e + 2 > epoch);
        keys.entry(epoch).or_insert(Arc::new(key)).clone()
    }

    /// The key of `epoch`, derived and logged in `witness` (once per
    /// deployment) — refused when the log holds another key for it.
    pub async fn key(
        &self,
        witness: &Witness,
        epoch: u64,
        now_ms: u64,
    ) -> Result<(Arc<EpochKey>, IssuerKey), PassError> {
        let key = self.derived(epoch).await;
        let record = self.record(&key);
        let logged = witness.issuer(&record, now_ms).await?;
        if logged.key_id != record.key_id {
            tracing::error!(epoch, "issuer key differs from the witness log's");
            return Err(PassError::KeyConflict(epoch));
        }
        Ok((key, record))
    }

    /// The keys a client may use now: the current one first, then the one
    /// before (still redeeming).
    pub async fn published(
        &self,
        witness: &Witness,
        now_ms: u64,
    ) -> Result<Vec<IssuerKey>, PassError> {
        let epoch = self.epoch_at(now_ms);
        let mut out = vec![self.key(witness, epoch, now_ms).await?.1];
        if epoch > 0 {
            if let Some(before) = witness.issuer_of_epoch(epoch - 1).await? {
                out.push(before);
            }
        }
        Ok(out)
    }

    /// HMAC-SHA256 of `what ‖ data` under the seed.
    fn tag(&self, what: &[u8], data: &[u8]) -> [u8; 32] {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.seed).expect("HMAC takes any key");
        mac.update(what);
        mac.update(b":");
        mac.update(data);
        mac.finalize().into_bytes().into()
    }

    /// What a caller is counted as: an HMAC of its IP (no IP is stored).
    pub fn caller(&self, ip: &str) -> String {
        hex::encode(&self.tag(b"caller", ip.as_bytes())[..16])
    }

    /// Signs `requests` (base64url TokenRequests) for `caller` at `now_ms`,
    /// counted against its day.
    pub async fn claim(
        &self,
        witness: &Witness,
        caller: &str,
        requests: &[String],
        now_ms: u64,
    ) -> Result<Claimed, ClaimError> {
        if !self.config.enabled {
            return Err(ClaimError::Disabled);
        }
        let n = requests.len();
        let most = MAX_PER_CLAIM.min(self.config.free_per_day as usize);
        if n == 0 || n > most {
            return Err(ClaimError::Count(format!(
                "{n} requests; a claim carries 1 to {most} (at most {MAX_PER_CLAIM} per claim and {} per day)",
                self.config.free_per_day
            )));
        }
        let (key, record) = self.key(witness, self.epoch_at(now_ms), now_ms).await?;
        // every request is read and checked against the key before the day
        // is counted, and the day is counted before anything is signed
        let parsed = read_requests(requests, &key)?;
        let (claims, tokens) = (self.config.claims_per_day, self.config.free_per_day);
        let count = crate::store::Count {
            counter: "claims",
            caller,
            window: now_ms / DAY_MS,
        };
        let Ok((_, used)) = self
            .store
            .count(count, (1, n as u32), (claims, tokens))
            .await?
        else {
            return Err(ClaimError::Over { claims, tokens });
        };
        let store = keys::OneKey(key);
        let issuer = IssuerServer::new();
        let mut responses = Vec::with_capacity(n);
        for (i, r) in parsed.into_iter().enumerate() {
            let signed = issuer
                .issue_token_response(&store, r)
                .await
                .map_err(|_| ClaimError::StaleKey(i))?;
            responses.push(base64(
                &signed.tls_serialize_detached().expect("serializes"),
            ));
        }
        Ok(Claimed {
            responses,
            remaining_today: tokens.saturating_sub(used),
            key: record,
        })
    }

    /// Checks `pass` (a base64url token) at `now_ms`: this issuer's
    /// challenge, a key that still redeems, a signature that verifies.
    /// Spending is the store's, with the row ([`Messages::insert_row_spending`]).
    pub async fn check(
        &self,
        witness: &Witness,
        pass: &str,
        now_ms: u64,
    ) -> Result<Spend, PassError> {
        if !self.config.enabled {
            return Err(PassError::Disabled);
        }
        let bytes = unbase64(token_of(pass)).ok_or(PassError::Malformed("not base64url"))?;
        if bytes.len() != TOKEN_LEN {
            return Err(PassError::Malformed("not the 354 bytes of a type 2 token"));
        }
        let token = PublicToken::tls_deserialize_exact(&bytes)
            .map_err(|_| PassError::Malformed("not a token"))?;
        if token.token_type() != TokenType::Public {
            return Err(PassError::Malformed("not token type 2"));
        }
        if token.challenge_digest() != &self.digest {
            return Err(PassError::WrongChallenge);
        }
        let epoch = self.epoch_at(now_ms);
        let key_id = hex::encode(token.token_key_id());
        let (current, record) = self.key(witness, epoch, now_ms).await?;
        let key = match witness.issuer_of_key(&key_id).await? {
            _ if record.key_id == key_id => current,
            Some(k) if k.epoch + 1 == epoch => self.derived(k.epoch).await,
            Some(k) => return Err(PassError::Expired { epoch: k.epoch }),
            None => return Err(PassError::UnknownKey),
        };
        if !verify(key.public(), &token) {
            return Err(PassError::BadSignature);
        }
        Ok(Spend {
            nonce: hex::encode(token.nonce()),
            epoch: key.epoch,
        })
    }

    /// Drops spent nonces no key can redeem any more, and past counts.
    pub async fn prune(&self, now_ms: u64) -> Result<(), StoreError> {
        let epoch = self.epoch_at(now_ms).saturating_sub(1);
        let day = now_ms / DAY_MS;
        self.store
            .prune_passes(epoch, day, (now_ms / 60_000).saturating_sub(1))
            .await
    }
}

/// `requests` (base64url) as type 2 TokenRequests for `key`.
fn read_requests(requests: &[String], key: &EpochKey) -> Result<Vec<TokenRequest>, ClaimError> {
    let read = |(i, r): (usize, &String)| {
        let bytes = unbase64(r).ok_or(ClaimError::Malformed(i))?;
        let request =
            TokenRequest::tls_deserialize_exact(&bytes).map_err(|_| ClaimError::Malformed(i))?;
        // token_type (2 bytes, 0x0002), then truncated_token_key_id
        match (bytes[..2] == [0, 2], bytes[2] == key.truncated()) {
            (false, _) => Err(ClaimError::Malformed(i)),
            (true, false) => Err(ClaimError::StaleKey(i)),
            (true, true) => Ok(request),
        }
    };
    requests.iter().enumerate().map(read).collect()
}

/// Whether `token`'s authenticator is `key`'s signature of its token
/// input, `token_type ‖ nonce ‖ challenge_digest ‖ token_key_id` (RFC
/// 9578 §6.4).
pub fn verify(key: &PublicKey, token: &PublicToken) -> bool {
    let mut input = Vec::with_capacity(98);
    input.extend_from_slice(&(token.token_type() as u16).to_be_bytes());
    input.extend_from_slice(&token.nonce());
    input.extend_from_slice(token.challenge_digest());
    input.extend_from_slice(token.token_key_id());
    let signature = Signature(token.authenticator().to_vec());
    key.verify(&signature, None, &input).is_ok()
}

/// The challenge of issuer `name`: no redemption context, no origin info
/// (a pass may be claimed ahead and spent on any send).
pub fn challenge(name: &str) -> TokenChallenge {
    TokenChallenge::new(TokenType::Public, name, None, &[])
}

/// The token in a pass value: the value itself, or the `token=` of a
/// `PrivateToken token="…"` authorization (RFC 9577 §2.2).
fn token_of(pass: &str) -> &str {
    let pass = pass.trim();
    match pass.strip_prefix("PrivateToken") {
        Some(rest) => rest
            .trim()
            .strip_prefix("token=")
            .map_or(rest, |t| t.trim_matches('"')),
        None => pass,
    }
}

/// The RSA key type of type 2 tokens.
pub type PublicKey = blind_rsa_signatures::PublicKey<Sha384, PSS, Deterministic>;

#[cfg(test)]
mod tests;
