//! The console's site map over real HTTP: sites, a page per site, fragments with and without a
//! reference, the default, routing rules and the "test a page" box; each action read back
//! through `/v1` and the page, refusals next to their field with nothing written, another
//! organisation's objects not found, the first steps of an organisation with no site, the
//! audit log.

use crate::console_fixtures::{assert_labelled, new_org, person, Browser};
use crate::harness::{db, server, tenant, Client, Resp, Tenant};
use agentcard::domain::{CardStatus, Role};
use serde_json::{json, Value};

/// An organisation with a `/v1` token to read back with, and a member signed in to it.
struct Desk {
    api: Tenant,
    member: Browser,
}

fn desk() -> Desk {
    let api = tenant();
    let member = Browser::signed_in(&person(Some(&api.org_id), Role::Member));
    Desk { api, member }
}

/// The `Location` of a `303`.
#[track_caller]
fn redirected(resp: &Resp) -> String {
    assert_eq!(resp.status, 303, "{}", resp.text());
    resp.header("Location").unwrap().to_string()
}

impl Desk {
    fn items(&self, path: &str) -> Vec<Value> {
        let resp = self.api.client.get(path);
        assert_eq!(resp.status, 200, "{path}: {}", resp.text());
        resp.json()["items"].as_array().unwrap().clone()
    }

    fn site(&self, domain: &str) -> Option<Value> {
        let sites = self.items("/v1/sites");
        sites.into_iter().find(|site| site["domain"] == domain)
    }

    fn fragments(&self, domain: &str) -> Vec<Value> {
        self.items(&format!("/v1/sites/{domain}/fragments"))
    }

    fn fragment_named(&self, domain: &str, name: &str) -> Value {
        let found = self
            .fragments(domain)
            .into_iter()
            .find(|f| f["name"] == name);
        found.unwrap_or_else(|| panic!("no fragment {name}"))
    }

    fn routes(&self, domain: &str) -> Vec<Value> {
        self.items(&format!("/v1/sites/{domain}/routes"))
    }

    /// A site added through the console.
    fn add_site(&self, domain: &str) {
        let resp = self.member.write("/sites", &[("domain", domain)]);
        let stored = domain.trim().to_lowercase();
        assert_eq!(
            redirected(&resp),
            format!("/sites/{stored}?notice=site-created")
        );
    }

