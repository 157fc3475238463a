//! What keeps the service or a command from starting, said so that an operator can act on it:
//! the thing that failed with the setting that names it, every cause the system gave (for the
//! database, PostgreSQL's own message and SQLSTATE, or the chain of causes: `db::describe`),
//! and what to change. A connection string is shown with its password replaced by `***`.
//!
//! `postgres::Error` alone prints "db error" or "error connecting to server", which names
//! neither the server, nor why, nor the setting.

use crate::db;
use crate::http;
use postgres::config::Host;
use std::error::Error;
use std::fmt;
use std::net::SocketAddr;

/// A failure before the service serves, or before a command does its work.
#[derive(Debug)]
pub struct StartError {
    /// The thing that failed, with the setting that names it.
    what: String,
    /// Every cause of the error's chain, outermost first.
    cause: String,
    /// What to change.
    fix: String,
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}\n  fix: {}", self.what, self.cause, self.fix)
    }
}

impl Error for StartError {}

/// The setting of the service's own listener.
pub const LISTEN_SETTING: &str = "AGENTCARD_LISTEN";
/// The setting of the metrics' listener.
pub const METRICS_LISTEN_SETTING: &str = "AGENTCARD_METRICS_LISTEN";

/// The fix when PostgreSQL answers with one of these SQLSTATEs (or one of this class, two
/// characters), at connection or during the migrations; the first that matches wins.
const FIXES: &[(&str, &str)] = &[
    (
        "3D000",
        "create that database (createdb NAME), or set DATABASE_URL to a database that exists",
    ),
    (
        "28P01",
        "set the password in DATABASE_URL to that user's (percent-encoded)",
    ),
    (
        "28",
        "set the user (and password) in DATABASE_URL to a role this server lets in (a LOGIN \
         role that its pg_hba.conf allows from here)",
    ),
    (
        "42501",
        "make the user of DATABASE_URL the owner of that database (or let it create tables \
         there), or run `agentcard migrate` once as the owner",
    ),
    (
        "53300",
        "the server has no connection left: raise its max_connections, or lower \
         AGENTCARD_DB_POOL on each instance",
    ),
    (
        "57P03",
        "the server is starting, stopping or recovering: start again once it accepts \
         connections",
    ),
];
/// The fix when PostgreSQL answers with a code of no line of [`FIXES`].
const SERVER_REFUSED: &str = "PostgreSQL refused, for the reason above: correct that on the \
     server, or set DATABASE_URL to another database";

/// A connection to the database of `database_url` (`DATABASE_URL`).
pub fn connect(database_url: &str) -> Result<postgres::Client, StartError> {
    db::connect(database_url).map_err(|error| database_failure(database_url, &error))
}

/// Applies the migrations missing from the database of `database_url`; returns their names.
pub fn migrate(database_url: &str) -> Result<Vec<&'static str>, StartError> {
    let mut client = connect(database_url)?;
    db::migrate::run(&mut client).map_err(|error| StartError {
        what: format!(
            "database: cannot apply the migrations to {} (DATABASE_URL)",
            redact(database_url)
        ),
        ..database_failure(database_url, &error)
    })
}

/// What went wrong with the database of `database_url`: a connection string that does not
/// read, a server that does not answer, or PostgreSQL's refusal, each with its fix.
pub fn database_failure(database_url: &str, error: &postgres::Error) -> StartError {
    let shown = redact(database_url);
    let config = match db::pg_config(database_url) {
        Ok(config) => config,
        Err(parse_error) => {
            return StartError {
                what: format!("DATABASE_URL ({shown}) is not a PostgreSQL connection string"),
                cause: db::describe(&parse_error),
                fix: "write it as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE \
                      (special characters percent-encoded), or as key=value pairs"
                    .into(),
            }
        }
    };
    let fix = match error.as_db_error() {
        Some(answer) => {
            let code = answer.code().code();
            FIXES
                .iter()
                .find(|(prefix, _)| code.starts_with(prefix))
                .map_or(SERVER_REFUSED, |(_, fix)| fix)
                .to_string()
        }
        None => format!(
            "start PostgreSQL on {} (or let it listen there), or set DATABASE_URL to a server \
             that answers",
            server(&config)
        ),
    };
    StartError {
        what: format!("database: cannot connect to {shown} (DATABASE_URL)"),
        cause: db::describe(error),
        fix,
    }
}

