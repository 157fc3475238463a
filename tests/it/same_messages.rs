//! The admin CLI and `/v1` refuse the same value with the same `field` and `message`: each
//! validation of the contract is sent through both, and the CLI's `agentcard: <field>:
//! <message>` must be the API's answer. Values only the console takes (a card's texts and link,
//! a card status) are refused with the message the table names. The console's site map forms
//! (a site, a fragment, the default, a rule) show next to the field the field and message
//! `/v1` answers for the same value, every refused field at once, and write nothing.

use crate::fixtures::{admin_output, card, enc, new_fragment, new_site, CARD_FLAGS};
use crate::harness::{tenant, Resp, Tenant};
use agentcard::domain::CardStatus;
use serde_json::{json, Value};

/// A request to `/v1` that refuses the value.
struct Api {
    method: &'static str,
    path: String,
    body: Value,
}

/// One refused value: the request that refuses it through `/v1` (none for a value only the
/// console takes, whose message is then given), the `admin` command that refuses it, the field.
struct Case {
    api: Option<Api>,
    cli: Vec<String>,
    field: &'static str,
    message: Option<&'static str>,
}

fn put(path: &str, body: Value) -> Option<Api> {
    Some(Api {
        method: "PUT",
        path: path.to_owned(),
        body,
    })
}

fn post(path: &str, body: Value) -> Option<Api> {
    Some(Api {
        method: "POST",
        path: path.to_owned(),
        body,
    })
}

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| word.to_string()).collect()
}

/// What the organisation of the cases holds: a site `a.example` with the fragment `/a`, a card
/// of its own and a platform card.
struct Setup {
    t: Tenant,
    own_card: String,
    platform_card: String,
}

impl Setup {
    fn new() -> Setup {
        let t = tenant();
        new_site(&t, "a.example");
        new_fragment(&t, "a.example", "/a");
        Setup {
            own_card: card(Some(&t.org_id), CardStatus::Draft).id,
            platform_card: card(None, CardStatus::Active).id,
            t,
        }
    }

    /// `admin fragment create` in the organisation, with `flags` replacing or adding values.
    fn fragment_create(&self, flags: &[&str]) -> Vec<String> {
        let base = [
            "fragment",
            "create",
            "--org",
            &self.t.org_id,
            "--domain",
            "b.example",
            "--ref",
            "/b",
            "--name",
            "B",
        ];
        with_flags(&base, flags)
    }

    /// `admin card create` in the organisation, with `flags` replacing or adding values.
    fn card_create(&self, flags: &[&str]) -> Vec<String> {
        let base = [
            &["card", "create", "--org", &self.t.org_id][..],
            &CARD_FLAGS,
        ]
        .concat();
        with_flags(&base, flags)
    }

    /// `admin card eligibility` of the platform card with one `--fragment`.
    fn platform_list(&self, fragment: &str) -> Vec<String> {
        args(&[
            "card",
            "eligibility",
            &self.platform_card,
            "--org",
            &self.t.org_id,
            "--fragment",
            fragment,
        ])
    }

    fn own_list(&self, domain: &str, fragment_ref: &str) -> Option<Api> {
        let list = json!({"fragments": [{"domain": domain, "ref": fragment_ref}]});
        put(&format!("/v1/cards/{}/eligibility", self.own_card), list)
    }

    fn send(&self, api: &Api) -> Resp {
        self.t.client.send_json(api.method, &api.path, &api.body)
    }
}

/// `base` with each `flag value` pair of `flags` replacing the flag's value, or added.
fn with_flags(base: &[&str], flags: &[&str]) -> Vec<String> {
    let mut words = args(base);
    for pair in flags.chunks(2) {
        match words.iter().position(|word| word == pair[0]) {
            Some(at) => words[at + 1] = pair[1].to_owned(),
            None => words.extend(args(pair)),
        }
    }
    words
}

fn fragment_path(reference: &str) -> String {
    format!("/v1/sites/a.example/fragments/{}", enc(reference))
}

