//! The decision of one `/fragment` request, from the snapshot alone: the checks in order
//! (`400`, `401`, `403`), the page's resolution (exact rule, longest prefix rule, site
//! default, else `fragment_id`), and the pick among eligible cards. Pure and allocation-light:
//! this is the hot path, measured in `benches/`.

use super::page::Page;
use super::params::{non_empty, Params};
use super::snapshot::{Candidate, Card, Fragment, OrgSnapshot, Snapshot};
use crate::auth::{self, SecretKind};
use crate::domain::domain_name::parent_or_self_matches;
use crate::domain::{Ending, Format, Lang, Refused};
use std::cmp::Reverse;
use std::sync::Arc;
use xxhash_rust::xxh3::{xxh3_64_with_seed, Xxh3};

/// A request refused before any card is considered (`400`, `401`, `403`), for its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal(pub Refused);

impl Refusal {
    pub fn status(self) -> u16 {
        self.ending().status()
    }
    pub fn code(self) -> &'static str {
        self.ending().as_str()
    }
    fn ending(self) -> Ending {
        self.0.ending()
    }
    pub fn message(self) -> &'static str {
        match self.0 {
            Refused::PartnerIdMissing | Refused::FragmentIdMissing => {
                "partner_id and fragment_id are required"
            }
            Refused::LangMissing | Refused::LangInvalid => "lang must be one of fr, en, de, es, it",
            Refused::FormatInvalid => "format must be html, json or both",
            Refused::InvalidKey | Refused::KeyRevoked => "delivery API key missing or invalid",
            Refused::PartnerNotTheKeys | Refused::Forbidden => "partner_id does not own this key",
            Refused::FragmentNotTheKeys => "fragment_id is not a fragment of this partner",
        }
    }
}

/// Why nothing is served (`204`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoFill {
    NoEligibleCard,
    FragmentPaused,
    ServingError,
}

impl NoFill {
    pub fn reason(self) -> &'static str {
        self.ending().as_str()
    }
    fn ending(self) -> Ending {
        match self {
            NoFill::NoEligibleCard => Ending::NoEligibleCard,
            NoFill::FragmentPaused => Ending::FragmentPaused,
            NoFill::ServingError => Ending::ServingError,
        }
    }
}

#[derive(Debug)]
pub enum Outcome<'s> {
    Served(&'s Card),
    NoFill(NoFill),
    Refused(Refusal),
}

impl Outcome<'_> {
    pub fn ending(&self) -> Ending {
        match self {
            Outcome::Served(_) => Ending::Served,
            Outcome::NoFill(no_fill) => no_fill.ending(),
            Outcome::Refused(refusal) => refusal.ending(),
        }
    }

    /// The reason of a refusal.
    pub fn refused(&self) -> Option<Refused> {
        match self {
            Outcome::Refused(Refusal(reason)) => Some(*reason),
            Outcome::Served(_) | Outcome::NoFill(_) => None,
        }
    }
}

/// What the report needs to know about how the decision went.
#[derive(Debug, Default)]
pub struct Trace<'s> {
    pub org_id: Option<&'s str>,
    pub key_id: Option<&'s str>,
    /// The requested fragment, once known to be one of the organisation's.
    pub requested_fragment: Option<&'s str>,
    pub resolved_fragment: Option<&'s str>,
    /// The page's host when it is a site of the organisation.
    pub site: Option<&'s str>,
    pub lang: Option<Lang>,
    pub format: Option<Format>,
    /// The page `page_url` named, once the request got as far as resolution.
    pub page: Option<Page>,
}

pub struct Decision<'s> {
    pub outcome: Outcome<'s>,
    pub trace: Trace<'s>,
}

/// What the steps of a decision tell whoever records them: "why this card?" keeps each
/// (`delivery::diagnosis`); the serving path's [`NoRecord`] keeps nothing, and since every
/// method is a no-op the compiler removes the calls. One copy of the rules, whoever asks.
pub trait Recorder<'s> {
    /// How the page resolved, or why it did not.
    fn resolution(&mut self, _step: Resolution<'s, '_>) {}
    /// A candidate of the pick left out before the order: not in the request's language.
    fn dropped_for_language(&mut self, _candidate: &'s Candidate) {}
    /// A candidate kept, and its place in the order.
    fn kept(&mut self, _candidate: &'s Candidate, _score: Score) {}
}

/// The recorder of the serving path: records nothing.
pub struct NoRecord;

impl Recorder<'_> for NoRecord {}

/// A step of the page's resolution.
#[derive(Debug, Clone, Copy)]
pub enum Resolution<'s, 'p> {
    /// No `page_url`, or not an `http`/`https` URL with a host.
    NoPage,
    /// The page's host is not a site of the organisation.
    NotASite,
    /// A rule of the site: `path` is its canonical path.
    Rule {
        path: &'p str,
        exact: bool,
        fragment: &'s Fragment,
    },
    /// No rule for the page: the site default.
    SiteDefault(&'s Fragment),
    /// No rule for the page (or its path is refused by the canonical steps) and no default.
    Nothing,
}

/// A kept card's place in the order, highest first, field by field: brand (its
/// `brand_domain` is the page's host or a parent of it), how many `ctx` values its key-values
/// hold, the organisation's own card over a platform card, then the stable tie-break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Score {
    pub brand: bool,
    pub context: usize,
    pub own: bool,
    pub tie_break: u64,
}

/// Decides one request. `header_key` is `X-API-Key`, which wins over `api_key`.
/// `snapshot` is `None` until the cache has loaded: then nothing can be checked, and the edge
/// gets a no-fill rather than a refusal it would log as the publisher's fault.
pub fn decide<'s>(
    snapshot: Option<&'s Snapshot>,
    params: &Params,
    header_key: Option<&str>,
    service_prefix: &str,
) -> Decision<'s> {
    let mut trace = Trace::default();
    let outcome = match decide_traced(snapshot, params, header_key, service_prefix, &mut trace) {
        Ok(outcome) | Err(outcome) => outcome,
    };
    Decision { outcome, trace }
}

