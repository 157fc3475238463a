//! The edge recipes of `recipes/`, as the console's "Connect an edge" page gives them: each
//! file compiled in as it is in the repository (the very file its recipe's test runs), its
//! `{{name}}` placeholders filled in with an organisation's values. No second copy exists to
//! drift; a placeholder a file gains or loses fails this module's tests.

/// The edges a publisher may run, each with its recipe's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    Cloudflare,
    Varnish,
    Nginx,
    AgentcardEdge,
}

impl Edge {
    pub const ALL: [Edge; 4] = [
        Edge::Cloudflare,
        Edge::Varnish,
        Edge::Nginx,
        Edge::AgentcardEdge,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Edge::Cloudflare => "Cloudflare Worker",
            Edge::Varnish => "Varnish (ESI)",
            Edge::Nginx => "nginx (SSI)",
            Edge::AgentcardEdge => "agentcard edge",
        }
    }

    /// Its files, in the order they are set up.
    pub fn files(self) -> impl Iterator<Item = &'static Recipe> {
        RECIPES.iter().filter(move |recipe| recipe.edge == self)
    }
}

/// One file of a recipe.
#[derive(Debug)]
pub struct Recipe {
    pub edge: Edge,
    /// Its name as downloaded (unique among all recipes' files).
    pub file: &'static str,
    /// Where it goes, in a few words.
    pub goes: &'static str,
    text: &'static str,
}

/// Every recipe's files.
pub static RECIPES: &[Recipe] = &[
    Recipe {
        edge: Edge::Cloudflare,
        file: "worker.js",
        goes: "the Worker itself",
        text: include_str!("../recipes/cloudflare/worker.js"),
    },
    Recipe {
        edge: Edge::Cloudflare,
        file: "wrangler.toml",
        goes: "beside worker.js; the key goes in with `npx wrangler secret put AGENTCARD_KEY`",
        text: include_str!("../recipes/cloudflare/wrangler.toml"),
    },
    Recipe {
        edge: Edge::Varnish,
        file: "agentcard.vcl",
        goes: "your VCL (section 1 holds your origin and the service's address); the key in \
               /etc/varnish/agentcard.key",
        text: include_str!("../recipes/varnish/agentcard.vcl"),
    },
    Recipe {
        edge: Edge::Nginx,
        file: "agentcard-http.conf",
        goes: "/etc/nginx/conf.d/ (inside http{}); set your origin's address in it",
        text: include_str!("../recipes/nginx/agentcard-http.conf"),
    },
    Recipe {
        edge: Edge::Nginx,
        file: "agentcard-server.conf",
        goes: "/etc/nginx/, included in your site's server{}",
        text: include_str!("../recipes/nginx/agentcard-server.conf"),
    },
    Recipe {
        edge: Edge::Nginx,
        file: "agentcard-key.conf",
        goes: "/etc/nginx/, mode 600: the key",
        text: include_str!("../recipes/nginx/agentcard-key.conf.example"),
    },
    Recipe {
        edge: Edge::Nginx,
        file: "example-site.conf",
        goes: "an example of the three lines your location / needs",
        text: include_str!("../recipes/nginx/example-site.conf"),
    },
    Recipe {
        edge: Edge::AgentcardEdge,
        file: "sites.toml",
        goes: "AGENTCARD_EDGE_SITES, e.g. /etc/agentcard/sites.toml",
        text: include_str!("../recipes/edge/sites.toml"),
    },
];

/// The placeholder of the delivery key in the files that hold it (nginx's key file).
pub const KEY_PLACEHOLDER: &str = "svc_live_REPLACE_WITH_YOUR_KEY";

/// What the placeholders stand for.
#[derive(Debug, Clone, Copy)]
pub struct Values<'a> {
    pub domain: &'a str,
    pub partner_id: &'a str,
    /// The site default's; `None` (no default yet) leaves `{{fragment_id}}` and `{{lang}}`.
    pub fragment_id: Option<&'a str>,
    pub lang: Option<&'a str>,
    /// The service's base URL (`https://cards.example`); `None` leaves `{{service_url}}` and
    /// `{{service_host}}` for the publisher to fill in.
    pub service_url: Option<&'a str>,
    /// A key just made; `None` leaves [`KEY_PLACEHOLDER`].
    pub key: Option<&'a str>,
}

