//! The EIP-712 typed data of each router form as a wallet signs it
//! (`eth_signTypedData_v4` JSON: `types`, `primaryType`, `domain`,
//! `message`), so a client never assembles it by hand. Every `uint256` is
//! a decimal string (JSON numbers cannot hold them); viem wants `BigInt`s,
//! ethers and wallets take the strings as they are.
//!
//! The field lists below are the contract's; a unit test checks each type
//! string against the one alloy derives from [`super::router::abi`].

use alloy::{
    primitives::{Address, B256, U256},
    signers::{local::PrivateKeySigner, SignerSync},
    sol_types::{Eip712Domain, SolStruct},
};
use relay_types::{RelayIntent, SignedPermit};
use serde_json::{json, Value};

use super::router::abi;

type Fields = &'static [(&'static str, &'static str)];

const TOKEN_PERMISSIONS: Fields = &[("token", "address"), ("amount", "uint256")];
const RELAY_INTENT: Fields = &[
    ("recipient", "string"),
    ("toChain", "string"),
    ("toToken", "string"),
    ("minOut", "uint256"),
    ("rail", "string"),
    ("planHash", "bytes32"),
    ("feeCap", "uint256"),
    ("deadline", "uint256"),
];
const WITNESS: Fields = &[
    ("permitted", "TokenPermissions"),
    ("spender", "address"),
    ("nonce", "uint256"),
    ("deadline", "uint256"),
    ("witness", "RelayIntent"),
];
const ORDER: Fields = &[
    ("owner", "address"),
    ("token", "address"),
    ("amount", "uint256"),
    ("nonce", "uint256"),
    ("intent", "RelayIntent"),
];
const PERMIT_TRANSFER: Fields = &[
    ("permitted", "TokenPermissions"),
    ("spender", "address"),
    ("nonce", "uint256"),
    ("deadline", "uint256"),
];
const PERMIT: Fields = &[
    ("owner", "address"),
    ("spender", "address"),
    ("value", "uint256"),
    ("nonce", "uint256"),
    ("deadline", "uint256"),
];

fn fields(list: Fields) -> Value {
    list.iter()
        .map(|(name, ty)| json!({"name": name, "type": ty}))
        .collect()
}

/// An EIP-712 domain: `{name, version?, chainId, verifyingContract}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain {
    /// Name.
    pub name: String,
    /// Version, when the domain has one (Permit2's has none).
    pub version: Option<String>,
    /// Chain id.
    pub chain_id: u64,
    /// The verifying contract.
    pub verifying_contract: Address,
}

impl Domain {
    fn json(&self) -> (Value, Value) {
        let mut ty = vec![("name", "string")];
        let mut v = json!({"name": self.name});
        if let Some(version) = &self.version {
            ty.push(("version", "string"));
            v["version"] = json!(version);
        }
        ty.extend([("chainId", "uint256"), ("verifyingContract", "address")]);
        v["chainId"] = json!(self.chain_id);
        v["verifyingContract"] = json!(self.verifying_contract.to_checksum(None));
        let ty: Vec<Value> = ty
            .iter()
            .map(|(n, t)| json!({"name": n, "type": t}))
            .collect();
        (Value::Array(ty), v)
    }
}

fn typed(domain: &Domain, primary: &str, types: &[(&str, Fields)], message: Value) -> Value {
    let (domain_type, domain) = domain.json();
    let mut t = serde_json::Map::new();
    t.insert("EIP712Domain".into(), domain_type);
    for (name, list) in types {
        t.insert((*name).into(), fields(list));
    }
    json!({"types": t, "primaryType": primary, "domain": domain, "message": message})
}

fn dec(v: U256) -> String {
    v.to_string()
}

fn intent_json(i: &RelayIntent) -> Value {
    json!({
        "recipient": i.recipient,
        "toChain": i.to_chain,
        "toToken": i.to_token,
        "minOut": dec(i.min_out),
        "rail": i.rail,
        "planHash": i.plan_hash.to_string(),
        "feeCap": dec(i.fee_cap),
        "deadline": dec(i.deadline),
    })
}