fn decide_traced<'s>(
    snapshot: Option<&'s Snapshot>,
    params: &Params,
    header_key: Option<&str>,
    service_prefix: &str,
    trace: &mut Trace<'s>,
) -> Result<Outcome<'s>, Outcome<'s>> {
    let refuse = |reason| Err(Outcome::Refused(Refusal(reason)));
    let key = non_empty(header_key).or_else(|| non_empty(params.api_key.as_deref()));
    let key = key.filter(|k| auth::is_well_formed(SecretKind::DeliveryKey, service_prefix, k));
    let entry = snapshot
        .zip(key)
        .and_then(|(s, key)| s.key(&auth::hash(key)));
    let (partner_id, requested, lang) = match required(params, trace) {
        Ok(required) => required,
        Err(reason) => {
            // A `400` counts under the organisation of the live key sent with it.
            if let Some(entry) = entry.filter(|entry| entry.live) {
                trace.key_id = Some(&entry.key_id);
                trace.org_id = Some(&entry.org_id);
            }
            return refuse(reason);
        }
    };
    if key.is_none() {
        return refuse(Refused::InvalidKey);
    }
    let Some(snapshot) = snapshot else {
        return Err(Outcome::NoFill(NoFill::ServingError));
    };
    let Some(entry) = entry else {
        return refuse(Refused::InvalidKey);
    };
    trace.key_id = Some(&entry.key_id);
    trace.org_id = Some(&entry.org_id);
    if !entry.live {
        return refuse(Refused::KeyRevoked);
    }
    let Some(org) = snapshot.org(&entry.org_id) else {
        return Err(Outcome::NoFill(NoFill::ServingError));
    };
    if partner_id != &*entry.org_id {
        return refuse(Refused::PartnerNotTheKeys);
    }
    let Some(requested_fragment) = org.fragments.get(requested) else {
        return refuse(Refused::FragmentNotTheKeys);
    };
    trace.requested_fragment = Some(&requested_fragment.id);
    let page = params.page_url.as_deref().and_then(Page::parse);
    let (site, resolved) = resolve(org, page.as_ref(), &mut NoRecord);
    trace.site = site;
    let fragment = resolved.unwrap_or(requested_fragment);
    trace.resolved_fragment = Some(&fragment.id);
    let outcome = serve(org, fragment, lang, page.as_ref(), params, &mut NoRecord);
    trace.page = page;
    match outcome {
        Outcome::Served(_) => Ok(outcome),
        _ => Err(outcome),
    }
}

/// The checks of `400`, in order: `partner_id` and `fragment_id` present, then `lang`, then
/// `format`; the two ids and the language when they pass, the language and format kept in
/// `trace`.
fn required<'p>(
    params: &'p Params,
    trace: &mut Trace<'_>,
) -> Result<(&'p str, &'p str, Lang), Refused> {
    let partner_id = non_empty(params.partner_id.as_deref()).ok_or(Refused::PartnerIdMissing)?;
    let requested = params
        .requested_fragment()
        .ok_or(Refused::FragmentIdMissing)?;
    let lang = non_empty(params.lang.as_deref()).ok_or(Refused::LangMissing)?;
    let lang = Lang::named(lang).ok_or(Refused::LangInvalid)?;
    trace.lang = Some(lang);
    let format = params
        .format
        .as_deref()
        .map_or(Some(Format::Html), Format::named);
    trace.format = Some(format.ok_or(Refused::FormatInvalid)?);
    Ok((partner_id, requested, lang))
}

/// Exact rule, then the longest prefix rule, then the site default: the page's site (when it
/// is one of the organisation's) and the fragment resolved. `None` leaves the requested
/// `fragment_id` to serve.
pub fn resolve<'s, R: Recorder<'s>>(
    org: &'s OrgSnapshot,
    page: Option<&Page>,
    recorder: &mut R,
) -> (Option<&'s str>, Option<&'s Fragment>) {
    let Some(page) = page else {
        recorder.resolution(Resolution::NoPage);
        return (None, None);
    };
    let Some((domain, site)) = org.sites.get_key_value(page.host.as_str()) else {
        recorder.resolution(Resolution::NotASite);
        return (None, None);
    };
    let by_rule = page.path.as_deref().and_then(|path| site.rule_for(path));
    let fragment = match by_rule {
        Some(rule) => {
            recorder.resolution(Resolution::Rule {
                path: rule.path,
                exact: rule.exact,
                fragment: rule.fragment,
            });
            Some(rule.fragment)
        }
        None => {
            let default = site.default_fragment.as_ref();
            recorder.resolution(default.map_or(Resolution::Nothing, Resolution::SiteDefault));
            default
        }
    };
    (Some(domain.as_str()), fragment)
}

