//! Typed configuration, read from the environment once and validated at start.
//!
//! Every variable is listed in README.md. A bad value stops the process with a message naming
//! the variable, rather than serving with a silently different setting.

use crate::clock::Clock;
use crate::http::{normalize_host, ClientAddress};
use crate::password::Rates;
use ipnet::IpNet;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::CertificateDer;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
#[error("{var}: {message}")]
pub struct ConfigError {
    pub var: &'static str,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct Config {
    /// The primary: every write, the snapshot and its version checks. Several hosts with
    /// `target_session_attrs=read-write` follow a failover.
    pub database_url: String,
    /// Where the reports, their CSV and `admin report` read (`AGENTCARD_REPLICA_URL`), a
    /// standby that may lag; `None`: they read the primary.
    pub replica_url: Option<String>,
    pub listen: SocketAddr,
    /// Host names, lowercase, without port. `None` base host: every other host is the base.
    pub base_host: Option<String>,
    pub console_host: Option<String>,
    pub legacy_host: Option<String>,
    /// The console's origin, as its links and its origin check name it; set when the console
    /// host is.
    pub console_url: Option<ConsoleUrl>,
    /// The service prefix written `svc` in the contract (`svc_mgmt_`, `svc_live_`, realm).
    pub prefix: String,
    /// Period of the full fragment-cache refresh.
    pub refresh: Duration,
    pub client_address: ClientAddress,
    /// Deadline for receiving one whole request (head and body) once its first byte arrived.
    pub request_timeout: Duration,
    /// How long a keep-alive connection may sit idle between requests.
    pub idle_timeout: Duration,
    pub db_pool_size: u32,
    /// Coroutine worker threads; one per core by default.
    pub workers: usize,
    /// How often the report's counters are added to the database.
    pub report_flush: Duration,
    /// How long minute buckets are kept before they are rolled into hours.
    pub report_minutes_kept: Duration,
    /// How long hours, pages and unmatched User-Agents are kept.
    pub report_kept: Duration,
    /// Distinct pages counted per organisation and hour; the rest count as `(other pages)`.
    pub report_pages_per_hour: usize,
    /// After SIGTERM or SIGINT, how long the instance keeps serving (each answer closing its
    /// connection) while a load balancer takes it out.
    pub drain: Duration,
    /// After the drain, how long requests in flight and the last flush may take.
    pub shutdown_timeout: Duration,
    /// Where `/metrics` is served, on a listener of its own; `None`: not served.
    pub metrics_listen: Option<SocketAddr>,
    /// Connections one client address may hold open.
    pub max_connections_per_address: usize,
    /// The site icon's fetch in the background; `None`: off (`AGENTCARD_ICON_FETCH=off`).
    pub icon_fetch: Option<IconFetch>,
    /// Where the console's links are also mailed; `None`: they are passed on by hand.
    pub smtp_url: Option<SmtpUrl>,
    /// Password hashes a minute, from all addresses together, for known people (sign-ins
    /// from a browser they signed in from before, password changes, set-password links:
    /// `AGENTCARD_PASSWORD_HASHES_PER_MINUTE`) and for sign-ins from browsers not known to be
    /// the person's (`AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_MINUTE`); beyond, `429` without
    /// hashing for known people, a proof of work for unknown browsers.
    pub password_rates: Rates,
    /// Password hashes a minute that sign-ins from unknown browsers may cause from one client
    /// address block, a /24 or a /56 (`AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_BLOCK_PER_MINUTE`);
    /// beyond, `429`.
    pub unknown_browser_sign_ins_per_block: usize,
    /// How often the scheduled work runs (`crate::schedule`): a minute; tests set less.
    pub schedule_period: Duration,
    /// The time the scheduled work sees: the system's, or a test's file.
    pub clock: Clock,
}

/// The site icon's fetch. Its two settings exist for tests alone, which serve icons from a
/// loopback HTTPS server: a deployment sets neither.
#[derive(Debug, Clone, Default)]
pub struct IconFetch {
    /// `AGENTCARD_ICON_TEST_CONNECT_TO`: every name resolves to this loopback address and
    /// port, the one address not public that the fetch may connect to.
    pub test_connect_to: Option<SocketAddr>,
    /// `AGENTCARD_ICON_TEST_CA_FILE`: certificates trusted beside the system's.
    pub test_roots: Vec<CertificateDer<'static>>,
}

