//! The two upstreams of the edge, the origin and the service: where they are, how to reach
//! them (plain TCP or TLS verified against the system's trust store), and their idle
//! kept-alive connections.

use super::message::{Conn, Framing, Head, Patience, Patient};
use crate::http::socket::Socket;
use crate::http::{Timeouts, Watchdog};
use parking_lot::Mutex;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;

/// Bytes read from an upstream at a time: a whole page of tens of kilobytes in a read or two.
const UPSTREAM_BUFFER: usize = 64 * 1024;
/// Idle connections kept per upstream; more are closed when they come back.
const IDLE_KEPT: usize = 256;

/// A base URL as the configuration gives it: `http://host:port` or `https://host`, with an
/// optional path prefix (the service behind a path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    /// Without a trailing `/`; empty when none.
    pub path: String,
}

impl BaseUrl {
    pub fn parse(text: &str) -> Result<BaseUrl, String> {
        let url = url::Url::parse(text).map_err(|e| format!("`{text}` is not a URL: {e}"))?;
        let tls = match url.scheme() {
            "http" => false,
            "https" => true,
            other => return Err(format!("`{text}`: scheme {other} (http or https expected)")),
        };
        let host = match url.host() {
            Some(url::Host::Ipv6(ip)) => format!("[{ip}]"),
            Some(host) => host.to_string(),
            None => return Err(format!("`{text}` has no host")),
        };
        if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
            return Err(format!(
                "`{text}`: a base URL has no query, fragment or user"
            ));
        }
        Ok(BaseUrl {
            tls,
            host,
            port: url.port_or_known_default().unwrap_or(80),
            path: url.path().trim_end_matches('/').to_string(),
        })
    }

    /// The `Host` header value for this URL.
    pub fn authority(&self) -> String {
        let default_port = if self.tls { 443 } else { 80 };
        match self.port == default_port {
            true => self.host.clone(),
            false => format!("{}:{}", self.host, self.port),
        }
    }
}

/// A stream to an upstream, plain or TLS.
pub enum Stream {
    Plain(Socket),
    Tls(Box<StreamOwned<ClientConnection, Socket>>),
}

impl Stream {
    fn socket(&self) -> &Socket {
        match self {
            Stream::Plain(socket) => socket,
            Stream::Tls(tls) => tls.get_ref(),
        }
    }
}

impl Patient for Stream {
    fn set_patience(&mut self, patience: Patience) {
        match self {
            Stream::Plain(socket) => socket.set_patience(patience),
            Stream::Tls(tls) => tls.get_mut().set_patience(patience),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.read(buf),
            Stream::Tls(tls) => tls.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.write(buf),
            Stream::Tls(tls) => tls.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(tcp) => tcp.flush(),
            Stream::Tls(tls) => tls.flush(),
        }
    }
}

