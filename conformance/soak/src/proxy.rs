//! A loopback TCP proxy in front of one chain's RPC endpoint: the replicas
//! list it first and the endpoint itself second, so when the soak makes the
//! proxy fail (connections cut, or held without an answer) the host must
//! fail over to the next endpoint.

use std::sync::{
    atomic::{AtomicU8, Ordering},
    Arc,
};

use tokio::net::{TcpListener, TcpStream};

/// What the proxy does with a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    /// Forward it.
    Pass = 0,
    /// Close it at once.
    Cut = 1,
    /// Keep it open and never answer.
    Hang = 2,
}

/// A running proxy.
#[derive(Clone)]
pub struct Proxy {
    /// `http://127.0.0.1:<port>/`.
    pub url: String,
    mode: Arc<AtomicU8>,
}

impl Proxy {
    /// Proxies `target` (`host:port`) on a fresh loopback port.
    pub async fn start(target: String) -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/", listener.local_addr()?);
        let mode = Arc::new(AtomicU8::new(Mode::Pass as u8));
        let m = mode.clone();
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                let (m, target) = (m.load(Ordering::Relaxed), target.clone());
                tokio::spawn(async move { serve(conn, m, &target).await });
            }
        });
        Ok(Proxy { url, mode })
    }

    /// Sets what happens to new connections.
    pub fn set(&self, mode: Mode) {
        self.mode.store(mode as u8, Ordering::Relaxed);
    }
}

async fn serve(mut conn: TcpStream, mode: u8, target: &str) {
    match mode {
        m if m == Mode::Cut as u8 => drop(conn),
        m if m == Mode::Hang as u8 => {
            // Held until the client gives up and closes it.
            let mut sink = [0u8; 1024];
            while matches!(tokio::io::AsyncReadExt::read(&mut conn, &mut sink).await, Ok(n) if n > 0)
            {
            }
        }
        _ => {
            if let Ok(mut up) = TcpStream::connect(target).await {
                let _ = tokio::io::copy_bidirectional(&mut conn, &mut up).await;
            }
        }
    }
}