fn cases(s: &Setup) -> Vec<Case> {
    let long = |n: usize| "é".repeat(n);
    let (long_101, long_201, long_2001) = (long(101), long(201), long(2001));
    let fragment = |body: Value| put(&fragment_path("/a"), body);
    let case = |api: Option<Api>, cli: Vec<String>, field| Case {
        api,
        cli,
        field,
        message: None,
    };
    let console = |cli: Vec<String>, field, message| Case {
        api: None,
        cli,
        field,
        message: Some(message),
    };
    vec![
        // references
        case(
            put(
                "/v1/sites/a.example/default-fragment",
                json!({"ref": "a/../b"}),
            ),
            s.fragment_create(&["--ref", "a/../b"]),
            "ref",
        ),
        case(
            put(&fragment_path("a b"), json!({"name": "X"})),
            s.fragment_create(&["--ref", "a b"]),
            "ref",
        ),
        case(
            put(&fragment_path(&"r".repeat(201)), json!({"name": "X"})),
            s.fragment_create(&["--ref", &"r".repeat(201)]),
            "ref",
        ),
        case(
            s.own_list("a.example", "/a?b"),
            s.platform_list("a.example:/a?b"),
            "fragments[0].ref",
        ),
        // key-values
        case(
            fragment(json!({"name": "X", "key_values": {"Section": ["x"]}})),
            s.fragment_create(&["--kv", "Section=x"]),
            "key_values.Section",
        ),
        case(
            fragment(json!({"name": "X", "key_values": {"a": ["x,y"]}})),
            s.card_create(&["--kv", "a=x,y"]),
            "key_values.a",
        ),
        case(
            fragment(json!({"name": "X", "key_values": {"__proto__": ["x"]}})),
            s.fragment_create(&["--kv", "__proto__=x"]),
            "key_values.__proto__",
        ),
        case(
            fragment(json!({"name": "X", "key_values": {"a": [" "]}})),
            s.card_create(&["--kv", "a= "]),
            "key_values.a",
        ),
        // names
        case(
            fragment(json!({"name": "  "})),
            s.fragment_create(&["--name", "  "]),
            "name",
        ),
        case(
            fragment(json!({"name": long_201})),
            args(&["org", "create", "--name", &long_201]),
            "name",
        ),
        case(
            fragment(json!({"name": "a\tb"})),
            s.card_create(&["--name", "a\tb"]),
            "name",
        ),
        case(
            post("/v1/keys", json!({"name": long_101})),
            args(&["key", "create", "--org", &s.t.org_id, "--name", &long_101]),
            "name",
        ),
        case(
            post("/v1/keys", json!({"name": "a\nb"})),
            args(&["token", "create", "--org", &s.t.org_id, "--name", "a\nb"]),
            "name",
        ),
        case(
            post("/v1/keys", json!({"name": long_101})),
            args(&["token", "create", "--org", &s.t.org_id, "--name", &long_101]),
            "name",
        ),
        // descriptions
        case(
            fragment(json!({"name": "X", "description": long_2001})),
            s.fragment_create(&["--description", &long_2001]),
            "description",
        ),
        case(
            fragment(json!({"name": "X", "description": "a\u{7}"})),
            s.fragment_create(&["--description", "a\u{7}"]),
            "description",
        ),
        // domains
        case(
            put("/v1/sites/localhost", json!({})),
            s.fragment_create(&["--domain", "localhost"]),
            "domain",
        ),
        case(
            put("/v1/sites/a_b.example", json!({})),
            args(&[
                "site",
                "delete",
                "--org",
                &s.t.org_id,
                "--domain",
                "a_b.example",
            ]),
            "domain",
        ),
        case(
            put("/v1/sites/1.2.3.4", json!({})),
            s.fragment_create(&["--domain", "1.2.3.4"]),
            "domain",
        ),
        case(
            s.own_list("a_b.example", "/a"),
            s.platform_list("a_b.example:/a"),
            "fragments[0].domain",
        ),
        // languages
        case(
            fragment(json!({"name": "X", "lang": "pt"})),
            s.fragment_create(&["--lang", "pt"]),
            "lang",
        ),
        case(
            fragment(json!({"name": "X", "lang": "FR"})),
            s.card_create(&["--lang", "FR"]),
            "lang",
        ),
        // statuses
        case(
            fragment(json!({"name": "X", "status": "draft"})),
            s.fragment_create(&["--status", "draft"]),
            "status",
        ),
        // what the organisation holds
        case(
            s.own_list("nowhere.example", "/a"),
            s.platform_list("nowhere.example:/a"),
            "fragments[0].domain",
        ),
        case(
            s.own_list("a.example", "/none"),
            s.platform_list("a.example:/none"),
            "fragments[0].ref",
        ),
        // values only the console takes
        console(
            s.card_create(&["--title", ""]),
            "title",
            "title must be 1 to 200 characters (spaces around it do not count)",
        ),
        console(
            s.card_create(&["--brand", &long_201]),
            "brand",
            "brand must be 1 to 200 characters (spaces around it do not count)",
        ),
        console(
            s.card_create(&["--body", &long_2001]),
            "body",
            "body must be 1 to 2000 characters (spaces around it do not count)",
        ),
        console(
            s.card_create(&["--body", "a\u{7}b"]),
            "body",
            "body must not contain control characters (U+0007)",
        ),
        console(
            s.card_create(&["--link-url", "ftp://a.example/", "--link-label", "Go"]),
            "link_url",
            "link_url must be an absolute http:// or https:// URL",
        ),
        console(
            s.card_create(&[
                "--link-url",
                "https://a.example/",
                "--link-label",
                &long_201,
            ]),
            "link_label",
            "link_label must be 1 to 200 characters (spaces around it do not count)",
        ),
        console(
            s.card_create(&["--brand-domain", "a.example:80"]),
            "brand_domain",
            "domain must not contain a port (:80)",
        ),
        console(
            args(&["card", "set-status", &s.own_card, "paused"]),
            "status",
            "status must be \"draft\", \"active\" or \"archived\"",
        ),
        console(
            s.card_create(&["--kv", "section"]),
            "key_values",
            "\"section\" is not of the form KEY=VALUE",
        ),
    ]
}