impl IconFetch {
    fn configured(get: &impl Fn(&str) -> Option<String>) -> Result<Option<IconFetch>, ConfigError> {
        const SWITCH: &str = "AGENTCARD_ICON_FETCH";
        const CONNECT_TO: &str = "AGENTCARD_ICON_TEST_CONNECT_TO";
        const CA_FILE: &str = "AGENTCARD_ICON_TEST_CA_FILE";
        match get(SWITCH).as_deref().map(str::trim) {
            None | Some("on") => {}
            Some("off") => return Ok(None),
            Some(other) => {
                return Err(ConfigError {
                    var: SWITCH,
                    message: format!("{other:?}: on or off"),
                })
            }
        }
        let test_connect_to: Option<SocketAddr> = get(CONNECT_TO)
            .map(|v| parse_value(CONNECT_TO, &v))
            .transpose()?;
        if test_connect_to.is_some_and(|a| !a.ip().is_loopback()) {
            return Err(ConfigError {
                var: CONNECT_TO,
                message: "for tests only: a loopback address and port".into(),
            });
        }
        let test_roots = match get(CA_FILE) {
            None => Vec::new(),
            Some(_) if test_connect_to.is_none() => {
                return Err(ConfigError {
                    var: CA_FILE,
                    message: format!("for tests only, with {CONNECT_TO}"),
                })
            }
            Some(path) => CertificateDer::pem_file_iter(path.trim())
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| ConfigError {
                    var: CA_FILE,
                    message: format!("{path}: {e}"),
                })?,
        };
        Ok(Some(IconFetch {
            test_connect_to,
            test_roots,
        }))
    }
}

impl Config {
    /// The service's base URL as an edge calls it: `https://` and the base host; on a
    /// console served over plain HTTP on `localhost` (a machine of one's own), `http://` and
    /// the listening port, with the base host or the listening address. `None` when nothing
    /// names the service's host.
    pub fn service_url(&self) -> Option<String> {
        let local = (self.console_url.as_ref()).is_some_and(ConsoleUrl::is_plain_http);
        match (&self.base_host, local) {
            (Some(host), false) => Some(format!("https://{host}")),
            (Some(host), true) => Some(format!("http://{host}:{}", self.listen.port())),
            (None, true) => Some(format!("http://{}", self.listen)),
            (None, false) => None,
        }
    }

