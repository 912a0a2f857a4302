#!/usr/bin/env python3
"""Pays a relay sponsorship invoice with the reference x402 client.

    x402_pay.py <url> <body.json> <private-key-hex> <idempotency-key> <network> <asset> <cap>

POSTs the body to <url> through the `x402` package's `requests` wrapper
(x402ClientSync with the EVM `exact` scheme registered for every eip155
network): the first answer is the relay's 402; the client reads the invoice
(the v2 PAYMENT-REQUIRED header), signs an EIP-3009 authorization with the
key, and retries with the payment. The client's spend controls allow only
<asset> on <network> (the devnet USDC is not one of the SDK's default assets),
at most <cap> atomic units per payment. Prints one JSON line: the final status,
body, and the decoded settlement receipt. Nothing in this file speaks x402
itself; the package does.
"""
import json
import sys

import requests
from eth_account import Account
from x402 import x402ClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.http.x402_http_client import x402HTTPClientSync
from x402.mechanisms.evm.exact.register import register_exact_evm_client


def main() -> None:
    url, body_path, key, idem, network, asset, cap = sys.argv[1:8]
    with open(body_path, encoding="utf-8") as f:
        body = json.load(f)
    client = x402ClientSync()
    register_exact_evm_client(client, Account.from_key(key))
    client.set_spend_controls(
        {"allowed_assets": [{"network": network, "asset": asset, "max_amount_per_payment": cap}]}
    )
    session = wrapRequestsWithPayment(requests.Session(), client)
    resp = session.post(url, json=body, headers={"x-idempotency-key": idem}, timeout=120)
    receipt = None
    try:
        receipt = x402HTTPClientSync(client).get_payment_settle_response(
            lambda name: resp.headers.get(name)
        )
        receipt = receipt.model_dump(by_alias=True)
    except ValueError as e:
        receipt = {"missing": str(e)}
    try:
        answer = resp.json()
    except ValueError:
        answer = resp.text
    print(json.dumps({"status": resp.status_code, "body": answer, "receipt": receipt}))


if __name__ == "__main__":
    main()
