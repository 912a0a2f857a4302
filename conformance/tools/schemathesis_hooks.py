"""Schemathesis hooks for the contract test (host/bin/tests/it/api_contract.rs).

The privacy lane's gateway reads `message/ohttp-req` (RFC 9458) and
`message/ohttp-chunked-req`, binary media types Schemathesis has no serializer for: it is sent as the raw bytes
Schemathesis generates, the way `application/octet-stream` is (a random
body is refused in the clear as OHTTP_KEY_UNKNOWN or OHTTP_MALFORMED).
"""

import schemathesis

schemathesis.serializer.alias(
    ["message/ohttp-req", "message/ohttp-chunked-req"], "application/octet-stream"
)
