//! Conversions between the generated WIT types of `relay:rail` and the
//! `relay_plugin_api` types, written once for both sides of the boundary.
//!
//! The guest bindings (wit-bindgen) and the host bindings (wasmtime
//! `bindgen!`) generate Rust types with the same names and fields from the
//! same world, so one macro, [`wit_conversions!`](crate::wit_conversions),
//! implements the conversions for whichever set of generated types it is
//! pointed at. The guest invokes it on its wit-bindgen types, the host on
//! its wasmtime types.
//!
//! Two directions, two traits:
//! - [`Lower`]: a contract value into its WIT form. Never fails.
//! - [`Lift`]: a WIT value into the contract type. Validates what WIT cannot
//!   express (semver strings, `detail` being a JSON object) and fails with a
//!   [`ConvertError`] that names the offending field.

use std::fmt;

/// A WIT value that is not a valid contract value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConvertError {
    /// Field path, outermost first (`quote.detail`).
    path: Vec<&'static str>,
    /// What is wrong.
    reason: String,
}

impl ConvertError {
    /// A new error about the value itself.
    pub fn new(reason: impl Into<String>) -> Self {
        ConvertError {
            path: Vec::new(),
            reason: reason.into(),
        }
    }

    /// The same error, located inside `field`.
    pub fn within(mut self, field: &'static str) -> Self {
        self.path.insert(0, field);
        self
    }

    /// The dotted field path (`""` for the value itself).
    pub fn path(&self) -> String {
        self.path.join(".")
    }
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.reason)
        } else {
            write!(f, "{}: {}", self.path(), self.reason)
        }
    }
}

/// Lowers a contract value into its WIT representation `W`.
pub trait Lower<W> {
    /// The WIT value.
    fn lower(self) -> W;
}

/// Lifts a WIT value into the contract type `A`, validating it.
pub trait Lift<A> {
    /// The contract value, or what is wrong with the WIT value.
    fn lift(self) -> Result<A, ConvertError>;
}

macro_rules! identity {
    ($($t:ty),*) => {$(
        impl Lower<$t> for $t {
            fn lower(self) -> $t {
                self
            }
        }
        impl Lift<$t> for $t {
            fn lift(self) -> Result<$t, ConvertError> {
                Ok(self)
            }
        }
    )*};
}

identity!(bool, u8, u16, u32, u64, String);

impl<A: Lower<W>, W> Lower<Vec<W>> for Vec<A> {
    fn lower(self) -> Vec<W> {
        self.into_iter().map(Lower::lower).collect()
    }
}

impl<W: Lift<A>, A> Lift<Vec<A>> for Vec<W> {
    fn lift(self) -> Result<Vec<A>, ConvertError> {
        self.into_iter().map(Lift::lift).collect()
    }
}

impl<A: Lower<W>, W> Lower<Option<W>> for Option<A> {
    fn lower(self) -> Option<W> {
        self.map(Lower::lower)
    }
}

impl<W: Lift<A>, A> Lift<Option<A>> for Option<W> {
    fn lift(self) -> Result<Option<A>, ConvertError> {
        self.map(Lift::lift).transpose()
    }
}

impl<A1: Lower<W1>, A2: Lower<W2>, W1, W2> Lower<(W1, W2)> for (A1, A2) {
    fn lower(self) -> (W1, W2) {
        (self.0.lower(), self.1.lower())
    }
}

impl<W1: Lift<A1>, W2: Lift<A2>, A1, A2> Lift<(A1, A2)> for (W1, W2) {
    fn lift(self) -> Result<(A1, A2), ConvertError> {
        Ok((self.0.lift()?, self.1.lift()?))
    }
}

/// Versions travel as semver strings.
impl Lower<String> for semver::Version {
    fn lower(self) -> String {
        self.to_string()
    }
}

impl Lift<semver::Version> for String {
    fn lift(self) -> Result<semver::Version, ConvertError> {
        semver::Version::parse(&self)
            .map_err(|e| ConvertError::new(format!("{self:?} is not a semver version: {e}")))
    }
}

/// `detail` travels as the JSON text of an object.
impl Lower<String> for std::sync::Arc<serde_json::Value> {
    fn lower(self) -> String {
        self.to_string()
    }
}

