//! The diagnosis against `/fragment`'s own decision, on generated snapshots and requests:
//! sites with exact and prefix rules and defaults, active and paused fragments, own and
//! platform cards of every status and several languages, eligibility lists (empty or not),
//! brand domains and key-values; pages on those sites and elsewhere, `ctx` values, formats.
//! For each: the card the diagnosis serves is `decide`'s, its answer is byte for byte the
//! one `endpoint::respond` makes of `decide`'s decision, and the first of the kept cards in
//! its order is the card served.

use super::*;
use crate::auth;
use crate::db::cards::CardRow;
use crate::db::snapshot::{EligibilityRow, FragmentRow, KeyRow, RouteRow, Rows, SiteRow, Versions};
use crate::delivery::select::decide;
use crate::delivery::snapshot::Snapshot;
use crate::domain::CardStatus;
use crate::ids::{CardId, OrgId};
use proptest::prelude::*;
use serde_json::json;
use std::collections::{HashMap, HashSet};
use url::form_urlencoded;

const PREFIX: &str = "svc";
const KEY: &str = "svc_live_0123456789abcdef0123456789abcdef01234567";
const ORG: &str = "acc_000000000000000000000001";
const DOMAINS: [&str; 3] = ["a.example", "news.a.example", "b.test"];
const PATHS: [&str; 6] = [
    "/",
    "/news/",
    "/news/world/",
    "/sport/",
    "/a/b/",
    "/news/world/x/",
];
const LANGS: [Lang; 3] = [Lang::Fr, Lang::En, Lang::De];
const BRANDS: [&str; 3] = ["a.example", "example", "b.test"];
const TOPICS: [&str; 3] = ["sport", "politique", "meteo"];

#[derive(Debug, Clone)]
struct SiteSpec {
    fragments: Vec<bool>,
    /// (path, exact, fragment index).
    rules: Vec<(usize, bool, usize)>,
    default: Option<usize>,
}

#[derive(Debug, Clone)]
struct CardSpec {
    own: bool,
    status: usize,
    lang: usize,
    brand: Option<usize>,
    topics: Vec<usize>,
    /// (site, fragment) indices, reduced to the sites and fragments there are.
    eligible: Vec<(usize, usize)>,
}

#[derive(Debug, Clone)]
struct RequestSpec {
    host: usize,
    path: String,
    lang: usize,
    ctx: Vec<usize>,
    fragment: (usize, usize),
    format: usize,
}

fn site_spec() -> impl Strategy<Value = SiteSpec> {
    (
        prop::collection::vec(any::<bool>(), 1..5),
        prop::collection::vec((0..PATHS.len(), any::<bool>(), 0..5usize), 0..5),
        prop::option::of(0..5usize),
    )
        .prop_map(|(fragments, rules, default)| SiteSpec {
            rules: rules
                .into_iter()
                .map(|(p, e, f)| (p, e, f % fragments.len()))
                .collect(),
            default: default.map(|d| d % fragments.len()),
            fragments,
        })
}

fn card_spec() -> impl Strategy<Value = CardSpec> {
    (
        any::<bool>(),
        0..3usize,
        0..LANGS.len(),
        prop::option::of(0..BRANDS.len()),
        prop::collection::vec(0..TOPICS.len(), 0..3),
        prop::collection::vec((0..3usize, 0..5usize), 0..3),
    )
        .prop_map(|(own, status, lang, brand, topics, eligible)| CardSpec {
            own,
            status,
            lang,
            brand,
            topics,
            eligible,
        })
}

fn request_spec() -> impl Strategy<Value = RequestSpec> {
    let path = prop_oneof![
        (0..PATHS.len()).prop_map(|p| PATHS[p].to_string()),
        (0..PATHS.len()).prop_map(|p| format!("{}page?q=1", PATHS[p])),
        Just("/News/World/".to_string()),
        Just("//x/../news/".to_string()),
        Just("".to_string()),
    ];
    (
        0..DOMAINS.len() + 1,
        path,
        0..LANGS.len(),
        prop::collection::vec(0..TOPICS.len() + 1, 0..3),
        (0..3usize, 0..5usize),
        0..3usize,
    )
        .prop_map(|(host, path, lang, ctx, fragment, format)| RequestSpec {
            host,
            path,
            lang,
            ctx,
            fragment,
            format,
        })
}

fn fragment_id(site: usize, fragment: usize) -> String {
    format!("frg_{:024x}", site * 16 + fragment + 1)
}

