"""Schemathesis hooks of the stateful run (host/bin/tests/it/api_contract.rs).

The stateful phase follows the document's links (host/api/src/openapi/links.rs)
from the answers the host really gives, so a scenario must first get past
validation. Two things help it there; the contract hooks
(`schemathesis_hooks`: the binary media types, `ended_stays_ended`) apply
as well.

- Where a scenario starts. Schemathesis starts scenarios only at operations
  it deems likely to succeed, and its dependency analysis reads the route
  requests' `fromAddress` / `toAddress` (and `chainId`, `routeId`) as
  foreign keys to resources nothing produces: it would never start at a
  quote, a comparison or a solve, so the routing links would never be
  followed. Here every POST, and every GET without path parameters, that
  has links may start one (what schemathesis does for any other POST).
- What it starts with. Half the time an operation's input is a valid
  request for the test devnet (chains 8453 and 42161, its USDC, anvil
  account 1): a quote, a comparison, a solve, a session, a subscription, an
  authorization check, a webhook, an amount to preview; and what the test
  signed or sent on chain, in `RELAY_STATEFUL_SEEDS` (JSON: operation →
  bodies: the netting enrolment, deposit and withdrawal). The other half is
  generated from the schema. The links then fill in what they carry.
"""

import json
import os
import time

import schemathesis
from hypothesis import strategies as st
from schemathesis.specs.openapi import stateful as _stateful

import schemathesis_hooks  # noqa: F401 (the media types and `ended_stays_ended`)

# anvil account 1: funded on the devnet, an ordinary sender
ADDRESS = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
ROUTE = {
    "fromChain": 8453,
    "toChain": 42161,
    "fromToken": "USDC",
    "toToken": "USDC",
    "amount": "5000000",
    "fromAddress": ADDRESS,
    "toAddress": ADDRESS,
}

BODIES = {
    "POST /api/route/quote": [ROUTE, {**ROUTE, "amount": "25000000"}],
    "POST /api/route/compare": [ROUTE],
    "POST /api/route/intent": [ROUTE],
    "POST /api/intent/solve": [
        {
            "toChain": 42161,
            "toToken": "USDC",
            "toAddress": ADDRESS,
            "from": [{"chain": 8453, "token": "USDC", "amount": "5000000"}],
        }
    ],
    "POST /api/session/issue": [
        {
            "label": "stateful",
            "policy": {
                "chains": [8453, 42161],
                "tokens": ["USDC"],
                "recipients": [ADDRESS],
                "perTxCap": "1000000",
                "rolling24hCap": "5000000",
                "expiresAt": int(time.time()) + 3600,
            },
            "refundTo": ADDRESS,
        }
    ],
    "POST /api/session/execute": [{k: v for k, v in ROUTE.items() if k != "fromAddress"}],
    "POST /api/events/subscribe": [
        {"type": "price", "asset": "ETH", "above": "1000000", "url": "http://127.0.0.1:9/hook"}
    ],
    # the link fills routeId
    "POST /api/hooks": [{"routeId": "sbx_0", "url": "http://127.0.0.1:9/hook"}],
    "POST /api/7702/check": [
        {
            "chainId": 8453,
            "authorization": {"chainId": 8453, "address": ADDRESS, "nonce": 0, "yParity": 0, "r": "0x01", "s": "0x01"},
        }
    ],
}

for _label, _bodies in json.loads(os.environ.get("RELAY_STATEFUL_SEEDS") or "{}").items():
    BODIES.setdefault(_label, []).extend(_bodies)

QUERIES = {
    "GET /api/netting/terms": [{"address": ADDRESS}],
    "GET /api/netting/preview": [{"amount": "1000000"}],
}


def _root(operation, node, produced_anywhere):
    """Whether `operation` may start a scenario: a POST, or a GET without path parameters."""
    return operation.method == "post" or (operation.method == "get" and not operation.path_parameters)


# the pinned schemathesis (conformance/tools/schemathesis.sh) decides it there
assert hasattr(_stateful, "is_likely_root_transition"), "schemathesis moved its root choice"
_stateful.is_likely_root_transition = _root


def _seeded(table, context, strategy):
    seeds = table.get(context.operation.label) if context.operation is not None else None
    if not seeds:
        return strategy
    return st.one_of(strategy, st.sampled_from(seeds))


@schemathesis.hook
def before_generate_body(context, strategy):
    return _seeded(BODIES, context, strategy)


@schemathesis.hook
def before_generate_query(context, strategy):
    return _seeded(QUERIES, context, strategy)

