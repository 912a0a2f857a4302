//! The lane's client: what `relay ohttp` and the local tool server send
//! through. It fetches the gateway's key list through the relay, encodes
//! the request as known-length BHTTP with a Date, pads it to 16,384 bytes,
//! encapsulates it with the list's first supported configuration (X-Wing)
//! and posts it to the relay; the answer is opened and read back. The
//! gateway never sees this client's address; the relay never sees what
//! it asks.

use std::io::Cursor;

use crate::pad::{self, REQUEST_FLOOR};

/// The relay's path that forwards to the gateway.
pub const RELAY_GATEWAY_PATH: &str = "/gateway";
/// The relay's path that forwards the gateway's key list.
pub const RELAY_KEYS_PATH: &str = "/keys";

/// Why a request through the lane failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The relay or the gateway could not be reached.
    #[error("the relay at {0} could not be reached: {1}")]
    Unreachable(String, String),
    /// The relay or the gateway refused in the clear.
    #[error("the relay answered {status}: {body}")]
    Refused {
        /// The outer status.
        status: u16,
        /// The outer body.
        body: String,
    },
    /// The key list, the encapsulation or the answer is not what RFC 9458
    /// says.
    #[error("{0}")]
    Protocol(String),
}

/// An inner answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Its status.
    pub status: u16,
    /// Its headers, names lower-case.
    pub headers: Vec<(String, String)>,
    /// Its body.
    pub body: Vec<u8>,
    /// The padded inner response's size, bytes.
    pub inner_len: usize,
}

/// A client of one relay.
#[derive(Clone, Debug)]
pub struct ObliviousClient {
    http: reqwest::Client,
    relay: String,
}

impl ObliviousClient {
    /// A client sending through the relay at `relay` (its base URL).
    pub fn new(relay: &str) -> Self {
        ObliviousClient {
            http: reqwest::Client::new(),
            relay: relay.trim_end_matches('/').to_string(),
        }
    }

    /// Sends `method path` with `headers` and `body` through the lane.
    #[tracing::instrument(skip_all, fields(method))]
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Answer, ClientError> {
        let list = self.keys().await?;
        let request = ohttp::ClientRequest::from_encoded_config_list(&list)
            .map_err(|e| ClientError::Protocol(format!("the key list: {e}")))?;
        let inner = encode(method, path, headers, body)?;
        let (enc, opener) = request
            .encapsulate(&inner)
            .map_err(|e| ClientError::Protocol(format!("encapsulating: {e}")))?;
        let sealed = self.post(&enc).await?;
        let plain = opener
            .decapsulate(&sealed)
            .map_err(|e| ClientError::Protocol(format!("the answer does not open: {e}")))?;
        decode(&plain)
    }

    async fn keys(&self) -> Result<Vec<u8>, ClientError> {
        let url = format!("{}{RELAY_KEYS_PATH}", self.relay);
        let resp = self
            .http
            .get(&url)
            .send()
            .await
            .map_err(|e| self.unreachable(e))?;
        self.body(resp).await
    }

    async fn post(&self, enc: &[u8]) -> Result<Vec<u8>, ClientError> {
        let url = format!("{}{RELAY_GATEWAY_PATH}", self.relay);
        let resp = self
            .http
            .post(&url)
            .header("content-type", crate::http::REQUEST_MEDIA_TYPE)
            .body(enc.to_vec())
            .send()
            .await
            .map_err(|e| self.unreachable(e))?;
        self.body(resp).await
    }

    async fn body(&self, resp: reqwest::Response) -> Result<Vec<u8>, ClientError> {
        let status = resp.status().as_u16();
        let bytes = resp.bytes().await.map_err(|e| self.unreachable(e))?;
        match status {
            200 => Ok(bytes.to_vec()),
            _ => Err(ClientError::Refused {
                status,
                body: String::from_utf8_lossy(&bytes).into_owned(),
            }),
        }
    }

    fn unreachable(&self, e: reqwest::Error) -> ClientError {
        ClientError::Unreachable(self.relay.clone(), e.to_string())
    }
}

/// `method path` as a known-length BHTTP request with the time in Date,
/// padded to [`REQUEST_FLOOR`].
pub fn encode(
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<Vec<u8>, ClientError> {
    encode_at(method, path, (headers, body), std::time::SystemTime::now())
}

/// [`encode`], its Date `date`.
pub fn encode_at(
    method: &str,
    path: &str,
    (headers, body): (&[(&str, &str)], &[u8]),
    date: std::time::SystemTime,
) -> Result<Vec<u8>, ClientError> {
    let mut m = bhttp::Message::request(
        method.as_bytes().to_vec(),
        b"https".to_vec(),
        b"relay.gateway".to_vec(),
        path.as_bytes().to_vec(),
    );
    m.put_header("date", httpdate::fmt_http_date(date));
    for (k, v) in headers {
        m.put_header(k.as_bytes(), v.as_bytes());
    }
    m.write_content(body);
    let mut out = Vec::with_capacity(REQUEST_FLOOR);
    m.write_bhttp(bhttp::Mode::KnownLength, &mut out)
        .map_err(|e| ClientError::Protocol(e.to_string()))?;
    Ok(pad::pad(out, REQUEST_FLOOR))
}

/// The padded BHTTP response `plain`, read.
pub fn decode(plain: &[u8]) -> Result<Answer, ClientError> {
    let m = bhttp::Message::read_bhttp::<_, Cursor<&[u8]>>(&mut Cursor::new(plain))
        .map_err(|e| ClientError::Protocol(format!("the inner answer: {e}")))?;
    let status = m
        .control()
        .status()
        .map(|s| s.code())
        .ok_or_else(|| ClientError::Protocol("the inner answer has no status".into()))?;
    let headers = m
        .header()
        .iter()
        .map(|f| {
            (
                String::from_utf8_lossy(f.name()).to_ascii_lowercase(),
                String::from_utf8_lossy(f.value()).into_owned(),
            )
        })
        .collect();
    Ok(Answer {
        status,
        headers,
        body: m.content().to_vec(),
        inner_len: plain.len(),
    })
}