impl Lift<std::sync::Arc<serde_json::Value>> for String {
    fn lift(self) -> Result<std::sync::Arc<serde_json::Value>, ConvertError> {
        match serde_json::from_str(&self) {
            Ok(v @ serde_json::Value::Object(_)) => Ok(v.into()),
            Ok(_) => Err(ConvertError::new("not a JSON object")),
            Err(e) => Err(ConvertError::new(format!("not JSON: {e}"))),
        }
    }
}

/// Implements [`Lower`] and [`Lift`] between every type of the `relay:rail`
/// world and its `relay_plugin_api` counterpart.
///
/// `$wit` names a module in scope that holds the generated types of the
/// `relay:rail/types` interface; invoke it once per crate, where those types
/// are local (the orphan rule needs them to be).
///
/// ```ignore
/// use crate::bindings::relay::rail::types as wit;
/// relay_plugin_wasm::wit_conversions!(wit);
/// ```
#[macro_export]
macro_rules! wit_conversions {
    ($wit:ident) => {
        $crate::__wit_enum!($wit; NonEvmNode { Stellar, Solana, Bitcoin, Tron, Sui });
        $crate::__wit_enum!($wit; RailRole {
            Aggregator, StableBridge, NativeBitcoin, BurnMint, FloatLane, QuoteOnly
        });
        $crate::__wit_enum!($wit; FeeKind { Bridge, Protocol, RelayGas, Float });
        $crate::__wit_enum!($wit; SourceMode { Operator, Permit2 });
        $crate::__wit_enum!($wit; TrackState { Pending, Bridging, Done, Failed, Refunded });
        $crate::__wit_enum!($wit; HealthStatus { Operational, Degraded, Down, Unknown });
        $crate::__wit_enum!($wit; RailErrorKind {
            UnsupportedLane, InvalidInput, AmountOutOfRange, Upstream, UpstreamTimeout,
            UpstreamMalformed, FundsRequired, QuoteExpired, Capability, NotFound, Internal
        });
        $crate::__wit_enum!($wit; HttpMethod { Get, Post });
        $crate::__wit_enum!($wit; HostErrorKind {
            Denied, Timeout, Network, TooLarge, NotConfigured, Rpc
        });
        $crate::__wit_enum!($wit; LogLevel { Debug, Info, Warn, Error });

        $crate::__wit_record!($wit; Token { symbol, address, decimals });
        $crate::__wit_record!($wit; QuoteRequest {
            from_chain, to_chain, from_token, to_token, amount, from_address, to_address,
            slippage_bps, member
        });
        $crate::__wit_record!($wit; Fee { kind, amount, token, included });
        $crate::__wit_record!($wit; GasEstimate { chain, gas_units });
        $crate::__wit_record!($wit; RailQuote {
            rail, lane, amount_in, amount_out, min_out, fees, gas, duration_sec,
            quote_only_reason, upstream_ref, expires_at_ms, detail
        });
        $crate::__wit_record!($wit; DeclaredContract { chain, address, label });
        $crate::__wit_record!($wit; RailManifest {
            id, name, version, contract_version, role, coverage, egress, rpc_chains,
            contracts, upstream
        });
        $crate::__wit_record!($wit; PrepareRequest {
            route_id, quote, from_chain, to_chain, from_token_address, to_token_address,
            sender, recipient, relayer, mode
        });
        $crate::__wit_record!($wit; ExecutionPlan { steps, track_ref });
        $crate::__wit_record!($wit; TrackRequest {
            route_id, reference, from_chain, to_chain, src_tx
        });
        $crate::__wit_record!($wit; TrackStatus { state, stage, dest_tx, message, follow_up });
        $crate::__wit_record!($wit; LaneHealth { lane, quote_ok, quote_error, execute_ready });
        $crate::__wit_record!($wit; RailHealth { status, detail, lanes });
        $crate::__wit_record!($wit; RailError { kind, message, retryable });
        $crate::__wit_record!($wit; HttpRequest {
            method, url, headers, body, timeout_ms, credential
        });
        $crate::__wit_record!($wit; HttpResponse { status, headers, body });
        $crate::__wit_record!($wit; HostError { kind, message });

        $crate::__wit_plan_action!($wit;
            Permit2Pull { chain, token, amount },
            Approve { chain, token, spender, amount },
            ContractCall { chain, to, data, value, gas_limit },
            InventoryPayout { chain, token, to, amount },
            DepositInstruction { node, address, asset, amount, expires_at_ms }
        );

        impl $crate::Lower<$wit::U256> for $crate::api::Amount {
            fn lower(self) -> $wit::U256 {
                let [a, b, c, d] = self.to_limbs();
                $wit::U256 { limbs: (a, b, c, d) }
            }
        }

        impl $crate::Lift<$crate::api::Amount> for $wit::U256 {
            fn lift(self) -> ::core::result::Result<$crate::api::Amount, $crate::ConvertError> {
                let (a, b, c, d) = self.limbs;
                Ok($crate::api::Amount::from_limbs([a, b, c, d]))
            }
        }

        impl $crate::Lower<$wit::ChainRef> for $crate::api::ChainRef {
            fn lower(self) -> $wit::ChainRef {
                match self {
                    $crate::api::ChainRef::Evm(id) => $wit::ChainRef::Evm(id),
                    $crate::api::ChainRef::NonEvm(n) => $wit::ChainRef::NonEvm($crate::Lower::lower(n)),
                }
            }
        }

        impl $crate::Lift<$crate::api::ChainRef> for $wit::ChainRef {
            fn lift(self) -> ::core::result::Result<$crate::api::ChainRef, $crate::ConvertError> {
                match self {
                    $wit::ChainRef::Evm(0) => Err($crate::ConvertError::new("chain id 0")),
                    $wit::ChainRef::Evm(id) => Ok($crate::api::ChainRef::Evm(id)),
                    $wit::ChainRef::NonEvm(n) => Ok($crate::api::ChainRef::NonEvm($crate::Lift::lift(n)?)),
                }
            }
        }

        // The only record whose field names differ between the two sides.
        impl $crate::Lower<$wit::LaneCoverage> for $crate::api::LaneCoverage {
            fn lower(self) -> $wit::LaneCoverage {
                $wit::LaneCoverage {
                    lane: self.lane,
                    from_chains: $crate::Lower::lower(self.from),
                    to_chains: $crate::Lower::lower(self.to),
                    assets: self.assets,
                    same_chain: self.same_chain,
                    executable: self.executable,
                    quote_only_reason: self.quote_only_reason,
                }
            }
        }

        impl $crate::Lift<$crate::api::LaneCoverage> for $wit::LaneCoverage {
            fn lift(
                self,
            ) -> ::core::result::Result<$crate::api::LaneCoverage, $crate::ConvertError> {
                Ok($crate::api::LaneCoverage {
                    lane: self.lane,
                    from: $crate::Lift::lift(self.from_chains).map_err(|e| e.within("from_chains"))?,
                    to: $crate::Lift::lift(self.to_chains).map_err(|e| e.within("to_chains"))?,
                    assets: self.assets,
                    same_chain: self.same_chain,
                    executable: self.executable,
                    quote_only_reason: self.quote_only_reason,
                })
            }
        }
    };
}

