//! The immutable in-process snapshot `/fragment` reads: delivery keys by hash (revoked ones
//! too, to count their refusals under their organisation), and per
//! organisation its fragments, sites (rules and default) and eligible cards, rendered.
//!
//! Built from database rows (`crate::db::snapshot`), for all organisations or for one; an
//! update replaces one organisation's part and shares the rest.

use super::render::{render, CardContent, Rendered};
use crate::db::cards::CardRow;
use crate::db::snapshot::{Rows, Versions};
use crate::domain::path::prefixes_longest_first;
use crate::domain::{KeyValues, Lang};
use crate::ids::OrgId;
use compact_str::CompactString;
use hashbrown::{HashMap, HashSet};
use std::sync::Arc;
use xxhash_rust::xxh3::xxh3_64;

pub type KeyHash = [u8; 32];

#[derive(Debug)]
pub struct KeyEntry {
    pub key_id: Arc<str>,
    pub org_id: Arc<str>,
    /// `false`: revoked, refused (`401`) and counted under its organisation.
    pub live: bool,
}

/// An active card, ready to serve. Its language and owner are in its [`Candidate`]s.
#[derive(Debug)]
pub struct Card {
    pub id: Arc<str>,
    pub brand_domain: Option<Box<str>>,
    pub key_values: KeyValues,
    pub rendered: Rendered,
}

/// A card in a list the pick scans, with what the pick compares first copied into the list
/// itself: a card of another language, or the brand and key-values of a card that has none,
/// cost no read of the card (another cache line, often two, per card on every request).
#[derive(Debug, Clone)]
pub struct Candidate {
    pub card: Arc<Card>,
    pub lang: Lang,
    /// The organisation's own card (else a platform card).
    pub own: bool,
    pub has_brand: bool,
    pub has_key_values: bool,
    /// Hash of the card id, which the pick's tie-break hashes again with the request's seed.
    pub id_hash: u64,
}

/// Held by value wherever it is reached (by id, by rule, as a site default): a resolved
/// fragment is read from the rule table's own entry, where a shared `Arc<Fragment>` would cost
/// every request one more cache miss.
/// Clones share the id and the card list.
#[derive(Debug, Clone)]
pub struct Fragment {
    pub id: Arc<str>,
    pub active: bool,
    /// Active cards whose list names this fragment (own, and platform lists of this org).
    pub cards: Arc<[Candidate]>,
}

/// A site's rules and default hold their fragments themselves: resolving a page is one
/// lookup per candidate path, never a second lookup by fragment id.
#[derive(Debug, Default)]
pub struct Site {
    /// Canonical path → its exact and prefix rules, in one table: the page's own path is
    /// looked up once for both. Keys are `CompactString`s: a path of up to 24 bytes is stored
    /// in the table itself, so comparing it reads no other cache line.
    rules: HashMap<CompactString, PathRules>,
    /// Bit `n` is set when some prefix rule has `n` slashes (bit 63: 63 or more), so a page
    /// path is looked up only at the depths where a prefix rule can be: one lookup where
    /// walking up `/news/12/article/` took four.
    prefix_depths: u64,
    pub default_fragment: Option<Fragment>,
}

/// The rules of one canonical path: at most one of each match mode (a unique constraint).
#[derive(Debug, Default)]
struct PathRules {
    exact: Option<Fragment>,
    prefix: Option<Fragment>,
}

impl Site {
    fn add_rule(&mut self, path: &str, exact: bool, fragment: Fragment) {
        let rules = self.rules.entry(path.into()).or_default();
        if exact {
            rules.exact = Some(fragment);
        } else {
            rules.prefix = Some(fragment);
            self.prefix_depths |= depth_bit(slashes(path));
        }
    }

    /// The rule canonical `path` gets: the exact rule for it, else the longest prefix rule
    /// it starts with.
    pub fn rule_for<'p>(&self, path: &'p str) -> Option<RuleMatch<'_, 'p>> {
        let own = self.rules.get(path);
        if let Some(fragment) = own.and_then(|rules| rules.exact.as_ref()) {
            return Some(RuleMatch {
                path,
                exact: true,
                fragment,
            });
        }
        // Each prefix ends at a slash, so each has one slash fewer than the one before; the
        // first is `path` itself (canonical paths end with `/`), already looked up.
        let mut depth = slashes(path);
        prefixes_longest_first(path).find_map(|prefix| {
            let wanted = self.prefix_depths & depth_bit(depth) != 0;
            depth = depth.saturating_sub(1);
            if !wanted {
                return None;
            }
            let rules = if prefix.len() == path.len() {
                own
            } else {
                self.rules.get(prefix)
            };
            let fragment = rules.and_then(|rules| rules.prefix.as_ref())?;
            Some(RuleMatch {
                path: prefix,
                exact: false,
                fragment,
            })
        })
    }
}

