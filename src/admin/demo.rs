//! `admin demo`: a demonstration organisation with everything the contract describes (a
//! token, two sites, fragments of which one paused, rules of both kinds, a default fragment,
//! cards in two languages including a platform card, eligibility and a delivery key), printed
//! with `curl` requests to paste, each after the answer it gets. Written in one transaction
//! through the operations the console makes them with (the audit log names the CLI).

use super::Output;
use crate::config::ConsoleUrl;
use crate::db::cards::{CardContent, CardLink, CardRow};
use crate::db::orgs::Creator;
use crate::domain::Email;
use crate::domain::{
    CanonicalPath, CardStatus, CardText, Description, DomainName, FragmentName, FragmentRef,
    FragmentStatus, KeyName, KeyValues, Lang, LinkUrl, MatchMode, OrgName, SiteName, TokenName,
};
use crate::error::ApiError;
use crate::ids::{CardId, FragmentId, OrgId};
use crate::ops::fragments::FragmentWrite;
use crate::ops::routes::RouteWrite;
use crate::ops::sites::SiteWrite;
use crate::ops::{self, Actor, Caller, Scope};
use postgres::{Client, Transaction};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const NEWS_SITE: &str = "lequotidien.example";
const SPORT_SITE: &str = "sport.lequotidien.example";
/// The demonstration organisation's owner in the console.
const DEMO_OWNER: &str = "owner@lequotidien.example";

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
    console: Option<&ConsoleUrl>,
    format: Format,
) -> Result<Output, ApiError> {
    let mut tx = db.transaction()?;
    let name = OrgName::parse("Le Quotidien (demo)")?;
    let org = ops::orgs::create_org(&mut tx, &Actor::Cli, &name)?;
    let caller = ops::orgs::open(&mut tx, &org.id, Actor::Cli)?;
    let owner_link = demo_owner(&mut tx, &org.id, console)?;
    let token_name = TokenName::parse("demo")?;
    let token = ops::tokens::create_token(
        &mut tx,
        &caller,
        &token_name,
        Creator::Owner,
        service_prefix,
    )?;
    let key_name = KeyName::parse("demo edge")?;
    let key = ops::keys::create_key(&mut tx, &caller, key_name.as_ref(), service_prefix)?;

    let fragment_ids = create_sites_and_fragments(&mut tx, &caller)?;
    let card_ids = create_cards(&mut tx, &caller)?;
    tx.commit()?;

    let made = Made {
        base: base_url,
        org_id: &org.id,
        token: &token.secret,
        key: &key.secret,
        home: &fragment_ids[&(NEWS_SITE, "/home")],
    };
    let examples = made.examples();
    let console_json = console.map(
        |url| json!({"url": url.origin(), "owner": DEMO_OWNER, "set_password_link": owner_link}),
    );
    Ok(match format {
        Format::Text => Output::Text(format!(
            "{}{}",
            console_lines(console, owner_link.as_deref()),
            made.script(&org.name, &examples)
        )),
        Format::Json => Output::Json(json!({
            "console": console_json,
            "organisation": {"id": org.id, "name": org.name},
            "management_token": token.secret,
            "delivery_key": key.secret,
            "sites": [NEWS_SITE, SPORT_SITE],
            "fragments": fragment_ids.iter().map(|((site, r), id)| json!({"site": site, "ref": r, "id": id})).collect::<Vec<_>>(),
            "cards": card_ids,
            "try": examples.iter().map(|e| json!({"expect": e.expect, "command": e.command})).collect::<Vec<_>>(),
        })),
    })
}

/// The organisation's owner in the console, `DEMO_OWNER` (made once, an owner of every demo
/// organisation), and a link to set their password when the console's address is known.
fn demo_owner(
    tx: &mut Transaction,
    org_id: &OrgId,
    console: Option<&ConsoleUrl>,
) -> Result<Option<String>, ApiError> {
    let email = Email::parse(DEMO_OWNER)?;
    let person = ops::members::make_owner(tx, &Actor::Cli, org_id, &email)?;
    console
        .map(|url| ops::members::password_link(tx, &Actor::Cli, url, &person))
        .transpose()
}

/// The text form's lines about the console: where it is, and how the owner signs in.
fn console_lines(console: Option<&ConsoleUrl>, link: Option<&str>) -> String {
    match (console, link) {
        (Some(url), Some(link)) => format!(
            "# Console: {url}/ (the demo organisation's owner is {DEMO_OWNER}).\n\
             # Sign in: open this link once, within 7 days, to set the owner's password:\n\
             #   {link}\n",
            url = url.origin()
        ),
        _ => "# Console: not served (set AGENTCARD_CONSOLE_HOST to serve it).\n".into(),
    }
}

type FragmentIds = BTreeMap<(&'static str, &'static str), FragmentId>;

