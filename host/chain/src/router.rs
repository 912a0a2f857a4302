//! The `RelayRouter` contract as the host speaks to it: the EIP-712 types a
//! user signs (a Permit2 witness transfer whose witness is the route's
//! [`RelayIntent`], the router's own `RelayOrder`, an EIP-2612 `Permit`),
//! their digests, the plan hash of a composed deposit call, the calldata of
//! the one router transaction, and the off-chain check of every signature
//! before anything is broadcast (signer — or a contract wallet's ERC-1271
//! answer —, chain, deadline, nonce, low-s).
//!
//! The contract (`conformance/devnet/contracts/RelayRouter.sol`) checks
//! the same things again on chain; the host checks first so a bad
//! signature is a typed 4xx and the relayer spends no gas on it.

use alloy::{
    primitives::{keccak256, Address, Bytes, B256, U256},
    sol,
    sol_types::{eip712_domain, Eip712Domain, SolCall, SolStruct, SolValue},
};
use relay_types::{DepositCall, RelayIntent, RouterAuth, RouterForm, TokenPermit};

use crate::{
    permit2::{self, Permit2Error},
    reader::{ChainReader, ReadError},
};

/// The router's EIP-712 domain name.
pub const DOMAIN_NAME: &str = "RelayRouter";
/// The router's EIP-712 domain version (the interface release).
pub const DOMAIN_VERSION: &str = "3.1";
/// The witness type string Permit2 is given (and clients sign through
/// `PermitWitnessTransferFrom`).
pub const WITNESS_TYPE_STRING: &str = "RelayIntent witness)RelayIntent(string recipient,string toChain,string toToken,uint256 minOut,string rail,bytes32 planHash,uint256 feeCap,uint256 deadline)TokenPermissions(address token,uint256 amount)";
/// ERC-1271's magic value.
const ERC1271_MAGIC: [u8; 4] = [0x16, 0x26, 0xba, 0x7e];

/// The Solidity types (ABI and EIP-712), as in `RelayRouter.sol`.
#[allow(missing_docs, clippy::too_many_arguments)]
pub mod abi {
    use super::sol;

    sol! {
        struct TokenPermissions { address token; uint256 amount; }

        struct RelayIntent {
            string recipient;
            string toChain;
            string toToken;
            uint256 minOut;
            string rail;
            bytes32 planHash;
            uint256 feeCap;
            uint256 deadline;
        }

        /// What a `permit2-witness` signature covers (spender = the router).
        struct PermitWitnessTransferFrom {
            TokenPermissions permitted;
            address spender;
            uint256 nonce;
            uint256 deadline;
            RelayIntent witness;
        }

        /// The router's own intent (`intent`, `erc2612`).
        struct RelayOrder {
            address owner;
            address token;
            uint256 amount;
            uint256 nonce;
            RelayIntent intent;
        }

        /// EIP-2612.
        struct Permit {
            address owner;
            address spender;
            uint256 value;
            uint256 nonce;
            uint256 deadline;
        }

        struct PermitTransferFrom { TokenPermissions permitted; uint256 nonce; uint256 deadline; }
        struct Deposit { address target; address spender; uint256 value; bytes data; }
        struct Settlement { uint256 fee; address feeRecipient; }
        struct TokenPermitArg { uint256 value; uint256 deadline; uint8 v; bytes32 r; bytes32 s; }

        function relayPermit2(PermitTransferFrom permit, address owner, RelayIntent intent, bytes signature, TokenPermitArg tokenPermit, Deposit deposit, Settlement settlement) external payable;
        function relayOrder(RelayOrder order, bytes signature, TokenPermitArg tokenPermit, Deposit deposit, Settlement settlement) external payable;

        function nonces(address owner) external view returns (uint256);
        function name() external view returns (string);
        function version() external view returns (string);
        function DOMAIN_SEPARATOR() external view returns (bytes32);
        function isValidSignature(bytes32 hash, bytes signature) external view returns (bytes4);

        /// What a router call reverts with (its own errors, Permit2's, the token's).
        #[derive(Debug, PartialEq, Eq)]
        interface IRouterErrors {
            error IntentExpired(uint256 deadline);
            error PlanMismatch(bytes32 signed, bytes32 given);
            error FeeAboveCap(uint256 fee, uint256 cap);
            error ValueMismatch();
            error PermitFailed();
            error FundsLeft(uint256 balance);
            error NotRelayer(address caller);
            error ForbiddenCall(address target, bytes4 selector);
            error Reentrancy();
            error InvalidNonce();
            error InvalidSignature();
            error InvalidSignatureLength();
            error InvalidSigner();
            error InvalidContractSignature();
            error SignatureExpired(uint256 signatureDeadline);
            error InvalidAmount(uint256 maxAmount);
            error TransferFailed();
            error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed);
            error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed);
        }
    }
}

