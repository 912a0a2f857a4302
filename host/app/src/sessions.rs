//! A session's forwarded execute (spec §4.5, §5.6) over the host's one
//! routing service: the session's route body parsed as an execute from
//! the session's address, a router intent prepared for it, and the signed
//! execute run through the execute service every other execute uses (one
//! set of route ids and nonce reservations).

use std::sync::Arc;

use async_trait::async_trait;
use relay_engine::request::ExecuteAsk;
use relay_errors::{ApiError, ErrorCode};
use relay_execution::{execute::ExecuteRequest, receipt::RouteReceipt};
use relay_plugin_api::Token;
use relay_sessions::{RouteTerms, SessionRunner, TokenTerm};
use serde_json::{Map, Value};

use crate::Routing;

/// The fields a session route may carry.
const ROUTE_FIELDS: &[&str] = &[
    "fromChain",
    "toChain",
    "fromToken",
    "toToken",
    "amount",
    "toAddress",
    "rail",
];

/// The forwarded execute over the host's routing.
#[derive(Clone, Debug)]
pub struct Forward(pub Arc<Routing>);

fn token(t: &Token) -> TokenTerm {
    TokenTerm {
        symbol: t.symbol.clone(),
        address: t.address.clone(),
    }
}

#[async_trait]
impl SessionRunner for Forward {
    type Route = Map<String, Value>;
    type Ask = ExecuteAsk;
    type Receipt = RouteReceipt;
    type Error = ApiError;

    fn parse(
        &self,
        obj: &Map<String, Value>,
        owner: &str,
    ) -> Result<(RouteTerms, ExecuteAsk), ApiError> {
        relay_feature::edge::only_fields(obj, ROUTE_FIELDS)?;
        if obj.get("toAddress").is_none_or(Value::is_null) {
            return Err(
                ApiError::new(ErrorCode::MissingField, "toAddress: required").field("toAddress"),
            );
        }
        let mut request = relay_wire::ExecuteRequest::decode(&Value::Object(obj.clone()))?;
        request.route.from_address = Some(owner.to_string());
        let ask = ExecuteAsk::from_request(&request, &self.0.deps().config)?;
        let terms = RouteTerms {
            from_chain: ask.from_chain.evm_id(),
            to_chain: ask.to_chain.evm_id(),
            to_chain_name: ask.to_chain.to_string(),
            from_token: token(&ask.from_token),
            to_token: token(&ask.to_token),
            recipient: ask.recipient.clone(),
            amount: ask.amount.0,
        };
        Ok((terms, ask))
    }

    async fn prepare(&self, ask: &ExecuteAsk) -> Result<Value, ApiError> {
        let routing = self.0.as_ref();
        let prepared = routing
            .execute()
            .prepare_intent(routing, ask.clone())
            .await?;
        serde_json::to_value(prepared)
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("intent: {e}")))
    }

    async fn execute(&self, body: Value, key: Option<String>) -> Result<RouteReceipt, ApiError> {
        let request = relay_wire::ExecuteRequest::decode(&body)?;
        let ask = ExecuteAsk::from_request(&request, &self.0.deps().config)?;
        let req = ExecuteRequest {
            ask,
            sandbox: false,
            idempotency_key: key,
            operator: false,
            rehearse: false,
        };
        let routing = self.0.as_ref();
        let done = routing.execute().execute(routing, req).await?;
        Ok(relay_execution::receipt::of_executed(&done))
    }

    async fn route_exists(&self, id: &str) -> bool {
        matches!(self.0.deps().store.get_route(id).await, Ok(Some(_)))
    }
}