/// The rule a page's path gets: its canonical path (the page's path or a prefix of it), its
/// match mode and its fragment.
#[derive(Debug, Clone, Copy)]
pub struct RuleMatch<'s, 'p> {
    pub path: &'p str,
    pub exact: bool,
    pub fragment: &'s Fragment,
}

fn slashes(path: &str) -> usize {
    path.bytes().filter(|&b| b == b'/').count()
}

fn depth_bit(slashes: usize) -> u64 {
    1 << slashes.min(63)
}

#[derive(Debug)]
pub struct OrgSnapshot {
    pub id: Arc<str>,
    /// By id: what `fragment_id` names.
    pub fragments: HashMap<Arc<str>, Fragment>,
    /// By domain.
    pub sites: HashMap<CompactString, Site>,
    /// The organisation's own active cards with an empty list (eligible everywhere in it), by
    /// language, so a request never scans the cards of other languages.
    pub everywhere: HashMap<Lang, Box<[Candidate]>>,
}

#[derive(Debug, Default)]
pub struct Snapshot {
    pub keys: Arc<HashMap<KeyHash, KeyEntry>>,
    pub orgs: HashMap<Box<str>, Arc<OrgSnapshot>>,
    pub org_versions: HashMap<Box<str>, i64>,
    pub platform_version: i64,
}

impl Snapshot {
    /// A snapshot of every organisation.
    pub fn build(rows: Rows, versions: &Versions) -> Snapshot {
        let keys = key_map(&rows, |_| true, &HashMap::new());
        Snapshot {
            keys: Arc::new(keys),
            orgs: build_orgs(rows),
            org_versions: versions
                .orgs
                .iter()
                .map(|(k, v)| (k.as_str().into(), *v))
                .collect(),
            platform_version: versions.platform,
        }
    }

    /// This snapshot with one organisation reloaded from `rows` (loaded for that org only).
    pub fn with_org(&self, org_id: &str, rows: Rows, versions: &Versions) -> Snapshot {
        let keep_other_orgs = |entry: &KeyEntry| &*entry.org_id != org_id;
        let keys = key_map(&rows, keep_other_orgs, &self.keys);
        let mut orgs = self.orgs.clone();
        orgs.remove(org_id);
        orgs.extend(build_orgs(rows));
        let mut org_versions = self.org_versions.clone();
        if let Some(version) = versions.orgs.get(org_id) {
            org_versions.insert(org_id.into(), *version);
        }
        Snapshot {
            keys: Arc::new(keys),
            orgs,
            org_versions,
            platform_version: self.platform_version,
        }
    }

    pub fn key(&self, hash: &KeyHash) -> Option<&KeyEntry> {
        self.keys.get(hash)
    }

    pub fn org(&self, id: &str) -> Option<&OrgSnapshot> {
        self.orgs.get(id).map(|org| &**org)
    }
}

/// Keys of `rows` plus the entries of `previous` that `keep` accepts.
fn key_map(
    rows: &Rows,
    keep: impl Fn(&KeyEntry) -> bool,
    previous: &HashMap<KeyHash, KeyEntry>,
) -> HashMap<KeyHash, KeyEntry> {
    let mut keys: HashMap<KeyHash, KeyEntry> = previous
        .iter()
        .filter(|(_, entry)| keep(entry))
        .map(|(hash, entry)| {
            let copy = KeyEntry {
                key_id: Arc::clone(&entry.key_id),
                org_id: Arc::clone(&entry.org_id),
                live: entry.live,
            };
            (*hash, copy)
        })
        .collect();
    let mut org_ids: HashMap<&str, Arc<str>> = HashMap::new();
    for row in &rows.keys {
        let Ok(hash) = KeyHash::try_from(row.hash.as_slice()) else {
            continue;
        };
        let org_id = org_ids
            .entry(row.org_id.as_str())
            .or_insert_with(|| row.org_id.as_str().into());
        keys.insert(
            hash,
            KeyEntry {
                key_id: row.id.as_str().into(),
                org_id: Arc::clone(org_id),
                live: !row.revoked,
            },
        );
    }
    keys
}

