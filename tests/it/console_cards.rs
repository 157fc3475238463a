//! The console's card pages over real HTTP: each action read back through `/v1` and the
//! database, refusals shown next to their field with nothing written, the form token and
//! origin checks on every card form, the audit log, and the same rules and messages as `/v1`.

use crate::console_fixtures::{assert_labelled, assert_secured, person_in, Browser};
use crate::harness::{server, Resp, Tenant, TestServer};
use agentcard::domain::Role;
use serde_json::{json, Value};
use std::sync::Arc;

/// An organisation with a `/v1` token to read back with, and a member signed in to it.
struct Desk {
    api: Tenant,
    email: String,
    member: Browser,
    server: Arc<TestServer>,
}

fn desk() -> Desk {
    let server = server();
    let api = server.tenant();
    let email = person_in(&mut server.db(), Some(&api.org_id), Role::Member);
    let member = Browser::signed_in_to(&server, &email);
    Desk {
        api,
        email,
        member,
        server,
    }
}

/// A card form's fields, every one filled; `changes` replace some.
fn card_form<'a>(changes: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut fields = vec![
        ("name", "Spring card"),
        ("lang", "en"),
        ("brand", "Le Quotidien"),
        ("brand_domain", "lequotidien.example"),
        ("title", "Read us, agents"),
        ("body", "Licensing:\nask us."),
        ("link_url", "https://lequotidien.example/licence"),
        ("link_label", "Our terms"),
        ("key_values", "section=sport\nsection = tennis\n\ntopic=cup"),
        ("action", "save"),
    ];
    for (name, value) in changes {
        match fields.iter_mut().find(|(n, _)| n == name) {
            Some(field) => field.1 = value,
            None => fields.push((name, value)),
        }
    }
    fields
}

impl Desk {
    /// The cards as `/v1/cards` lists them (every one the organisation's: the test's server
    /// has no platform card).
    fn cards(&self) -> Vec<Value> {
        let resp = self.api.client.get("/v1/cards");
        assert_eq!(resp.status, 200, "{}", resp.text());
        resp.json()["items"].as_array().unwrap().clone()
    }

    fn card(&self, id: &str) -> Option<Value> {
        self.cards().into_iter().find(|card| card["id"] == id)
    }

    /// Creates a card through the console's form: its id.
    fn create(&self, changes: &[(&str, &str)]) -> String {
        let resp = self.member.write("/cards/new", &card_form(changes));
        let location = redirected(&resp);
        let id = location
            .strip_prefix("/cards/")
            .and_then(|rest| rest.strip_suffix("?notice=card-saved"))
            .unwrap_or_else(|| panic!("{location}"));
        id.to_string()
    }

    /// The audit log's entries of this organisation: (actor, operation, object), oldest first.
    fn audit(&self) -> Vec<(String, String, String)> {
        self.server
            .db()
            .query(
                "SELECT actor, operation, object FROM audit_log WHERE org_id = $1 ORDER BY id",
                &[&self.api.org_id],
            )
            .unwrap()
            .iter()
            .map(|row| (row.get(0), row.get(1), row.get(2)))
            .collect()
    }
}

/// The `Location` of a `303`.
#[track_caller]
fn redirected(resp: &Resp) -> String {
    assert_eq!(resp.status, 303, "{}", resp.text());
    resp.header("Location").unwrap().to_string()
}

