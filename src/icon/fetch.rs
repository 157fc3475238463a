//! One fetch of a site's icon: ureq (blocking, on the calling OS thread, rustls) with a
//! resolver of ours that refuses a name when any of its addresses is not public and hands ureq
//! exactly the addresses it checked, so that nothing resolves the name a second time. ureq
//! follows redirects itself and resolves each one through the same resolver.

use super::address;
use super::image::{self, NotAnIcon};
use super::page;
use rustls::pki_types::CertificateDer;
use std::fmt;
use std::io::{self, Read};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use ureq::http::Uri;
use ureq::tls::{Certificate, RootCerts, TlsConfig, TlsProvider};
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};
use ureq::{Agent, ResponseExt};
use url::Url;

/// The whole fetch (the page, the icon, their redirects) ends within this…
pub const DEADLINE: Duration = Duration::from_secs(5);
/// …and reads at most this many bytes of bodies in all.
pub const BYTES: usize = 256 * 1024;
/// Of which the page may take this many: an icon link is in the head, near the start.
const PAGE_BYTES: usize = 128 * 1024;
const REDIRECTS: u32 = 3;

/// A site's icon as fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Icon {
    /// Where the image came from, after redirects.
    pub source_url: String,
    /// The type of its bytes.
    pub content_type: &'static str,
    pub bytes: Vec<u8>,
}

/// Why a fetch found no icon.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error("{host} has the address {ip}, which is {why}")]
    NotPublic {
        host: String,
        ip: IpAddr,
        why: &'static str,
    },
    #[error("{0} is not an https URL")]
    NotHttps(String),
    #[error("more than {REDIRECTS} redirects")]
    TooManyRedirects,
    #[error("{url} answered {status}")]
    Status { url: String, status: u16 },
    #[error("more than {BYTES} bytes in all")]
    TooLarge,
    #[error("not done within {DEADLINE:?}")]
    TimedOut,
    #[error("{url}: {why}")]
    NotAnIcon { url: String, why: NotAnIcon },
    /// Name not found, connection refused, TLS or HTTP refused.
    #[error("{0}")]
    Unreachable(String),
}

/// Where names are looked up.
#[derive(Clone)]
pub enum Names {
    /// The system's resolver (through ureq's, which bounds it by the fetch's deadline).
    System,
    /// Fixed answers by name: tests, and `AGENTCARD_ICON_TEST_CONNECT_TO`.
    Fixed(Arc<Answers>),
}

/// The addresses a name has.
pub type Answers = dyn Fn(&str) -> Vec<SocketAddr> + Send + Sync;

/// The fetch's client, shared by the threads that fetch.
pub struct Client {
    agent: Agent,
}

