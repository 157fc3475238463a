//! `admin demo`: a demonstration organisation with everything the contract describes (a
//! token, two sites, fragments of which one paused, rules of both kinds, a default fragment,
//! cards in two languages including a platform card, eligibility and a delivery key), printed
//! with `curl` requests to paste, each after the answer it gets. Written in one transaction
//! through the data layer.

use super::{AdminError, Output};
use crate::auth::{self, SecretKind};
use crate::db::cards::{self, CardContent, Link};
use crate::db::fragments::{self, FragmentFields};
use crate::db::orgs::{self, Creator};
use crate::db::routes::{self, NewRoute};
use crate::db::{keys, sites};
use crate::domain::{
    CanonicalPath, CardStatus, CardText, DomainName, FragmentName, FragmentRef, FragmentStatus,
    KeyName, KeyValues, Lang, LinkUrl, MatchMode, OrgName, SiteName, TokenName,
};
use crate::ids::{CardId, FragmentId, OrgId};
use postgres::{Client, Transaction};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const NEWS_SITE: &str = "lequotidien.example";
const SPORT_SITE: &str = "sport.lequotidien.example";

/// Fragments to create: (site, ref, name, lang, active).
const FRAGMENTS: &[(&str, &str, &str, Lang, bool)] = &[
    (NEWS_SITE, "/home", "Home page", Lang::Fr, true),
    (NEWS_SITE, "/politique", "Politique", Lang::Fr, true),
    (
        NEWS_SITE,
        "/world",
        "World (English edition)",
        Lang::En,
        true,
    ),
    (NEWS_SITE, "/archives", "Archives", Lang::Fr, false),
    (SPORT_SITE, "/live", "Sport en direct", Lang::Fr, true),
];

/// Rules of the news site: (path, match, target ref).
const RULES: &[(&str, MatchMode, &str)] = &[
    ("/", MatchMode::Exact, "/home"),
    ("/politique/", MatchMode::Prefix, "/politique"),
    ("/world/", MatchMode::Prefix, "/world"),
    ("/archives/", MatchMode::Prefix, "/archives"),
];

/// How `admin demo` prints what it made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Shell lines to paste, each after a comment saying what it answers.
    Text,
    /// One object, as every admin command prints.
    Json,
}

/// Makes the demonstration organisation; prints it in `format` with requests to `base_url`.
pub fn run(
    db: &mut Client,
    service_prefix: &str,
    base_url: &str,
    format: Format,
) -> Result<Output, AdminError> {
    let mut tx = db.transaction()?;
    let org = orgs::create_org(&mut tx, &OrgName::parse("Le Quotidien (demo)")?)?;
    let token = auth::generate(SecretKind::ManagementToken, service_prefix);
    let token_name = TokenName::parse("demo")?;
    orgs::create_token(
        &mut tx,
        &org.id,
        &token_name,
        &token.hash,
        &token.prefix,
        Creator::Owner,
    )?;
    let key = auth::generate(SecretKind::DeliveryKey, service_prefix);
    let key_name = KeyName::parse("demo edge")?;
    keys::create_key(&mut tx, &org.id, key_name.as_ref(), &key.hash, &key.prefix)?;

    let fragment_ids = create_sites_and_fragments(&mut tx, &org.id)?;
    let card_ids = create_cards(&mut tx, &org.id, &fragment_ids)?;
    tx.commit()?;

    let made = Made {
        base: base_url,
        org_id: &org.id,
        token: &token.value,
        key: &key.value,
        home: &fragment_ids[&(NEWS_SITE, "/home")],
    };
    let examples = made.examples();
    Ok(match format {
        Format::Text => Output::Text(made.script(&org.name, &examples)),
        Format::Json => Output::Json(json!({
            "organisation": {"id": org.id, "name": org.name},
            "management_token": token.value,
            "delivery_key": key.value,
            "sites": [NEWS_SITE, SPORT_SITE],
            "fragments": fragment_ids.iter().map(|((site, r), id)| json!({"site": site, "ref": r, "id": id})).collect::<Vec<_>>(),
            "cards": card_ids,
            "try": examples.iter().map(|e| json!({"expect": e.expect, "command": e.command})).collect::<Vec<_>>(),
        })),
    })
}

type FragmentIds = BTreeMap<(&'static str, &'static str), FragmentId>;