#[test]
fn a_member_creates_and_edits_a_card_read_back_through_v1() {
    let desk = desk();
    let id = desk.create(&[]);
    let card = desk.card(&id).expect("the card in /v1/cards");
    let expected = json!({
        "status": "draft", "name": "Spring card", "lang": "en", "brand": "Le Quotidien",
        "brand_domain": "lequotidien.example", "title": "Read us, agents",
        "body": "Licensing:\nask us.", "link_url": "https://lequotidien.example/licence",
        "link_label": "Our terms",
        "key_values": {"section": ["sport", "tennis"], "topic": ["cup"]},
    });
    for (member, value) in expected.as_object().unwrap() {
        assert_eq!(&card[member], value, "{member}");
    }
    // The card's page shows what was saved, ready to edit.
    let page = desk.member.get(&format!("/cards/{id}?notice=card-saved"));
    assert_secured(&page, "card page");
    let text = page.text();
    assert!(text.contains("The card was saved.") && text.contains("<strong>draft</strong>"));
    assert!(
        text.contains("section=sport\nsection=tennis\ntopic=cup"),
        "{text}"
    );
    assert_labelled(&text, "card page");
    // An edit replaces the content; blank optional fields clear their member.
    let edit = card_form(&[
        ("title", "Read us again"),
        ("brand_domain", ""),
        ("link_url", " "),
        ("link_label", ""),
        ("key_values", ""),
    ]);
    let resp = desk.member.write(&format!("/cards/{id}"), &edit);
    assert_eq!(redirected(&resp), format!("/cards/{id}?notice=card-saved"));
    let card = desk.card(&id).unwrap();
    assert_eq!(card["title"], "Read us again");
    assert_eq!(card["status"], "draft");
    for cleared in ["brand_domain", "link_url", "link_label"] {
        assert_eq!(card[cleared], Value::Null, "{cleared}");
    }
    assert_eq!(card["key_values"], json!({}));
    assert_eq!(desk.cards().len(), 1);
}

#[test]
fn the_preview_shows_the_served_card_before_a_sample_article_and_writes_nothing() {
    let desk = desk();
    let form = card_form(&[("action", "preview"), ("title", "Agents <welcome> & co")]);
    let resp = desk.member.write("/cards/new", &form);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_secured(&resp, "preview");
    assert!(desk.cards().is_empty(), "a preview writes nothing");
    let page = resp.text();
    let at = page.find("<iframe").expect("a preview frame");
    let frame = &page[at..at + page[at..].find('>').unwrap()];
    assert!(
        frame.contains(" sandbox srcdoc=\""),
        "an empty sandbox: {frame}"
    );
    assert!(frame.contains(" title=\""), "{frame}");
    // The frame's document, once the attribute is read: the card as /fragment renders it,
    // its texts escaped, then the sample article.
    let srcdoc = unescape(&frame[frame.find("srcdoc=\"").unwrap() + 8..frame.len() - 1]);
    let card = srcdoc.find("<aside class=\"agentcard\"").expect(&srcdoc);
    let article = srcdoc.find("<article>").expect(&srcdoc);
    assert!(card < article && srcdoc[article..].contains("Sample article"));
    assert!(
        srcdoc.contains("Agents &lt;welcome&gt; &amp; co"),
        "{srcdoc}"
    );
    assert!(srcdoc.contains("href=\"https://lequotidien.example/licence\""));
    assert!(!srcdoc.contains("<script"));
    // The form keeps what was typed, and Save then writes it.
    let at = page.find("id=\"title\"").unwrap();
    let input = &page[at..at + page[at..].find('>').unwrap()];
    assert!(
        unescape(input).contains("value=\"Agents <welcome> & co\""),
        "{input}"
    );
    desk.create(&[]);
    assert_eq!(desk.cards().len(), 1);
}

/// The text of an HTML attribute or element, its character references read (once).
fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let end = rest[at..].find(';').expect("a character reference") + at;
        out.push(match &rest[at + 1..end] {
            "quot" | "#34" => '"',
            "#39" => '\'',
            "lt" | "#60" => '<',
            "gt" | "#62" => '>',
            "amp" | "#38" => '&',
            other => panic!("unexpected reference &{other};"),
        });
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn status_buttons_and_delete_change_what_they_say() {
    let desk = desk();
    let id = desk.create(&[]);
    let other = desk.create(&[("name", "Other card")]);
    for (status, listed) in [
        ("active", "Active"),
        ("archived", "Archived"),
        ("draft", "Drafts"),
    ] {
        let resp = desk
            .member
            .write(&format!("/cards/{id}/status"), &[("status", status)]);
        assert_eq!(
            redirected(&resp),
            format!("/cards/{id}?notice=card-{status}")
        );
        assert_eq!(desk.card(&id).unwrap()["status"], status);
        let list = desk.member.get("/cards").text();
        let section = &list[list.find(&format!("<h2>{listed}</h2>")).unwrap()..];
        let section = &section[..section[4..]
            .find("<h2>")
            .map_or(section.len(), |end| end + 4)];
        assert!(
            section.contains(&format!("/cards/{id}")),
            "{status}: {section}"
        );
    }
    let bad = desk
        .member
        .write(&format!("/cards/{id}/status"), &[("status", "live")]);
    assert_eq!(bad.status, 422);
    assert_eq!(desk.card(&id).unwrap()["status"], "draft");
    // Deleting asks first; the confirmation page changes nothing.
    let confirm = desk.member.get(&format!("/cards/{id}/delete"));
    assert_eq!(confirm.status, 200);
    assert!(confirm.text().contains("Delete the card"));
    assert!(desk.card(&id).is_some());
    let resp = desk.member.write(&format!("/cards/{id}/delete"), &[]);
    assert_eq!(redirected(&resp), "/cards?notice=card-deleted");
    assert!(desk.card(&id).is_none());
    assert!(desk.card(&other).is_some(), "only the card named goes");
    assert_eq!(desk.member.get(&format!("/cards/{id}")).status, 404);
}