impl Client {
    /// A client that looks names up in `names`, trusts the system's certificates and `roots`,
    /// and connects to public addresses only, and to `allowed` (tests: their loopback server).
    pub fn new(names: Names, allowed: Option<SocketAddr>, roots: &[CertificateDer<'_>]) -> Client {
        let native = rustls_native_certs::load_native_certs().certs;
        let trusted: Vec<Certificate<'static>> = native
            .iter()
            .chain(roots)
            .map(|der| Certificate::from_der(der).to_owned())
            .collect();
        let tls = TlsConfig::builder()
            .provider(TlsProvider::Rustls)
            .root_certs(RootCerts::Specific(Arc::new(trusted)))
            .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .build();
        let config = Agent::config_builder()
            .https_only(true)
            .max_redirects(REDIRECTS)
            .max_redirects_will_error(true)
            .http_status_as_error(false)
            // Never through a proxy named by the environment: the address checked is the one
            // connected to.
            .proxy(None)
            .max_idle_connections(0)
            .user_agent(concat!(
                "agentcard/",
                env!("CARGO_PKG_VERSION"),
                " (site icon)"
            ))
            .tls_config(tls)
            .build();
        let resolver = PublicOnly { names, allowed };
        Client {
            agent: Agent::with_parts(config, DefaultConnector::new(), resolver),
        }
    }

    /// The icon of `domain`: the first icon link of `https://{domain}/`, else (no page, no
    /// link, or the linked image refused) `https://{domain}/favicon.ico`. When a linked image
    /// and the favicon both fail, the linked image's failure says why.
    pub fn fetch(&self, domain: &str) -> Result<Icon, Failure> {
        let mut budget = Budget {
            deadline: Instant::now() + DEADLINE,
            bytes: BYTES,
        };
        let linked = self.linked_icon(&format!("https://{domain}/"), &mut budget);
        let first = match linked.ok().flatten() {
            Some(url) => match self.image(url.as_str(), &mut budget) {
                Ok(icon) => return Ok(icon),
                Err(failure) => Some(failure),
            },
            None => None,
        };
        let favicon = format!("https://{domain}/favicon.ico");
        self.image(&favicon, &mut budget)
            .map_err(|later| first.unwrap_or(later))
    }

    /// The URL of the page's first icon link, if it has one.
    fn linked_icon(&self, page_url: &str, budget: &mut Budget) -> Result<Option<Url>, Failure> {
        let (final_url, _, body) = self.get(page_url, "text/html", PAGE_BYTES, budget)?;
        let base = Url::parse(&final_url).map_err(|e| Failure::Unreachable(e.to_string()))?;
        Ok(page::icon_link(&body, &base))
    }

    /// The image at `url`, when it is an icon within what is left of the budget's bytes.
    fn image(&self, url: &str, budget: &mut Budget) -> Result<Icon, Failure> {
        let limit = budget.bytes;
        let (source_url, declared, bytes) = self.get(url, "image/*", limit, budget)?;
        if bytes.len() > limit {
            return Err(Failure::TooLarge);
        }
        match image::content_type(&declared, &bytes) {
            Ok(content_type) => Ok(Icon {
                source_url,
                content_type,
                bytes,
            }),
            Err(why) => Err(Failure::NotAnIcon {
                url: source_url,
                why,
            }),
        }
    }

    /// `GET url` within the budget's time: the URL answered from (after redirects), the
    /// declared content type, and at most `limit + 1` bytes of the body, counted against the
    /// budget.
    fn get(
        &self,
        url: &str,
        accept: &str,
        limit: usize,
        budget: &mut Budget,
    ) -> Result<(String, String, Vec<u8>), Failure> {
        let left = budget.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Failure::TimedOut);
        }
        let mut answer = self
            .agent
            .get(url)
            .header("Accept", accept)
            .config()
            .timeout_global(Some(left))
            .build()
            .call()
            .map_err(failure)?;
        let final_url = answer.get_uri().to_string();
        if answer.status() != 200 {
            return Err(Failure::Status {
                url: final_url,
                status: answer.status().as_u16(),
            });
        }
        let declared = answer
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let mut body = Vec::new();
        answer
            .body_mut()
            .as_reader()
            .take(limit as u64 + 1)
            .read_to_end(&mut body)
            .map_err(|e| failure(ureq::Error::from(e)))?;
        budget.bytes = budget.bytes.saturating_sub(body.len().min(limit));
        Ok((final_url, declared, body))
    }
}

/// What is left of the fetch's time and bytes.
struct Budget {
    deadline: Instant,
    bytes: usize,
}

/// ureq's error as the fetch's.
fn failure(error: ureq::Error) -> Failure {
    match error {
        ureq::Error::Timeout(_) => Failure::TimedOut,
        ureq::Error::TooManyRedirects => Failure::TooManyRedirects,
        ureq::Error::RequireHttpsOnly(url) => Failure::NotHttps(url),
        ureq::Error::Io(e) => match e.get_ref().and_then(|e| e.downcast_ref::<Refused>()) {
            Some(refused) => Failure::NotPublic {
                host: refused.host.clone(),
                ip: refused.ip,
                why: refused.why,
            },
            None if matches!(
                e.kind(),
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
            ) =>
            {
                Failure::TimedOut
            }
            None => Failure::Unreachable(e.to_string()),
        },
        other => Failure::Unreachable(other.to_string()),
    }
}

/// A name refused for one of its addresses, carried through ureq as an io error.
#[derive(Debug, thiserror::Error)]
#[error("{host} has the address {ip}, which is {why}")]
struct Refused {
    host: String,
    ip: IpAddr,
    why: &'static str,
}

/// The resolver: every address of the name must be public (or the one allowed), and ureq
/// connects to those addresses, never to another answer to the same question.
struct PublicOnly {
    names: Names,
    allowed: Option<SocketAddr>,
}

impl fmt::Debug for PublicOnly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublicOnly")
            .field("allowed", &self.allowed)
            .finish_non_exhaustive()
    }
}

impl Resolver for PublicOnly {
    fn resolve(
        &self,
        uri: &Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let host = uri.host().unwrap_or_default();
        let found: Vec<SocketAddr> = match &self.names {
            Names::System => DefaultResolver::default()
                .resolve(uri, config, timeout)?
                .to_vec(),
            Names::Fixed(answer) => answer(host),
        };
        if found.is_empty() {
            return Err(ureq::Error::HostNotFound);
        }
        let refused = found
            .iter()
            .find_map(|addr| match Some(*addr) == self.allowed {
                true => None,
                false => address::refusal(addr.ip()).map(|why| (addr.ip(), why)),
            });
        if let Some((ip, why)) = refused {
            let host = host.to_string();
            let refused = Refused { host, ip, why };
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, refused).into());
        }
        let mut checked = self.empty();
        for addr in found {
            if checked.try_push(addr).is_err() {
                break;
            }
        }
        Ok(checked)
    }
}
