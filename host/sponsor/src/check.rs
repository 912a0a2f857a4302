//! `POST /api/7702/check` (free): what a tuple proves and what the chain
//! says of its authority — every problem listed, so a wallet can fix them
//! all at once; [`crate::SponsorService::plan`] refuses with the first.

use alloy::primitives::Address;
use relay_chain::eip7702::{self, AuthorizationError, SignedAuthorization};
use serde::Serialize;
use utoipa::ToSchema;

use crate::{SponsorError, SponsorService};

/// One thing wrong with a tuple.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct Problem {
    /// `AUTHORIZATION_SIGNATURE`, `AUTHORIZATION_CHAIN`,
    /// `AUTHORIZATION_ANY_CHAIN`, `AUTHORIZATION_NONCE`,
    /// `AUTHORIZATION_DELEGATE` or `AUTHORITY_HAS_CODE`.
    pub code: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// The check's answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckReport {
    /// Whether the relayer would sponsor this tuple now (no problems).
    pub valid: bool,
    /// The chain asked about.
    pub chain_id: u64,
    /// The recovered signer, checksummed (absent when the signature does
    /// not recover).
    pub authority: Option<String>,
    /// Whether the signature recovers (low-s, parity 0/1).
    pub recovers: bool,
    /// The tuple's nonce.
    pub nonce: u64,
    /// The authority's live nonce (absent when nothing recovered).
    pub live_nonce: Option<u64>,
    /// Whether the tuple's nonce is the live nonce.
    pub nonce_matches: bool,
    /// The tuple's delegate.
    pub address: String,
    /// Whether it is this host's batch executor on the chain.
    pub known_delegate: bool,
    /// The tuple's chain id is 0 (valid on every chain).
    pub any_chain: bool,
    /// What the account's code delegates to now, if anything.
    pub current_delegate: Option<String>,
    /// Everything wrong, in the order the sponsor refuses.
    pub problems: Vec<Problem>,
}

impl CheckReport {
    /// The first problem as a refusal, if any.
    pub fn refusal(&self) -> Option<SponsorError> {
        self.problems.first().map(|p| SponsorError::Authorization {
            code: p.code,
            message: p.message.clone(),
        })
    }
}

fn problem(code: &'static str, message: impl Into<String>) -> Problem {
    Problem {
        code,
        message: message.into(),
    }
}

impl SponsorService {
    /// The delegate configured on `chain`.
    pub(crate) fn delegate_on(&self, chain: u64) -> Result<Address, SponsorError> {
        self.sponsor_config()
            .delegate(chain)
            .and_then(|a| a.parse().ok())
            .ok_or(SponsorError::UnsupportedChain(chain))
    }

    /// Checks `auth` for `chain` against the chain's live state.
    pub async fn check(
        &self,
        chain: u64,
        auth: &SignedAuthorization,
    ) -> Result<CheckReport, SponsorError> {
        let delegate = self.delegate_on(chain)?;
        let inner = auth.inner();
        let tuple_chain = eip7702::chain_of(inner);
        let any_chain = tuple_chain == Some(0);
        let mut problems = Vec::new();
        let authority = match eip7702::authority(auth) {
            Ok(a) => Some(a),
            Err(e) => {
                let hint = match e {
                    AuthorizationError::HighS => " (use the low-s form: s ≤ n/2)",
                    _ => "",
                };
                problems.push(problem("AUTHORIZATION_SIGNATURE", format!("{e}{hint}")));
                None
            }
        };
        if any_chain && !self.sponsor_config().allow_any_chain {
            problems.push(problem(
                "AUTHORIZATION_ANY_CHAIN",
                "authorization.chainId: 0 (valid on every chain) is refused by this host; sign for the chain",
            ));
        } else if !any_chain && tuple_chain != Some(chain) {
            problems.push(problem(
                "AUTHORIZATION_CHAIN",
                format!(
                    "authorization.chainId: {} is not the request's chain {chain}",
                    inner.chain_id
                ),
            ));
        }
        let (live_nonce, current_delegate) = match authority {
            Some(who) => {
                let state = self.deps.parts.reader.authority_state(chain, who).await?;
                if !state.delegable() {
                    problems.push(problem(
                        "AUTHORITY_HAS_CODE",
                        format!("{who} is a contract; only an EOA can delegate"),
                    ));
                }
                (Some(state.nonce), eip7702::delegated_to(&state.code))
            }
            None => (None, None),
        };
        let nonce_matches = live_nonce == Some(inner.nonce);
        if let (Some(live), false) = (live_nonce, nonce_matches) {
            problems.push(problem(
                "AUTHORIZATION_NONCE",
                format!(
                    "authorization.nonce: {} is not the account's nonce {live} (a used or future tuple)",
                    inner.nonce
                ),
            ));
        }
        let known_delegate = inner.address == delegate;
        if !known_delegate {
            problems.push(problem(
                "AUTHORIZATION_DELEGATE",
                format!(
                    "authorization.address: {} is not this host's batch executor {delegate} (GET /api/7702/delegate)",
                    inner.address
                ),
            ));
        }
        Ok(CheckReport {
            valid: problems.is_empty(),
            chain_id: chain,
            authority: authority.map(|a| a.to_string()),
            recovers: authority.is_some(),
            nonce: inner.nonce,
            live_nonce,
            nonce_matches,
            address: inner.address.to_string(),
            known_delegate,
            any_chain,
            current_delegate: current_delegate.map(|a| a.to_string()),
            problems,
        })
    }
}
