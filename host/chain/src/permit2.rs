//! Off-chain verification of a Permit2 `PermitTransferFrom` signature
//! before anything is broadcast (spec §2.7, DESIGN "Chains and money"):
//! the signature must be canonical (low-s, v ∈ {27, 28}, or a 64-byte
//! EIP-2098 compact signature) and recover to the owner for the EIP-712
//! digest under domain {name "Permit2", chainId, verifyingContract} with
//! spender = the relayer; the permit must cover the route's token and
//! amount, be unexpired, and its nonce must be unused on chain.
//!
//! Each failure is its own variant so the API can answer a typed 4xx
//! naming what is wrong — and nothing is broadcast.

use alloy::{
    primitives::{b256, Address, B256, U256},
    providers::Provider,
    sol,
    sol_types::{eip712_domain, SolStruct},
};

sol! {
    /// Permit2's `TokenPermissions`.
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    /// Permit2's `PermitTransferFrom` (the canonical type string).
    struct PermitTransferFrom {
        TokenPermissions permitted;
        address spender;
        uint256 nonce;
        uint256 deadline;
    }

    /// The read the nonce check needs.
    #[sol(rpc)]
    interface IPermit2Nonces {
        function nonceBitmap(address owner, uint256 wordPos) external view returns (uint256);
    }

    /// The on-chain argument of `permitTransferFrom` (no spender: it is msg.sender).
    struct PermitArg {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    /// Where the pulled tokens go.
    struct TransferDetails {
        address to;
        uint256 requestedAmount;
    }

    /// `permitTransferFrom(((address,uint256),uint256,uint256),(address,uint256),address,bytes)`.
    function permitTransferFrom(PermitArg permit, TransferDetails transferDetails, address owner, bytes signature);

    /// What a `permitTransferFrom` reverts with: Permit2's own errors and
    /// the ERC-20 errors it bubbles up (OpenZeppelin 5 names; Uniswap's
    /// Permit2 reverts `TRANSFER_FROM_FAILED` as a string instead).
    #[derive(Debug, PartialEq, Eq)]
    interface IPullErrors {
        error SignatureExpired(uint256 signatureDeadline);
        error InvalidAmount(uint256 maxAmount);
        error InvalidNonce();
        error InvalidSignatureLength();
        error InvalidSignature();
        error InvalidSigner();
        error InvalidContractSignature();
        error TransferFailed();
        error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed);
        error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed);
    }
}

/// The revert of a Permit2 pull, decoded when it is one of [`IPullErrors`].
pub fn decode_pull_revert(data: &[u8]) -> Option<IPullErrors::IPullErrorsErrors> {
    <IPullErrors::IPullErrorsErrors as alloy::sol_types::SolInterface>::abi_decode(data).ok()
}

/// Calldata that pulls `amount` of the permit's token from its owner to
/// `to` (the relayer), spending the user's signature.
pub fn transfer_calldata(p: &SignedPermit, to: Address, amount: U256) -> Vec<u8> {
    alloy::sol_types::SolCall::abi_encode(&permitTransferFromCall {
        permit: PermitArg {
            permitted: TokenPermissions {
                token: p.token,
                amount: p.amount,
            },
            nonce: p.nonce,
            deadline: p.deadline,
        },
        transferDetails: TransferDetails {
            to,
            requestedAmount: amount,
        },
        owner: p.owner,
        signature: p.signature.clone(),
    })
}

/// secp256k1 order / 2: signatures with a larger `s` are malleable.
const HALF_ORDER: B256 = b256!("7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0");

pub use relay_types::SignedPermit;

/// What the route requires of the permit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    /// The route's source chain.
    pub chain_id: u64,
    /// The Permit2 contract on it.
    pub permit2: Address,
    /// The relayer: the only spender the host accepts.
    pub spender: Address,
    /// The route's source token.
    pub token: Address,
    /// The amount the route pulls.
    pub amount: U256,
    /// Now, unix seconds.
    pub now_secs: u64,
}

/// Why a permit is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Permit2Error {
    /// Not 64 or 65 bytes, or v is not 27/28.
    #[error("permit2.signature: malformed ({0})")]
    Malformed(String),
    /// s is in the upper half of the curve order (malleable).
    #[error("permit2.signature: high-s signature is not canonical")]
    HighS,
    /// The signature does not recover to the owner for this chain,
    /// Permit2 contract and spender = relayer.
    #[error("permit2.signature: recovers to {recovered}, not the owner {owner}, for spender {spender} on chain {chain_id}")]
    BadSigner {
        /// Recovered address.
        recovered: Address,
        /// Claimed owner.
        owner: Address,
        /// The relayer the host requires as spender.
        spender: Address,
        /// The chain the route runs on.
        chain_id: u64,
    },
    /// The permit's deadline has passed.
    #[error("permit2.deadline: {deadline} is not after now ({now})")]
    Expired {
        /// Deadline.
        deadline: U256,
        /// Now.
        now: u64,
    },
    /// The permit names another token.
    #[error("permit2.permitted.token: {permitted} is not the route's token {expected}")]
    WrongToken {
        /// In the permit.
        permitted: Address,
        /// The route's.
        expected: Address,
    },
    /// The permit covers less than the route pulls.
    #[error("permit2.permitted.amount: {permitted} is less than the route's {requested}")]
    AmountTooLow {
        /// In the permit.
        permitted: U256,
        /// The route's.
        requested: U256,
    },
    /// The nonce was already used (or invalidated) on chain.
    #[error("permit2.nonce: {0} is already used")]
    NonceUsed(U256),
    /// The chain could not be asked.
    #[error("permit2: cannot read the nonce bitmap: {0}")]
    Rpc(String),
}