/// A router revert, decoded when it is one of [`abi::IRouterErrors`].
pub fn decode_revert(data: &[u8]) -> Option<abi::IRouterErrors::IRouterErrorsErrors> {
    <abi::IRouterErrors::IRouterErrorsErrors as alloy::sol_types::SolInterface>::abi_decode(data)
        .ok()
}

/// The hash a [`RelayIntent`] commits to: `keccak256(abi.encode(target,
/// spender, value, keccak256(data)))`.
pub fn plan_hash(d: &DepositCall) -> B256 {
    keccak256((d.target, d.spender, d.value, keccak256(&d.data)).abi_encode())
}

fn sol_intent(i: &RelayIntent) -> abi::RelayIntent {
    abi::RelayIntent {
        recipient: i.recipient.clone(),
        toChain: i.to_chain.clone(),
        toToken: i.to_token.clone(),
        minOut: i.min_out,
        rail: i.rail.clone(),
        planHash: i.plan_hash,
        feeCap: i.fee_cap,
        deadline: i.deadline,
    }
}

/// The router's domain on `chain_id`.
pub fn domain(chain_id: u64, router: Address) -> Eip712Domain {
    eip712_domain! {
        name: DOMAIN_NAME,
        version: DOMAIN_VERSION,
        chain_id: chain_id,
        verifying_contract: router,
    }
}

/// Permit2's domain on `chain_id`.
pub fn permit2_domain(chain_id: u64, permit2: Address) -> Eip712Domain {
    eip712_domain! { name: "Permit2", chain_id: chain_id, verifying_contract: permit2, }
}

/// The Permit2 witness transfer a `permit2-witness` signature covers.
pub fn witness_message(
    permit: &relay_types::SignedPermit,
    router: Address,
    intent: &RelayIntent,
) -> abi::PermitWitnessTransferFrom {
    abi::PermitWitnessTransferFrom {
        permitted: abi::TokenPermissions {
            token: permit.token,
            amount: permit.amount,
        },
        spender: router,
        nonce: permit.nonce,
        deadline: permit.deadline,
        witness: sol_intent(intent),
    }
}

/// The router's `RelayOrder`.
pub fn order_message(
    (owner, token, amount, nonce): (Address, Address, U256, U256),
    intent: &RelayIntent,
) -> abi::RelayOrder {
    abi::RelayOrder {
        owner,
        token,
        amount,
        nonce,
        intent: sol_intent(intent),
    }
}

/// The EIP-712 message and domain a user signs for `auth` on `chain_id`.
fn signed_digest(auth: &RouterAuth, form: &RouterForm, chain_id: u64, permit2: Address) -> B256 {
    match form {
        RouterForm::Permit2Witness { permit, .. } => {
            witness_message(permit, auth.router, &auth.intent)
                .eip712_signing_hash(&permit2_domain(chain_id, permit2))
        }
        RouterForm::Order {
            owner,
            token,
            amount,
            nonce,
            ..
        } => order_message((*owner, *token, *amount, *nonce), &auth.intent)
            .eip712_signing_hash(&domain(chain_id, auth.router)),
    }
}

/// The EIP-2612 `Permit` digest under a token's `DOMAIN_SEPARATOR`.
pub fn erc2612_digest(separator: B256, p: &abi::Permit) -> B256 {
    let mut buf = Vec::with_capacity(66);
    buf.extend_from_slice(b"\x19\x01");
    buf.extend_from_slice(separator.as_slice());
    buf.extend_from_slice(p.eip712_hash_struct().as_slice());
    keccak256(buf)
}

