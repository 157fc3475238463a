//! The admin CLI and `/v1` refuse the same value with the same `field` and `message`: each
//! validation of the contract is sent through both, and the CLI's `agentcard: <field>:
//! <message>` must be the API's answer. Values only the console takes (a card's texts and link,
//! a card status) are refused with the message the table names.

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
