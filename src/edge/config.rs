//! `agentcard edge`'s configuration: each setting a flag and an environment variable, except
//! the delivery key, read from the environment only (a flag would show it in process lists).
//! Everything is checked before the listener opens, and a refusal names the variable, or the
//! file and its line.

use super::upstream::BaseUrl;
use crate::domain::{DomainName, Lang};
use hashbrown::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const KEY_VAR: &str = "AGENTCARD_EDGE_KEY";

#[derive(Debug, Clone, clap::Args)]
pub struct EdgeArgs {
    /// Address to listen on [default: 127.0.0.1:8090].
    #[arg(long, env = "AGENTCARD_EDGE_LISTEN")]
    pub listen: Option<String>,
    /// The origin's base URL (`http://host:port`); requests keep their own `Host`.
    #[arg(long, env = "AGENTCARD_EDGE_ORIGIN")]
    pub origin: Option<String>,
    /// agentcard's base URL; cards come from its `/fragment`.
    #[arg(long, env = "AGENTCARD_EDGE_SERVICE")]
    pub service: Option<String>,
    /// The sites file (TOML, `[[site]]` tables).
    #[arg(long, env = "AGENTCARD_EDGE_SITES")]
    pub sites: Option<PathBuf>,
    /// Milliseconds a card may take, from the moment the request's head arrived [default: 800].
    #[arg(long, env = "AGENTCARD_EDGE_BUDGET_MS")]
    pub budget_ms: Option<String>,
    /// A file served at `/abc.txt`, checked at start.
    #[arg(long, env = "AGENTCARD_EDGE_ABC_TXT")]
    pub abc_txt: Option<PathBuf>,
    /// PEM certificates trusted besides the system's.
    #[arg(long, env = "AGENTCARD_EDGE_CA_FILE")]
    pub ca_file: Option<PathBuf>,
    /// Address of the operator metrics listener (`GET /metrics`) [default: none, off].
    #[arg(long, env = "AGENTCARD_EDGE_METRICS_LISTEN")]
    pub metrics_listen: Option<String>,
}

/// One publisher site of the sites file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub partner_id: String,
    pub fragment_id: String,
    pub lang: Lang,
    /// Scheme of `page_url`: `https` unless the file says `http`.
    pub scheme: &'static str,
}

#[derive(Debug, Clone)]
pub struct EdgeConfig {
    pub listen: SocketAddr,
    pub origin: BaseUrl,
    pub service: BaseUrl,
    pub key: String,
    /// By domain (lowercase, no port).
    pub sites: HashMap<String, Site>,
    pub budget: Duration,
    pub abc_txt: Option<Vec<u8>>,
    pub ca_file: Option<PathBuf>,
    pub metrics_listen: Option<SocketAddr>,
}

/// Why the edge cannot start: the variable (or file) at fault, and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{place}: {message}")]
pub struct EdgeConfigError {
    pub place: String,
    pub message: String,
}

fn refuse(place: &str, message: impl Into<String>) -> EdgeConfigError {
    EdgeConfigError {
        place: place.to_string(),
        message: message.into(),
    }
}

impl EdgeConfig {
    /// Reads the flags (or their variables) and the key from `key`.
    pub fn from_args(args: EdgeArgs, key: Option<String>) -> Result<EdgeConfig, EdgeConfigError> {
        let listen = args.listen.as_deref().unwrap_or("127.0.0.1:8090");
        let budget = args.budget_ms.as_deref().unwrap_or("800");
        let sites_path = args
            .sites
            .ok_or_else(|| refuse("AGENTCARD_EDGE_SITES", "required (the sites file)"))?;
        Ok(EdgeConfig {
            listen: address("AGENTCARD_EDGE_LISTEN", listen)?,
            origin: base_url("AGENTCARD_EDGE_ORIGIN", args.origin)?,
            service: base_url("AGENTCARD_EDGE_SERVICE", args.service)?,
            key: key
                .filter(|key| !key.trim().is_empty())
                .ok_or_else(|| refuse(KEY_VAR, "required (the delivery key, svc_live_…)"))?,
            sites: read_sites(&sites_path)?,
            budget: budget
                .parse::<u64>()
                .ok()
                .filter(|&ms| (1..=60_000).contains(&ms))
                .map(Duration::from_millis)
                .ok_or_else(|| {
                    refuse("AGENTCARD_EDGE_BUDGET_MS", "milliseconds from 1 to 60000")
                })?,
            abc_txt: args.abc_txt.map(|path| read_abc_txt(&path)).transpose()?,
            ca_file: args.ca_file,
            metrics_listen: args
                .metrics_listen
                .map(|value| address("AGENTCARD_EDGE_METRICS_LISTEN", &value))
                .transpose()?,
        })
    }
}

fn address(var: &str, value: &str) -> Result<SocketAddr, EdgeConfigError> {
    value
        .parse()
        .map_err(|_| refuse(var, format!("`{value}` is not an address:port")))
}