/// Builds the organisations present in `rows`.
fn build_orgs(rows: Rows) -> HashMap<Box<str>, Arc<OrgSnapshot>> {
    let cards: HashMap<&str, Candidate> = rows
        .cards
        .iter()
        .map(|row| (row.id.as_str(), candidate(row)))
        .collect();
    let card_orgs: HashMap<&str, Option<&str>> = rows
        .cards
        .iter()
        .map(|row| (row.id.as_str(), row.org_id.as_ref().map(OrgId::as_str)))
        .collect();

    let mut builders: HashMap<&str, OrgBuilder> = rows
        .org_ids
        .iter()
        .map(|id| (id.as_str(), OrgBuilder::default()))
        .collect();
    let mut site_owner: HashMap<i64, (&str, &str)> = HashMap::with_capacity(rows.sites.len());
    for site in &rows.sites {
        let Some(org) = builders.get_mut(site.org_id.as_str()) else {
            continue;
        };
        site_owner.insert(site.id, (site.org_id.as_str(), site.domain.as_str()));
        let entry = org.sites.entry(site.domain.as_str()).or_default();
        entry.default_fragment = site.default_fragment_id.as_deref();
    }
    let mut fragment_org: HashMap<&str, &str> = HashMap::with_capacity(rows.fragments.len());
    for fragment in &rows.fragments {
        let Some(&(org_id, _)) = site_owner.get(&fragment.site_id) else {
            continue;
        };
        fragment_org.insert(fragment.id.as_str(), org_id);
        if let Some(org) = builders.get_mut(org_id) {
            org.fragments
                .insert(fragment.id.as_str(), (fragment.active, Vec::new()));
        }
    }
    for route in &rows.routes {
        let Some(&(org_id, domain)) = site_owner.get(&route.site_id) else {
            continue;
        };
        let Some(site) = builders
            .get_mut(org_id)
            .and_then(|o| o.sites.get_mut(domain))
        else {
            continue;
        };
        site.rules
            .push((route.path.as_str(), route.exact, route.fragment_id.as_str()));
    }
    let mut listed_own_cards: HashSet<&str> = HashSet::new();
    for row in &rows.eligibility {
        let (Some(card), Some(&owner)) = (
            cards.get(row.card_id.as_str()),
            card_orgs.get(row.card_id.as_str()),
        ) else {
            continue;
        };
        // An own card's list belongs to its own organisation only.
        if owner.is_some_and(|o| o != row.org_id)
            || fragment_org.get(row.fragment_id.as_str()) != Some(&row.org_id.as_str())
        {
            continue;
        }
        if owner.is_some() {
            listed_own_cards.insert(row.card_id.as_str());
        }
        let fragment = builders
            .get_mut(row.org_id.as_str())
            .and_then(|o| o.fragments.get_mut(row.fragment_id.as_str()));
        if let Some((_, list)) = fragment {
            list.push(card.clone());
        }
    }
    for row in &rows.cards {
        let (Some(owner), Some(card)) = (&row.org_id, cards.get(row.id.as_str())) else {
            continue;
        };
        if !listed_own_cards.contains(row.id.as_str()) {
            if let Some(org) = builders.get_mut(owner.as_str()) {
                org.everywhere.push(card.clone());
            }
        }
    }
    builders
        .into_iter()
        .map(|(id, builder)| (id.into(), Arc::new(builder.finish(id))))
        .collect()
}

#[derive(Default)]
struct OrgBuilder<'r> {
    fragments: HashMap<&'r str, (bool, Vec<Candidate>)>,
    sites: HashMap<&'r str, SiteBuilder<'r>>,
    everywhere: Vec<Candidate>,
}

/// A site as its rows name things: fragments by id, resolved when the organisation is built.
#[derive(Default)]
struct SiteBuilder<'r> {
    default_fragment: Option<&'r str>,
    /// (canonical path, exact, fragment id).
    rules: Vec<(&'r str, bool, &'r str)>,
}

impl OrgBuilder<'_> {
    fn finish(self, id: &str) -> OrgSnapshot {
        // Most fragments have no card: they share one empty list instead of allocating each.
        let no_cards: Arc<[Candidate]> = Arc::new([]);
        let fragments: HashMap<Arc<str>, Fragment> = self
            .fragments
            .into_iter()
            .map(|(id, (active, cards))| {
                let id: Arc<str> = id.into();
                let cards = if cards.is_empty() {
                    Arc::clone(&no_cards)
                } else {
                    cards.into()
                };
                let fragment = Fragment {
                    id: Arc::clone(&id),
                    active,
                    cards,
                };
                (id, fragment)
            })
            .collect();
        let sites = self
            .sites
            .into_iter()
            .map(|(domain, site)| (domain.into(), site.finish(&fragments)))
            .collect();
        OrgSnapshot {
            id: id.into(),
            fragments,
            sites,
            everywhere: by_lang(self.everywhere),
        }
    }
}