    /// Reads every variable; `DATABASE_URL` is required.
    pub fn from_env() -> Result<Config, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
    }

    /// Builds the configuration from any variable source (tests pass a map).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let database_url = get("DATABASE_URL").ok_or(ConfigError {
            var: "DATABASE_URL",
            message: "required (a PostgreSQL connection string)".into(),
        })?;
        let listen: SocketAddr = parse_var(&get, "AGENTCARD_LISTEN", "127.0.0.1:8080")?;
        let console_host = get("AGENTCARD_CONSOLE_HOST").map(|h| normalize_host(&h));
        Ok(Config {
            database_url,
            replica_url: get("AGENTCARD_REPLICA_URL")
                .map(|url| replica_url(&url))
                .transpose()?,
            listen,
            base_host: get("AGENTCARD_BASE_HOST").map(|h| normalize_host(&h)),
            console_url: ConsoleUrl::configured(
                console_host.as_deref(),
                get("AGENTCARD_CONSOLE_URL"),
                listen.port(),
            )?,
            console_host,
            legacy_host: get("AGENTCARD_LEGACY_HOST").map(|h| normalize_host(&h)),
            prefix: parse_prefix(get("AGENTCARD_PREFIX"))?,
            refresh: parse_millis(&get, "AGENTCARD_REFRESH_MS", "1000")?,
            client_address: ClientAddress {
                header: get("AGENTCARD_CLIENT_IP_HEADER").map(|h| h.to_ascii_lowercase()),
                trusted_proxies: parse_proxies(get("AGENTCARD_TRUSTED_PROXIES"))?,
            },
            request_timeout: parse_millis(&get, "AGENTCARD_REQUEST_TIMEOUT_MS", "10000")?,
            idle_timeout: parse_millis(&get, "AGENTCARD_IDLE_TIMEOUT_MS", "60000")?,
            db_pool_size: parse_var(&get, "AGENTCARD_DB_POOL", "16")?,
            workers: match get("AGENTCARD_WORKERS") {
                Some(v) => parse_value("AGENTCARD_WORKERS", &v)?,
                None => std::thread::available_parallelism().map_or(2, |n| n.get()),
            },
            report_flush: parse_millis(&get, "AGENTCARD_REPORT_FLUSH_MS", "5000")?,
            report_minutes_kept: hours(parse_positive(
                &get,
                "AGENTCARD_REPORT_MINUTES_HOURS",
                "48",
            )?),
            report_kept: hours(
                24 * parse_positive(&get, "AGENTCARD_REPORT_RETENTION_DAYS", "400")?,
            ),
            report_pages_per_hour: parse_positive(&get, "AGENTCARD_REPORT_PAGES_PER_HOUR", "10000")?
                as usize,
            // 0 is a choice: without a balancer, nothing needs the time.
            drain: Duration::from_millis(parse_var(&get, "AGENTCARD_DRAIN_MS", "5000")?),
            shutdown_timeout: parse_millis(&get, "AGENTCARD_SHUTDOWN_TIMEOUT_MS", "10000")?,
            smtp_url: get("AGENTCARD_SMTP_URL")
                .map(|v| SmtpUrl::parse(&v))
                .transpose()?,
            metrics_listen: get("AGENTCARD_METRICS_LISTEN")
                .map(|v| parse_value("AGENTCARD_METRICS_LISTEN", &v))
                .transpose()?,
            max_connections_per_address: parse_positive(
                &get,
                "AGENTCARD_MAX_CONNECTIONS_PER_IP",
                "256",
            )? as usize,
            icon_fetch: IconFetch::configured(&get)?,
            schedule_period: parse_millis(&get, "AGENTCARD_SCHEDULE_MS", "60000")?,
            clock: get("AGENTCARD_TEST_CLOCK_FILE")
                .map_or_else(Clock::default, |file| Clock::from_file(file.into())),
            password_rates: Rates {
                known_per_minute: parse_positive(
                    &get,
                    "AGENTCARD_PASSWORD_HASHES_PER_MINUTE",
                    PASSWORD_HASHES_PER_MINUTE,
                )?,
                unknown_per_minute: parse_positive(
                    &get,
                    "AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_MINUTE",
                    UNKNOWN_BROWSER_SIGN_INS_PER_MINUTE,
                )?,
            },
            unknown_browser_sign_ins_per_block: parse_positive(
                &get,
                "AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_BLOCK_PER_MINUTE",
                &crate::limits::UNKNOWN_BROWSER_HASHES_PER_BLOCK.to_string(),
            )? as usize,
        })
    }
}

/// `AGENTCARD_REPLICA_URL`: a connection string, read as `DATABASE_URL` is.
fn replica_url(url: &str) -> Result<String, ConfigError> {
    match crate::db::pg_config(url) {
        Ok(_) => Ok(url.to_string()),
        Err(error) => Err(ConfigError {
            var: "AGENTCARD_REPLICA_URL",
            message: format!("not a PostgreSQL connection string: {error}"),
        }),
    }
}

/// The default of `AGENTCARD_PASSWORD_HASHES_PER_MINUTE`: one hash a second, in bursts of ten
/// (`password::Rate`), a small fraction of a core and ample for the people of every
/// organisation signing in and choosing passwords.
const PASSWORD_HASHES_PER_MINUTE: &str = "60";

/// The default of `AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_MINUTE`: one every five seconds, in
/// bursts of two; beyond, a sign-in pays for its hash with a proof of work (`proof_of_work`). The hashing threads' idle priority puts them behind the process's own
/// serving threads only (the kernel shares the cores between groups of processes first, and the
/// process's group pays for its hashes), so this rate is what a flood from many addresses gets,
/// and it is kept small enough that `/fragment`'s tail does not feel it (measured in
/// docs/performance.md, "A sign-in flood and `/fragment`"). A person meets it only on a browser
/// they never signed in from, and only during a flood, as a few seconds of their browser's work.
const UNKNOWN_BROWSER_SIGN_INS_PER_MINUTE: &str = "12";

/// The console's origin: `scheme://host[:port]`, the host being the console host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleUrl(String);