/// One enum whose variants have the same names on both sides.
#[doc(hidden)]
#[macro_export]
macro_rules! __wit_enum {
    ($wit:ident; $name:ident { $($variant:ident),* $(,)? }) => {
        impl $crate::Lower<$wit::$name> for $crate::api::$name {
            fn lower(self) -> $wit::$name {
                match self {
                    $($crate::api::$name::$variant => $wit::$name::$variant,)*
                }
            }
        }

        impl $crate::Lift<$crate::api::$name> for $wit::$name {
            fn lift(self) -> ::core::result::Result<$crate::api::$name, $crate::ConvertError> {
                Ok(match self {
                    $($wit::$name::$variant => $crate::api::$name::$variant,)*
                })
            }
        }
    };
}

/// One record whose fields have the same names on both sides.
#[doc(hidden)]
#[macro_export]
macro_rules! __wit_record {
    ($wit:ident; $name:ident { $($field:ident),* $(,)? }) => {
        impl $crate::Lower<$wit::$name> for $crate::api::$name {
            fn lower(self) -> $wit::$name {
                $wit::$name {
                    $($field: $crate::Lower::lower(self.$field),)*
                }
            }
        }

        impl $crate::Lift<$crate::api::$name> for $wit::$name {
            fn lift(self) -> ::core::result::Result<$crate::api::$name, $crate::ConvertError> {
                Ok($crate::api::$name {
                    $($field: $crate::Lift::lift(self.$field)
                        .map_err(|e| e.within(stringify!($field)))?,)*
                })
            }
        }
    };
}