#[test]
fn a_refused_value_is_shown_next_to_its_field_and_writes_nothing() {
    let desk = desk();
    let long = "x".repeat(201);
    let cases = [
        ("title", long.as_str(), "title"),
        ("lang", "EN", "lang"),
        ("link_url", "ftp://lequotidien.example/", "link_url"),
        ("link_label", "", "link_label"),
        ("key_values", "Section=sport", "key_values"),
        ("key_values", "no equals sign", "key_values"),
        ("brand_domain", "http://lequotidien.example", "brand_domain"),
    ];
    for (name, value, field) in cases {
        let resp = desk
            .member
            .write("/cards/new", &card_form(&[(name, value)]));
        assert_eq!(resp.status, 422, "{name}={value}");
        let page = resp.text();
        assert!(
            page.contains(&format!("aria-describedby=\"{field}-hint {field}-error\""))
                || page.contains(&format!("aria-describedby=\"{field}-error\"")),
            "{name}={value}: {page}"
        );
        assert!(page.contains(&format!("id=\"{field}-error\"")), "{name}");
        // What was typed stays.
        assert!(page.contains("value=\"Le Quotidien\""), "{name}");
        assert_labelled(&page, name);
    }
    assert!(desk.cards().is_empty());
    assert!(desk.audit().is_empty());
}

#[test]
fn eligibility_is_chosen_among_the_organisation_fragments() {
    let desk = desk();
    let api = &desk.api.client;
    assert_eq!(api.put("/v1/sites/elig.example", &json!({})).status, 201);
    for (site, reference) in [("elig.example", "%2Fworld"), ("elig.example", "%2Fsport")] {
        let resp = api.put(
            &format!("/v1/sites/{site}/fragments/{reference}"),
            &json!({"name": "A fragment", "lang": "en"}),
        );
        assert!(resp.status == 201, "{}", resp.text());
    }
    // A fragment made in the console has no reference: it is named by its name.
    let args = ["admin", "fragment", "create", "--org", &desk.api.org_id];
    let more = ["--domain", "elig.example", "--name", "Sidebar"];
    let on_the_desk = [("DATABASE_URL", desk.server.database_url.as_str())];
    let (ok, _, err) = crate::fixtures::agentcard(&[&args[..], &more[..]].concat(), &on_the_desk);
    assert!(ok, "{err}");
    let id = desk.create(&[]);
    let page = desk.member.get(&format!("/cards/{id}/eligibility"));
    assert_eq!(page.status, 200);
    let text = page.text();
    // Grouped by site: each fragment by its reference and name, or its name alone.
    assert!(text.contains("<legend>elig.example</legend>"), "{text}");
    assert!(text.contains(">/world (A fragment)</label>"), "{text}");
    assert!(text.contains(">Sidebar</label>"), "{text}");
    assert!(text.contains("every fragment of the organisation"));
    assert_labelled(&text, "eligibility");
    let world = fragment_id(&desk, "/world");
    let resp = desk.member.write(
        &format!("/cards/{id}/eligibility"),
        &[("fragment", world.as_str())],
    );
    assert_eq!(
        redirected(&resp),
        format!("/cards/{id}/eligibility?notice=eligibility-saved")
    );
    let listed = api.get(&format!("/v1/cards/{id}/eligibility")).json();
    assert_eq!(
        listed["items"],
        json!([{"domain": "elig.example", "ref": "/world", "fragment_id": world}])
    );
    let page = desk.member.get(&format!("/cards/{id}/eligibility")).text();
    assert!(
        page.contains("<li>elig.example /world (A fragment)</li>"),
        "{page}"
    );
    // A fragment of another organisation, or no fragment id at all: refused, list unchanged.
    let foreign = desk.server.tenant();
    assert_eq!(
        foreign
            .client
            .put("/v1/sites/foreign.example", &json!({}))
            .status,
        201
    );
    let resp = foreign.client.put(
        "/v1/sites/foreign.example/fragments/%2Fx",
        &json!({"name": "Theirs"}),
    );
    let theirs = resp.json()["id"].as_str().unwrap().to_string();
    for wanted in [theirs.as_str(), "not-an-id"] {
        let resp = desk
            .member
            .write(&format!("/cards/{id}/eligibility"), &[("fragment", wanted)]);
        assert_eq!(resp.status, 422, "{wanted}");
        assert!(resp.text().contains("role=\"alert\""));
        let listed = api.get(&format!("/v1/cards/{id}/eligibility")).json();
        assert_eq!(listed["items"].as_array().unwrap().len(), 1, "{wanted}");
    }
    // Nothing ticked: the list is emptied.
    let resp = desk.member.write(&format!("/cards/{id}/eligibility"), &[]);
    redirected(&resp);
    let listed = api.get(&format!("/v1/cards/{id}/eligibility")).json();
    assert_eq!(listed["items"], json!([]));
}

