//! Refused requests counted under the organisation the key tells, by reason (decisions.md,
//! "Refused requests are counted"): a `400` or `403` with a live key, a `401` with a revoked
//! key, read back through `admin report` (JSON, CSV); an unknown key counted under nobody.
//! The live check's sample of an organisation's last requests (decisions.md, "Connecting an
//! edge"): written with the flush, one a second at most, the last 50 kept, read through
//! `ops::reports::live`.

use crate::console_fixtures::{person, Browser};
use crate::fixtures::{admin, admin_output, assert_error, next_second, CardSpec, World};
use crate::harness::{self, db, Client, Resp};
use agentcard::auth::{self, SecretKind};
use agentcard::domain::{Ending, Reason, Refused, Role};
use agentcard::ids::{KeyId, OrgId};
use agentcard::ops::reports::live::{self, Sample, SAMPLES_KEPT};
use agentcard::ops::{self, Actor};
use serde_json::{json, Value};
use std::time::{Duration, Instant, SystemTime};

/// A flush runs every `REPORT_FLUSH_MS`; what it writes arrives well within this.
const FLUSHED_WITHIN: Duration = Duration::from_secs(10);

/// `read`'s value once `done` holds of it, or at the bound.
fn read_until<T>(read: impl Fn() -> T, done: impl Fn(&T) -> bool) -> T {
    let started = Instant::now();
    loop {
        let value = read();
        if done(&value) || started.elapsed() > FLUSHED_WITHIN {
            return value;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The organisation's requests counted so far, once there are `expected` (or at the bound).
fn counted(org_id: &str, expected: i64) -> i64 {
    let total = || -> i64 {
        db().query_one(
            "SELECT coalesce(sum(requests), 0)::bigint FROM report_minutes WHERE org_id = $1",
            &[&org_id],
        )
        .unwrap()
        .get(0)
    };
    read_until(total, |total| *total >= expected)
}

/// A delivery key of the organisation, revoked; its secret.
fn revoked_key(org_id: &str) -> String {
    let secret = auth::generate(SecretKind::DeliveryKey, "svc");
    db().execute(
        "INSERT INTO delivery_keys (id, org_id, key_hash, prefix, revoked_at)
         VALUES ($1, $2, $3, $4, now())",
        &[
            &KeyId::generate().to_string(),
            &org_id,
            &secret.hash,
            &secret.prefix,
        ],
    )
    .unwrap();
    secret.value
}

/// `GET /fragment?QUERY` from the shared server.
fn fetch(query: &str) -> Resp {
    Client::new(harness::server().addr).request("GET", &format!("/fragment?{query}"), &[], None)
}

/// `admin report --org ORG --format FORMAT`'s output.
fn report(org_id: &str, format: &str) -> String {
    let (ok, stdout, stderr) = admin_output(&["report", "--org", org_id, "--format", format]);
    assert!(ok, "{stderr}");
    stdout
}

/// Every reason of a refusal with a count of zero, then `counts`.
fn reasons(counts: &[(Refused, i64)]) -> Value {
    let mut reasons = serde_json::Map::new();
    for reason in Refused::ALL {
        reasons.insert(reason.to_string(), json!(0));
    }
    for (reason, n) in counts {
        reasons.insert(reason.to_string(), json!(n));
    }
    Value::Object(reasons)
}

#[test]
fn refusals_count_under_the_keys_organisation_with_their_reasons() {
    let (w, fragment) = World::with_a_served_fragment("refused.example");
    let (neighbour, their_fragment) = World::with_a_served_fragment("neighbour.example");
    let revoked = revoked_key(&w.org_id);
    harness::sync_cache();
    let (org, key) = (w.org_id.clone(), w.key.clone());
    let unknown = auth::generate(SecretKind::DeliveryKey, "svc").value;

    let missing = fetch(&format!("partner_id={org}&lang=fr&api_key={key}"));
    assert_error(&missing, 400, "invalid_request", None);
    let bad_lang = format!("partner_id={org}&fragment_id={fragment}&lang=xx&api_key={key}");
    assert_error(&fetch(&bad_lang), 400, "invalid_request", None);
    assert_error(&w.fetch(&their_fragment, ""), 403, "forbidden", None);
    let not_theirs = format!(
        "partner_id={}&fragment_id={fragment}&lang=fr&api_key={key}",
        neighbour.org_id
    );
    assert_error(&fetch(&not_theirs), 403, "forbidden", None);
    let with_revoked = format!("partner_id={org}&fragment_id={fragment}&lang=fr&api_key={revoked}");
    assert_error(&fetch(&with_revoked), 401, "invalid_key", None);
    let with_unknown = format!("partner_id={org}&fragment_id={fragment}&lang=fr&api_key={unknown}");
    assert_error(&fetch(&with_unknown), 401, "invalid_key", None);
    // A `400` with a revoked key tells no organisation: only a live key's does.
    let revoked_and_missing = format!("partner_id={org}&lang=fr&api_key={revoked}");
    assert_error(&fetch(&revoked_and_missing), 400, "invalid_request", None);
    assert_eq!(w.fetch(&fragment, "").status, 200);
    assert_eq!(neighbour.fetch(&their_fragment, "").status, 200);

    assert_eq!(counted(&org, 6), 6, "five refusals and one served");
    assert_eq!(counted(&neighbour.org_id, 1), 1);
    // A few more flushes: whatever else were counted under either would be written by now.
    std::thread::sleep(Duration::from_millis(5 * harness::REPORT_FLUSH_MS));
    let json: Value = serde_json::from_str(&report(&org, "json")).unwrap();
    assert_eq!(
        (json["requests"].clone(), json["refused"].clone()),
        (json!(6), json!(5))
    );
    let expected = reasons(&[
        (Refused::FragmentIdMissing, 1),
        (Refused::LangInvalid, 1),
        (Refused::FragmentNotTheKeys, 1),
        (Refused::PartnerNotTheKeys, 1),
        (Refused::KeyRevoked, 1),
    ]);
    assert_eq!(json["refused_reasons"], expected);

    let csv = report(&org, "csv");
    let lines: Vec<Vec<&str>> = csv.lines().map(|line| line.split(',').collect()).collect();
    assert_eq!(lines.len(), 2, "{csv}");
    let cell = |column: &str| {
        let at = lines[0].iter().position(|name| *name == column);
        lines[1][at.unwrap_or_else(|| panic!("{column} in {csv}"))]
    };
    assert_eq!(cell("refused"), "5");
    for reason in Refused::ALL {
        let expected = expected[reason.as_str()].to_string();
        assert_eq!(
            cell(&format!("refused_reasons.{reason}")),
            expected,
            "{reason}"
        );
    }

    let table = report(&org, "table");
    assert!(table.contains(Refused::KeyRevoked.fix()), "{table}");
    assert!(!table.contains(Refused::LangMissing.fix()), "{table}");

    let (ok, theirs, stderr) = admin(&["report", "--org", &neighbour.org_id]);
    assert!(ok, "{stderr}");
    assert_eq!(
        (theirs["requests"].clone(), theirs["refused"].clone()),
        (json!(1), json!(0))
    );
    assert_eq!(theirs["refused_reasons"], reasons(&[]));

    let member = Browser::signed_in(&person(Some(&org), Role::Viewer));
    let page = member.get("/reports");
    assert_eq!(page.status, 200);
    let page = page.text();
    for reason in Refused::ALL {
        let listed = format!(
            "<li id=\"refused-{reason}\"><code>{reason}</code>: 1. {}</li>",
            escaped(reason.fix())
        );
        let counted = expected[reason.as_str()] == json!(1);
        assert_eq!(page.contains(&listed), counted, "{reason} in {page}");
    }
}

/// `text` as the console's templates escape it.
fn escaped(text: &str) -> String {
    (text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;"))
    .replace('"', "&quot;")
    .replace('\'', "&#39;")
}

/// The organisation's caller, as the console's pages have it.
fn org_of(org_id: &str) -> agentcard::db::orgs::Org {
    let id = OrgId::parse(org_id).unwrap();
    ops::orgs::open(&mut db(), &id, Actor::Cli).unwrap().org
}

/// The organisation's last `n` samples, latest first, once the latest is `status` (or at the
/// bound).
fn samples(org_id: &str, n: usize, status: u16) -> Vec<Sample> {
    let org = org_of(org_id);
    let read = || live::last_requests(&mut db(), &org, n).unwrap();
    read_until(read, |samples| {
        samples.first().is_some_and(|s| s.status == status)
    })
}

#[test]
fn the_live_check_samples_an_organisations_requests_one_a_second_the_last_fifty() {
    let (mut w, fragment) = World::with_a_served_fragment("sampled.example");
    let paused = {
        let site = w.site("paused.example");
        w.fragment(site, "/p", false)
    };
    w.card(CardSpec::default(), &[&paused]);
    harness::sync_cache();
    let gptbot = [("User-Agent", "Mozilla/5.0 (compatible; GPTBot/1.1)")];
    let page = "&page_url=https%3A%2F%2Fsampled.example%2Fa%3Fq%3D1";

    next_second();
    let started = Instant::now();
    for _ in 0..20 {
        assert_eq!(w.fetch_with(&fragment, page, &gptbot).status, 200);
    }
    let seconds_spent = started.elapsed().as_secs() as usize + 1;
    // Every flush of these requests written.
    std::thread::sleep(Duration::from_millis(5 * harness::REPORT_FLUSH_MS));
    let first = samples(&w.org_id, SAMPLES_KEPT, 200);
    assert!(
        (1..=seconds_spent).contains(&first.len()),
        "one a second at most: {first:?}"
    );
    let mut seconds: Vec<SystemTime> = first.iter().map(|s| s.at).collect();
    seconds.dedup();
    assert_eq!(seconds.len(), first.len(), "{first:?}");
    let served = &first[0];
    assert_eq!(
        (&*served.agent, &*served.page, served.status, served.reason),
        ("GPTBot", "sampled.example/a/", 200, None)
    );

    next_second();
    let missing = format!("partner_id={}&lang=fr&api_key={}", w.org_id, w.key);
    assert_eq!(fetch(&missing).status, 400);
    let latest = &samples(&w.org_id, 1, 400)[0];
    let reason = Reason {
        ending: Ending::InvalidRequest,
        refused: Some(Refused::FragmentIdMissing),
    };
    assert_eq!(
        (&*latest.agent, &*latest.page, latest.status, latest.reason),
        ("none", "(no page)", 400, Some(reason))
    );

    next_second();
    assert_eq!(w.fetch(&paused, "").status, 204);
    let no_fill = samples(&w.org_id, 1, 204);
    assert_eq!(no_fill[0].status, 204);
    assert_eq!(
        no_fill[0].reason.map(|r| r.ending),
        Some(Ending::FragmentPaused)
    );

    // Older samples of other instances beyond the bound: the next flush keeps the last 50.
    db().execute(
        "INSERT INTO report_samples (org_id, at, instance_id, agent, page, status, reason)
         SELECT $1, date_trunc('second', now()) - make_interval(mins => n), 'ins_elsewhere',
                'none', 'sampled.example/old', 204, 'no_eligible_card'
           FROM generate_series(1, 60) AS n",
        &[&w.org_id],
    )
    .unwrap();
    next_second();
    assert_eq!(w.fetch_with(&fragment, page, &gptbot).status, 200);
    let bounded = samples(&w.org_id, 100, 200);
    assert_eq!(bounded.len(), SAMPLES_KEPT);
    let kept: i64 = db()
        .query_one(
            "SELECT count(*) FROM report_samples WHERE org_id = $1",
            &[&w.org_id],
        )
        .unwrap()
        .get(0);
    assert_eq!(kept, SAMPLES_KEPT as i64, "the older ones deleted");
    let newest_first = bounded.windows(2).all(|pair| pair[0].at >= pair[1].at);
    assert!(newest_first, "{bounded:?}");
}
