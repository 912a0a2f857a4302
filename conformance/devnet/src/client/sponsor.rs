//! A sponsored EIP-7702 transaction's ask (`POST /api/7702/sponsor`, see
//! `docs/api-sponsorship.md`): the EOA's authorization tuple delegating to
//! the relay's batch executor and its signed `executeSigned` batch.

use alloy::{
    primitives::{Address, Bytes, U256},
    signers::local::PrivateKeySigner,
};
use relay_chain::{
    delegate::{self, Batch, Call},
    eip3009,
    eip7702::Authorization,
};
use serde_json::{json, Value};

/// One ERC-20 transfer of a batch: `amount` of `token` to `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The token.
    pub token: Address,
    /// The recipient.
    pub to: Address,
    /// Base units.
    pub amount: U256,
}

/// `user`'s EIP-7702 authorization to delegate to `delegate` on `chain` at
/// account nonce `nonce`, as the API takes it (viem's `signAuthorization`
/// shape): `{chainId, address, nonce, yParity, r, s}`.
pub fn authorization(user: &PrivateKeySigner, chain: u64, delegate: Address, nonce: u64) -> Value {
    let auth = Authorization {
        chain_id: U256::from(chain),
        address: delegate,
        nonce,
    };
    let sig = super::sign(user, &auth.signature_hash());
    json!({"chainId": chain, "address": delegate, "nonce": nonce,
        "yParity": u8::from(sig.v()), "r": format!("{:#066x}", sig.r()), "s": format!("{:#066x}", sig.s())})
}

/// The `executeSigned` calldata (0x-hex) of `user`'s batch of
/// `transfers` on `chain` — batch nonce `nonce`, valid until `deadline`
/// (unix seconds) — signed under the account's own executor domain.
pub fn batch_data(
    user: &PrivateKeySigner,
    chain: u64,
    transfers: &[Transfer],
    (nonce, deadline): (u64, u64),
) -> String {
    let batch = Batch {
        calls: transfers
            .iter()
            .map(|t| Call {
                to: t.token,
                value: U256::ZERO,
                data: eip3009::transfer_calldata(t.to, t.amount),
            })
            .collect(),
        nonce: U256::from(nonce),
        deadline: U256::from(deadline),
    };
    let sig = super::sign(user, &delegate::digest(chain, user.address(), &batch));
    delegate::execute_signed_calldata(&batch, Bytes::from(sig.as_bytes().to_vec())).to_string()
}

/// The sponsorship ask of a fresh EOA `user` (account nonce 0, batch nonce
/// 0) on `chain`: delegate to `delegate`, then run `transfers`, valid
/// until `deadline` (unix seconds).
pub fn ask(
    user: &PrivateKeySigner,
    (chain, delegate): (u64, Address),
    transfers: &[Transfer],
    deadline: u64,
) -> Value {
    json!({"chainId": chain, "authorization": authorization(user, chain, delegate, 0),
        "data": batch_data(user, chain, transfers, (0, deadline))})
}