impl SiteBuilder<'_> {
    /// The database's foreign keys make every target a fragment of the site, loaded in the
    /// same transaction; a target missing anyway is left out rather than served wrong.
    fn finish(self, fragments: &HashMap<Arc<str>, Fragment>) -> Site {
        let mut site = Site {
            default_fragment: self
                .default_fragment
                .and_then(|id| fragments.get(id).cloned()),
            ..Site::default()
        };
        for (path, exact, fragment_id) in self.rules {
            let Some(fragment) = fragments.get(fragment_id) else {
                continue;
            };
            site.add_rule(path, exact, fragment.clone());
        }
        site
    }
}

fn by_lang(cards: Vec<Candidate>) -> HashMap<Lang, Box<[Candidate]>> {
    let mut grouped: HashMap<Lang, Vec<Candidate>> = HashMap::new();
    for card in cards {
        grouped.entry(card.lang).or_default().push(card);
    }
    grouped
        .into_iter()
        .map(|(lang, cards)| (lang, cards.into()))
        .collect()
}

/// A card row ready to serve, as the pick lists it.
fn candidate(row: &CardRow) -> Candidate {
    let key_values = KeyValues::parse(&row.key_values).unwrap_or_else(|invalid| {
        log::warn!("card {} key_values ignored: {invalid}", row.id);
        KeyValues::default()
    });
    let rendered = render(&CardContent {
        id: row.id.as_str(),
        lang: row.lang.as_str(),
        brand: &row.brand,
        title: &row.title,
        body: &row.body,
        link_url: row.link_url.as_deref(),
        link_label: row.link_label.as_deref(),
    });
    let card = Card {
        id: row.id.as_str().into(),
        brand_domain: row
            .brand_domain
            .as_deref()
            .map(|d| d.to_ascii_lowercase().into()),
        key_values,
        rendered,
    };
    Candidate {
        lang: row.lang,
        own: row.org_id.is_some(),
        has_brand: card.brand_domain.is_some(),
        has_key_values: !card.key_values.is_empty(),
        id_hash: xxh3_64(card.id.as_bytes()),
        card: Arc::new(card),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fragment(id: &str) -> Fragment {
        Fragment {
            id: id.into(),
            active: true,
            cards: Arc::new([]),
        }
    }

    fn rule_for(site: &Site, path: &str) -> Option<String> {
        site.rule_for(path).map(|rule| rule.fragment.id.to_string())
    }

    #[test]
    fn the_exact_rule_then_the_longest_prefix_rule_at_every_depth_rules_have() {
        let mut site = Site::default();
        assert_eq!(rule_for(&site, "/news/"), None, "no rule at all");
        site.add_rule("/news/", false, fragment("news"));
        site.add_rule("/news/world/europe/", false, fragment("europe"));
        site.add_rule("/news/world/", true, fragment("world exact"));
        let deep = "/a/".repeat(70).replace("//", "/");
        site.add_rule(&deep, false, fragment("deep"));
        assert_eq!(rule_for(&site, "/news/"), Some("news".into()));
        assert_eq!(rule_for(&site, "/news/world/"), Some("world exact".into()));
        assert_eq!(rule_for(&site, "/news/world/asia/"), Some("news".into()));
        assert_eq!(
            rule_for(&site, "/news/world/europe/france/"),
            Some("europe".into())
        );
        assert_eq!(rule_for(&site, "/sport/world/europe/"), None);
        assert_eq!(rule_for(&site, "/"), None);
        assert_eq!(rule_for(&site, &format!("{deep}b/c/")), Some("deep".into()));
        let deeper_elsewhere = "/b/".repeat(70).replace("//", "/");
        assert_eq!(rule_for(&site, &deeper_elsewhere), None);
        site.add_rule("/news/", true, fragment("news exact"));
        assert_eq!(rule_for(&site, "/news/"), Some("news exact".into()));
        assert_eq!(rule_for(&site, "/news/today/"), Some("news".into()));
        site.add_rule("/", false, fragment("root"));
        assert_eq!(rule_for(&site, "/sport/world/europe/"), Some("root".into()));
        assert_eq!(rule_for(&site, "/"), Some("root".into()));
    }
}