/// The Permit2 witness transfer (`permit2-witness`): spender = the router.
pub fn witness(
    domain: &Domain,
    permit: &SignedPermit,
    router: Address,
    intent: &RelayIntent,
) -> Value {
    let message = json!({
        "permitted": {"token": permit.token.to_checksum(None), "amount": dec(permit.amount)},
        "spender": router.to_checksum(None),
        "nonce": dec(permit.nonce),
        "deadline": dec(permit.deadline),
        "witness": intent_json(intent),
    });
    let types = [
        ("PermitWitnessTransferFrom", WITNESS),
        ("RelayIntent", RELAY_INTENT),
        ("TokenPermissions", TOKEN_PERMISSIONS),
    ];
    typed(domain, "PermitWitnessTransferFrom", &types, message)
}

/// The plain Permit2 transfer (`mode: "permit2"`): spender = the relayer.
pub fn permit_transfer(domain: &Domain, permit: &SignedPermit, spender: Address) -> Value {
    let message = json!({
        "permitted": {"token": permit.token.to_checksum(None), "amount": dec(permit.amount)},
        "spender": spender.to_checksum(None),
        "nonce": dec(permit.nonce),
        "deadline": dec(permit.deadline),
    });
    let types = [
        ("PermitTransferFrom", PERMIT_TRANSFER),
        ("TokenPermissions", TOKEN_PERMISSIONS),
    ];
    typed(domain, "PermitTransferFrom", &types, message)
}

/// The router's `RelayOrder` (`intent`, `erc2612`).
pub fn order(
    domain: &Domain,
    (owner, token, amount, nonce): (Address, Address, U256, U256),
    intent: &RelayIntent,
) -> Value {
    let message = json!({
        "owner": owner.to_checksum(None),
        "token": token.to_checksum(None),
        "amount": dec(amount),
        "nonce": dec(nonce),
        "intent": intent_json(intent),
    });
    let types = [("RelayOrder", ORDER), ("RelayIntent", RELAY_INTENT)];
    typed(domain, "RelayOrder", &types, message)
}

/// An EIP-2612 `Permit` under the token's own domain.
pub fn permit(
    domain: &Domain,
    (owner, spender): (Address, Address),
    value: U256,
    nonce: U256,
    deadline: U256,
) -> Value {
    let message = json!({
        "owner": owner.to_checksum(None),
        "spender": spender.to_checksum(None),
        "value": dec(value),
        "nonce": dec(nonce),
        "deadline": dec(deadline),
    });
    typed(domain, "Permit", &[("Permit", PERMIT)], message)
}

/// Why served typed data cannot be hashed or signed.
#[derive(Debug, thiserror::Error)]
#[error("typed data: {0}")]
pub struct TypedError(String);

fn text(v: &Value, what: &str) -> Result<String, TypedError> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| TypedError(format!("{what} is not a string")))
}

fn parsed<T: std::str::FromStr>(v: &Value, what: &str) -> Result<T, TypedError> {
    text(v, what)?
        .parse()
        .map_err(|_| TypedError(format!("{what} does not parse")))
}

fn intent_of(m: &Value) -> Result<abi::RelayIntent, TypedError> {
    Ok(abi::RelayIntent {
        recipient: text(&m["recipient"], "recipient")?,
        toChain: text(&m["toChain"], "toChain")?,
        toToken: text(&m["toToken"], "toToken")?,
        minOut: parsed(&m["minOut"], "minOut")?,
        rail: text(&m["rail"], "rail")?,
        planHash: parsed(&m["planHash"], "planHash")?,
        feeCap: parsed(&m["feeCap"], "feeCap")?,
        deadline: parsed(&m["deadline"], "deadline")?,
    })
}

