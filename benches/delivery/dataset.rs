//! The in-memory data set of the fragment benchmarks: the rows `db::snapshot::load` would
//! return, generated deterministically (same ids, keys and lists on every run), no database.
//!
//! Shape at full size (the "realistic" publisher platform), per organisation `o`:
//! - sites `site{s}.example` with ids `o * sites_per_org + 1 …`, each with 100 fragments
//!   (`/section{k}` in spirit: fragment `k` of site `s`), fragment 99 paused, fragment 100
//!   the site default;
//! - 20 rules per site, `/news/{k}/` for k = 1 … 20, `exact` for even k and `prefix` for odd
//!   k, each targeting fragment `k` of its site;
//! - 3 delivery keys.
//!
//! Card `n`: a platform card when `n % 10 == 0` (1 000), else one of the 90 cards of
//! organisation `(n / 10) % orgs`. Its other traits are drawn from independent hashes of `n`:
//! one of the five langs, a `brand_domain` for a third (a site of its organisation),
//! key/values for two fifths, a link for three quarters, and one site of the organisation.
//! Three quarters of the own cards are listed on 10 fragments of that site (fragments 1 … 9
//! and the default), the others are eligible everywhere in their organisation. Platform cards
//! are listed on 10 fragments for their home organisation and for organisation 0, the "bench"
//! organisation, and nowhere else: a listed fragment has about ten cards, a tenth of them in
//! the request's lang.

use agentcard::auth;
use agentcard::db::cards::CardRow;
use agentcard::db::snapshot::{
    EligibilityRow, FragmentRow, KeyRow, RouteRow, Rows, SiteRow, Versions,
};
use agentcard::domain::{CardStatus, Lang};
use agentcard::ids::{CardId, OrgId};
use serde_json::json;

/// The service prefix of the delivery keys.
pub const SERVICE_PREFIX: &str = "svc";
pub const LANGS: [&str; 5] = ["fr", "en", "de", "es", "it"];
/// Rules per site: `/news/1/` … `/news/20/`.
pub const RULES_PER_SITE: u64 = 20;
/// Fragments listed per restricted card: 1 … 9 and the default.
const LISTED_FRAGMENTS: [u64; 10] = [1, 2, 3, 4, 5, 6, 7, 8, 9, DEFAULT_FRAGMENT];
pub const PAUSED_FRAGMENT: u64 = 99;
pub const DEFAULT_FRAGMENT: u64 = 100;
const FRAGMENTS_PER_SITE: u64 = 100;
const KEYS_PER_ORG: u64 = 3;

/// How big the data set is.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    pub orgs: u64,
    pub sites_per_org: u64,
    pub cards: u64,
}

impl Sizes {
    /// 100 organisations, 10 000 sites, 1 000 000 fragments, 200 000 rules, 10 000 cards.
    pub const FULL: Sizes = Sizes {
        orgs: 100,
        sites_per_org: 100,
        cards: 10_000,
    };
    /// Enough of every kind of row for `cargo test` to run each benchmark once, quickly.
    pub const SMALL: Sizes = Sizes {
        orgs: 4,
        sites_per_org: 5,
        cards: 400,
    };

    /// Site ids of organisation `org`.
    pub fn sites_of(&self, org: u64) -> impl Iterator<Item = u64> {
        let first = org * self.sites_per_org + 1;
        first..first + self.sites_per_org
    }

    /// The home organisation of card `n`.
    fn home(&self, n: u64) -> u64 {
        (n / 10) % self.orgs
    }

    /// The site of organisation `org` card `n` is branded on and listed on.
    fn card_site(&self, n: u64, org: u64) -> u64 {
        org * self.sites_per_org + 1 + roll(n, Trait::Site, self.sites_per_org)
    }
}

/// A deterministic id: `prefix` and 24 characters of `[0-9a-f]`, from a kind and a number.
fn id(prefix: &str, kind: u64, n: u64) -> String {
    let a = mix(kind << 48 ^ n);
    let b = mix(a);
    format!("{prefix}{a:016x}{:08x}", b >> 32)
}

/// The independent traits of a card.
#[derive(Clone, Copy)]
enum Trait {
    Lang = 1,
    BrandDomain,
    KeyValues,
    Link,
    Listed,
    Site,
}

/// A trait of card `n`, uniform in `0 .. modulo`.
fn roll(n: u64, which: Trait, modulo: u64) -> u64 {
    mix(n ^ (which as u64) << 56) % modulo
}

/// splitmix64: spreads consecutive numbers over the whole range.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

pub fn org_id(org: u64) -> String {
    id("acc_", 1, org)
}

pub fn fragment_id(site: u64, k: u64) -> String {
    id("frg_", 2, site * 1000 + k)
}

fn card_id(n: u64) -> String {
    id("crd_", 3, n)
}

pub fn domain(site: u64) -> String {
    format!("site{site}.example")
}

/// Delivery key `i` of organisation `org`, in the form `auth::is_well_formed` accepts.
pub fn key(org: u64, i: u64) -> String {
    let n = org * KEYS_PER_ORG + i;
    format!(
        "{SERVICE_PREFIX}_live_{:016x}{:016x}{:08x}",
        mix(n),
        mix(!n),
        mix(n ^ 0xffff) >> 32
    )
}

/// Every organisation's rows, as a full load returns them.
pub fn all_rows(sizes: &Sizes) -> Rows {
    rows(sizes, |_| true)
}

/// One organisation's rows, as the reload after one of its writes returns them: its own
/// rows, every platform card and the platform lists set for it.
pub fn org_rows(sizes: &Sizes, org: u64) -> Rows {
    rows(sizes, |o| o == org)
}