fn create_sites_and_fragments(
    tx: &mut Transaction,
    caller: &Caller,
) -> Result<FragmentIds, ApiError> {
    let sites = [
        (NEWS_SITE, "Le Quotidien", "/home"),
        (SPORT_SITE, "Le Quotidien Sport", "/live"),
    ];
    for (site, name, _) in sites {
        let write = SiteWrite {
            name: Some(SiteName::parse(name)?),
            default_fragment_ref: None,
        };
        ops::sites::put_site(tx, caller, &DomainName::parse(site)?, write)?;
    }
    let mut ids = FragmentIds::new();
    for &(site, reference, name, lang, active) in FRAGMENTS {
        let write = FragmentWrite {
            name: FragmentName::parse(name)?,
            lang,
            description: Description::parse("")?,
            key_values: KeyValues::default(),
            status: Some(if active {
                FragmentStatus::Active
            } else {
                FragmentStatus::Paused
            }),
        };
        let domain = DomainName::parse(site)?;
        let fragment_ref = FragmentRef::parse(reference)?;
        let put = ops::fragments::put_fragment(tx, caller, &domain, &fragment_ref, write)?;
        ids.insert((site, reference), put.fragment.record.id);
    }
    let rules = RULES
        .iter()
        .map(|&(path, mode, target)| {
            Ok(RouteWrite {
                path: CanonicalPath::parse(path, "path_prefix")?,
                mode,
                fragment_ref: FragmentRef::parse(target)?,
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    ops::routes::replace_routes(tx, caller, &DomainName::parse(NEWS_SITE)?, &rules)?;
    for (site, _, home) in sites {
        let (domain, home) = (DomainName::parse(site)?, FragmentRef::parse(home)?);
        ops::sites::put_default_fragment(tx, caller, &domain, &home)?;
    }
    Ok(ids)
}

fn create_cards(tx: &mut Transaction, caller: &Caller) -> Result<Value, ApiError> {
    let own = Scope::Org(caller);
    // Without a brand domain, so that on the sport site the platform card can win by its
    // key-values (a brand match would outrank them): the demo shows both sides of the pick.
    let everywhere = create_card(
        tx,
        own,
        None,
        Lang::Fr,
        ("Le Quotidien", "Contenu sous licence"),
        "Ce contenu est publié par Le Quotidien. Réutilisation soumise à licence.",
        &[],
    )?;
    let politics = create_card(
        tx,
        own,
        Some(NEWS_SITE),
        Lang::Fr,
        ("Le Quotidien", "Politique : citez vos sources"),
        "Les articles politiques du Quotidien peuvent être cités avec un lien.",
        &[("section", "politique")],
    )?;
    let english = create_card(
        tx,
        own,
        Some(NEWS_SITE),
        Lang::En,
        ("Le Quotidien", "Licensed content"),
        "This article is published by Le Quotidien. Reuse requires a licence.",
        &[],
    )?;
    let platform = create_card(
        tx,
        Scope::Operator(&Actor::Cli),
        None,
        Lang::Fr,
        ("Presse indépendante", "Soutenez la presse"),
        "Un service de la plateforme pour les éditeurs indépendants.",
        &[("topic", "sport")],
    )?;
    let lists: [(&CardId, (&str, &str)); 3] = [
        (&politics.id, (NEWS_SITE, "/politique")),
        (&english.id, (NEWS_SITE, "/world")),
        (&platform.id, (SPORT_SITE, "/live")),
    ];
    for (card, (site, reference)) in lists {
        let on = [(DomainName::parse(site)?, FragmentRef::parse(reference)?)];
        if card == &platform.id {
            ops::cards::set_platform_eligibility(tx, caller, card, &on)?;
        } else {
            ops::cards::replace_eligibility(tx, caller, card, &on)?;
        }
    }
    Ok(json!([
        {"id": everywhere.id, "lang": "fr", "eligible": "everywhere in the organisation"},
        {"id": politics.id, "lang": "fr", "eligible": format!("{NEWS_SITE} /politique")},
        {"id": english.id, "lang": "en", "eligible": format!("{NEWS_SITE} /world")},
        {"id": platform.id, "lang": "fr", "platform": true, "eligible": format!("{SPORT_SITE} /live")},
    ]))
}

/// An active card titled and named `title`, linking to the news site's licence.
fn create_card(
    tx: &mut Transaction,
    scope: Scope,
    brand_domain: Option<&str>,
    lang: Lang,
    (brand, title): (&str, &str),
    body: &str,
    kv: &[(&str, &str)],
) -> Result<CardRow, ApiError> {
    let content = CardContent {
        name: CardText::parse(title, "name")?,
        lang,
        brand: CardText::parse(brand, "brand")?,
        brand_domain: brand_domain.map(DomainName::parse).transpose()?,
        title: CardText::parse(title, "title")?,
        body: CardText::parse_body(body)?,
        link: Some(CardLink {
            url: LinkUrl::parse(&format!("https://{NEWS_SITE}/licence"))?,
            label: CardText::parse("Licensing terms", "link_label")?,
        }),
        key_values: KeyValues::from_pairs(kv.iter().map(|(k, v)| (k.to_string(), v.to_string())))?,
    };
    ops::cards::create_card(tx, scope, CardStatus::Active, &content)
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
