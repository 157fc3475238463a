//! The fragment endpoint `/fragment`: served from an in-process snapshot; nothing in this
//! module touches the database (`crate::cache` loads the snapshot, `crate::report` writes rows).
//!
//! - `page`: the page named by `page_url`: host and canonical path.
//! - `params`: the query string and the parameters that matter.
//! - `snapshot`: the immutable maps the endpoint reads, built from database rows.
//! - `select`: the decision of one request (checks, resolution, pick) — the hot path.
//! - `render`: a card's HTML and JSON bodies, made once per snapshot build.
//! - `endpoint`: the HTTP glue and the report row.
//! - `markers`: the agent markers v0.1, for reporting.

pub mod endpoint;
pub mod markers;
pub mod page;
pub mod params;
pub mod render;
pub mod select;
pub mod snapshot;