/// What the fragment serves: nothing while it is paused, else the pick's card, else nothing.
pub fn serve<'s, R: Recorder<'s>>(
    org: &'s OrgSnapshot,
    fragment: &'s Fragment,
    lang: Lang,
    page: Option<&Page>,
    params: &Params,
    recorder: &mut R,
) -> Outcome<'s> {
    if !fragment.active {
        return Outcome::NoFill(NoFill::FragmentPaused);
    }
    let requested = params.requested_fragment().unwrap_or("");
    match pick(org, fragment, lang, page, requested, params, recorder) {
        Some(card) => Outcome::Served(card),
        None => Outcome::NoFill(NoFill::NoEligibleCard),
    }
}

/// The pick, highest [`Score`] first; of equal scores (only a hash collision), the smaller
/// id. The tie-break hashes (card id, page or fragment, context), so the same page and
/// context get the same card on every instance (the card id enters through its own hash,
/// computed when the snapshot is built).
fn pick<'s, R: Recorder<'s>>(
    org: &'s OrgSnapshot,
    fragment: &'s Fragment,
    lang: Lang,
    page: Option<&Page>,
    requested: &str,
    params: &Params,
    recorder: &mut R,
) -> Option<&'s Arc<Card>> {
    let seed = context_seed(page, requested, params);
    // The card itself is read only for a brand or key-values it has (see `Candidate`).
    let score = |candidate: &Candidate| {
        let card = &candidate.card;
        let brand = candidate.has_brand
            && match (page, card.brand_domain.as_deref()) {
                (Some(page), Some(brand)) => parent_or_self_matches(brand, &page.host),
                _ => false,
            };
        let context = if candidate.has_key_values {
            params
                .ctx
                .iter()
                .filter(|(k, v)| card.key_values.contains(k, v))
                .count()
        } else {
            0
        };
        Score {
            brand,
            context,
            own: candidate.own,
            tie_break: xxh3_64_with_seed(&candidate.id_hash.to_le_bytes(), seed),
        }
    };
    let candidates = fragment
        .cards
        .iter()
        .chain(org.everywhere.get(&lang).into_iter().flatten());
    let mut best: Option<(Place<'s>, &'s Candidate)> = None;
    for candidate in candidates {
        if candidate.lang != lang {
            recorder.dropped_for_language(candidate);
            continue;
        }
        let score = score(candidate);
        recorder.kept(candidate, score);
        let key = (score, Reverse(&candidate.card.id));
        // `>=`: of equal keys the last, as `max_by_key` gives.
        if best.as_ref().is_none_or(|(best, _)| key >= *best) {
            best = Some((key, candidate));
        }
    }
    best.map(|(_, candidate)| &candidate.card)
}

/// A kept card's place in the pick: its score, then the smaller id.
type Place<'s> = (Score, Reverse<&'s Arc<str>>);

/// Hash of the canonical page (host and canonical path) or, without a page, the requested
/// fragment id; then the sorted context.
fn context_seed(page: Option<&Page>, requested: &str, params: &Params) -> u64 {
    let mut hasher = Xxh3::new();
    match page {
        Some(page) => {
            hasher.update(page.host.as_bytes());
            hasher.update(page.path.as_deref().unwrap_or("").as_bytes());
        }
        None => hasher.update(requested.as_bytes()),
    }
    for (key, value) in &params.ctx {
        hasher.update(b"\0");
        hasher.update(key.as_bytes());
        hasher.update(b"=");
        hasher.update(value.as_bytes());
    }
    hasher.digest()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain;

    #[test]
    fn each_no_fill_and_refusal_has_an_ending_of_its_outcome() {
        let no_fills = [
            NoFill::NoEligibleCard,
            NoFill::FragmentPaused,
            NoFill::ServingError,
        ];
        let refusals = [
            Refused::PartnerIdMissing,
            Refused::InvalidKey,
            Refused::PartnerNotTheKeys,
        ];
        let no_fills = no_fills.map(|n| Outcome::NoFill(n).ending());
        let refusals = refusals.map(|r| Outcome::Refused(Refusal(r)).ending());
        let mut endings = vec![Ending::Served];
        endings.extend(no_fills);
        endings.extend(refusals);
        assert_eq!(endings, Ending::ALL, "every ending once");
        assert!(no_fills
            .iter()
            .all(|e| e.outcome() == domain::Outcome::NoFill));
        assert!(refusals
            .iter()
            .all(|e| e.outcome() == domain::Outcome::Refused));
    }
}