/// The EIP-712 signing hash of one entry this module serves ([`witness`],
/// [`order`], [`permit`]), read back field by field.
pub fn signing_hash(entry: &Value) -> Result<B256, TypedError> {
    let d = &entry["domain"];
    let chain_id = d["chainId"]
        .as_u64()
        .ok_or_else(|| TypedError("domain.chainId is not a number".into()))?;
    let domain = Eip712Domain::new(
        Some(text(&d["name"], "domain.name")?.into()),
        d["version"].as_str().map(|v| v.to_string().into()),
        Some(U256::from(chain_id)),
        Some(parsed(&d["verifyingContract"], "domain.verifyingContract")?),
        None,
    );
    let m = &entry["message"];
    Ok(match entry["primaryType"].as_str() {
        Some("Permit") => abi::Permit {
            owner: parsed(&m["owner"], "owner")?,
            spender: parsed(&m["spender"], "spender")?,
            value: parsed(&m["value"], "value")?,
            nonce: parsed(&m["nonce"], "nonce")?,
            deadline: parsed(&m["deadline"], "deadline")?,
        }
        .eip712_signing_hash(&domain),
        Some("PermitTransferFrom") => crate::permit2::PermitTransferFrom {
            permitted: crate::permit2::TokenPermissions {
                token: parsed(&m["permitted"]["token"], "permitted.token")?,
                amount: parsed(&m["permitted"]["amount"], "permitted.amount")?,
            },
            spender: parsed(&m["spender"], "spender")?,
            nonce: parsed(&m["nonce"], "nonce")?,
            deadline: parsed(&m["deadline"], "deadline")?,
        }
        .eip712_signing_hash(&domain),
        Some("PermitWitnessTransferFrom") => abi::PermitWitnessTransferFrom {
            permitted: abi::TokenPermissions {
                token: parsed(&m["permitted"]["token"], "permitted.token")?,
                amount: parsed(&m["permitted"]["amount"], "permitted.amount")?,
            },
            spender: parsed(&m["spender"], "spender")?,
            nonce: parsed(&m["nonce"], "nonce")?,
            deadline: parsed(&m["deadline"], "deadline")?,
            witness: intent_of(&m["witness"])?,
        }
        .eip712_signing_hash(&domain),
        Some("RelayOrder") => abi::RelayOrder {
            owner: parsed(&m["owner"], "owner")?,
            token: parsed(&m["token"], "token")?,
            amount: parsed(&m["amount"], "amount")?,
            nonce: parsed(&m["nonce"], "nonce")?,
            intent: intent_of(&m["intent"])?,
        }
        .eip712_signing_hash(&domain),
        other => {
            return Err(TypedError(format!(
                "primaryType {other:?} is not served here"
            )))
        }
    })
}

/// Signs every `sign` entry of a served form (`POST /api/route/intent`'s
/// `forms.*`) with `key` and puts each signature at its `fill` path of
/// `submitBody`: what a wallet does, for a caller holding its own key.
pub fn sign_form(form: &Value, key: &PrivateKeySigner) -> Result<Value, TypedError> {
    let mut body = form["submitBody"].clone();
    let none = Vec::new();
    let sign = form["sign"].as_array().unwrap_or(&none);
    let fill = form["fill"].as_array().unwrap_or(&none);
    if sign.len() != fill.len() {
        return Err(TypedError("sign and fill differ in length".into()));
    }
    for (entry, path) in sign.iter().zip(fill) {
        let sig = key
            .sign_hash_sync(&signing_hash(entry)?)
            .map_err(|e| TypedError(e.to_string()))?;
        let mut at = &mut body;
        for k in text(path, "fill")?.split('.') {
            at = &mut at[k];
        }
        *at = json!(format!("0x{}", alloy::hex::encode(sig.as_bytes())));
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Name(type name,…)`, then the referenced types sorted, as EIP-712.
    fn encode_type(primary: &str, types: &[(&str, Fields)]) -> String {
        let one = |name: &str| {
            let list = types.iter().find(|(n, _)| *n == name).unwrap().1;
            let inner: Vec<String> = list.iter().map(|(n, t)| format!("{t} {n}")).collect();
            format!("{name}({})", inner.join(","))
        };
        let mut rest: Vec<&str> = types
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| *n != primary)
            .collect();
        rest.sort_unstable();
        std::iter::once(primary).chain(rest).map(one).collect()
    }

    #[test]
    fn the_served_types_are_the_contracts() {
        let witness = [
            ("PermitWitnessTransferFrom", WITNESS),
            ("RelayIntent", RELAY_INTENT),
            ("TokenPermissions", TOKEN_PERMISSIONS),
        ];
        assert_eq!(
            encode_type("PermitWitnessTransferFrom", &witness),
            abi::PermitWitnessTransferFrom::eip712_encode_type()
        );
        let order = [("RelayOrder", ORDER), ("RelayIntent", RELAY_INTENT)];
        assert_eq!(
            encode_type("RelayOrder", &order),
            abi::RelayOrder::eip712_encode_type()
        );
        assert_eq!(
            encode_type("Permit", &[("Permit", PERMIT)]),
            abi::Permit::eip712_encode_type()
        );
    }
}