/// Why a router authorisation is refused before anything is sent.
#[derive(Debug, thiserror::Error)]
pub enum RouterError {
    /// The route carries no signatures.
    #[error("the route carries no router signature")]
    Unsigned,
    /// A signature is malformed or high-s (`field` names it).
    #[error("{field}: {source}")]
    Signature {
        /// The body field.
        field: &'static str,
        /// Why.
        source: Permit2Error,
    },
    /// A signature recovers to someone else.
    #[error("{field}: signed by {recovered}, not the owner {owner}, for chain {chain_id}")]
    WrongSigner {
        /// The body field.
        field: &'static str,
        /// Who signed.
        recovered: Address,
        /// Who should have.
        owner: Address,
        /// The chain the route runs on.
        chain_id: u64,
    },
    /// A contract wallet's ERC-1271 check refused the signature.
    #[error(
        "{field}: the owner {owner} is a contract and its isValidSignature refused the signature"
    )]
    ContractRefused {
        /// The body field.
        field: &'static str,
        /// The wallet.
        owner: Address,
    },
    /// A deadline has passed.
    #[error("{field}: {deadline} is not after now ({now})")]
    Expired {
        /// The body field.
        field: &'static str,
        /// Deadline.
        deadline: U256,
        /// Now, unix seconds.
        now: u64,
    },
    /// A nonce is spent (Permit2's bitmap, the router's, or the token's
    /// EIP-2612 counter moved on).
    #[error("{field}: {nonce} is already used")]
    NonceUsed {
        /// The body field.
        field: &'static str,
        /// The nonce.
        nonce: U256,
    },
    /// An EIP-2612 permit grants less than the route pulls.
    #[error("erc2612.value: {value} is less than the route's {amount}")]
    PermitTooSmall {
        /// Granted.
        value: U256,
        /// Pulled.
        amount: U256,
    },
    /// The chain could not be read.
    #[error("cannot check the signature on chain: {0}")]
    Read(#[from] ReadError),
}

/// What the check needs besides the route's authorisation.
#[derive(Clone, Copy, Debug)]
pub struct CheckContext<'a> {
    /// Reads the chain (nonces, code, ERC-1271, token domains).
    pub reader: &'a ChainReader,
    /// The source chain.
    pub chain_id: u64,
    /// Permit2 on it.
    pub permit2: Address,
    /// Now, unix seconds.
    pub now_secs: u64,
}

/// Every check of `auth`'s signatures, off chain first, then nonces and
/// contract wallets on chain.
pub async fn verify(cx: CheckContext<'_>, auth: &RouterAuth) -> Result<(), RouterError> {
    let form = auth.form.as_ref().ok_or(RouterError::Unsigned)?;
    let (sig_field, signature, deadline_field, deadline) = match form {
        RouterForm::Permit2Witness { permit, .. } => (
            "permit2.signature",
            &permit.signature,
            "permit2.deadline",
            permit.deadline,
        ),
        RouterForm::Order { signature, .. } => (
            "intent.signature",
            signature,
            "intent.deadline",
            auth.intent.deadline,
        ),
    };
    expired(deadline_field, deadline, cx.now_secs)?;
    expired("intent.deadline", auth.intent.deadline, cx.now_secs)?;
    let digest = signed_digest(auth, form, cx.chain_id, cx.permit2);
    check_signer(cx, form.owner(), sig_field, signature, digest).await?;
    let (nonce_field, bitmap_of, nonce) = match form {
        RouterForm::Permit2Witness { permit, .. } => ("permit2.nonce", cx.permit2, permit.nonce),
        RouterForm::Order { nonce, .. } => ("intent.nonce", auth.router, *nonce),
    };
    let unused = cx
        .reader
        .permit2_nonce_unused(cx.chain_id, bitmap_of, form.owner(), nonce)
        .await?;
    if !unused {
        return Err(RouterError::NonceUsed {
            field: nonce_field,
            nonce,
        });
    }
    verify_token_permit(cx, auth, form).await
}

fn expired(field: &'static str, deadline: U256, now: u64) -> Result<(), RouterError> {
    if deadline <= U256::from(now) {
        return Err(RouterError::Expired {
            field,
            deadline,
            now,
        });
    }
    Ok(())
}

