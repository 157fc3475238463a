//! "Why this card?" for the console: the question of its form read as `/fragment` reads its
//! query (`Params::parse`), answered by `delivery::diagnosis` on the organisation's part of
//! the snapshot this instance serves from now, with the organisation's cards that never
//! reached the pick and why (their status, or no eligibility on the fragment). Also where a
//! rule's pages would go once it is deleted, by the same resolution.

use super::sites::site;
use super::Caller;
use crate::db;
use crate::db::cards::CardRow;
use crate::db::fragments::FragmentRow;
use crate::db::routes::RouteRow;
use crate::db::snapshot::{self as rows, Rows, Versions};
use crate::delivery::cache::FragmentCache;
use crate::delivery::diagnosis::{diagnose, resolution, Diagnosis, Refused, Step};
use crate::delivery::page::Page;
use crate::delivery::params::Params;
use crate::delivery::snapshot::Snapshot;
use crate::domain::{CardStatus, DomainName, FragmentStatus, MatchMode};
use crate::error::ApiError;
use crate::ids::RouteId;
use postgres::GenericClient;
use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::Arc;
use url::form_urlencoded;

/// The form's values, as typed (read like `/fragment`'s parameters of the same names).
#[derive(Debug, Clone, Default)]
pub struct Question {
    pub page_url: String,
    pub lang: String,
    /// `ctx.<key>` values: (key, value).
    pub ctx: Vec<(String, String)>,
    /// `html` when `None`.
    pub format: Option<String>,
    /// The `fragment_id` the edge sends, when known.
    pub fragment_id: Option<String>,
    /// The visiting agent's User-Agent: the marker and purpose it is counted under.
    pub user_agent: Option<String>,
}

impl Question {
    /// The question as `/fragment`'s query string.
    fn query(&self) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        query.append_pair("page_url", &self.page_url);
        query.append_pair("lang", &self.lang);
        if let Some(format) = &self.format {
            query.append_pair("format", format);
        }
        if let Some(fragment_id) = &self.fragment_id {
            query.append_pair("fragment_id", fragment_id);
        }
        for (key, value) in &self.ctx {
            query.append_pair(&format!("ctx.{key}"), value);
        }
        query.finish()
    }
}

/// The snapshot the answer is read from, held while the console renders it.
pub struct Served {
    snapshot: Arc<Snapshot>,
    org_id: String,
}

/// A card of the organisation's (or a platform card it sees) that the pick never looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftOut {
    /// Draft or archived: only active cards serve.
    Status(CardStatus),
    /// Active, but not eligible on the fragment (its list leaves it out; a platform card
    /// without a list for the organisation).
    NotEligible,
}

/// The snapshot this instance serves `caller`'s organisation from now; an internal error
/// until it has loaded (`/ready` says so too).
pub fn served(cache: &FragmentCache, caller: &Caller) -> Result<Served, ApiError> {
    let snapshot = cache
        .current()
        .ok_or_else(|| ApiError::internal("the snapshot has not loaded yet"))?;
    Ok(Served {
        snapshot,
        org_id: caller.org.id.as_str().to_string(),
    })
}

impl Served {
    /// What `/fragment` would do for `question`, step by step; a value `/fragment` would
    /// not resolve (`page_url` not `http`/`https`, without a host or over 2048 bytes; `lang`;
    /// `format`; a `fragment_id` not of the organisation) refused on its field (`422`).
    pub fn diagnose(&self, question: &Question) -> Result<Diagnosis<'_>, ApiError> {
        let org = self
            .snapshot
            .org(&self.org_id)
            .ok_or_else(|| ApiError::internal("the organisation is not in the snapshot"))?;
        let query = question.query();
        let params = Params::parse(&query);
        diagnose(org, &params, question.user_agent.as_deref())
            .map_err(|Refused { field, message }| ApiError::validation(field, message))
    }
}