impl ConsoleUrl {
    /// `AGENTCARD_CONSOLE_URL` when set; else `http://HOST:PORT` (the listening port) for a
    /// `localhost` console host, which browsers resolve to loopback, and `https://HOST` for
    /// any other. Plain HTTP is refused elsewhere: the session cookie is `Secure` there, and a
    /// browser would not send it back.
    fn configured(
        host: Option<&str>,
        url: Option<String>,
        listen_port: u16,
    ) -> Result<Option<ConsoleUrl>, ConfigError> {
        const VAR: &str = "AGENTCARD_CONSOLE_URL";
        let refuse = |message: String| ConfigError { var: VAR, message };
        let Some(host) = host else {
            return match url {
                Some(_) => Err(refuse("set AGENTCARD_CONSOLE_HOST too".into())),
                None => Ok(None),
            };
        };
        let url = url.unwrap_or_else(|| match is_localhost(host) {
            true => format!("http://{host}:{listen_port}"),
            false => format!("https://{host}"),
        });
        let parsed = url::Url::parse(url.trim())
            .map_err(|e| refuse(format!("{url:?} is not a URL ({e})")))?;
        let origin_only = parsed.path() == "/"
            && parsed.query().is_none()
            && parsed.fragment().is_none()
            && parsed.username().is_empty()
            && parsed.password().is_none();
        let parsed_host = parsed.host_str().unwrap_or("");
        let plain_allowed =
            parsed.scheme() == "https" || (parsed.scheme() == "http" && is_localhost(parsed_host));
        if !origin_only || !plain_allowed || parsed_host != host {
            return Err(refuse(format!(
                "{url:?}: an https:// origin (http:// for localhost only) whose host is \
                 AGENTCARD_CONSOLE_HOST ({host}), without a path"
            )));
        }
        Ok(Some(ConsoleUrl(parsed.origin().ascii_serialization())))
    }

    /// `scheme://host[:port]`, as a browser sends it in `Origin`.
    pub fn origin(&self) -> &str {
        &self.0
    }

    /// Plain HTTP (a `localhost` console): cookies cannot be `Secure` there.
    pub fn is_plain_http(&self) -> bool {
        self.0.starts_with("http://")
    }

    /// The `Strict-Transport-Security` of the console's answers over HTTPS: browsers keep to
    /// HTTPS for a year; none over plain HTTP, where it would mean nothing.
    pub fn strict_transport(&self) -> Option<&'static str> {
        (!self.is_plain_http()).then_some("max-age=31536000")
    }
}

/// An SMTP server's URL: `smtp://host[:port]` (plain, or STARTTLS with `?tls=required`) or
/// `smtps://[user:password@]host[:port]` (TLS from the start). Its password never shows in
/// `Debug`, so never in a log.
#[derive(Clone, PartialEq, Eq)]
pub struct SmtpUrl(String);

impl SmtpUrl {
    fn parse(text: &str) -> Result<SmtpUrl, ConfigError> {
        let refuse = |why: &str| ConfigError {
            var: "AGENTCARD_SMTP_URL",
            message: format!("{why}: smtp://HOST[:PORT] or smtps://[USER:PASSWORD@]HOST[:PORT]"),
        };
        let url = url::Url::parse(text.trim()).map_err(|_| refuse("not a URL"))?;
        if !matches!(url.scheme(), "smtp" | "smtps") {
            return Err(refuse("not an smtp:// or smtps:// URL"));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(refuse("no host"));
        }
        if let Err(error) = lettre::SmtpTransport::from_url(url.as_str()) {
            return Err(refuse(&error.to_string()));
        }
        Ok(SmtpUrl(url.to_string()))
    }

    /// The URL, credentials included, for the mail client alone.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SmtpUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut shown = url::Url::parse(&self.0).map_err(|_| std::fmt::Error)?;
        if shown.password().is_some() {
            shown.set_password(Some("…")).map_err(|_| std::fmt::Error)?;
        }
        write!(f, "SmtpUrl({shown})")
    }
}

/// `localhost` or a name under it, which browsers resolve to loopback.
fn is_localhost(host: &str) -> bool {
    host == "localhost" || host.ends_with(".localhost")
}

fn parse_var<T: std::str::FromStr>(
    get: &impl Fn(&str) -> Option<String>,
    var: &'static str,
    default: &str,
) -> Result<T, ConfigError> {
    parse_value(var, &get(var).unwrap_or_else(|| default.to_string()))
}

/// A period in milliseconds, at least 1: a zero period would make the refresher and the
/// connection watchdog loop without pause, and expire every connection at once.
fn parse_millis(
    get: &impl Fn(&str) -> Option<String>,
    var: &'static str,
    default: &str,
) -> Result<Duration, ConfigError> {
    parse_positive(get, var, default).map(Duration::from_millis)
}