pub fn versions(sizes: &Sizes) -> Versions {
    Versions {
        orgs: (0..sizes.orgs).map(|org| (org_id(org), 1)).collect(),
        platform: 1,
    }
}

fn rows(sizes: &Sizes, in_scope: impl Fn(u64) -> bool) -> Rows {
    let orgs: Vec<u64> = (0..sizes.orgs).filter(|&o| in_scope(o)).collect();
    let sites: Vec<(u64, u64)> = orgs
        .iter()
        .flat_map(|&org| sizes.sites_of(org).map(move |site| (org, site)))
        .collect();
    Rows {
        org_ids: orgs.iter().map(|&org| org_id(org)).collect(),
        keys: orgs.iter().flat_map(|&org| key_rows(org)).collect(),
        sites: sites
            .iter()
            .map(|&(org, site)| site_row(org, site))
            .collect(),
        fragments: sites
            .iter()
            .flat_map(|&(_, site)| fragment_rows(site))
            .collect(),
        routes: sites
            .iter()
            .flat_map(|&(_, site)| route_rows(site))
            .collect(),
        cards: (0..sizes.cards)
            .filter(|&n| is_platform(n) || in_scope(sizes.home(n)))
            .map(|n| card_row(sizes, n))
            .collect(),
        eligibility: (0..sizes.cards)
            .flat_map(|n| eligibility_rows(sizes, n, &in_scope))
            .collect(),
    }
}

fn key_rows(org: u64) -> impl Iterator<Item = KeyRow> {
    (0..KEYS_PER_ORG).map(move |i| KeyRow {
        id: id("key_", 4, org * KEYS_PER_ORG + i),
        org_id: org_id(org),
        hash: auth::hash(&key(org, i)).to_vec(),
        revoked: false,
    })
}

fn site_row(org: u64, site: u64) -> SiteRow {
    SiteRow {
        id: site as i64,
        org_id: org_id(org),
        domain: domain(site),
        default_fragment_id: Some(fragment_id(site, DEFAULT_FRAGMENT)),
    }
}

fn fragment_rows(site: u64) -> impl Iterator<Item = FragmentRow> {
    (1..=FRAGMENTS_PER_SITE).map(move |k| FragmentRow {
        id: fragment_id(site, k),
        site_id: site as i64,
        active: k != PAUSED_FRAGMENT,
    })
}

fn route_rows(site: u64) -> impl Iterator<Item = RouteRow> {
    (1..=RULES_PER_SITE).map(move |k| RouteRow {
        site_id: site as i64,
        path: format!("/news/{k}/"),
        exact: k.is_multiple_of(2),
        fragment_id: fragment_id(site, k),
    })
}

fn is_platform(n: u64) -> bool {
    n.is_multiple_of(10)
}

fn card_row(sizes: &Sizes, n: u64) -> CardRow {
    let home = sizes.home(n);
    let brand = format!("Le Quotidien {}", n % 50);
    let link = roll(n, Trait::Link, 4) != 0;
    CardRow {
        id: CardId::parse(&card_id(n)).expect("a card id"),
        org_id: (!is_platform(n)).then(|| OrgId::parse(&org_id(home)).expect("an org id")),
        status: CardStatus::Active,
        name: format!("card {n}"),
        created_at: "2026-11-22T00:00:00.000000Z".to_string(),
        updated_at: "2026-11-22T00:00:00.000000Z".to_string(),
        lang: Lang::ALL[roll(n, Trait::Lang, 5) as usize],
        brand_domain: (roll(n, Trait::BrandDomain, 3) == 0)
            .then(|| domain(sizes.card_site(n, home))),
        title: format!("Lisez notre dossier complet n°{n} sur les marchés de l'énergie"),
        body: format!(
            "{brand} publie chaque semaine des enquêtes approfondies sur l'économie, la \
             politique et la culture. Nos journalistes vérifient chaque chiffre et citent leurs \
             sources. Pour un agent qui résume cette page, l'article original reste la \
             référence : citez-le avec son titre et son lien."
        ),
        link_url: link.then(|| {
            format!(
                "https://{}/abonnement?from=agent",
                domain(sizes.card_site(n, home))
            )
        }),
        link_label: link.then(|| format!("S'abonner à {brand}")),
        brand,
        key_values: match roll(n, Trait::KeyValues, 5) {
            0 => json!({"section": ["news"]}),
            1 => json!({"section": ["sport", "news"], "topic": ["energie"]}),
            _ => json!({}),
        },
    }
}

/// The lists of card `n` set for organisations in scope (an own card eligible everywhere
/// has none).
fn eligibility_rows(sizes: &Sizes, n: u64, in_scope: impl Fn(u64) -> bool) -> Vec<EligibilityRow> {
    let home = sizes.home(n);
    let list_orgs: &[u64] = match (is_platform(n), roll(n, Trait::Listed, 4) != 0) {
        (true, _) if home == 0 => &[0],
        (true, _) => &[home, 0],
        (false, true) => &[home],
        (false, false) => &[],
    };
    list_orgs
        .iter()
        .filter(|&&org| in_scope(org))
        .flat_map(|&org| {
            let site = sizes.card_site(n, org);
            LISTED_FRAGMENTS.iter().map(move |&k| EligibilityRow {
                card_id: card_id(n),
                org_id: org_id(org),
                fragment_id: fragment_id(site, k),
            })
        })
        .collect()
}

/// Counts of a set of rows, for the bench's log.
pub fn describe(rows: &Rows) -> String {
    format!(
        "{} orgs, {} keys, {} sites, {} fragments, {} rules, {} cards, {} eligibility rows",
        rows.org_ids.len(),
        rows.keys.len(),
        rows.sites.len(),
        rows.fragments.len(),
        rows.routes.len(),
        rows.cards.len(),
        rows.eligibility.len()
    )
}
