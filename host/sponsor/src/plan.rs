//! The plan of a sponsorship: the checks, the type-4 envelope the relayer
//! would send, its gas, and its price — gas at cost (the relayer's two
//! transactions: settling the payment and the type-4 one) plus the
//! engine's gas markup (`quote.gas_markup_bps`, 25 %), valued with the
//! host's price feeds and charged in the payment asset, rounded up.

use alloy::primitives::{Address, Bytes, U256};
use relay_chain::eip7702::{Authorization, SignedAuthorization};
use relay_engine::fees::{gas_fee, GasSpend, TokenPrice};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{error::invalid, SponsorError, SponsorService};

/// Gas the settlement of an EIP-3009 payment is given (and priced at).
pub use relay_x402::checkout::SETTLE_GAS;

/// An authorization tuple as JSON (spec §2.15): `{chainId, address,
/// nonce, yParity, r, s}` (viem's `signAuthorization` output).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthorizationTuple {
    /// The chain it is valid on (0: every chain).
    pub chain_id: u64,
    /// The delegate (the batch executor).
    pub address: String,
    /// The authority's account nonce it is valid at.
    pub nonce: u64,
    /// 0 or 1.
    pub y_parity: u8,
    /// Signature r, 0x-hex.
    pub r: String,
    /// Signature s, 0x-hex (low s).
    pub s: String,
}

fn word(field: &str, v: &str) -> Result<U256, SponsorError> {
    let hex = v.strip_prefix("0x").unwrap_or(v);
    if hex.is_empty() || hex.len() > 64 {
        return Err(invalid(field, "a 0x-hex 32-byte value"));
    }
    U256::from_str_radix(hex, 16).map_err(|_| invalid(field, "a 0x-hex 32-byte value"))
}

impl AuthorizationTuple {
    /// The alloy tuple.
    pub fn to_signed(&self) -> Result<SignedAuthorization, SponsorError> {
        let address: Address = self
            .address
            .parse()
            .map_err(|_| invalid("authorization.address", "not an address"))?;
        let inner = Authorization {
            chain_id: U256::from(self.chain_id),
            address,
            nonce: self.nonce,
        };
        Ok(SignedAuthorization::new_unchecked(
            inner,
            self.y_parity,
            word("authorization.r", &self.r)?,
            word("authorization.s", &self.s)?,
        ))
    }

    /// The JSON form of an alloy tuple.
    pub fn of(a: &SignedAuthorization) -> Self {
        AuthorizationTuple {
            chain_id: a.inner().chain_id.saturating_to(),
            address: a.inner().address.to_string(),
            nonce: a.inner().nonce,
            y_parity: a.y_parity(),
            r: format!("{:#066x}", a.r()),
            s: format!("{:#066x}", a.s()),
        }
    }
}

/// What the client asks to have sponsored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SponsorAsk {
    /// The chain.
    pub chain_id: u64,
    /// The signed tuple.
    pub authorization: AuthorizationTuple,
    /// The call's target: the authority (default).
    pub to: Option<String>,
    /// The call's data (e.g. `executeSigned(…)`; default empty).
    pub data: Option<String>,
}

/// The type-4 transaction the relayer would send (its nonce and
/// signature are the relayer's, added when it is sent).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    /// `0x4`.
    #[serde(rename = "type")]
    pub tx_type: String,
    /// The chain.
    pub chain_id: u64,
    /// The relayer (pays the gas).
    pub from: String,
    /// The authority.
    pub to: String,
    /// Calldata.
    pub data: String,
    /// Always `0`.
    pub value: String,
    /// Gas limit.
    pub gas: u64,
    /// Wei.
    pub max_fee_per_gas: String,
    /// Wei.
    pub max_priority_fee_per_gas: String,
    /// The one tuple.
    pub authorization_list: Vec<AuthorizationTuple>,
}

/// What the sponsorship costs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Price {
    /// The payment asset's symbol (`USDC`).
    pub asset: String,
    /// Its contract on the chain.
    pub token: String,
    /// Smallest units.
    pub amount: String,
    /// Its decimals.
    pub decimals: u8,
}

/// The priced plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// The chain.
    pub chain_id: u64,
    /// The account being delegated.
    pub authority: String,
    /// The batch executor it delegates to.
    pub delegate: String,
    /// The type-4 transaction.
    pub envelope: Envelope,
    /// Gas of the type-4 transaction (estimate plus margin).
    pub est_gas: u64,
    /// Gas of settling the payment.
    pub settle_gas: u64,
    /// The gas price it is priced at, wei.
    pub gas_price_wei: String,
    /// The price in USD (gas at cost plus markup), decimal string.
    pub price_usd: String,
    /// The price in the payment asset.
    pub price: Price,
    /// The markup over gas cost, bps.
    pub markup_bps: u32,
}

/// An ask parsed: the tuple, its target and data.
pub(crate) struct Parsed {
    pub auth: SignedAuthorization,
    pub to: Option<Address>,
    pub data: Bytes,
}

pub(crate) fn parse(ask: &SponsorAsk) -> Result<Parsed, SponsorError> {
    let to = ask
        .to
        .as_deref()
        .map(|t| t.parse().map_err(|_| invalid("to", "not an address")))
        .transpose()?;
    let data = match ask.data.as_deref() {
        None | Some("") | Some("0x") => Bytes::new(),
        Some(d) => d.parse().map_err(|_| invalid("data", "not 0x-hex bytes"))?,
    };
    Ok(Parsed {
        auth: ask.authorization.to_signed()?,
        to,
        data,
    })
}

