"""A webhook receiver that checks every delivery from relay with the
Standard Webhooks library (`pip install standardwebhooks`):

    WEBHOOK_SECRET=whsec_… python webhook-receiver.py [port]

Register it for a route with `POST /api/hooks {routeId, url, secret,
signature}` (the same `whsec_…` secret). It prints `listening <port>`, then
one JSON line per verified delivery — `{webhookId, event, routeId, status,
destTx}` — and answers 200. A delivery whose signature or timestamp does
not verify (forged, altered, replayed late) gets 401 and is not printed.
Deliveries are at least once: the same `webhook-id` may arrive again, so
act on each id once.
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

hook = Webhook(os.environ["WEBHOOK_SECRET"])
seen = set()


class Deliveries(BaseHTTPRequestHandler):
    def log_message(self, *_):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        try:
            event = hook.verify(body, dict(self.headers))
        except WebhookVerificationError:
            self.send_response(401)
            self.end_headers()
            return
        self.send_response(200)
        self.end_headers()
        webhook_id = self.headers["webhook-id"]
        if webhook_id in seen:
            return
        seen.add(webhook_id)
        print(json.dumps({"webhookId": webhook_id, "event": event.get("event"),
                          "routeId": event.get("routeId"), "status": event.get("status"),
                          "destTx": event.get("destTx")}), flush=True)


server = HTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0), Deliveries)
print(f"listening {server.server_port}", flush=True)
server.serve_forever()