/// The signer check: ERC-1271 for a contract owner, recovery (low-s) for
/// an EOA.
async fn check_signer(
    cx: CheckContext<'_>,
    owner: Address,
    field: &'static str,
    signature: &Bytes,
    digest: B256,
) -> Result<(), RouterError> {
    if cx.reader.has_code(cx.chain_id, owner).await? {
        let call = abi::isValidSignatureCall {
            hash: digest,
            signature: signature.clone(),
        };
        let answer = cx.reader.read(cx.chain_id, owner, call.abi_encode()).await;
        let valid = answer
            .ok()
            .and_then(|raw| abi::isValidSignatureCall::abi_decode_returns(&raw).ok())
            .is_some_and(|magic| magic.0 == ERC1271_MAGIC);
        return valid
            .then_some(())
            .ok_or(RouterError::ContractRefused { field, owner });
    }
    let recovered = permit2::recover(signature, &digest)
        .map_err(|source| RouterError::Signature { field, source })?;
    if recovered != owner {
        return Err(RouterError::WrongSigner {
            field,
            recovered,
            owner,
            chain_id: cx.chain_id,
        });
    }
    Ok(())
}

/// The EIP-2612 permit, when the form carries one: spender (Permit2 for a
/// witness transfer, the router for an order), value, deadline, the
/// token's current nonce, and the owner's signature under the token's own
/// `DOMAIN_SEPARATOR`.
async fn verify_token_permit(
    cx: CheckContext<'_>,
    auth: &RouterAuth,
    form: &RouterForm,
) -> Result<(), RouterError> {
    let (tp, spender, token, amount) = match form {
        RouterForm::Permit2Witness {
            permit,
            token_permit,
        } => (token_permit, cx.permit2, permit.token, permit.amount),
        RouterForm::Order {
            token_permit,
            token,
            amount,
            ..
        } => (token_permit, auth.router, *token, *amount),
    };
    let Some(tp) = tp else { return Ok(()) };
    expired("erc2612.deadline", tp.deadline, cx.now_secs)?;
    if tp.value < amount {
        return Err(RouterError::PermitTooSmall {
            value: tp.value,
            amount,
        });
    }
    let owner = form.owner();
    let (separator, nonce) = token_domain(cx, token, owner).await?;
    let digest = erc2612_digest(
        separator,
        &abi::Permit {
            owner,
            spender,
            value: tp.value,
            nonce,
            deadline: tp.deadline,
        },
    );
    check_signer(cx, owner, "erc2612.signature", &tp.signature, digest).await
}

/// A token's EIP-2612 `DOMAIN_SEPARATOR` and `owner`'s current nonce.
pub async fn token_domain(
    cx: CheckContext<'_>,
    token: Address,
    owner: Address,
) -> Result<(B256, U256), RouterError> {
    let read_err = |e: alloy::sol_types::Error| ReadError::Failed {
        chain: cx.chain_id,
        reason: format!("token {token} is not EIP-2612: {e}"),
    };
    let raw = cx
        .reader
        .read(
            cx.chain_id,
            token,
            abi::DOMAIN_SEPARATORCall {}.abi_encode(),
        )
        .await?;
    let separator = abi::DOMAIN_SEPARATORCall::abi_decode_returns(&raw).map_err(read_err)?;
    let raw = cx
        .reader
        .read(cx.chain_id, token, abi::noncesCall { owner }.abi_encode())
        .await?;
    let nonce = abi::noncesCall::abi_decode_returns(&raw).map_err(read_err)?;
    Ok((separator, nonce))
}

