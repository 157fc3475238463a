//! The console's stylesheet and scripts, compiled into the binary.

use crate::http::Response;

const STYLESHEET: &str = include_str!("../../templates/console/console.css");
const SCRIPT: &str = include_str!("../../templates/console/console.js");
const PROOF_WORKER: &str = include_str!("../../templates/console/proof-worker.js");

/// The console's own files, served to anyone (they hold nothing of an organisation), at once
/// and without the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asset {
    Stylesheet,
    /// The "Copy" buttons of a secret shown once (without it the secret is selectable text),
    /// and the sign-in's wait for its proof of work.
    Script,
    /// The Web Worker that solves the sign-in's proof of work.
    ProofWorker,
}

pub fn asset(asset: Asset) -> Response {
    let (content_type, text) = match asset {
        Asset::Stylesheet => ("text/css; charset=utf-8", STYLESHEET),
        Asset::Script => ("text/javascript; charset=utf-8", SCRIPT),
        Asset::ProofWorker => ("text/javascript; charset=utf-8", PROOF_WORKER),
    };
    Response::new(200)
        .header("Content-Type", content_type)
        .body(text.as_bytes().to_vec())
}
