//! "Connect an edge" (`/sites/{domain}/connect`): what the edge sends for the site, a
//! delivery key made there (shown once, as on the keys' page) or the live ones named, the
//! abc.txt line, the recipes of `recipes/` filled in with these values (`crate::recipes`), to
//! copy or download, and the live check of the organisation's last requests
//! (`ops::reports::live`). The live check is its own fragment (`/connect/live`), which
//! `console.js` fetches again every few seconds while the page is open.

use super::answers;
use super::captures::RecipeFile;
use super::context::{Answer, PageContext};
use super::credentials::Credential;
use super::inputs::Input;
use super::layout::{Creating, Layout};
use super::refusal::PageRefusal;
use crate::abc_txt::{Record, Relationship};
use crate::domain::{DomainName, KeyName};
use crate::error::ApiError;
use crate::http::Response;
use crate::ops;
use crate::ops::reports::live::{self, Sample};
use crate::ops::site_map::SiteMap;
use crate::recipes::{Edge, Recipe, Values};
use askama::Template;

/// The requests the live check shows.
const SHOWN: usize = 10;

/// What the edge sends for the site.
pub struct Sent {
    pub partner_id: String,
    /// The site default's, and its language; `None` until the site has a default.
    pub default: Option<(String, &'static str)>,
}

pub struct FileView {
    pub file: &'static str,
    pub goes: &'static str,
    pub text: String,
}

pub struct EdgeView {
    pub title: &'static str,
    pub files: Vec<FileView>,
}

#[derive(Template)]
#[template(path = "console/connect.html")]
pub struct ConnectPage {
    pub layout: Layout,
    pub domain: String,
    pub sent: Sent,
    /// The service's base URL, when the configuration names it.
    pub service_url: Option<String>,
    /// The organisation's live delivery keys, as a sentence names each.
    pub keys: Vec<String>,
    pub key_name: Input,
    /// The key form's one-time value; the key just made, on the answer that made it only.
    pub creating: Creating,
    /// The line of the publisher's abc.txt, when the service's domain is configured.
    pub abc_line: Option<String>,
    /// A request to `/fragment` as the edge sends it, to try from a shell.
    pub curl: Option<String>,
    /// Without a default, `{{fragment_id}}` and `{{lang}}` left in them.
    pub edges: Vec<EdgeView>,
    pub live: Live,
}

/// One request of the live check.
pub struct LiveRow {
    pub at: String,
    pub agent: String,
    pub page: String,
    pub status: u16,
    /// Its reason's name, and for a refusal what to fix.
    pub reason: Option<(&'static str, &'static str)>,
}

/// The live check: the last requests, and whether one of them got a card.
#[derive(Template)]
#[template(path = "console/connect_live.html")]
pub struct Live {
    pub rows: Vec<LiveRow>,
    pub served: bool,
}

fn live(ctx: &mut PageContext) -> Result<Live, PageRefusal> {
    let samples = live::last_requests(ctx.db, &ctx.caller.org, SHOWN)?;
    let layout = ctx.layout();
    let rows: Vec<LiveRow> = samples.iter().map(|s| live_row(&layout, s)).collect();
    Ok(Live {
        served: rows.iter().any(|row| row.status == 200),
        rows,
    })
}

fn live_row(layout: &Layout, sample: &Sample) -> LiveRow {
    let at = jiff::Timestamp::try_from(sample.at).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let fix = |reason: crate::domain::Reason| (reason.refused).map_or("", |r| r.fix());
    LiveRow {
        at: layout.when(&at.to_string()),
        agent: sample.agent.clone(),
        page: sample.page.clone(),
        status: sample.status,
        reason: sample.reason.map(|reason| (reason.as_str(), fix(reason))),
    }
}

/// The site of the path, of this organisation (`404` otherwise).
fn site_map(ctx: &mut PageContext) -> Result<(DomainName, SiteMap), PageRefusal> {
    let domain: DomainName = ctx.captures.get()?;
    let map = ops::site_map::site_map(ctx.db, &ctx.caller, &domain)?;
    Ok((domain, map))
}

fn sent(ctx: &PageContext, map: &SiteMap) -> Sent {
    let default = map.site.default_fragment_id.as_ref().and_then(|id| {
        let fragment = map.fragments.iter().find(|f| f.row.id == *id)?;
        Some((id.to_string(), fragment.row.lang.as_str()))
    });
    Sent {
        partner_id: ctx.caller.org.id.to_string(),
        default,
    }
}

/// The recipes' values for the site (its default's `fragment_id` and `lang` once it has one).
fn values<'a>(
    domain: &'a str,
    sent: &'a Sent,
    service_url: Option<&'a str>,
    key: Option<&'a str>,
) -> Values<'a> {
    let default = sent.default.as_ref();
    Values {
        domain,
        partner_id: &sent.partner_id,
        fragment_id: default.map(|(fragment, _)| fragment.as_str()),
        lang: default.map(|(_, lang)| *lang),
        service_url,
        key,
    }
}

