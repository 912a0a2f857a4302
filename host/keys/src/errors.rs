//! The developer keys' `errorCode`s (spec §4.5): only the `/api/keys/*`
//! endpoints answer with them; the host's catalogue (`GET /api/errors`)
//! lists them through the feature's descriptor ([`crate::http::feature`]).

relay_errors::error_codes! { pub ALL;
    /// A keys endpoint was called without a key.
    KeyRequired => ("KEY_REQUIRED", BAD_REQUEST, false, "this /api/keys endpoint is about one developer key: send it as header x-relay-key or query ?key= (POST /api/keys/create issues one)", Input),
    /// The key presented was never issued here, or was revoked.
    KeyUnknown => ("KEY_UNKNOWN", NOT_FOUND, false, "no live developer key matches the key sent: it was never issued by this host or it was revoked (a revoked key is treated like no key); create a new one with POST /api/keys/create", Input),
}