    /// A fragment added on the site's page: its id.
    fn add_fragment(&self, domain: &str, reference: &str, name: &str) -> String {
        let fields = [
            ("ref", reference),
            ("name", name),
            ("lang", "en"),
            ("description", ""),
            ("key_values", ""),
        ];
        let resp = self
            .member
            .write(&format!("/sites/{domain}/fragments"), &fields);
        assert_eq!(
            redirected(&resp),
            format!("/sites/{domain}?notice=fragment-created")
        );
        self.fragment_named(domain, name)["id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn add_rule(&self, domain: &str, path: &str, mode: &str, reference: &str) -> Resp {
        let fields = [("path_prefix", path), ("match", mode), ("ref", reference)];
        self.member
            .write(&format!("/sites/{domain}/rules"), &fields)
    }

    fn page(&self, domain: &str) -> String {
        let resp = self.member.get(&format!("/sites/{domain}"));
        assert_eq!(resp.status, 200, "{}", resp.text());
        resp.text()
    }

    /// The audit log's (operation, object) of this organisation, oldest first.
    fn audit(&self) -> Vec<(String, String)> {
        db().query(
            "SELECT operation, object FROM audit_log WHERE org_id = $1 ORDER BY id",
            &[&self.api.org_id],
        )
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect()
    }
}

#[test]
fn a_member_adds_a_site_trimmed_and_lowercased_renames_it_and_opens_its_page() {
    let desk = desk();
    desk.add_site("  News.Example ");
    let site = desk.site("news.example").expect("the site on /v1");
    assert_eq!(site["name"], "");
    let again = desk.member.write("/sites", &[("domain", "news.example")]);
    assert_eq!(redirected(&again), "/sites/news.example?notice=site-exists");
    let listed = desk.member.get("/sites").text();
    assert!(listed.contains("<a href=\"/sites/news.example\">news.example</a>"));
    let renamed = desk
        .member
        .write("/sites/news.example", &[("name", "  Le Quotidien ")]);
    assert_eq!(
        redirected(&renamed),
        "/sites/news.example?notice=site-saved"
    );
    assert_eq!(desk.site("news.example").unwrap()["name"], "Le Quotidien");
    let page = desk.page("news.example");
    assert!(page.contains("news.example (Le Quotidien)"), "{page}");
    assert!(!page.contains("<img"), "no icon yet: {page}");
    assert_labelled(&page, "site page");
    assert_eq!(desk.member.get("/sites/nowhere.example").status, 404);
    assert_eq!(desk.member.get("/sites/news.example/icon").status, 404);
    let operations: Vec<String> = desk.audit().into_iter().map(|(op, _)| op).collect();
    assert_eq!(operations, ["put_site", "put_site", "rename_site"]);
}

#[test]
fn fragments_with_and_without_a_reference_are_made_edited_paused_and_activated() {
    let desk = desk();
    desk.add_site("frag.example");
    let with_ref = desk.add_fragment("frag.example", "/sport", "Sport");
    let without = desk.add_fragment("frag.example", "", "Sidebar");
    let listed = desk.fragments("frag.example");
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0]["ref"], "/sport");
    assert_eq!(listed[1]["ref"], Value::Null, "created without one");
    assert_eq!(listed[1]["id"], without.as_str());
    // A reference the site has already: refused next to it, nothing made.
    let again = [("ref", "/sport"), ("name", "Sport again"), ("lang", "fr")];
    let resp = desk.member.write("/sites/frag.example/fragments", &again);
    assert_eq!(resp.status, 422);
    let page = resp.text();
    assert!(
        page.contains("data-field=\"ref\">the site already has a fragment with this reference"),
        "{page}"
    );
    assert!(
        page.contains("value=\"Sport again\""),
        "what was typed stays"
    );
    assert_eq!(desk.fragments("frag.example").len(), 2);

    let edit = [
        ("name", " Side bar "),
        ("lang", "de"),
        ("description", "Right column"),
        ("key_values", "section=sport\nsection = tennis\n\ntopic=cup"),
    ];
    let resp = desk.member.write(&format!("/fragments/{without}"), &edit);
    assert_eq!(
        redirected(&resp),
        "/sites/frag.example?notice=fragment-saved"
    );
    let edited = desk.fragment_named("frag.example", "Side bar");
    assert_eq!(edited["lang"], "de");
    assert_eq!(edited["description"], "Right column");
    assert_eq!(
        edited["key_values"],
        json!({"section": ["sport", "tennis"], "topic": ["cup"]})
    );
    let form = desk.member.get(&format!("/fragments/{without}")).text();
    assert!(
        form.contains("section=sport\nsection=tennis\ntopic=cup"),
        "{form}"
    );
    assert_labelled(&form, "fragment page");
    let page = desk.page("frag.example");
    for shown in ["Right column", "<code>section=tennis</code>", "Side bar"] {
        assert!(page.contains(shown), "{shown}: {page}");
    }

    // Paused while the default and a rule's target: the page names both, as /v1 warns.
    let default = desk
        .member
        .write("/sites/frag.example/default", &[("ref", "/sport")]);
    assert_eq!(
        redirected(&default),
        "/sites/frag.example?notice=default-set"
    );
    redirected(&desk.add_rule("frag.example", "/sport", "prefix", "/sport"));
    let pause = [("status", "paused")];
    let paused = desk
        .member
        .write(&format!("/fragments/{with_ref}/status"), &pause);
    assert_eq!(
        redirected(&paused),
        "/sites/frag.example?notice=fragment-paused"
    );
    assert_eq!(
        desk.fragment_named("frag.example", "Sport")["status"],
        "paused"
    );
    let v1 = desk.api.client.put(
        "/v1/sites/frag.example/fragments/%2Fsport",
        &json!({"name": "Sport", "status": "paused"}),
    );
    assert_eq!(
        v1.json()["warnings"],
        json!(["site default", "target of 1 rules"])
    );
    let page = desk.page("frag.example");
    for warning in ["site default", "target of 1 rules"] {
        assert!(
            page.contains(&format!("<span class=\"warning\">{warning}</span>")),
            "{warning}: {page}"
        );
    }
    let active = [("status", "active")];
    let resp = desk
        .member
        .write(&format!("/fragments/{with_ref}/status"), &active);
    assert_eq!(
        redirected(&resp),
        "/sites/frag.example?notice=fragment-active"
    );
    assert_eq!(
        desk.fragment_named("frag.example", "Sport")["status"],
        "active"
    );
    assert!(!desk.page("frag.example").contains("class=\"warning\""));
    let ops: Vec<String> = desk.audit().into_iter().map(|(op, _)| op).collect();
    assert!(ops.contains(&"edit_fragment".to_string()), "{ops:?}");
    assert!(ops.contains(&"set_fragment_status".to_string()), "{ops:?}");
}

