#!/usr/bin/env python3
"""A webhook receiver for relay's tests: it verifies every delivery the way
an integrator would, with off-the-shelf code, and logs what it saw.

- `x-relay-signature: sha256=<hex HMAC-SHA256 of the raw body>` (spec §6.1),
  checked with Python's hmac module;
- the Standard Webhooks headers (webhook-id, webhook-timestamp,
  webhook-signature), checked with the `standardwebhooks` package from PyPI
  (its reference verifier also rejects stale timestamps: replays).

Usage: webhook_receiver.py --secret S [--fail-first N] [--hang-first N]
       [--redirect-to URL]
Prints the port it listens on (127.0.0.1) as its first line. `GET /log`
answers every POST seen so far as JSON: [{webhookId, timestamp, receivedMs,
hmacOk, standardOk, payload, answered}].
"""
import argparse
import base64
import hashlib
import hmac
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook

args = None
log = []
lock = threading.Lock()


def standard_secret(secret):
    if secret.startswith("whsec_"):
        return secret
    return "whsec_" + base64.b64encode(secret.encode()).decode()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        with lock:
            body = json.dumps(log).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        entry = {
            "webhookId": self.headers.get("webhook-id"),
            "timestamp": self.headers.get("webhook-timestamp"),
            "receivedMs": int(time.time() * 1000),
            "hmacOk": False,
            "standardOk": False,
            "payload": None,
        }
        try:
            entry["payload"] = json.loads(raw)
        except ValueError:
            pass
        if args.secret:
            want = "sha256=" + hmac.new(args.secret.encode(), raw, hashlib.sha256).hexdigest()
            got = self.headers.get("x-relay-signature", "")
            entry["hmacOk"] = hmac.compare_digest(want, got)
            try:
                Webhook(standard_secret(args.secret)).verify(raw, dict(self.headers.items()))
                entry["standardOk"] = True
            except Exception as e:  # the verifier's own refusal
                entry["standardError"] = str(e)
        with lock:
            n = len(log)
            entry["answered"] = answer_for(n)
            log.append(entry)
        if entry["answered"] == "hang":
            time.sleep(3600)
            return
        if entry["answered"] == "redirect":
            self.send_response(302)
            self.send_header("location", args.redirect_to)
        else:
            self.send_response(entry["answered"])
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


def answer_for(n):
    if args.redirect_to:
        return "redirect"
    if n < args.hang_first:
        return "hang"
    if n < args.hang_first + args.fail_first:
        return 500
    return 200


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--secret", default="")
    p.add_argument("--fail-first", type=int, default=0)
    p.add_argument("--hang-first", type=int, default=0)
    p.add_argument("--redirect-to", default="")
    args = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