fn base_url(var: &str, value: Option<String>) -> Result<BaseUrl, EdgeConfigError> {
    let value = value.ok_or_else(|| refuse(var, "required (a base URL, http://host:port)"))?;
    BaseUrl::parse(&value).map_err(|message| refuse(var, message))
}

fn read_abc_txt(path: &Path) -> Result<Vec<u8>, EdgeConfigError> {
    let place = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| refuse(&place, e.to_string()))?;
    match crate::abc_txt::parse(&bytes) {
        Ok(_) => Ok(bytes),
        Err(errors) => Err(refuse(&place, errors[0].to_string())),
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SitesFile {
    #[serde(default)]
    site: Vec<toml::Spanned<SiteEntry>>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SiteEntry {
    domain: toml::Spanned<String>,
    partner_id: toml::Spanned<String>,
    fragment_id: toml::Spanned<String>,
    lang: toml::Spanned<String>,
    scheme: Option<toml::Spanned<String>>,
}

/// The sites file: `[[site]]` tables, each domain once.
fn read_sites(path: &Path) -> Result<HashMap<String, Site>, EdgeConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| refuse(&path.display().to_string(), e.to_string()))?;
    parse_sites(&text)
        .map_err(|(line, message)| refuse(&format!("{}:{line}", path.display()), message))
}

/// The sites, or the line (from 1) of the first fault and what it is.
fn parse_sites(text: &str) -> Result<HashMap<String, Site>, (usize, String)> {
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let file: SitesFile = toml::from_str(text).map_err(|error| {
        let line = error.span().map_or(1, |span| line_of(span.start));
        (line, error.message().to_string())
    })?;
    if file.site.is_empty() {
        return Err((1, "no [[site]] table".into()));
    }
    let mut sites = HashMap::new();
    for entry in file.site {
        let entry = entry.into_inner();
        let at = |value: &toml::Spanned<String>| line_of(value.span().start);
        let domain = DomainName::parse(entry.domain.get_ref())
            .map_err(|e| (at(&entry.domain), format!("domain: {}", e.message)))?;
        let site = Site {
            partner_id: non_empty(&entry.partner_id, "partner_id", at)?,
            fragment_id: non_empty(&entry.fragment_id, "fragment_id", at)?,
            lang: Lang::parse(entry.lang.get_ref(), "lang")
                .map_err(|e| (at(&entry.lang), format!("lang: {}", e.message)))?,
            scheme: match entry.scheme.as_ref().map(|s| (s.get_ref().as_str(), at(s))) {
                None | Some(("https", _)) => "https",
                Some(("http", _)) => "http",
                Some((_, line)) => return Err((line, "scheme: http or https".into())),
            },
        };
        if sites.insert(domain.as_str().to_string(), site).is_some() {
            return Err((
                at(&entry.domain),
                format!("domain {} listed twice", domain.as_str()),
            ));
        }
    }
    Ok(sites)
}

fn non_empty(
    value: &toml::Spanned<String>,
    field: &str,
    at: impl Fn(&toml::Spanned<String>) -> usize,
) -> Result<String, (usize, String)> {
    let text = value.get_ref().trim();
    let printable = text.bytes().all(|b| b.is_ascii_graphic());
    match !text.is_empty() && printable {
        true => Ok(text.to_string()),
        false => Err((at(value), format!("{field}: a non-empty id without spaces"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_parse_with_defaults() {
        let sites = parse_sites(
            "[[site]]\ndomain = \"News.Example\"\npartner_id = \"org_1\"\n\
             fragment_id = \"frg_1\"\nlang = \"fr\"\n",
        )
        .unwrap();
        let site = &sites["news.example"];
        assert_eq!(
            (site.partner_id.as_str(), site.lang, site.scheme),
            ("org_1", Lang::Fr, "https")
        );
    }

    #[test]
    fn faults_name_their_line() {
        let site = |extra: &str| {
            format!(
                "# sites\n[[site]]\ndomain = \"a.example\"\npartner_id = \"org_1\"\n\
                 fragment_id = \"frg_1\"\nlang = \"fr\"\n{extra}"
            )
        };
        assert_eq!(parse_sites(&site("scheme = \"ftp\"\n")).unwrap_err().0, 7);
        assert_eq!(parse_sites(&site("colour = \"red\"\n")).unwrap_err().0, 7);
        let twice = format!("{}{}", site(""), site("").replace("# sites\n", ""));
        assert_eq!(parse_sites(&twice).unwrap_err().0, 8);
        assert_eq!(
            parse_sites(&site("").replace("\"fr\"", "\"pt\""))
                .unwrap_err()
                .0,
            6
        );
        assert_eq!(
            parse_sites(&site("").replace("\"org_1\"", "\" \""))
                .unwrap_err()
                .0,
            4
        );
        assert_eq!(parse_sites("[[site]\n").unwrap_err().0, 1);
        assert_eq!(parse_sites("").unwrap_err().0, 1);
    }
}