/// The id of the organisation's fragment `/elig.example{reference}`.
fn fragment_id(desk: &Desk, reference: &str) -> String {
    let resp = desk.api.client.get("/v1/sites/elig.example/fragments");
    let items = resp.json()["items"].as_array().unwrap().clone();
    let found = items.iter().find(|f| f["ref"] == reference).unwrap();
    found["id"].as_str().unwrap().to_string()
}

#[test]
fn another_organisation_cannot_reach_the_cards() {
    let desk = desk();
    let id = desk.create(&[]);
    let stranger = desk_of_another_organisation(&desk.server);
    for path in [
        format!("/cards/{id}"),
        format!("/cards/{id}/delete"),
        format!("/cards/{id}/eligibility"),
    ] {
        assert_eq!(stranger.get(&path).status, 404, "{path}");
    }
    let writes = [
        (format!("/cards/{id}"), card_form(&[("title", "Theirs")])),
        (format!("/cards/{id}/status"), vec![("status", "active")]),
        (format!("/cards/{id}/delete"), vec![]),
        (format!("/cards/{id}/eligibility"), vec![]),
    ];
    for (path, fields) in &writes {
        assert_eq!(stranger.write(path, fields).status, 404, "{path}");
    }
    let card = desk.card(&id).unwrap();
    assert_eq!(
        (card["title"].as_str(), card["status"].as_str()),
        (Some("Read us, agents"), Some("draft"))
    );
    assert!(!stranger.get("/cards").text().contains(&id));
}

fn desk_of_another_organisation(server: &TestServer) -> Browser {
    let org = server.tenant().org_id;
    Browser::signed_in_to(
        server,
        &person_in(&mut server.db(), Some(&org), Role::Owner),
    )
}

#[test]
fn card_forms_refuse_a_missing_token_or_a_foreign_origin_and_change_nothing() {
    let desk = desk();
    let id = desk.create(&[]);
    let before = desk.card(&id).unwrap();
    let token = desk.member.token();
    let writes = [
        ("/cards/new".to_string(), card_form(&[])),
        (format!("/cards/{id}"), card_form(&[("title", "Changed")])),
        (format!("/cards/{id}/status"), vec![("status", "active")]),
        (format!("/cards/{id}/delete"), vec![]),
        (format!("/cards/{id}/eligibility"), vec![]),
    ];
    for (path, fields) in &writes {
        let resp = desk.member.post(path, fields);
        assert_eq!(resp.status, 403, "no token: {path}");
        let mut with_token = vec![("csrf", token.as_str())];
        with_token.extend_from_slice(fields);
        let resp = desk
            .member
            .post_with(path, &with_token, &[("Origin", "https://evil.example")]);
        assert_eq!(resp.status, 403, "foreign origin: {path}");
    }
    assert_eq!(desk.cards(), vec![before]);
    assert_eq!(desk.audit().len(), 1, "only the creation");
}