fn create_sites_and_fragments(
    tx: &mut Transaction,
    org_id: &OrgId,
) -> Result<FragmentIds, AdminError> {
    let mut ids = FragmentIds::new();
    let mut site_ids = BTreeMap::new();
    for &(site, reference, name, lang, active) in FRAGMENTS {
        let site_id = match site_ids.get(site) {
            Some(&id) => id,
            None => {
                let (row, _) = sites::ensure_site(tx, org_id, &DomainName::parse(site)?)?;
                site_ids.insert(site, row.id);
                row.id
            }
        };
        let fields = FragmentFields {
            lang,
            status: if active {
                FragmentStatus::Active
            } else {
                FragmentStatus::Paused
            },
            ..FragmentFields::named(FragmentName::parse(name)?)
        };
        let row = fragments::insert_fragment(
            tx,
            site_id,
            Some(&FragmentRef::parse(reference)?),
            &fields,
        )?;
        ids.insert((site, reference), row.id);
    }
    let news = site_ids[NEWS_SITE];
    let paths: Vec<CanonicalPath> = RULES
        .iter()
        .map(|(path, _, _)| CanonicalPath::parse(path, "path_prefix"))
        .collect::<Result<_, _>>()?;
    let rules: Vec<NewRoute> = RULES
        .iter()
        .zip(&paths)
        .map(|((_, mode, target), path)| NewRoute {
            path,
            mode: *mode,
            fragment_id: &ids[&(NEWS_SITE, *target)],
        })
        .collect();
    routes::insert_routes(tx, news, &rules)?;
    let name = SiteName::parse("Le Quotidien")?;
    sites::update_site(tx, news, Some(&name), Some(&ids[&(NEWS_SITE, "/home")]))?;
    let name = SiteName::parse("Le Quotidien Sport")?;
    sites::update_site(
        tx,
        site_ids[SPORT_SITE],
        Some(&name),
        Some(&ids[&(SPORT_SITE, "/live")]),
    )?;
    Ok(ids)
}

fn create_cards(
    tx: &mut Transaction,
    org_id: &OrgId,
    fragments: &FragmentIds,
) -> Result<Value, AdminError> {
    let content = |brand_domain: Option<&str>,
                   lang,
                   brand: &str,
                   title: &str,
                   body: &str,
                   kv: &[(&str, &str)]|
     -> Result<CardContent, AdminError> {
        Ok(CardContent {
            name: CardText::parse(title, "name")?,
            lang,
            brand: CardText::parse(brand, "brand")?,
            brand_domain: brand_domain.map(DomainName::parse).transpose()?,
            title: CardText::parse(title, "title")?,
            body: CardText::parse_body(body)?,
            link: Some(Link {
                url: LinkUrl::parse(&format!("https://{NEWS_SITE}/licence"))?,
                label: CardText::parse("Licensing terms", "link_label")?,
            }),
            key_values: KeyValues::from_pairs(
                kv.iter().map(|(k, v)| (k.to_string(), v.to_string())),
            )?,
        })
    };
    let active = CardStatus::Active;
    let own = Some(org_id);
    // Without a brand domain, so that on the sport site the platform card can win by its
    // key-values (a brand match would outrank them): the demo shows both sides of the pick.
    let everywhere = cards::create_card(
        tx,
        own,
        active,
        &content(
            None,
            Lang::Fr,
            "Le Quotidien",
            "Contenu sous licence",
            "Ce contenu est publié par Le Quotidien. Réutilisation soumise à licence.",
            &[],
        )?,
    )?;
    let politics = cards::create_card(
        tx,
        own,
        active,
        &content(
            Some(NEWS_SITE),
            Lang::Fr,
            "Le Quotidien",
            "Politique : citez vos sources",
            "Les articles politiques du Quotidien peuvent être cités avec un lien.",
            &[("section", "politique")],
        )?,
    )?;
    let english = cards::create_card(
        tx,
        own,
        active,
        &content(
            Some(NEWS_SITE),
            Lang::En,
            "Le Quotidien",
            "Licensed content",
            "This article is published by Le Quotidien. Reuse requires a licence.",
            &[],
        )?,
    )?;
    let platform = cards::create_card(
        tx,
        None,
        active,
        &content(
            None,
            Lang::Fr,
            "Presse indépendante",
            "Soutenez la presse",
            "Un service de la plateforme pour les éditeurs indépendants.",
            &[("topic", "sport")],
        )?,
    )?;
    let lists: [(&CardId, (&str, &str)); 3] = [
        (&politics.id, (NEWS_SITE, "/politique")),
        (&english.id, (NEWS_SITE, "/world")),
        (&platform.id, (SPORT_SITE, "/live")),
    ];
    for (card, fragment) in lists {
        let on = std::slice::from_ref(&fragments[&fragment]);
        cards::replace_eligibility(tx, card, org_id, on)?;
    }
    Ok(json!([
        {"id": everywhere.id, "lang": "fr", "eligible": "everywhere in the organisation"},
        {"id": politics.id, "lang": "fr", "eligible": format!("{NEWS_SITE} /politique")},
        {"id": english.id, "lang": "en", "eligible": format!("{NEWS_SITE} /world")},
        {"id": platform.id, "lang": "fr", "platform": true, "eligible": format!("{SPORT_SITE} /live")},
    ]))
}