/// The rows the database would give for these specs (active cards only, as it loads them).
fn rows(sites: &[SiteSpec], cards: &[CardSpec]) -> Rows {
    let mut rows = Rows {
        org_ids: vec![ORG.into()],
        keys: vec![KeyRow {
            id: "key_000000000000000000000001".into(),
            org_id: ORG.into(),
            hash: auth::hash(KEY).to_vec(),
            revoked: false,
        }],
        sites: Vec::new(),
        fragments: Vec::new(),
        routes: Vec::new(),
        cards: Vec::new(),
        eligibility: Vec::new(),
    };
    for (s, site) in sites.iter().enumerate() {
        rows.sites.push(SiteRow {
            id: s as i64,
            org_id: ORG.into(),
            domain: DOMAINS[s].into(),
            default_fragment_id: site.default.map(|f| fragment_id(s, f)),
        });
        for (f, &active) in site.fragments.iter().enumerate() {
            rows.fragments.push(FragmentRow {
                id: fragment_id(s, f),
                site_id: s as i64,
                active,
            });
        }
        let mut unique = HashSet::new();
        for &(path, exact, f) in &site.rules {
            if unique.insert((path, exact)) {
                rows.routes.push(RouteRow {
                    site_id: s as i64,
                    path: PATHS[path].into(),
                    exact,
                    fragment_id: fragment_id(s, f),
                });
            }
        }
    }
    for (n, card) in cards.iter().enumerate() {
        let status = [CardStatus::Active, CardStatus::Draft, CardStatus::Archived][card.status];
        if status != CardStatus::Active {
            continue;
        }
        let id = format!("crd_{:024x}", n + 1);
        let topics: Vec<&str> = card.topics.iter().map(|&t| TOPICS[t]).collect();
        let key_values = if topics.is_empty() {
            json!({})
        } else {
            json!({ "topic": topics })
        };
        rows.cards.push(CardRow {
            id: CardId::parse(&id).expect("a card id"),
            org_id: card.own.then(|| OrgId::parse(ORG).expect("an org id")),
            status,
            name: format!("card {n}"),
            lang: LANGS[card.lang],
            brand: "Brand".into(),
            brand_domain: card.brand.map(|b| BRANDS[b].to_string()),
            title: format!("Title {n}"),
            body: "Body".into(),
            link_url: None,
            link_label: None,
            key_values,
            created_at: String::new(),
            updated_at: String::new(),
        });
        let mut listed = HashSet::new();
        for &(s, f) in &card.eligible {
            let Some(site) = sites.get(s) else { continue };
            let fragment = fragment_id(s, f % site.fragments.len());
            if listed.insert(fragment.clone()) {
                rows.eligibility.push(EligibilityRow {
                    card_id: id.clone(),
                    org_id: ORG.into(),
                    fragment_id: fragment,
                });
            }
        }
    }
    rows
}

fn query(request: &RequestSpec, sites: &[SiteSpec]) -> String {
    let host = DOMAINS
        .get(request.host)
        .copied()
        .unwrap_or("elsewhere.test");
    let (s, f) = request.fragment;
    let s = s % sites.len();
    let fragment = fragment_id(s, f % sites[s].fragments.len());
    let mut query = form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("partner_id", ORG)
        .append_pair("fragment_id", &fragment)
        .append_pair("lang", LANGS[request.lang].as_str())
        .append_pair("api_key", KEY)
        .append_pair("format", ["html", "json", "both"][request.format])
        .append_pair("page_url", &format!("https://{host}{}", request.path));
    for &t in &request.ctx {
        query.append_pair("ctx.topic", TOPICS.get(t).copied().unwrap_or(" "));
    }
    query.finish()
}

fn check(sites: &[SiteSpec], cards: &[CardSpec], request: &RequestSpec) {
    let versions = Versions {
        orgs: HashMap::new(),
        platform: 0,
    };
    let snapshot = Snapshot::build(rows(sites, cards), &versions);
    let query = query(request, sites);
    let params = Params::parse(&query);
    let decision = decide(Some(&snapshot), &params, None, PREFIX);
    let org = snapshot.org(ORG).expect("the organisation");
    let diagnosis = diagnose(org, &params, Some("Mozilla/5.0 (compatible; GPTBot/1.2)"))
        .expect("a question /fragment answers");
    let served = |outcome: &Outcome| match outcome {
        Outcome::Served(card) => Some(card.id.to_string()),
        _ => None,
    };
    assert_eq!(
        diagnosis.served.map(|card| card.id.to_string()),
        served(&decision.outcome),
        "{query}"
    );
    assert_eq!(diagnosis.ending, Some(decision.outcome.ending()), "{query}");
    let answer = diagnosis.answer.expect("an answer: fragment_id is given");
    let expected = respond(&decision);
    assert_eq!(answer.status, expected.status, "{query}");
    assert_eq!(answer.headers, expected.headers, "{query}");
    assert_eq!(answer.body, expected.body, "{query}");
    assert_eq!(
        diagnosis.fragment.map(|f| f.id.to_string()),
        decision.trace.resolved_fragment.map(str::to_string),
        "{query}"
    );
    let first = diagnosis
        .considered
        .iter()
        .find(|c| matches!(c.verdict, Verdict::Kept { rank: 0, .. }));
    assert_eq!(
        first.map(|c| c.candidate.card.id.to_string()),
        served(&decision.outcome),
        "{query}"
    );
    assert_eq!(
        diagnosis
            .agent
            .map(|(marker, purpose)| (marker.map(|m| m.name), purpose)),
        Some((Some("GPTBot"), Purpose::Training))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn the_diagnosis_serves_what_fragment_serves(
        sites in prop::collection::vec(site_spec(), 1..=DOMAINS.len()),
        cards in prop::collection::vec(card_spec(), 0..7),
        requests in prop::collection::vec(request_spec(), 1..4),
    ) {
        for request in &requests {
            check(&sites, &cards, request);
        }
    }
}

#[test]
fn a_page_url_fragment_would_not_resolve_is_refused_on_its_field() {
    let refused = |url: &str| page(Some(url)).err().map(|r| r.field);
    assert_eq!(refused("https://a.example/x/"), None);
    assert_eq!(refused("ftp://a.example/x/"), Some("page_url"));
    assert_eq!(refused("a.example/x/"), Some("page_url"));
    assert_eq!(refused("https://"), Some("page_url"));
    let long = format!("https://a.example/{}", "a".repeat(PAGE_URL_MAX));
    assert_eq!(refused(&long), Some("page_url"));
    let just = format!("https://a.example/{}", "a".repeat(PAGE_URL_MAX - 18));
    assert_eq!(just.len(), PAGE_URL_MAX);
    assert_eq!(refused(&just), None);
    assert_eq!(page(None).err().map(|r| r.field), Some("page_url"));
}