/// `plan-action`: WIT variants carrying records, Rust struct variants with
/// the same fields, plus `await-upstream(string)`.
#[doc(hidden)]
#[macro_export]
macro_rules! __wit_plan_action {
    ($wit:ident; $($variant:ident { $($field:ident),* }),* $(,)?) => {
        impl $crate::Lower<$wit::PlanAction> for $crate::api::PlanAction {
            fn lower(self) -> $wit::PlanAction {
                match self {
                    $($crate::api::PlanAction::$variant { $($field),* } => {
                        $wit::PlanAction::$variant($wit::$variant {
                            $($field: $crate::Lower::lower($field),)*
                        })
                    })*
                    $crate::api::PlanAction::AwaitUpstream { reference } => {
                        $wit::PlanAction::AwaitUpstream(reference)
                    }
                }
            }
        }

        impl $crate::Lift<$crate::api::PlanAction> for $wit::PlanAction {
            fn lift(
                self,
            ) -> ::core::result::Result<$crate::api::PlanAction, $crate::ConvertError> {
                Ok(match self {
                    $($wit::PlanAction::$variant(r) => $crate::api::PlanAction::$variant {
                        $($field: $crate::Lift::lift(r.$field)
                            .map_err(|e| e.within(stringify!($field)))?,)*
                    },)*
                    $wit::PlanAction::AwaitUpstream(reference) => {
                        $crate::api::PlanAction::AwaitUpstream { reference }
                    }
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use relay_plugin_api::{
        contract_version, Amount, ChainRef, LaneCoverage, NonEvmNode, PlanAction, RailManifest,
        RailRole, U256,
    };

    use super::*;
    use crate::bindings::relay::rail::types as wit;

    fn manifest() -> RailManifest {
        RailManifest {
            id: "echo".into(),
            name: "Echo".into(),
            version: contract_version(),
            contract_version: contract_version(),
            role: RailRole::StableBridge,
            coverage: vec![LaneCoverage {
                lane: "evm->tron".into(),
                from: vec![ChainRef::Evm(8453)],
                to: vec![ChainRef::NonEvm(NonEvmNode::Tron)],
                assets: vec!["USDT".into()],
                same_chain: false,
                executable: false,
                quote_only_reason: Some("test".into()),
            }],
            egress: vec!["api.example".into()],
            rpc_chains: vec![ChainRef::Evm(1)],
            contracts: Vec::new(),
            upstream: None,
        }
    }

    #[test]
    fn manifest_survives_lower_then_lift() {
        let lowered: wit::RailManifest = manifest().lower();
        assert_eq!(lowered.version, contract_version().to_string());
        assert_eq!(Lift::<RailManifest>::lift(lowered).unwrap(), manifest());
    }

    #[test]
    fn amounts_and_plan_actions_keep_every_bit() {
        let amount = Amount(U256::MAX - U256::from(7u8));
        let action = PlanAction::DepositInstruction {
            node: ChainRef::NonEvm(NonEvmNode::Bitcoin),
            address: "bc1q".into(),
            asset: "BTC".into(),
            amount,
            expires_at_ms: Some(42),
        };
        let lowered: wit::PlanAction = action.clone().lower();
        assert_eq!(Lift::<PlanAction>::lift(lowered).unwrap(), action);
    }

    #[test]
    fn invalid_values_are_refused_naming_the_field() {
        let mut bad = manifest().lower();
        bad.contract_version = "one".into();
        let err = Lift::<RailManifest>::lift(bad).unwrap_err();
        assert_eq!(err.path(), "contract_version");

        let mut bad = manifest().lower();
        bad.coverage[0].to_chains = vec![wit::ChainRef::Evm(0)];
        let err = Lift::<RailManifest>::lift(bad).unwrap_err();
        assert_eq!(err.path(), "coverage.to_chains");
    }

    #[test]
    fn detail_must_be_a_json_object() {
        let ok: Result<std::sync::Arc<serde_json::Value>, _> = String::from(r#"{"a":1}"#).lift();
        assert_eq!(ok.unwrap()["a"], 1);
        for bad in ["[1]", "\"text\"", "{"] {
            assert!(
                Lift::<std::sync::Arc<serde_json::Value>>::lift(bad.to_string()).is_err(),
                "{bad}"
            );
        }
    }
}
