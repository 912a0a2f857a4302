"""Schemathesis hooks for the contract tests (host/bin/tests/it/api_contract.rs).

The privacy lane's gateway reads `message/ohttp-req` (RFC 9458) and
`message/ohttp-chunked-req`, binary media types Schemathesis has no serializer for: it is sent as the raw bytes
Schemathesis generates, the way `application/octet-stream` is (a random
body is refused in the clear as OHTTP_KEY_UNKNOWN or OHTTP_MALFORMED).

`ended_stays_ended` is the stateful run's check that what the API ends
stays ended. Schemathesis' own `use_after_free` expects a 404 after a
DELETE, but this API's DELETEs cancel: a cancelled schedule, conditional
or subscription is still read back, as `cancelled` (spec §3.2). So: once a
2xx revoke or cancel ended a record, every later 2xx read of it must show
it ended, a revoked developer key must be unknown (404), and a revoked
session's bearer must move nothing.
"""

import threading

import schemathesis

schemathesis.serializer.alias(
    ["message/ohttp-req", "message/ohttp-chunked-req"], "application/octet-stream"
)

# (method, path template) of what ends a record → the kind it ends and where
# its id is: "answer" (the 2xx answer's `id`), "path" (the path's `id`) or
# "key" (the developer key the request presented).
ENDS = {
    ("POST", "/api/keys/revoke"): ("key", "key"),
    ("POST", "/api/session/revoke"): ("session", "answer"),
    ("DELETE", "/api/route/schedule/{id}"): ("schedule", "path"),
    ("DELETE", "/api/route/conditional/{id}"): ("conditional", "path"),
    ("DELETE", "/api/events/subscribe/{id}"): ("hook", "path"),
}

# (method, path template) of a read → the kind it reads, where its id is,
# and the `status` an ended record answers with (None: it must be 404).
READS = {
    ("GET", "/api/keys/me"): ("key", "key", None),
    ("GET", "/api/keys/usage"): ("key", "key", None),
    ("GET", "/api/session/{id}"): ("session", "path", "revoked"),
    ("GET", "/api/route/schedule/{id}"): ("schedule", "path", "cancelled"),
    ("GET", "/api/route/conditional/{id}"): ("conditional", "path", "cancelled"),
    ("GET", "/api/hooks/{id}"): ("hook", "path", "cancelled"),
}


def _key(response, case):
    """The developer key a request presented: header x-relay-key, else ?key=."""
    sent = response.request.headers.get("x-relay-key")
    if sent is not None:
        return sent
    return (case.query or {}).get("key")


def _id(where, response, case):
    if where == "key":
        return _key(response, case)
    if where == "path":
        return (case.path_parameters or {}).get("id")
    try:
        return response.json().get("id")
    except Exception:
        return None


def _bearer(response):
    auth = response.request.headers.get("authorization") or ""
    return auth[len("Bearer ") :].strip() if auth.startswith("Bearer ") else None


@schemathesis.check
class ended_stays_ended:
    """A record a 2xx revoke or cancel ended reads back ended (module docs)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.ended = set()
        # a session's bearer → its id, from the issue answers
        self.bearers = {}

    def after_response(self, ctx, response, case):
        op = (case.method.upper(), case.operation.path)
        ok = 200 <= response.status_code < 300
        if op == ("POST", "/api/session/issue") and ok:
            body = response.json()
            with self.lock:
                self.bearers[body.get("bearer")] = body.get("id")
            return None
        if op in ENDS:
            kind, where = ENDS[op]
            ident = _id(where, response, case)
            if ok and ident:
                with self.lock:
                    self.ended.add((kind, ident))
            return None
        if op == ("POST", "/api/session/execute"):
            with self.lock:
                session = self.bearers.get(_bearer(response))
                revoked = ("session", session) in self.ended
            if revoked and ok:
                raise AssertionError(
                    f"session {session} was revoked, yet its bearer executed (HTTP {response.status_code})"
                )
            return None
        if op not in READS:
            return None
        kind, where, status = READS[op]
        ident = _id(where, response, case)
        with self.lock:
            if (kind, ident) not in self.ended:
                return None
        if status is None:
            if response.status_code != 404:
                raise AssertionError(
                    f"the revoked {kind} {ident[:7]}… answered HTTP {response.status_code}, not 404"
                )
            return None
        if ok:
            seen = response.json().get("status")
            if seen != status:
                raise AssertionError(f"{kind} {ident} was ended, yet reads back status {seen!r}, not {status!r}")
        return None