#[test]
fn the_cli_refuses_a_value_with_the_field_and_message_of_v1() {
    let setup = Setup::new();
    for case in cases(&setup) {
        let message = match (&case.api, case.message) {
            (Some(api), _) => {
                let resp = setup.send(api);
                let error = &resp.json()["error"];
                assert_eq!(
                    (resp.status, error["code"].as_str(), error["field"].as_str()),
                    (422, Some("validation"), Some(case.field)),
                    "{} {}: {}",
                    api.method,
                    api.path,
                    resp.text()
                );
                error["message"].as_str().unwrap().to_owned()
            }
            (None, Some(message)) => message.to_owned(),
            (None, None) => unreachable!("a case names its message or its request"),
        };
        let cli: Vec<&str> = case.cli.iter().map(String::as_str).collect();
        let (ok, stdout, stderr) = admin_output(&cli);
        assert!(!ok && stdout.is_empty(), "{cli:?} succeeded: {stdout}");
        assert_eq!(
            stderr,
            format!("agentcard: {}: {message}\n", case.field),
            "{cli:?}"
        );
    }
}

#[test]
fn an_id_that_names_nothing_is_not_found_alike() {
    let t = tenant();
    let absent = "key_000000000000000000000000";
    let api = t.client.delete(&format!("/v1/keys/{absent}"));
    let message = api.json()["error"]["message"].as_str().unwrap().to_owned();
    assert_eq!((api.status, message.as_str()), (404, "not found"));
    for id in [absent, "key_", "crd_000000000000000000000000", "nothing"] {
        let (ok, _, stderr) = admin_output(&["key", "delete", id]);
        assert!(!ok);
        assert_eq!(stderr, format!("agentcard: {message}\n"), "{id}");
    }
    let (ok, _, stderr) = admin_output(&["key", "create", "--org", "acc_nobody"]);
    assert!(!ok);
    assert_eq!(stderr, format!("agentcard: {message}\n"));
}

// ---- the console's site map forms ----