/// A token's EIP-2612 domain as a wallet signs it (name and version read
/// from the token, checked against its `DOMAIN_SEPARATOR`) and `owner`'s
/// current permit nonce; an error when the token is not EIP-2612.
pub async fn token_eip712(
    cx: CheckContext<'_>,
    token: Address,
    owner: Address,
) -> Result<(crate::typed::Domain, U256), RouterError> {
    let (separator, nonce) = token_domain(cx, token, owner).await?;
    let text = |raw: Result<Bytes, ReadError>| raw.ok().and_then(|b| String::abi_decode(&b).ok());
    let name = text(
        cx.reader
            .read(cx.chain_id, token, abi::nameCall {}.abi_encode())
            .await,
    );
    let version = text(
        cx.reader
            .read(cx.chain_id, token, abi::versionCall {}.abi_encode())
            .await,
    );
    let name = name.ok_or_else(|| ReadError::Failed {
        chain: cx.chain_id,
        reason: format!("token {token} has no name()"),
    })?;
    let version = version.unwrap_or_else(|| "1".into());
    let domain = Eip712Domain::new(
        Some(name.clone().into()),
        Some(version.clone().into()),
        Some(U256::from(cx.chain_id)),
        Some(token),
        None,
    );
    if domain.separator() != separator {
        return Err(ReadError::Failed {
            chain: cx.chain_id,
            reason: format!(
                "token {token}'s DOMAIN_SEPARATOR is not {{name {name:?}, version {version:?}}}"
            ),
        }
        .into());
    }
    let d = crate::typed::Domain {
        name,
        version: Some(version),
        chain_id: cx.chain_id,
        verifying_contract: token,
    };
    Ok((d, nonce))
}

fn token_permit_arg(tp: Option<&TokenPermit>) -> Result<abi::TokenPermitArg, Permit2Error> {
    let Some(tp) = tp else {
        return Ok(abi::TokenPermitArg {
            value: U256::ZERO,
            deadline: U256::ZERO,
            v: 0,
            r: B256::ZERO,
            s: B256::ZERO,
        });
    };
    let (v, r, s) = permit2::vrs(&tp.signature)?;
    Ok(abi::TokenPermitArg {
        value: tp.value,
        deadline: tp.deadline,
        v,
        r,
        s,
    })
}

/// The calldata of the route's one router transaction.
pub fn calldata(auth: &RouterAuth) -> Result<Vec<u8>, RouterError> {
    let form = auth.form.as_ref().ok_or(RouterError::Unsigned)?;
    let deposit = abi::Deposit {
        target: auth.deposit.target,
        spender: auth.deposit.spender,
        value: auth.deposit.value,
        data: auth.deposit.data.clone(),
    };
    let settlement = abi::Settlement {
        fee: auth.fee,
        feeRecipient: auth.fee_recipient,
    };
    let field = "erc2612.signature";
    Ok(match form {
        RouterForm::Permit2Witness {
            permit,
            token_permit,
        } => abi::relayPermit2Call {
            permit: abi::PermitTransferFrom {
                permitted: abi::TokenPermissions {
                    token: permit.token,
                    amount: permit.amount,
                },
                nonce: permit.nonce,
                deadline: permit.deadline,
            },
            owner: permit.owner,
            intent: sol_intent(&auth.intent),
            signature: permit.signature.clone(),
            tokenPermit: token_permit_arg(token_permit.as_ref())
                .map_err(|source| RouterError::Signature { field, source })?,
            deposit,
            settlement,
        }
        .abi_encode(),
        RouterForm::Order {
            owner,
            token,
            amount,
            nonce,
            signature,
            token_permit,
        } => abi::relayOrderCall {
            order: order_message((*owner, *token, *amount, *nonce), &auth.intent),
            signature: signature.clone(),
            tokenPermit: token_permit_arg(token_permit.as_ref())
                .map_err(|source| RouterError::Signature { field, source })?,
            deposit,
            settlement,
        }
        .abi_encode(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_witness_type_string_is_what_alloy_derives() {
        let full = abi::PermitWitnessTransferFrom::eip712_encode_type();
        let stub = "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";
        assert_eq!(full, format!("{stub}{WITNESS_TYPE_STRING}"));
    }

    #[test]
    fn the_plan_hash_changes_with_every_field() {
        let base = DepositCall {
            target: Address::repeat_byte(1),
            spender: Address::repeat_byte(2),
            value: U256::ZERO,
            data: Bytes::from_static(b"\x01\x02"),
        };
        let h = plan_hash(&base);
        let mut other = base.clone();
        other.data = Bytes::from_static(b"\x01\x03");
        assert_ne!(h, plan_hash(&other));
        other = base.clone();
        other.target = Address::repeat_byte(3);
        assert_ne!(h, plan_hash(&other));
        assert_eq!(h, plan_hash(&base.clone()));
    }
}