/// One upstream: its resolved addresses, TLS settings, deadlines and idle connections.
pub struct Upstream {
    pub url: BaseUrl,
    addresses: Vec<SocketAddr>,
    tls: Option<(Arc<ClientConfig>, ServerName<'static>)>,
    idle: Mutex<Vec<Conn<Stream>>>,
    watchdog: Arc<Watchdog>,
    /// `request` bounds opening a connection, `idle` every stall after it.
    timeouts: Timeouts,
}

impl Upstream {
    /// Resolves the host once, at start (as nginx resolves a `proxy_pass` host).
    pub fn new(
        url: BaseUrl,
        tls: Option<Arc<ClientConfig>>,
        watchdog: Arc<Watchdog>,
        timeouts: Timeouts,
    ) -> Result<Upstream, String> {
        let addresses: Vec<SocketAddr> = (url.host.trim_matches(['[', ']']), url.port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {}: {e}", url.host))?
            .collect();
        if addresses.is_empty() {
            return Err(format!("{} resolves to no address", url.host));
        }
        let tls = match (url.tls, tls) {
            (false, _) => None,
            (true, None) => return Err("https needs a TLS configuration".into()),
            (true, Some(config)) => {
                let name = ServerName::try_from(url.host.trim_matches(['[', ']']).to_string())
                    .map_err(|e| format!("{}: not a TLS server name: {e}", url.host))?;
                Some((config, name))
            }
        };
        Ok(Upstream {
            url,
            addresses,
            tls,
            idle: Mutex::new(Vec::new()),
            watchdog,
            timeouts,
        })
    }

    /// An idle kept-alive connection, if one is waiting: one that has received nothing since
    /// its last answer and is still open (any byte there would be a stray one, never the next
    /// exchange's).
    pub fn reuse(&self) -> Option<Conn<Stream>> {
        loop {
            let conn = self.idle.lock().pop()?;
            if conn.stream.socket().is_quiet() {
                return Some(conn);
            }
        }
    }

    /// A new connection.
    pub fn connect(&self) -> io::Result<Conn<Stream>> {
        let mut last_error = io::Error::new(io::ErrorKind::NotFound, "no address");
        for address in &self.addresses {
            match Socket::connect(address, &self.watchdog, self.timeouts) {
                Ok(socket) => return self.wrap(socket).map(|s| Conn::new(s, UPSTREAM_BUFFER)),
                Err(error) => last_error = error,
            }
        }
        Err(last_error)
    }

    fn wrap(&self, socket: Socket) -> io::Result<Stream> {
        match &self.tls {
            None => Ok(Stream::Plain(socket)),
            Some((config, name)) => {
                let session = ClientConnection::new(Arc::clone(config), name.clone())
                    .map_err(io::Error::other)?;
                Ok(Stream::Tls(Box::new(StreamOwned::new(session, socket))))
            }
        }
    }

    /// Gives back a connection after `answer`, framed by `framing`, when that exchange ended
    /// cleanly: the answer keeps the connection, its end was known, and nothing came after it
    /// (bytes after a `HEAD`, `204` or `304` answer, or past a length, would be read as the
    /// next exchange's answer). Otherwise the connection closes.
    pub fn keep(&self, conn: Conn<Stream>, answer: &Head, framing: Framing) {
        if !answer.keeps_alive() || framing == Framing::Close || conn.has_buffered() {
            return;
        }
        let mut idle = self.idle.lock();
        if idle.len() < IDLE_KEPT {
            idle.push(conn);
        }
    }
}

/// The TLS client settings: the system's trust store plus the certificates of `ca_file`.
/// Certificates are always verified; there is no way to turn that off.
pub fn tls_config(ca_file: Option<&std::path::Path>) -> Result<Arc<ClientConfig>, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let mut roots = rustls::RootCertStore::empty();
    let (added, _) =
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    let mut count = added;
    if let Some(path) = ca_file {
        let shown = path.display();
        for cert in CertificateDer::pem_file_iter(path).map_err(|e| format!("{shown}: {e}"))? {
            let cert = cert.map_err(|e| format!("{shown}: {e}"))?;
            roots.add(cert).map_err(|e| format!("{shown}: {e}"))?;
            count += 1;
        }
    }
    if count == 0 {
        return Err(
            "no trusted certificate: the system's trust store is empty and no \
                    AGENTCARD_EDGE_CA_FILE is set"
                .into(),
        );
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        let url = BaseUrl::parse("https://cards.example.com/agentcard/").unwrap();
        assert_eq!(
            (url.tls, url.host.as_str(), url.port, url.path.as_str()),
            (true, "cards.example.com", 443, "/agentcard")
        );
        assert_eq!(url.authority(), "cards.example.com");
        let url = BaseUrl::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!(
            (url.authority().as_str(), url.path.as_str()),
            ("127.0.0.1:8080", "")
        );
        for bad in ["ftp://x", "http://x/?q=1", "not a url", "http://u@x"] {
            assert!(BaseUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