/// The cards of `cards` (the organisation's list, `ops::cards::list_cards`) that the pick of
/// `diagnosis` never looked at, and why; none when no pick ran (no fragment, or paused).
pub fn left_out<'c>(cards: &'c [CardRow], diagnosis: &Diagnosis) -> Vec<(&'c CardRow, LeftOut)> {
    if !diagnosis.fragment.is_some_and(|fragment| fragment.active) {
        return Vec::new();
    }
    let considered: HashSet<&str> = diagnosis
        .considered
        .iter()
        .map(|c| &*c.candidate.card.id)
        .collect();
    cards
        .iter()
        .filter(|card| !considered.contains(card.id.as_str()))
        .map(|card| {
            let why = match card.status {
                CardStatus::Active => LeftOut::NotEligible,
                status => LeftOut::Status(status),
            };
            (card, why)
        })
        .collect()
}

/// Where the pages of a rule would go once it is deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Instead {
    /// Another rule of the site: its canonical path, match mode and fragment id.
    Rule {
        path: String,
        exact: bool,
        fragment_id: String,
        active: bool,
    },
    /// No other rule: the site default (its fragment id).
    SiteDefault { fragment_id: String, active: bool },
    /// No other rule and no default.
    Nothing,
}

/// A rule's deletion as its confirmation shows it: the rule, where its pages would go
/// instead, and the site's fragments (to name them).
pub struct RuleDeletion {
    pub rule: RouteRow,
    pub instead: Instead,
    pub fragments: Vec<FragmentRow>,
}

/// The deletion of the rule `id` of the caller's site `domain`: where its pages would go without
/// it, by `/fragment`'s own resolution (`diagnosis::resolution`) on the site as it is now (its
/// default, fragments and rules), the rule left out. An exact rule's page is its path; a prefix
/// rule's pages are those below its path that no longer rule takes, which never meet the exact
/// rule of the same path: that one is left out too.
pub fn rule_deletion(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
    id: &RouteId,
) -> Result<RuleDeletion, ApiError> {
    let site = site(db, caller, domain)?;
    let routes = db::routes::list_routes(db, site.id)?;
    let fragments = db::fragments::list_fragments(db, site.id)?;
    let rule = (routes.iter())
        .find(|route| &route.id == id)
        .cloned()
        .ok_or(ApiError::NotFound)?;
    let exact = rule.match_mode == MatchMode::Exact;
    let left_out = |other: &RouteRow| {
        other.path == rule.path && (!exact || other.match_mode == MatchMode::Exact)
    };
    let org_id = caller.org.id.as_str();
    let rows = Rows {
        org_ids: vec![org_id.to_string()],
        keys: Vec::new(),
        sites: vec![rows::SiteRow {
            id: site.id.0,
            org_id: org_id.to_string(),
            domain: site.domain.clone(),
            default_fragment_id: site.default_fragment_id.as_ref().map(ToString::to_string),
        }],
        fragments: (fragments.iter())
            .map(|fragment| rows::FragmentRow {
                id: fragment.id.to_string(),
                site_id: site.id.0,
                active: fragment.status == FragmentStatus::Active,
            })
            .collect(),
        routes: (routes.iter())
            .filter(|other| !left_out(other))
            .map(|other| rows::RouteRow {
                site_id: site.id.0,
                path: other.path.clone(),
                exact: other.match_mode == MatchMode::Exact,
                fragment_id: other.fragment_id.to_string(),
            })
            .collect(),
        cards: Vec::new(),
        eligibility: Vec::new(),
    };
    let versions = Versions {
        orgs: HashMap::new(),
        platform: 0,
    };
    let snapshot = Snapshot::build(rows, &versions);
    let org = snapshot
        .org(org_id)
        .ok_or_else(|| ApiError::internal("the organisation has no rows"))?;
    let page = Page {
        host: site.domain.clone(),
        path: Some(rule.path.clone()),
    };
    let instead = match resolution(org, &page).1 {
        Step::Rule {
            path,
            exact,
            fragment,
        } => Instead::Rule {
            path,
            exact,
            fragment_id: fragment.id.to_string(),
            active: fragment.active,
        },
        Step::SiteDefault(fragment) => Instead::SiteDefault {
            fragment_id: fragment.id.to_string(),
            active: fragment.active,
        },
        Step::Nothing | Step::NotASite => Instead::Nothing,
    };
    Ok(RuleDeletion {
        rule,
        instead,
        fragments,
    })
}