/// A count of at least 1.
fn parse_positive(
    get: &impl Fn(&str) -> Option<String>,
    var: &'static str,
    default: &str,
) -> Result<u64, ConfigError> {
    match parse_var(get, var, default)? {
        0 => Err(ConfigError {
            var,
            message: "must be at least 1".to_string(),
        }),
        n => Ok(n),
    }
}

fn hours(n: u64) -> Duration {
    Duration::from_secs(n * 3600)
}

fn parse_value<T: std::str::FromStr>(var: &'static str, value: &str) -> Result<T, ConfigError> {
    value.trim().parse().map_err(|_| ConfigError {
        var,
        message: format!("cannot parse {value:?}"),
    })
}

fn parse_prefix(value: Option<String>) -> Result<String, ConfigError> {
    let prefix = value.unwrap_or_else(|| "svc".into());
    let valid = !prefix.is_empty()
        && prefix.len() <= 16
        && prefix
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if valid {
        Ok(prefix)
    } else {
        Err(ConfigError {
            var: "AGENTCARD_PREFIX",
            message: "1 to 16 characters of a-z 0-9".into(),
        })
    }
}

fn parse_proxies(value: Option<String>) -> Result<Vec<IpNet>, ConfigError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|cidr| {
            cidr.parse::<IpNet>()
                .or_else(|_| cidr.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| ConfigError {
                    var: "AGENTCARD_TRUSTED_PROXIES",
                    message: format!("{cidr:?} is not an address or CIDR block"),
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn defaults_follow_the_decisions() {
        let c = config(&[("DATABASE_URL", "postgres://x")]).unwrap();
        assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(c.prefix, "svc");
        assert_eq!(c.refresh, Duration::from_millis(1000));
        assert_eq!(c.drain, Duration::from_millis(5000));
        assert!(c.base_host.is_none() && c.client_address.header.is_none());
        assert_eq!(c.unknown_browser_sign_ins_per_block, 30);
    }

    #[test]
    fn bad_values_name_their_variable() {
        let cases = [
            (vec![], "DATABASE_URL"),
            (vec![("AGENTCARD_LISTEN", "nowhere")], "AGENTCARD_LISTEN"),
            (vec![("AGENTCARD_PREFIX", "Svc!")], "AGENTCARD_PREFIX"),
            (
                vec![("AGENTCARD_TRUSTED_PROXIES", "10.0.0.0/99")],
                "AGENTCARD_TRUSTED_PROXIES",
            ),
            (vec![("AGENTCARD_REFRESH_MS", "0")], "AGENTCARD_REFRESH_MS"),
            (
                vec![("AGENTCARD_REPORT_RETENTION_DAYS", "0")],
                "AGENTCARD_REPORT_RETENTION_DAYS",
            ),
            (
                vec![("AGENTCARD_METRICS_LISTEN", "port 9")],
                "AGENTCARD_METRICS_LISTEN",
            ),
            (
                vec![("AGENTCARD_REQUEST_TIMEOUT_MS", "0")],
                "AGENTCARD_REQUEST_TIMEOUT_MS",
            ),
            (
                vec![("AGENTCARD_IDLE_TIMEOUT_MS", "0")],
                "AGENTCARD_IDLE_TIMEOUT_MS",
            ),
            (vec![("AGENTCARD_DRAIN_MS", "-1")], "AGENTCARD_DRAIN_MS"),
            (
                vec![(
                    "AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_BLOCK_PER_MINUTE",
                    "0",
                )],
                "AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_BLOCK_PER_MINUTE",
            ),
            (
                vec![("AGENTCARD_SMTP_URL", "http://mail.example")],
                "AGENTCARD_SMTP_URL",
            ),
            (
                vec![("AGENTCARD_SMTP_URL", "smtp://")],
                "AGENTCARD_SMTP_URL",
            ),
        ];
        for (mut vars, var) in cases {
            if var != "DATABASE_URL" {
                vars.push(("DATABASE_URL", "postgres://x"));
            }
            assert_eq!(config(&vars).unwrap_err().var, var);
        }
    }

    #[test]
    fn the_console_url_defaults_from_its_host_and_is_checked() {
        let url = |vars: &[(&str, &str)]| {
            let mut all = vec![("DATABASE_URL", "postgres://x")];
            all.extend_from_slice(vars);
            config(&all).map(|c| c.console_url.map(|u| u.origin().to_string()))
        };
        assert_eq!(url(&[]).unwrap(), None);
        let host = |h| ("AGENTCARD_CONSOLE_HOST", h);
        assert_eq!(
            url(&[host("Console.Example.com")]).unwrap().as_deref(),
            Some("https://console.example.com")
        );
        assert_eq!(
            url(&[
                host("console.localhost"),
                ("AGENTCARD_LISTEN", "127.0.0.1:8080")
            ])
            .unwrap()
            .as_deref(),
            Some("http://console.localhost:8080")
        );
        let set = |u| ("AGENTCARD_CONSOLE_URL", u);
        assert_eq!(
            url(&[host("c.example.com"), set("https://c.example.com:8443/")])
                .unwrap()
                .as_deref(),
            Some("https://c.example.com:8443")
        );
        for refused in [
            vec![set("https://c.example.com")],
            vec![host("c.example.com"), set("http://c.example.com")],
            vec![host("c.example.com"), set("https://other.example.com")],
            vec![host("c.example.com"), set("https://c.example.com/console")],
            vec![host("c.example.com"), set("not a url")],
        ] {
            assert_eq!(url(&refused).unwrap_err().var, "AGENTCARD_CONSOLE_URL");
        }
    }

    #[test]
    fn the_icon_fetch_is_on_by_default_and_its_test_settings_stay_on_loopback() {
        let icon = |vars: &[(&str, &str)]| {
            let mut all = vec![("DATABASE_URL", "postgres://x")];
            all.extend_from_slice(vars);
            config(&all).map(|c| c.icon_fetch)
        };
        let on = icon(&[]).unwrap().expect("on by default");
        assert!(on.test_connect_to.is_none() && on.test_roots.is_empty());
        assert!(icon(&[("AGENTCARD_ICON_FETCH", "on")]).unwrap().is_some());
        assert!(icon(&[("AGENTCARD_ICON_FETCH", "off")]).unwrap().is_none());
        let to = "127.0.0.1:8443";
        let connect_to = ("AGENTCARD_ICON_TEST_CONNECT_TO", to);
        let test = icon(&[connect_to]).unwrap().unwrap();
        assert_eq!(test.test_connect_to, Some(to.parse().unwrap()));
        let refused = [
            (vec![("AGENTCARD_ICON_FETCH", "no")], "AGENTCARD_ICON_FETCH"),
            (
                vec![("AGENTCARD_ICON_TEST_CONNECT_TO", "10.0.0.1:443")],
                "AGENTCARD_ICON_TEST_CONNECT_TO",
            ),
            (
                vec![("AGENTCARD_ICON_TEST_CA_FILE", "/etc/hostname")],
                "AGENTCARD_ICON_TEST_CA_FILE",
            ),
            (
                vec![
                    connect_to,
                    ("AGENTCARD_ICON_TEST_CA_FILE", "/nonexistent/ca.pem"),
                ],
                "AGENTCARD_ICON_TEST_CA_FILE",
            ),
        ];
        for (vars, var) in refused {
            assert_eq!(icon(&vars).unwrap_err().var, var);
        }
    }

    #[test]
    fn trusted_proxies_accept_blocks_and_addresses() {
        let c = config(&[
            ("DATABASE_URL", "postgres://x"),
            ("AGENTCARD_TRUSTED_PROXIES", "127.0.0.0/8, 10.1.2.3"),
        ])
        .unwrap();
        assert!(c
            .client_address
            .is_trusted_proxy("127.9.9.9".parse().unwrap()));
        assert!(c
            .client_address
            .is_trusted_proxy("10.1.2.3".parse().unwrap()));
        assert!(!c
            .client_address
            .is_trusted_proxy("10.1.2.4".parse().unwrap()));
    }

    #[test]
    fn the_smtp_url_is_read_and_its_password_never_shown() {
        let c = config(&[
            ("DATABASE_URL", "postgres://x"),
            (
                "AGENTCARD_SMTP_URL",
                "smtps://mailer:s3cret@smtp.example:465",
            ),
        ])
        .unwrap();
        let url = c.smtp_url.expect("set");
        assert_eq!(url.as_str(), "smtps://mailer:s3cret@smtp.example:465");
        let shown = format!("{url:?}");
        assert!(
            !shown.contains("s3cret") && shown.contains("smtp.example"),
            "{shown}"
        );
        let unset = config(&[("DATABASE_URL", "postgres://x")]).unwrap();
        assert!(unset.smtp_url.is_none());
    }
}
