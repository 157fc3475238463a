//! The delivery of cards: `GET /fragment`, served from an in-process snapshot. Nothing in this
//! module touches the database on a request (`cache`'s refresher loads the snapshot,
//! `crate::counting` writes the report).
//!
//! "Delivery" is the serving side; "fragment" names only the resource (a slot of a site).
//!
//! - `page`: the page named by `page_url`: host and canonical path.
//! - `params`: the query string and the parameters that matter.
//! - `snapshot`: the immutable maps the endpoint reads, built from database rows.
//! - `cache`: the current snapshot, each worker thread's copy of it, and the refresher.
//! - `select`: the decision of one request (checks, resolution, pick) — the hot path.
//! - `render`: a card's HTML and JSON bodies, made once per snapshot build.
//! - `diagnosis`: "why this card?": `select`'s steps for a page, recorded, and the answer.
//! - `endpoint`: the HTTP glue and the report row.

pub mod cache;
pub mod diagnosis;
mod endpoint;
pub mod page;
pub mod params;
pub mod render;
pub mod select;
pub mod snapshot;

pub use endpoint::{Delivery, UNREADABLE_PATH};