#[test]
fn the_default_is_set_and_cleared_and_rules_are_added_edited_and_deleted() {
    let desk = desk();
    desk.add_site("rules.example");
    desk.add_fragment("rules.example", "/a", "A");
    desk.add_fragment("rules.example", "/b", "B");
    desk.member
        .write("/sites/rules.example/default", &[("ref", "/b")]);
    assert_eq!(
        desk.site("rules.example").unwrap()["default_fragment_ref"],
        "/b"
    );
    let cleared = desk.member.write("/sites/rules.example/default/clear", &[]);
    assert_eq!(
        redirected(&cleared),
        "/sites/rules.example?notice=default-cleared"
    );
    assert_eq!(
        desk.site("rules.example").unwrap()["default_fragment_ref"],
        Value::Null
    );
    assert_eq!(
        desk.fragments("rules.example").len(),
        2,
        "the fragment is kept"
    );

    for (path, mode, reference) in [
        ("/Zeta", "exact", "/a"),
        ("Actualite/", "prefix", "/b"),
        ("/actualite", " exact ", "/a"),
    ] {
        let resp = desk.add_rule("rules.example", path, mode, reference);
        assert_eq!(redirected(&resp), "/sites/rules.example?notice=rule-added");
    }
    let routes = desk.routes("rules.example");
    let listed: Vec<(&str, &str)> = routes
        .iter()
        .map(|r| {
            (
                r["path_prefix"].as_str().unwrap(),
                r["match"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("/actualite/", "exact"),
            ("/actualite/", "prefix"),
            ("/zeta/", "exact")
        ]
    );
    let page = desk.page("rules.example");
    let at = |text: &str| page.find(text).unwrap_or_else(|| panic!("{text}: {page}"));
    assert!(
        at("<code>/actualite/</code></td>\n<td data-label=\"Match\">exact")
            < at("<code>/actualite/</code></td>\n<td data-label=\"Match\">prefix")
    );
    assert!(at("<td data-label=\"Match\">prefix") < at("<code>/zeta/</code>"));

    let id = routes[2]["id"].as_str().unwrap();
    let rule_page = desk.member.get(&format!("/sites/rules.example/rules/{id}"));
    assert_eq!(rule_page.status, 200);
    assert_labelled(&rule_page.text(), "rule page");
    let edit = [
        ("path_prefix", "/zeta/z"),
        ("match", "prefix"),
        ("ref", "/b"),
    ];
    let resp = desk
        .member
        .write(&format!("/sites/rules.example/rules/{id}"), &edit);
    assert_eq!(redirected(&resp), "/sites/rules.example?notice=rule-saved");
    let edited = desk.routes("rules.example");
    let rule = edited.iter().find(|r| r["id"] == id).expect("its id kept");
    assert_eq!(
        (&rule["path_prefix"], &rule["match"], &rule["fragment_ref"]),
        (&json!("/zeta/z/"), &json!("prefix"), &json!("/b"))
    );
    // Onto another rule's path and mode: the conflict /v1 answers, next to the path.
    let clash = [
        ("path_prefix", "/actualite/"),
        ("match", "exact"),
        ("ref", "/b"),
    ];
    let resp = desk
        .member
        .write(&format!("/sites/rules.example/rules/{id}"), &clash);
    assert_eq!(resp.status, 422, "{}", resp.text());
    assert!(resp.text().contains("rule already exists on this site"));
    assert_eq!(desk.routes("rules.example"), edited, "nothing written");

    let resp = desk
        .member
        .write(&format!("/sites/rules.example/rules/{id}/delete"), &[]);
    assert_eq!(
        redirected(&resp),
        "/sites/rules.example?notice=rule-deleted"
    );
    assert_eq!(desk.routes("rules.example").len(), 2);
    let again = desk
        .member
        .write(&format!("/sites/rules.example/rules/{id}/delete"), &[]);
    assert_eq!(again.status, 404);
}

/// What the "test a page" box says of `url` on the site's page: its status and its sentences.
fn tested(desk: &Desk, domain: &str, url: &str) -> (u16, String) {
    let query: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("page_url", url)
        .finish();
    let resp = desk.member.get(&format!("/sites/{domain}?{query}"));
    let page = resp.text();
    let said = match page.find("<div role=\"status\" id=\"tested\">") {
        Some(at) => page[at..at + page[at..].find("</div>").unwrap()].to_string(),
        None => page,
    };
    (resp.status, said)
}

#[test]
fn the_test_box_names_the_rule_or_default_that_resolves_a_page() {
    let desk = desk();
    desk.add_site("box.example");
    desk.add_fragment("box.example", "/exact", "Exact one");
    desk.add_fragment("box.example", "/prefix", "Prefix one");
    desk.add_fragment("box.example", "/default", "Default one");
    redirected(&desk.add_rule("box.example", "/news", "exact", "/exact"));
    redirected(&desk.add_rule("box.example", "/news", "prefix", "/prefix"));
    let cases = [
        (
            "https://box.example/news",
            "The exact rule /news/ decides.",
            "/exact (Exact one)",
        ),
        (
            "https://BOX.example:8443/News/today?x=1",
            "The prefix rule /news/ decides.",
            "/prefix (Prefix one)",
        ),
    ];
    for (url, rule, fragment) in cases {
        let (status, said) = tested(&desk, "box.example", url);
        assert_eq!(status, 200, "{url}");
        assert!(said.contains(rule), "{url}: {said}");
        assert!(
            said.contains(&format!("Fragment: {fragment}.")),
            "{url}: {said}"
        );
    }
    let (_, said) = tested(&desk, "box.example", "https://box.example/other");
    assert!(said.contains("the site has no default"), "{said}");
    desk.member
        .write("/sites/box.example/default", &[("ref", "/default")]);
    let (_, said) = tested(&desk, "box.example", "https://box.example/other");
    assert!(said.contains("the site default decides"), "{said}");
    assert!(said.contains("Fragment: /default (Default one)."), "{said}");
    let (_, said) = tested(&desk, "box.example", "https://box.example/a//b");
    assert!(said.contains("not a valid path"), "{said}");
    let (_, said) = tested(&desk, "box.example", "https://elsewhere.example/news");
    assert!(
        said.contains("elsewhere.example is not a site of this organisation"),
        "{said}"
    );
    let prefix = desk.fragment_named("box.example", "Prefix one")["id"]
        .as_str()
        .unwrap()
        .to_string();
    desk.member.write(
        &format!("/fragments/{prefix}/status"),
        &[("status", "paused")],
    );
    let (_, said) = tested(&desk, "box.example", "https://box.example/news/x");
    assert!(
        said.contains("It is paused: /fragment answers 204"),
        "{said}"
    );

    let long = format!("https://box.example/{}", "a".repeat(2048));
    for url in ["ftp://box.example/news", "news", "https://", long.as_str()] {
        let (status, page) = tested(&desk, "box.example", url);
        assert_eq!(status, 422, "{url}");
        assert!(
            page.contains("id=\"test-page_url-error\" data-field=\"page_url\""),
            "{url}: {page}"
        );
        assert!(page.contains("aria-invalid=\"true\""), "{url}");
    }
}

#[test]
fn the_page_lists_the_cards_eligible_on_each_fragment() {
    let desk = desk();
    desk.add_site("cards.example");
    let sport = desk.add_fragment("cards.example", "/sport", "Sport");
    desk.add_fragment("cards.example", "", "Sidebar");
    let everywhere = crate::fixtures::card(Some(&desk.api.org_id), CardStatus::Draft).id;
    let listed = crate::fixtures::card(Some(&desk.api.org_id), CardStatus::Active).id;
    let list = json!({"fragments": [{"domain": "cards.example", "ref": "/sport"}]});
    let resp = desk
        .api
        .client
        .put(&format!("/v1/cards/{listed}/eligibility"), &list);
    assert_eq!(resp.status, 200, "{}", resp.text());
    let page = desk.page("cards.example");
    let row = &page[page.find(&format!("<tr id=\"fragment-{sport}\">")).unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.contains(&format!("<a href=\"/cards/{listed}\">")),
        "{row}"
    );
    assert!(!row.contains(&everywhere), "{row}");
    let every = &page[page.find("Eligible on every fragment").expect("the list")..];
    assert!(
        every.contains(&format!("<a href=\"/cards/{everywhere}\">")),
        "{every}"
    );
}

#[test]
fn another_organisations_site_fragment_and_rule_are_not_found_and_left_alone() {
    let desk = desk();
    desk.add_site("mine.example");
    let fragment = desk.add_fragment("mine.example", "/a", "A");
    redirected(&desk.add_rule("mine.example", "/a", "exact", "/a"));
    let rule = desk.routes("mine.example")[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let other = Browser::signed_in(&person(Some(&new_org()), Role::Owner));
    for path in [
        "/sites/mine.example".to_string(),
        format!("/fragments/{fragment}"),
        format!("/sites/mine.example/rules/{rule}"),
    ] {
        assert_eq!(other.get(&path).status, 404, "{path}");
    }
    let writes: [(String, Vec<(&str, &str)>); 6] = [
        ("/sites/mine.example".into(), vec![("name", "Taken")]),
        (
            format!("/fragments/{fragment}"),
            vec![("name", "Taken"), ("lang", "fr")],
        ),
        (
            format!("/fragments/{fragment}/status"),
            vec![("status", "paused")],
        ),
        ("/sites/mine.example/default".into(), vec![("ref", "/a")]),
        (
            format!("/sites/mine.example/rules/{rule}"),
            vec![("path_prefix", "/b"), ("match", "exact"), ("ref", "/a")],
        ),
        (format!("/sites/mine.example/rules/{rule}/delete"), vec![]),
    ];
    let before = (
        desk.site("mine.example"),
        desk.fragments("mine.example"),
        desk.routes("mine.example"),
    );
    for (path, fields) in &writes {
        assert_eq!(other.write(path, fields).status, 404, "{path}");
    }
    let after = (
        desk.site("mine.example"),
        desk.fragments("mine.example"),
        desk.routes("mine.example"),
    );
    assert_eq!(before, after);
}

#[test]
fn an_organisation_with_no_site_or_no_request_is_shown_its_first_steps() {
    let member = Browser::signed_in(&person(Some(&new_org()), Role::Member));
    for path in ["/", "/sites"] {
        let page = member.get(path).text();
        assert!(page.contains("First steps"), "{path}: {page}");
        for link in ["/sites#site-domain", "/cards/new"] {
            assert!(page.contains(&format!("href=\"{link}\"")), "{path}: {link}");
        }
    }
    // With a site and no request yet: the last step leads to its "Connect an edge".
    let desk = desk();
    desk.add_site("steps.example");
    let home = desk.member.get("/").text();
    assert!(home.contains("First steps"), "{home}");
    assert!(home.contains("href=\"/sites/steps.example/connect\" id=\"first-steps-connect\""));
}

#[test]
fn the_test_box_names_the_fragment_fragment_serves_from() {
    let desk = desk();
    desk.add_site("agree.example");
    let mut card_of = Vec::new();
    for (reference, name) in [
        ("/exact", "Exact"),
        ("/prefix", "Prefix"),
        ("/default", "Default"),
        ("/asked", "Asked"),
    ] {
        desk.add_fragment("agree.example", reference, name);
        // One active card eligible on this fragment alone: the card served names the fragment.
        let card = crate::fixtures::card(Some(&desk.api.org_id), CardStatus::Active).id;
        let list = json!({"fragments": [{"domain": "agree.example", "ref": reference}]});
        let resp = desk
            .api
            .client
            .put(&format!("/v1/cards/{card}/eligibility"), &list);
        assert_eq!(resp.status, 200, "{}", resp.text());
        card_of.push((card, format!("Fragment: {reference} ({name}).")));
    }
    redirected(&desk.add_rule("agree.example", "/news", "exact", "/exact"));
    redirected(&desk.add_rule("agree.example", "/news", "prefix", "/prefix"));
    desk.member
        .write("/sites/agree.example/default", &[("ref", "/default")]);
    let key = desk.api.client.post("/v1/keys", &json!({}));
    let key = key.json()["key"].as_str().unwrap().to_string();
    let asked = desk.fragment_named("agree.example", "Asked")["id"]
        .as_str()
        .unwrap()
        .to_string();
    crate::harness::sync_cache();
    for url in [
        "https://agree.example/news",
        "https://agree.example/News/Today",
        "https://agree.example/elsewhere",
        "https://agree.example/a//b",
    ] {
        let query = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("partner_id", &desk.api.org_id)
            .append_pair("fragment_id", &asked)
            .append_pair("lang", "fr")
            .append_pair("page_url", url)
            .finish();
        let served = Client::new(server().addr).request(
            "GET",
            &format!("/fragment?{query}"),
            &[("X-API-Key", key.as_str())],
            None,
        );
        let card = crate::fixtures::served_card(&served);
        let (_, said) = tested(&desk, "agree.example", url);
        let (_, named) = card_of
            .iter()
            .find(|(id, _)| *id == card)
            .expect("a card of ours");
        assert!(
            said.contains(named.as_str()),
            "{url}: /fragment served {named}, the box says {said}"
        );
    }
}