/// A request to paste and what it answers: `<status>, <what>`, every `"…"` quoted in `what`
/// being found in the answer's body.
struct Example {
    expect: String,
    command: String,
}

/// What the requests of the examples need of the data made.
struct Made<'a> {
    base: &'a str,
    org_id: &'a OrgId,
    token: &'a str,
    key: &'a str,
    home: &'a FragmentId,
}

impl Made<'_> {
    fn examples(&self) -> Vec<Example> {
        let example = |expect: &str, command: String| Example {
            expect: expect.to_string(),
            command,
        };
        vec![
            example(
                "200, your organisation \"Le Quotidien (demo)\" and this token",
                self.management("", "/v1/me"),
            ),
            example(
                "200, the two sites, \"lequotidien.example\" with its default \"/home\"",
                self.management("", "/v1/sites"),
            ),
            example(
                "200, the rules of lequotidien.example, \"/politique/\" among them",
                self.management("", &format!("/v1/sites/{NEWS_SITE}/routes")),
            ),
            example(
                "201, the new fragment \"/culture\" (200 when it exists already)",
                self.management(
                    r#"-X PUT -H 'Content-Type: application/json' -d '{"name": "Culture", "lang": "fr"}' "#,
                    &format!("/v1/sites/{NEWS_SITE}/fragments/%2Fculture"),
                ),
            ),
            example(
                "201, the new rule \"/culture/\" to that fragment (409 when it exists already)",
                self.management(
                    r#"-X POST -H 'Content-Type: application/json' -d '{"path_prefix": "/culture/", "match": "prefix", "ref": "/culture"}' "#,
                    &format!("/v1/sites/{NEWS_SITE}/routes"),
                ),
            ),
            example(
                "200, the cards the organisation sees, \"Soutenez la presse\" among them",
                self.management("", "/v1/cards"),
            ),
            example(
                "200, the delivery keys, \"demo edge\" among them",
                self.management("", "/v1/keys"),
            ),
            example(
                "200, the card \"Politique : citez vos sources\": the rule /politique/ picks \
                 the fragment /politique, where its key-values match ctx.section=politique",
                self.fragment(
                    "fr",
                    &format!("https://{NEWS_SITE}/politique/election-2027"),
                    "&ctx.section=politique",
                ),
            ),
            example(
                "200, the English card \"Licensed content\" as JSON (format=json)",
                self.fragment(
                    "en",
                    &format!("https://{NEWS_SITE}/world/europe"),
                    "&format=json",
                ),
            ),
            example(
                "200, the organisation's own card \"Contenu sous licence\": the sport site's \
                 default /live has the platform card too, and an organisation's own card wins",
                self.fragment("fr", &format!("https://{SPORT_SITE}/match-du-jour"), ""),
            ),
            example(
                "200, the platform card \"Soutenez la presse\": its key-values match \
                 ctx.topic=sport, which outranks own over platform",
                self.fragment(
                    "fr",
                    &format!("https://{SPORT_SITE}/match-du-jour"),
                    "&ctx.topic=sport",
                ),
            ),
            example(
                "204, no card: the fragment /archives is paused",
                self.fragment("fr", &format!("https://{NEWS_SITE}/archives/1999"), ""),
            ),
        ]
    }

    /// `curl` of the management API with this token; `options` end with a space.
    fn management(&self, options: &str, path: &str) -> String {
        let (base, token) = (self.base, self.token);
        format!("curl -si -w '\\n' {options}-H 'Authorization: Bearer {token}' '{base}{path}'")
    }

    /// `curl` of `/fragment` for `page`, with the home fragment as the one requested.
    fn fragment(&self, lang: &str, page: &str, extra: &str) -> String {
        let page: String = url::form_urlencoded::byte_serialize(page.as_bytes()).collect();
        let (base, org_id, home, key) = (self.base, self.org_id, self.home, self.key);
        format!(
            "curl -si -w '\\n' '{base}/fragment?partner_id={org_id}&fragment_id={home}&lang={lang}&page_url={page}{extra}' \
             -H 'X-API-Key: {key}' -H 'X-Agent-UA: GPTBot/1.1'"
        )
    }

    /// The examples as a shell script: what was made in comments, then each request after the
    /// answer it should get.
    fn script(&self, org_name: &str, examples: &[Example]) -> String {
        let mut out = format!(
            "# Demo data: organisation \"{org_name}\" ({org_id}), sites {NEWS_SITE} and {SPORT_SITE}.\n\
             # Management token (shown once): {token}\n\
             # Delivery key (shown once):     {key}\n\
             # Each line below is a request to paste; the comment above it says what it answers.\n",
            org_id = self.org_id,
            token = self.token,
            key = self.key,
        );
        for example in examples {
            out.push_str(&format!("\n# → {}\n{}\n", example.expect, example.command));
        }
        out
    }
}