/// The placeholders, each written `{{name}}` in the recipes.
pub const PLACEHOLDERS: [&str; 6] = [
    "domain",
    "partner_id",
    "fragment_id",
    "lang",
    "service_url",
    "service_host",
];

impl Values<'_> {
    fn value(&self, name: &str) -> Option<&str> {
        match name {
            "domain" => Some(self.domain),
            "partner_id" => Some(self.partner_id),
            "fragment_id" => self.fragment_id,
            "lang" => self.lang,
            "service_url" => self.service_url,
            "service_host" => self.service_url.map(host_of),
            _ => None,
        }
    }
}

/// The host of a base URL, without scheme, port or path.
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or(rest);
    authority
        .rsplit_once(':')
        .map_or(authority, |(host, _)| host)
}

impl Recipe {
    /// The recipe of this file name.
    pub fn named(file: &str) -> Option<&'static Recipe> {
        RECIPES.iter().find(|recipe| recipe.file == file)
    }

    /// The file with `values` in its placeholders.
    pub fn filled(&self, values: &Values) -> String {
        let mut text = self.text.to_string();
        for name in PLACEHOLDERS {
            if let Some(value) = values.value(name) {
                text = text.replace(&format!("{{{{{name}}}}}"), value);
            }
        }
        match values.key {
            Some(key) => text.replace(KEY_PLACEHOLDER, key),
            None => text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALUES: Values = Values {
        domain: "news.example",
        partner_id: "acc_1",
        fragment_id: Some("frg_1"),
        lang: Some("de"),
        service_url: Some("https://cards.example:8443"),
        key: Some("svc_live_0123"),
    };

    /// The `{{name}}` marks of `text` outside comments.
    fn marks(text: &str) -> Vec<String> {
        let mut found = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find("{{") {
            let end = rest[at..].find("}}").map_or(rest.len(), |e| at + e + 2);
            found.push(rest[at..end].to_string());
            rest = &rest[end..];
        }
        found.retain(|mark| mark != "{{…}}");
        found
    }

    #[test]
    fn every_placeholder_of_every_file_is_filled() {
        for recipe in RECIPES {
            let filled = recipe.filled(&VALUES);
            assert_eq!(marks(&filled), Vec::<String>::new(), "{}", recipe.file);
            assert!(!filled.contains(KEY_PLACEHOLDER), "{}", recipe.file);
        }
    }

    #[test]
    fn each_edge_names_its_site_and_fragment_and_each_placeholder_is_used() {
        for edge in Edge::ALL {
            let all: String = edge.files().map(|r| r.filled(&VALUES)).collect();
            for value in ["news.example", "acc_1", "frg_1"] {
                assert!(all.contains(value), "{}: {value}", edge.title());
            }
        }
        let every: String = RECIPES.iter().map(|r| r.text).collect();
        for name in PLACEHOLDERS {
            assert!(every.contains(&format!("{{{{{name}}}}}")), "{name}");
        }
        assert!(every.contains(KEY_PLACEHOLDER));
    }

    #[test]
    fn values_not_known_leave_their_placeholders_and_the_host_drops_scheme_and_port() {
        let unknown = Values {
            fragment_id: None,
            service_url: None,
            key: None,
            ..VALUES
        };
        let nginx = Recipe::named("agentcard-server.conf").unwrap();
        assert!(nginx
            .filled(&unknown)
            .contains("Host \"{{service_host}}\";"));
        assert!(nginx.filled(&VALUES).contains("Host \"cards.example\";"));
        let sites = Recipe::named("sites.toml").unwrap().filled(&unknown);
        assert!(sites.contains("fragment_id = \"{{fragment_id}}\"\nlang = \"de\""));
        let key = Recipe::named("agentcard-key.conf").unwrap();
        assert!(key.filled(&unknown).contains(KEY_PLACEHOLDER));
        assert_eq!(host_of("http://127.0.0.1:8080"), "127.0.0.1");
        assert_eq!(host_of("https://cards.example/base"), "cards.example");
    }
}
