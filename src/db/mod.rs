//! The data-access layer: the connection pool, migrations, and every query of the service.
//! SQL lives here and in `sql/`, nowhere else. Functions take a `GenericClient` so that the
//! same query runs alone or inside a transaction.

pub mod alerts;
pub mod audit;
pub mod cards;
pub mod contact;
pub mod counting;
pub mod deletions;
pub mod fragments;
pub mod icons;
pub mod keys;
pub mod migrate;
pub mod orgs;
pub mod passkeys;
pub mod people;
pub mod reports;
pub mod routes;
pub mod second_factors;
pub mod sessions;
pub mod sites;
pub mod snapshot;
pub mod subscriptions;
pub mod types;

use postgres::{NoTls, Row};
use std::str::FromStr;
use std::time::Duration;

/// How long a query may run before Postgres cancels it: a slow database answers
/// `500 internal` promptly instead of holding a management request forever.
const STATEMENT_TIMEOUT_MS: u64 = 5_000;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Connection settings with the timeouts every connection of the service carries.
pub fn pg_config(database_url: &str) -> Result<postgres::Config, postgres::Error> {
    let mut config = postgres::Config::from_str(database_url)?;
    config.connect_timeout(CONNECT_TIMEOUT);
    config.keepalives_idle(Duration::from_secs(30));
    config.options(&format!("-c statement_timeout={STATEMENT_TIMEOUT_MS}"));
    config.application_name("agentcard");
    Ok(config)
}

/// One connection outside the pool (CLI commands, migrations, listeners).
pub fn connect(database_url: &str) -> Result<postgres::Client, postgres::Error> {
    pg_config(database_url)?.connect(NoTls)
}

/// An error as the log should show it: PostgreSQL's own message and SQLSTATE when the server
/// answered (`postgres::Error` alone prints "db error"), else every cause of its chain
/// ("error connecting to server: Connection refused (os error 111)"); never the statement's
/// parameters (nor a detail, which may quote them).
pub fn describe(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
        None => std::iter::successors(Some(error as &dyn std::error::Error), |e| e.source())
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(": "),
    }
}

/// Whether the server accepts no writes in this session: a standby, or
/// `default_transaction_read_only`.
pub fn is_read_only(client: &mut postgres::Client) -> Result<bool, postgres::Error> {
    let rows = client.simple_query("SHOW transaction_read_only")?;
    let value = rows.iter().find_map(|message| match message {
        postgres::SimpleQueryMessage::Row(row) => row.get(0),
        _ => None,
    });
    Ok(value == Some("on"))
}

/// Is this the error of a database that is not there (down, restarting, unreachable), or
/// of a primary that became read-only (a failover's gap)?
pub fn is_unavailable(error: &postgres::Error) -> bool {
    if types::is_bad_stored_value(error) {
        return false;
    }
    match error.code() {
        Some(code) => {
            code.code().starts_with("08")
                || *code == postgres::error::SqlState::ADMIN_SHUTDOWN
                || *code == postgres::error::SqlState::CANNOT_CONNECT_NOW
                || *code == postgres::error::SqlState::READ_ONLY_SQL_TRANSACTION
        }
        None => true,
    }
}

/// Is this error a unique-constraint violation (a concurrent writer got there first)?
pub fn is_unique_violation(error: &postgres::Error) -> bool {
    error.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION)
}

/// Is this error a foreign-key violation (a row it points to was deleted meanwhile)?
pub fn is_foreign_key_violation(error: &postgres::Error) -> bool {
    error.code() == Some(&postgres::error::SqlState::FOREIGN_KEY_VIOLATION)
}

/// Every row read by `read`, which fails on the first value that does not read.
fn read_all<T>(
    rows: &[Row],
    read: fn(&Row) -> Result<T, postgres::Error>,
) -> Result<Vec<T>, postgres::Error> {
    rows.iter().map(read).collect()
}

/// The row, if there is one, read by `read`.
fn read_opt<T>(
    row: Option<Row>,
    read: fn(&Row) -> Result<T, postgres::Error>,
) -> Result<Option<T>, postgres::Error> {
    row.as_ref().map(read).transpose()
}
