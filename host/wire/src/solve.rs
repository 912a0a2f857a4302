//! `POST`/`GET /api/intent/solve`'s sources, read at the edge: `from` is a
//! JSON array (or, from a query string, its url-encoded text) of 1 to
//! [`MAX_SOURCES`] `{chain, token, amount}`; `amount` falls back to the
//! request's shared `amount`. Each becomes a RouteRequest body to the
//! request's `toChain`/`toToken`, with its `toAddress`, `fromAddress` and
//! `slippage` ([`route_fields`]), which the routing domain parses as any
//! other.

use serde_json::{Map, Value};

/// Most sources one request may carry.
pub const MAX_SOURCES: usize = 10;

/// Reads `from`: an array, or its JSON text; 1 to [`MAX_SOURCES`] objects.
pub fn sources(from: Option<&Value>) -> Result<Vec<Map<String, Value>>, String> {
    let parsed;
    let list = match from {
        None | Some(Value::Null) => {
            return Err("required: 1 to 10 sources {chain, token, amount}".into())
        }
        Some(Value::String(text)) => {
            parsed = serde_json::from_str::<Value>(text)
                .map_err(|e| format!("not a JSON array of sources: {e}"))?;
            &parsed
        }
        Some(v) => v,
    };
    let Value::Array(items) = list else {
        return Err("must be an array of sources {chain, token, amount}".into());
    };
    if items.is_empty() || items.len() > MAX_SOURCES {
        return Err(format!(
            "{} sources given; 1 to {MAX_SOURCES} are accepted",
            items.len()
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, s)| {
            s.as_object()
                .cloned()
                .ok_or_else(|| format!("[{i}] must be an object {{chain, token, amount}}"))
        })
        .collect()
}

/// The RouteRequest of one source: its `chain`/`token`/`amount` (shared
/// `amount` when it has none) to the request's destination. Fields of the
/// request other than `from`, `goal` and `amount` carry over.
pub fn route_fields(request: &Map<String, Value>, source: &Map<String, Value>) -> Value {
    let mut fields: Map<String, Value> = request
        .iter()
        .filter(|(k, _)| !["from", "goal", "amount", "fromToken", "token"].contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let pick = |k: &str| source.get(k).filter(|v| !v.is_null()).cloned();
    fields.extend(pick("chain").map(|c| ("fromChain".to_string(), c)));
    fields.extend(pick("token").map(|t| ("fromToken".to_string(), t)));
    let amount = pick("amount").or_else(|| request.get("amount").cloned());
    fields.extend(amount.map(|a| ("amount".to_string(), a)));
    Value::Object(fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sources_come_as_an_array_or_its_json_text_and_number_one_to_ten() {
        let one = json!([{"chain": 8453, "token": "USDC", "amount": "5"}]);
        assert_eq!(sources(Some(&one)).unwrap().len(), 1);
        assert_eq!(sources(Some(&json!(one.to_string()))).unwrap().len(), 1);
        for bad in [
            json!([]),
            json!((0..11).map(|_| json!({})).collect::<Vec<_>>()),
            json!("[1"),
            json!({"chain": 1}),
            json!([1]),
        ] {
            assert!(sources(Some(&bad)).is_err(), "{bad}");
        }
        assert!(sources(None).unwrap_err().contains("required"));
    }

    #[test]
    fn a_source_becomes_a_route_request_with_the_shared_amount() {
        let req = json!({"toChain": 42161, "toToken": "USDC", "amount": "7", "goal": "fastest", "fromAddress": "0xabc"});
        let req = req.as_object().unwrap();
        let r = route_fields(
            req,
            json!({"chain": 8453, "token": "USDC"}).as_object().unwrap(),
        );
        assert_eq!(
            r,
            json!({"fromChain": 8453, "fromToken": "USDC", "amount": "7", "toChain": 42161, "toToken": "USDC", "fromAddress": "0xabc"})
        );
        let own = route_fields(
            req,
            json!({"chain": 10, "amount": "9"}).as_object().unwrap(),
        );
        assert_eq!(own["amount"], "9");
    }
}