/// The listener of `setting` (`LISTEN_SETTING` or `METRICS_LISTEN_SETTING`), bound to `addr`.
pub fn bind(setting: &str, addr: SocketAddr) -> Result<http::Listener, StartError> {
    http::exclusive_listener(addr).map_err(|error| listen_failure(setting, addr, &error))
}

/// Why the listener of `setting` cannot listen on `addr`, and what to change.
pub fn listen_failure(setting: &str, addr: SocketAddr, error: &std::io::Error) -> StartError {
    let fix = match error.kind() {
        std::io::ErrorKind::AddrInUse => format!(
            "another process listens on {addr}: stop it, or set {setting} to a free address"
        ),
        std::io::ErrorKind::AddrNotAvailable => format!(
            "{} is not an address of this machine: set {setting} to one of its addresses \
             (0.0.0.0 for all)",
            addr.ip()
        ),
        std::io::ErrorKind::PermissionDenied => format!(
            "ports below 1024 need privileges: set {setting} to a port from 1024 up, or give \
             the binary CAP_NET_BIND_SERVICE"
        ),
        _ => format!("set {setting} to an address this process may listen on"),
    };
    StartError {
        what: format!("cannot listen on {addr} ({setting})"),
        cause: error.to_string(),
        fix,
    }
}

/// The first server a connection string names, as `host:port`; libpq's defaults when it
/// names none.
fn server(config: &postgres::Config) -> String {
    let port = config.get_ports().first().copied().unwrap_or(5432);
    match config.get_hosts().first() {
        Some(Host::Tcp(host)) => format!("{host}:{port}"),
        Some(Host::Unix(path)) => format!("the socket folder {} (port {port})", path.display()),
        None => format!("localhost:{port}"),
    }
}

/// `url` with any password replaced by `***`: a URL's (`user:password@`, `?password=`) and
/// a key=value string's (`password=…`, quoted or not).
pub fn redact(url: &str) -> String {
    let mut shown = url.to_string();
    if let Some(rest_at) = ["postgres://", "postgresql://"]
        .iter()
        .find_map(|scheme| url.starts_with(scheme).then_some(scheme.len()))
    {
        let rest = &url[rest_at..];
        let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
        if let Some(at) = authority.rfind('@') {
            if let Some(colon) = authority[..at].find(':') {
                shown = format!("{}***{}", &url[..rest_at + colon + 1], &url[rest_at + at..]);
            }
        }
    }
    redact_password_values(&shown)
}

/// Every `password=VALUE` (URL query parameter or key=value pair) with VALUE as `***`.
fn redact_password_values(text: &str) -> String {
    const KEY: &str = "password";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(found) = rest.find(KEY) {
        let (before, after_key) = rest.split_at(found + KEY.len());
        out.push_str(before);
        let value = after_key.trim_start();
        let Some(value) = value.strip_prefix('=') else {
            rest = after_key;
            continue;
        };
        let value = value.trim_start();
        let end = match value.strip_prefix('\'') {
            Some(quoted) => quoted_end(quoted) + 1,
            None => value.find([' ', '&']).unwrap_or(value.len()),
        };
        out.push_str("=***");
        rest = &value[end.min(value.len())..];
    }
    out.push_str(rest);
    out
}

/// Where a quoted value (after its opening quote) ends: after its closing quote (a quote or a
/// backslash escaped by a backslash does not close it), or at the end of the text.
fn quoted_end(quoted: &str) -> usize {
    let mut escaped = false;
    for (i, c) in quoted.char_indices() {
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '\'') => return i + 1,
            _ => {}
        }
    }
    quoted.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_never_shown() {
        for (url, shown) in [
            (
                "postgres://app:s3cr%40t@db.example:5433/agentcard",
                "postgres://app:***@db.example:5433/agentcard",
            ),
            (
                "postgresql://app:p@ss@db.example/agentcard?sslmode=disable",
                "postgresql://app:***@db.example/agentcard?sslmode=disable",
            ),
            (
                "postgres://app@db.example/agentcard?password=hunter2&sslmode=disable",
                "postgres://app@db.example/agentcard?password=***&sslmode=disable",
            ),
            (
                "host=db.example user=app password = 'it\\'s me' dbname=agentcard",
                "host=db.example user=app password=*** dbname=agentcard",
            ),
            (
                "host=db.example password=hunter2",
                "host=db.example password=***",
            ),
            (
                "postgres://postgres@127.0.0.1:5432/agentcard",
                "postgres://postgres@127.0.0.1:5432/agentcard",
            ),
            ("not a url", "not a url"),
        ] {
            assert_eq!(redact(url), shown, "{url}");
        }
    }
}