/// One refused value through a console form and through `/v1`.
struct FormCase {
    form: String,
    fields: Vec<(&'static str, String)>,
    api: Api,
}

/// Each refusal a console page shows next to a field: (field, message).
fn shown_refusals(page: &str) -> Vec<(String, String)> {
    let unescape = |text: &str| {
        text.replace("&quot;", "\"")
            .replace("&#34;", "\"")
            .replace("&#39;", "'")
            .replace("&#x27;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    };
    page.match_indices("<span class=\"error\"")
        .map(|(at, _)| {
            let span = &page[at..at + page[at..].find("</span>").unwrap()];
            let field_at = span.find("data-field=\"").expect("a field") + 12;
            let field = &span[field_at..field_at + span[field_at..].find('"').unwrap()];
            (
                unescape(field),
                unescape(&span[span.find('>').unwrap() + 1..]),
            )
        })
        .collect()
}

/// What the organisation holds, as `/v1` reads it, and its audit log's length.
fn site_map_state(t: &Tenant) -> Vec<String> {
    let mut state: Vec<String> = [
        "/v1/sites",
        "/v1/sites/a.example/fragments",
        "/v1/sites/a.example/routes",
    ]
    .iter()
    .map(|path| t.client.get(path).text())
    .collect();
    let audit = crate::harness::db()
        .query_one(
            "SELECT count(*) FROM audit_log WHERE org_id = $1",
            &[&t.org_id],
        )
        .unwrap()
        .get::<_, i64>(0);
    state.push(audit.to_string());
    state
}

fn site_map_cases(fragment_id: &str, rule_id: &str) -> Vec<FormCase> {
    let long = |n: usize| "é".repeat(n);
    let case = |form: &str, fields: &[(&'static str, &str)], api: Option<Api>| FormCase {
        form: form.to_owned(),
        fields: fields.iter().map(|(n, v)| (*n, v.to_string())).collect(),
        api: api.unwrap(),
    };
    let mut cases = Vec::new();
    for domain in [
        "localhost",
        "a_b.example",
        "1.2.3.4",
        "http://x.example",
        "x.example:80",
    ] {
        let api = put(&format!("/v1/sites/{}", enc(domain)), json!({}));
        cases.push(case("/sites", &[("domain", domain)], api));
    }
    for name in [long(201), "a\tb".into()] {
        let api = put("/v1/sites/a.example", json!({"name": name}));
        cases.push(case("/sites/a.example", &[("name", &name)], api));
    }
    for reference in ["a b", "a/../b", &"r".repeat(201)] {
        let api = put(&fragment_path(reference), json!({"name": "X"}));
        let fields = [("ref", reference), ("name", "X"), ("lang", "fr")];
        cases.push(case("/sites/a.example/fragments", &fields, api));
    }
    // The fragment's own fields, on creation and on edit alike.
    let fragment_values: Vec<(&'static str, String, Value)> = vec![
        ("name", "  ".into(), json!("  ")),
        ("name", long(201), json!(long(201))),
        ("lang", "pt".into(), json!("pt")),
        ("lang", "FR".into(), json!("FR")),
        ("description", long(2001), json!(long(2001))),
        ("description", "a\u{7}".into(), json!("a\u{7}")),
        ("key_values", "Section=x".into(), json!({"Section": ["x"]})),
        ("key_values", "a=x,y".into(), json!({"a": ["x,y"]})),
        (
            "key_values",
            "__proto__=x".into(),
            json!({"__proto__": ["x"]}),
        ),
        ("key_values", "a= ".into(), json!({"a": [" "]})),
    ];
    for (name, typed, sent) in &fragment_values {
        let mut body = json!({"name": "X", "lang": "fr"});
        body[*name] = sent.clone();
        let mut fields = vec![("name", "X"), ("lang", "fr")];
        fields.retain(|(n, _)| n != name);
        fields.push((name, typed));
        let with_ref = [&[("ref", "/new")][..], &fields].concat();
        let api = || put(&fragment_path("/a"), body.clone());
        cases.push(case("/sites/a.example/fragments", &with_ref, api()));
        cases.push(case(&format!("/fragments/{fragment_id}"), &fields, api()));
    }
    for reference in ["a b", "/none", "/p"] {
        let api = put(
            "/v1/sites/a.example/default-fragment",
            json!({"ref": reference}),
        );
        cases.push(case("/sites/a.example/default", &[("ref", reference)], api));
    }
    let rules: [[&str; 3]; 8] = [
        ["/a b", "exact", "/a"],
        ["/a/../b", "exact", "/a"],
        ["/a?b", "prefix", "/a"],
        ["", "exact", "/a"],
        ["/b", "both", "/a"],
        ["/b", "exact", "a b"],
        ["/b", "exact", "/none"],
        ["/taken", "exact", "/a"],
    ];
    for [path, mode, reference] in rules {
        let body = json!({"path_prefix": path, "match": mode, "ref": reference});
        let fields = [("path_prefix", path), ("match", mode), ("ref", reference)];
        let api = || post("/v1/sites/a.example/routes", body.clone());
        cases.push(case("/sites/a.example/rules", &fields, api()));
        if path != "/taken" {
            let form = format!("/sites/a.example/rules/{rule_id}");
            cases.push(case(&form, &fields, api()));
        }
    }
    cases
}

#[test]
fn the_console_site_map_forms_refuse_a_value_with_the_field_and_message_of_v1() {
    let setup = Setup::new();
    let t = &setup.t;
    new_fragment(t, "a.example", "/p");
    let paused = put(
        &fragment_path("/p"),
        json!({"name": "P", "status": "paused"}),
    )
    .unwrap();
    assert_eq!(setup.send(&paused).status, 200);
    let rule = json!({"path_prefix": "/taken", "match": "exact", "ref": "/a"});
    let made = t.client.post("/v1/sites/a.example/routes", &rule);
    assert_eq!(made.status, 201, "{}", made.text());
    let rule_id = made.json()["id"].as_str().unwrap().to_owned();
    let fragments = t.client.get("/v1/sites/a.example/fragments").json();
    let fragment_id = fragments["items"][0]["id"].as_str().unwrap().to_owned();
    let email = crate::console_fixtures::person(Some(&t.org_id), agentcard::domain::Role::Member);
    let console = crate::console_fixtures::Browser::signed_in(&email);
    let before = site_map_state(t);
    for case in site_map_cases(&fragment_id, &rule_id) {
        let resp = setup.send(&case.api);
        let error = &resp.json()["error"];
        let expected = (
            error["field"].as_str().unwrap_or_default().to_owned(),
            error["message"].as_str().unwrap_or_default().to_owned(),
        );
        assert!(
            matches!(
                (resp.status, error["code"].as_str()),
                (422, Some("validation")) | (409, Some("conflict"))
            ),
            "{} {}: {}",
            case.api.method,
            case.api.path,
            resp.text()
        );
        let fields: Vec<(&str, &str)> = case.fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let page = console.write(&case.form, &fields);
        assert_eq!(
            page.status,
            422,
            "{} {fields:?}: {}",
            case.form,
            page.text()
        );
        let shown = shown_refusals(&page.text());
        assert!(
            shown.contains(&expected),
            "{} {fields:?}: shown {shown:?}, /v1 {expected:?}",
            case.form
        );
    }
    assert_eq!(site_map_state(t), before, "a refused form writes nothing");
}

#[test]
fn a_console_form_shows_every_refused_field_at_once() {
    let setup = Setup::new();
    let t = &setup.t;
    let email = crate::console_fixtures::person(Some(&t.org_id), agentcard::domain::Role::Member);
    let console = crate::console_fixtures::Browser::signed_in(&email);
    let fields = [
        ("ref", "a b"),
        ("name", " "),
        ("lang", "pt"),
        ("key_values", "Section=x"),
    ];
    let page = console.write("/sites/a.example/fragments", &fields);
    assert_eq!(page.status, 422);
    let shown: Vec<String> = shown_refusals(&page.text())
        .into_iter()
        .map(|(f, _)| f)
        .collect();
    assert_eq!(shown, ["ref", "name", "lang", "key_values.Section"]);
    let rule = [("path_prefix", "/a b"), ("match", "both"), ("ref", "a b")];
    let page = console.write("/sites/a.example/rules", &rule);
    let shown: Vec<String> = shown_refusals(&page.text())
        .into_iter()
        .map(|(f, _)| f)
        .collect();
    assert_eq!(shown, ["path_prefix", "match", "ref"]);
}