fn edges(values: &Values) -> Vec<EdgeView> {
    let file = |recipe: &Recipe| FileView {
        file: recipe.file,
        goes: recipe.goes,
        text: recipe.filled(values),
    };
    let edge = |edge: Edge| EdgeView {
        title: edge.title(),
        files: edge.files().map(file).collect(),
    };
    Edge::ALL.into_iter().map(edge).collect()
}

/// `curl` sending what the edge sends, the key as `$KEY`, once the site has a default.
fn curl(values: &Values) -> Option<String> {
    let service = values.service_url.unwrap_or("{{service_url}}");
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("partner_id", values.partner_id)
        .append_pair("fragment_id", values.fragment_id?)
        .append_pair("lang", values.lang?)
        .append_pair("page_url", &format!("https://{}/", values.domain))
        .finish();
    Some(format!(
        "curl -i -H \"X-API-Key: $KEY\" -H 'X-Agent-UA: Mozilla/5.0 (compatible; GPTBot/1.2)' \
         '{service}/fragment?{query}'"
    ))
}

/// The organisation's live delivery keys, each by its name and prefix.
fn live_keys(ctx: &mut PageContext) -> Result<Vec<String>, PageRefusal> {
    let keys = ops::keys::list_keys(ctx.db, &ctx.caller)?;
    let live = keys.iter().filter(|key| !key.is_revoked());
    Ok(live.map(Credential::label).collect())
}

fn key_input(domain: &DomainName) -> Input {
    Input::alone("name", "Name of the key")
        .hint("Say where it will be used: it is how the keys' page names it.")
        .value(format!("edge of {domain}"))
}

fn connect_page(
    ctx: &mut PageContext,
    domain: &DomainName,
    map: &SiteMap,
) -> Result<ConnectPage, PageRefusal> {
    let service_url = ctx.app.config.service_url();
    let abc_line = ctx.app.config.base_host.as_ref().map(|host| {
        let record = Record {
            domain: host.clone(),
            account_id: ctx.caller.org.id.to_string(),
            relationship: Relationship::Direct,
        };
        record.to_string()
    });
    Ok(ConnectPage {
        layout: ctx.layout(),
        domain: domain.to_string(),
        sent: sent(ctx, map),
        service_url,
        keys: live_keys(ctx)?,
        key_name: key_input(domain),
        creating: Creating::new(ctx.once()?),
        abc_line,
        curl: None,
        edges: Vec::new(),
        live: live(ctx)?,
    })
}

/// Fills the page's recipes and `curl` line, with `key` when one was just made.
fn filled(mut page: ConnectPage) -> ConnectPage {
    let key = page.creating.secret.clone();
    let values = values(
        &page.domain,
        &page.sent,
        page.service_url.as_deref(),
        key.as_deref(),
    );
    page.edges = edges(&values);
    page.curl = curl(&values);
    page
}

/// `GET /sites/{domain}/connect`.
pub fn page(ctx: &mut PageContext) -> Answer {
    let (domain, map) = site_map(ctx)?;
    let page = filled(connect_page(ctx, &domain, &map)?);
    Ok(answers::html(200, &page))
}

/// `POST /sites/{domain}/connect`: a new delivery key, shown this once with the recipes that
/// hold it; the same form sent again makes none (`409`).
pub fn make_key(ctx: &mut PageContext) -> Answer {
    let (domain, map) = site_map(ctx)?;
    let mut page = connect_page(ctx, &domain, &map)?;
    let Some(name) = page.key_name.parse(&ctx.form, KeyName::parse) else {
        return Ok(answers::html(422, &filled(page)));
    };
    let (caller, prefix) = (ctx.caller.clone(), ctx.app.config.prefix.clone());
    let made = ctx.made_once(|tx| {
        let created = ops::keys::create_key(tx, &caller, name.as_ref(), &prefix)?;
        Ok(created.secret)
    })?;
    let status = page.creating.made(made);
    page.keys = live_keys(ctx)?;
    Ok(answers::html(status, &filled(page)))
}

/// `GET /sites/{domain}/connect/live`: the live check alone, as the page shows it.
pub fn live_check(ctx: &mut PageContext) -> Answer {
    site_map(ctx)?;
    Ok(answers::html(200, &live(ctx)?))
}

/// `GET /sites/{domain}/connect/{recipe}`: one recipe's file filled in, as a download.
pub fn download(ctx: &mut PageContext) -> Answer {
    let (domain, map) = site_map(ctx)?;
    let RecipeFile(file) = ctx.captures.get()?;
    let recipe = Recipe::named(file).ok_or(ApiError::NotFound)?;
    let sent = sent(ctx, &map);
    let service_url = ctx.app.config.service_url();
    let domain = domain.to_string();
    let values = values(&domain, &sent, service_url.as_deref(), None);
    Ok(Response::new(200)
        .header("Content-Type", "text/plain; charset=utf-8")
        .header(
            "Content-Disposition",
            format!("attachment; filename=\"{}\"", recipe.file),
        )
        .body(recipe.filled(&values).into_bytes()))
}