/// (r, s, y-parity) of a 65- or 64-byte signature.
fn split(sig: &[u8]) -> Result<(B256, B256, bool), Permit2Error> {
    match sig.len() {
        65 => {
            let parity = match sig[64] {
                27 | 0 => false,
                28 | 1 => true,
                v => return Err(Permit2Error::Malformed(format!("v = {v}"))),
            };
            Ok((
                B256::from_slice(&sig[..32]),
                B256::from_slice(&sig[32..64]),
                parity,
            ))
        }
        64 => {
            let mut vs = B256::from_slice(&sig[32..]);
            let parity = vs[0] & 0x80 != 0;
            vs[0] &= 0x7f;
            Ok((B256::from_slice(&sig[..32]), vs, parity))
        }
        n => Err(Permit2Error::Malformed(format!(
            "{n} bytes, expected 64 or 65"
        ))),
    }
}

/// The signer of `digest`: a canonical 65-byte (r, s, v) or 64-byte
/// EIP-2098 signature with low s (a high-s one is malleable and refused).
pub fn recover(signature: &[u8], digest: &B256) -> Result<Address, Permit2Error> {
    let (r, s, parity) = split(signature)?;
    if s > HALF_ORDER {
        return Err(Permit2Error::HighS);
    }
    let sig = alloy::primitives::Signature::new(
        U256::from_be_bytes(r.0),
        U256::from_be_bytes(s.0),
        parity,
    );
    sig.recover_address_from_prehash(digest)
        .map_err(|err| Permit2Error::Malformed(err.to_string()))
}

/// (v, r, s) of a 65- or 64-byte signature, v ∈ {27, 28}, for contracts
/// that take them apart (EIP-2612 `permit`).
pub fn vrs(signature: &[u8]) -> Result<(u8, B256, B256), Permit2Error> {
    let (r, s, parity) = split(signature)?;
    Ok((27 + u8::from(parity), r, s))
}

/// The EIP-712 digest the owner signs.
pub fn digest(p: &SignedPermit, e: &Expected) -> B256 {
    let domain =
        eip712_domain! { name: "Permit2", chain_id: e.chain_id, verifying_contract: e.permit2, };
    let msg = PermitTransferFrom {
        permitted: TokenPermissions {
            token: p.token,
            amount: p.amount,
        },
        spender: e.spender,
        nonce: p.nonce,
        deadline: p.deadline,
    };
    msg.eip712_signing_hash(&domain)
}

/// Every check that needs no chain: canonical signature, signer, deadline,
/// token, amount.
pub fn verify_offline(p: &SignedPermit, e: &Expected) -> Result<(), Permit2Error> {
    let recovered = recover(&p.signature, &digest(p, e))?;
    if recovered != p.owner {
        return Err(Permit2Error::BadSigner {
            recovered,
            owner: p.owner,
            spender: e.spender,
            chain_id: e.chain_id,
        });
    }
    if p.deadline <= U256::from(e.now_secs) {
        return Err(Permit2Error::Expired {
            deadline: p.deadline,
            now: e.now_secs,
        });
    }
    if p.token != e.token {
        return Err(Permit2Error::WrongToken {
            permitted: p.token,
            expected: e.token,
        });
    }
    if p.amount < e.amount {
        return Err(Permit2Error::AmountTooLow {
            permitted: p.amount,
            requested: e.amount,
        });
    }
    Ok(())
}

/// The bitmap word and the bit within it that record `nonce` as used.
pub fn nonce_position(nonce: U256) -> (U256, U256) {
    let word = nonce >> 8;
    let bit = U256::from(1u8) << (nonce & U256::from(0xffu8)).to::<usize>();
    (word, bit)
}

/// Whether `nonce` of `owner` is still unused on the Permit2 contract.
pub async fn nonce_unused<P: Provider>(
    provider: &P,
    permit2: Address,
    owner: Address,
    nonce: U256,
) -> Result<bool, Permit2Error> {
    let (word, bit) = nonce_position(nonce);
    let bitmap = IPermit2Nonces::new(permit2, provider)
        .nonceBitmap(owner, word)
        .call()
        .await
        .map_err(|e| Permit2Error::Rpc(e.to_string()))?;
    Ok(bitmap & bit == U256::ZERO)
}

/// The full check: offline, then the nonce on chain.
pub async fn verify<P: Provider>(
    provider: &P,
    p: &SignedPermit,
    e: &Expected,
) -> Result<(), Permit2Error> {
    verify_offline(p, e)?;
    if !nonce_unused(provider, e.permit2, p.owner, p.nonce).await? {
        return Err(Permit2Error::NonceUsed(p.nonce));
    }
    Ok(())
}