fn usd_string(micro: U256) -> String {
    let whole = micro / U256::from(1_000_000u64);
    let frac = (micro % U256::from(1_000_000u64)).to::<u64>();
    format!("{whole}.{frac:06}")
}

impl SponsorService {
    /// The payment asset on `chain`: (symbol, address, decimals).
    pub(crate) fn asset_on(&self, chain: u64) -> Result<(String, Address, u8), SponsorError> {
        let symbol = self.sponsor_config().asset.clone();
        let t = self
            .deps
            .parts
            .config
            .chains
            .get(&chain.to_string())
            .and_then(|c| c.tokens.get(&symbol))
            .ok_or(SponsorError::UnsupportedChain(chain))?;
        let address = t
            .address
            .parse()
            .map_err(|_| SponsorError::UnsupportedChain(chain))?;
        Ok((symbol, address, t.decimals))
    }

    /// The relayer address, or the authority for estimates without one.
    fn payer_of_gas(&self, fallback: Address) -> Address {
        self.deps
            .parts
            .senders
            .as_ref()
            .map_or(fallback, |s| s.relayer)
    }

    /// Checks the ask and prices it; nothing is sent.
    pub async fn plan(&self, ask: &SponsorAsk) -> Result<Plan, SponsorError> {
        let chain = ask.chain_id;
        let delegate = self.delegate_on(chain)?;
        let p = parse(ask)?;
        let report = self.check(chain, &p.auth).await?;
        if let Some(refusal) = report.refusal() {
            return Err(refusal);
        }
        let authority: Address = report
            .authority
            .as_deref()
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| SponsorError::Authorization {
                code: "AUTHORIZATION_SIGNATURE",
                message: "authorization: no authority recovered".into(),
            })?;
        let to = p.to.unwrap_or(authority);
        if to != authority {
            return Err(SponsorError::Target(to.to_string()));
        }
        let from = self.payer_of_gas(authority);
        let estimate = self
            .deps
            .parts
            .reader
            .estimate_delegated(
                chain,
                from,
                (to, p.data.clone()),
                std::slice::from_ref(&p.auth),
            )
            .await
            .map_err(|e| SponsorError::WouldRevert(e.to_string()))?;
        let margin = self.sponsor_config().gas_margin_per_mille;
        let est_gas = estimate.saturating_mul(1_000 + margin) / 1_000;
        let gas_price = self.deps.parts.reader.gas_price(chain).await?;
        let (price, price_usd, markup_bps) = self.price(chain, est_gas + SETTLE_GAS, gas_price)?;
        let relayer = self.payer_of_gas(Address::ZERO);
        Ok(Plan {
            chain_id: chain,
            authority: authority.to_string(),
            delegate: delegate.to_string(),
            envelope: Envelope {
                tx_type: "0x4".into(),
                chain_id: chain,
                from: relayer.to_string(),
                to: to.to_string(),
                data: p.data.to_string(),
                value: "0".into(),
                gas: est_gas,
                max_fee_per_gas: (gas_price * U256::from(2u8) + U256::from(1_000_000_000u64))
                    .to_string(),
                max_priority_fee_per_gas: "1000000000".into(),
                authorization_list: vec![AuthorizationTuple::of(&p.auth)],
            },
            est_gas,
            settle_gas: SETTLE_GAS,
            gas_price_wei: gas_price.to_string(),
            price_usd,
            price,
            markup_bps,
        })
    }

    /// `units` of gas at `price_wei` plus the markup, in the payment asset
    /// (at least one unit) and in USD.
    fn price(
        &self,
        chain: u64,
        units: u64,
        price_wei: U256,
    ) -> Result<(Price, String, u32), SponsorError> {
        let (asset, token, decimals) = self.asset_on(chain)?;
        let prices = &self.deps.parts.prices;
        let unpriced = |e: relay_engine::oracle::Unpriced| SponsorError::Unpriced(e.to_string());
        let native_usd_e6 = prices.native_usd_e6(chain).map_err(unpriced)?;
        let asset_usd_e6 = prices.usd_e6(&format!("{asset}/USD")).map_err(unpriced)?;
        let markup_bps = self.deps.parts.config.quote.gas_markup_bps;
        let spend = GasSpend {
            units,
            price_wei,
            native_usd_e6,
        };
        let token_price = TokenPrice {
            usd_e6: asset_usd_e6,
            decimals,
        };
        let amount = gas_fee(&[spend], markup_bps, token_price)
            .ok_or_else(|| SponsorError::Unpriced(format!("{asset} has no price")))?
            .0
            .max(U256::from(1u8));
        let micro_usd =
            amount * U256::from(asset_usd_e6) / U256::from(10u64).pow(U256::from(decimals));
        Ok((
            Price {
                asset,
                token: token.to_string(),
                amount: amount.to_string(),
                decimals,
            },
            usd_string(micro_usd),
            markup_bps,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usd_strings_have_six_decimals() {
        assert_eq!(usd_string(U256::from(12_345u64)), "0.012345");
        assert_eq!(usd_string(U256::from(3_000_000u64)), "3.000000");
    }

    #[test]
    fn a_tuple_round_trips_through_json() {
        let t = AuthorizationTuple {
            chain_id: 8453,
            address: Address::repeat_byte(7).to_string(),
            nonce: 4,
            y_parity: 1,
            r: format!("{:#066x}", U256::from(5u8)),
            s: format!("{:#066x}", U256::from(6u8)),
        };
        assert_eq!(AuthorizationTuple::of(&t.to_signed().unwrap()), t);
        let bad = AuthorizationTuple {
            r: "zz".into(),
            ..t
        };
        assert!(matches!(
            bad.to_signed(),
            Err(SponsorError::Invalid { field, .. }) if field == "authorization.r"
        ));
    }
}
