//! The confirmation page of every deletion: what is deleted, what goes with it, and the one
//! button that does it (a `POST` with the session's form token); reading it changes nothing.

use super::pages::Layout;
use askama::Template;

#[derive(Template)]
#[template(path = "console/confirm.html")]
pub struct Confirm {
    pub layout: Layout,
    pub title: String,
    /// What goes with it, one sentence each.
    pub goes: Vec<String>,
    /// Where the button posts.
    pub action: String,
    pub button: &'static str,
    /// The page to go back to without deleting.
    pub back: String,
}