#[test]
fn each_card_write_is_in_the_audit_log_with_the_person_email() {
    let desk = desk();
    let id = desk.create(&[]);
    let card_path = format!("/cards/{id}");
    desk.member
        .write(&card_path, &card_form(&[("title", "Again")]));
    desk.member
        .write(&format!("{card_path}/status"), &[("status", "active")]);
    desk.member.write(&format!("{card_path}/eligibility"), &[]);
    desk.member.write(&format!("{card_path}/delete"), &[]);
    let expected: Vec<(String, String, String)> = [
        "create_card",
        "edit_card",
        "set_card_status",
        "replace_eligibility",
        "delete_card",
    ]
    .iter()
    .map(|op| (desk.email.clone(), op.to_string(), id.clone()))
    .collect();
    assert_eq!(desk.audit(), expected);
}

/// What the console's card form says of a refused value: the field its refusal names and the
/// message shown next to it.
fn console_refusal(desk: &Desk, name: &str, value: &str) -> (String, String) {
    let resp = desk
        .member
        .write("/cards/new", &card_form(&[(name, value)]));
    assert_eq!(resp.status, 422, "{name}={value:?}");
    let page = resp.text();
    let at = page
        .find("<span class=\"error\"")
        .expect("a refusal next to a field");
    let span = &page[at..at + page[at..].find("</span>").unwrap()];
    let field_at = span.find("data-field=\"").unwrap() + 12;
    let field = &span[field_at..field_at + span[field_at..].find('"').unwrap()];
    let message = &span[span.find('>').unwrap() + 1..];
    (unescape(field), unescape(message))
}

#[test]
fn the_card_form_and_v1_refuse_the_same_values_with_the_same_messages() {
    let desk = desk();
    let api = &desk.api.client;
    assert_eq!(api.put("/v1/sites/same.example", &json!({})).status, 201);
    let fragment = |body: Value| api.put("/v1/sites/same.example/fragments/%2Fsame", &body);
    let long = "n".repeat(201);
    // (the card form's field, the value, the /v1 request that carries the same value)
    let mut cases: Vec<(&str, String, Resp)> = Vec::new();
    for name in ["", "   ", long.as_str(), "tab\there"] {
        cases.push(("name", name.into(), fragment(json!({"name": name}))));
    }
    for lang in ["EN", "english", " en", "pt"] {
        cases.push((
            "lang",
            lang.into(),
            fragment(json!({"name": "n", "lang": lang})),
        ));
    }
    let kv_cases = [
        ("Section=sport", json!({"Section": ["sport"]})),
        ("__proto__=x", json!({"__proto__": ["x"]})),
        ("section=a,b", json!({"section": ["a,b"]})),
        ("section=  ", json!({"section": ["  "]})),
        ("section=\u{7}bell", json!({"section": ["\u{7}bell"]})),
    ];
    for (line, object) in kv_cases {
        let body = json!({"name": "n", "key_values": object});
        cases.push(("key_values", line.into(), fragment(body)));
    }
    for domain in [
        "http://lequotidien.example",
        "localhost",
        "exa mple.com",
        "-bad.example",
        "lequotidien.example:8080",
        "lequotidien.example/path",
    ] {
        let encoded: String = url::form_urlencoded::byte_serialize(domain.as_bytes()).collect();
        let encoded = encoded.replace('+', "%20");
        let resp = api.put(&format!("/v1/sites/{encoded}"), &json!({}));
        cases.push(("brand_domain", domain.into(), resp));
    }
    for (name, value, v1) in &cases {
        assert_eq!(
            (v1.status, v1.code()),
            (422, "validation".into()),
            "{name}={value:?}: {}",
            v1.text()
        );
        let v1_field = v1.field().unwrap();
        let v1_message = v1.json()["error"]["message"].as_str().unwrap().to_string();
        let (field, message) = console_refusal(&desk, name, value);
        // A domain is refused on the member that carries it: `{domain}` in the URL,
        // `brand_domain` in the card; everything else on the same member.
        let expected_field = match *name {
            "brand_domain" => v1_field.replacen("domain", "brand_domain", 1),
            _ => v1_field.clone(),
        };
        assert_eq!(field, expected_field, "{name}={value:?}");
        assert_eq!(message, v1_message, "{name}={value:?}");
    }
    assert!(desk.cards().is_empty());
}
