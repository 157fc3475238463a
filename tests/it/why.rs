//! "Why this card?" (`ops::why`) on the test's server's own snapshot, against what its
//! `/fragment` answers over HTTP for the same page: a page resolved by a rule, by the site
//! default and by none; the cards left out and why; refusals on their field. And the
//! console's short views of the report (`ops::reports::glance`, `card_week`) against the
//! requests just made.

use crate::fixtures::{CardSpec, World};
use crate::harness::{self, db};
use agentcard::delivery::diagnosis::Step;
use agentcard::domain::Ending;
use agentcard::error::ApiError;
use agentcard::ids::{CardId, OrgId};
use agentcard::ops::why::{self, LeftOut, Question};
use agentcard::ops::{self, Actor};
use std::time::{Duration, Instant};

struct Site {
    w: World,
    home: String,
    sport: String,
    home_card: String,
    sport_card: String,
}

fn site() -> Site {
    let mut w = World::new();
    let site = w.site("why.example");
    let home = w.fragment(site, "/home", true);
    let sport = w.fragment(site, "/sport", true);
    w.route(site, "/sport/", false, &sport);
    w.default_fragment(site, &home);
    let home_card = w.card(CardSpec::default(), &[&home]);
    let sport_card = w.card(CardSpec::default(), &[&sport]);
    let draft = w.card(CardSpec::default(), &[&sport]);
    w.sql("UPDATE cards SET status = 'draft' WHERE id = $1", &draft);
    harness::sync_cache();
    Site {
        w,
        home,
        sport,
        home_card,
        sport_card,
    }
}

fn question(page_url: &str, fragment_id: Option<&str>) -> Question {
    Question {
        page_url: page_url.into(),
        lang: "fr".into(),
        fragment_id: fragment_id.map(str::to_string),
        user_agent: Some("Mozilla/5.0 (compatible; ClaudeBot/1.0)".into()),
        ..Question::default()
    }
}

fn caller(org_id: &str) -> ops::Caller {
    ops::orgs::open(&mut db(), &OrgId::parse(org_id).unwrap(), Actor::Cli).unwrap()
}

#[test]
fn the_diagnosis_names_the_card_fragment_serves_by_rule_default_and_none() {
    let s = site();
    let caller = caller(&s.w.org_id);
    let served = why::served(&harness::server().app.delivery.cache, &caller).unwrap();
    let cards = ops::cards::list_cards(&mut db(), &caller).unwrap();
    let cases = [
        ("https://why.example/sport/today", None, &s.sport_card),
        ("https://why.example/other", None, &s.home_card),
        ("https://elsewhere.example/x", Some(&s.sport), &s.sport_card),
    ];
    for (page_url, fragment_id, card) in cases {
        let diagnosis = served
            .diagnose(&question(page_url, fragment_id.map(String::as_str)))
            .unwrap();
        let served_id = diagnosis.served.map(|c| c.id.to_string());
        assert_eq!(served_id.as_deref(), Some(card.as_str()), "{page_url}");
        let encoded: String = url::form_urlencoded::byte_serialize(page_url.as_bytes()).collect();
        let requested = fragment_id.unwrap_or(&s.home);
        let http = s.w.fetch(requested, &format!("&page_url={encoded}"));
        let answer = diagnosis.answer.as_ref().unwrap();
        assert_eq!(
            (answer.status, &answer.body),
            (http.status, &http.body),
            "{page_url}"
        );
        assert!(String::from_utf8_lossy(&http.body).contains(card.as_str()));
        let (marker, purpose) = diagnosis.agent.unwrap();
        assert_eq!(
            (marker.map(|m| m.name), purpose.as_str()),
            (Some("ClaudeBot"), "training")
        );
        // The draft card on /sport, and the card of the other fragment: never looked at.
        let left: Vec<(String, LeftOut)> = why::left_out(&cards, &diagnosis)
            .into_iter()
            .map(|(card, why)| (card.id.to_string(), why))
            .collect();
        assert!(
            left.iter()
                .any(|(_, why)| matches!(why, LeftOut::Status(_))),
            "{left:?}"
        );
        assert!(
            left.iter().any(|(_, why)| *why == LeftOut::NotEligible),
            "{left:?}"
        );
    }
    let steps: Vec<String> = [
        "https://why.example/sport/today",
        "https://why.example/other",
    ]
    .into_iter()
    .map(
        |url| match served.diagnose(&question(url, None)).unwrap().step {
            Step::Rule { path, exact, .. } => format!("rule {path} {exact}"),
            Step::SiteDefault(fragment) => format!("default {}", fragment.id),
            other => format!("{other:?}"),
        },
    )
    .collect();
    assert_eq!(
        steps,
        [
            "rule /sport/ false".to_string(),
            format!("default {}", s.home)
        ]
    );
    let nothing = served
        .diagnose(&question("https://elsewhere.example/x", None))
        .unwrap();
    assert!(matches!(nothing.step, Step::NotASite));
    assert!(nothing.answer.is_none() && nothing.ending.is_none());

    // A paused fragment: 204, as /fragment answers.
    let mut w = s.w;
    w.sql(
        "UPDATE fragments SET status = 'paused' WHERE id = $1",
        &s.sport,
    );
    harness::sync_cache();
    let served = why::served(&harness::server().app.delivery.cache, &caller).unwrap();
    let paused = served
        .diagnose(&question("https://why.example/sport/x", None))
        .unwrap();
    assert_eq!(paused.ending, Some(Ending::FragmentPaused));
    assert_eq!(paused.answer.unwrap().status, 204);
    let page = "&page_url=https%3A%2F%2Fwhy.example%2Fsport%2Fx";
    assert_eq!(w.fetch(&s.home, page).status, 204);
}

#[test]
fn a_question_fragment_would_not_resolve_is_refused_on_its_field() {
    let s = site();
    let served = why::served(&harness::server().app.delivery.cache, &caller(&s.w.org_id)).unwrap();
    let long = format!("https://why.example/{}", "a".repeat(2048));
    let cases = [
        ("ftp://why.example/x", "fr", None, "page_url"),
        ("why.example/x", "fr", None, "page_url"),
        (long.as_str(), "fr", None, "page_url"),
        ("https://why.example/x", "nl", None, "lang"),
        (
            "https://why.example/x",
            "fr",
            Some("frg_000000000000000000000000"),
            "fragment_id",
        ),
    ];
    for (page_url, lang, fragment_id, field) in cases {
        let question = Question {
            lang: lang.into(),
            ..question(page_url, fragment_id)
        };
        match served.diagnose(&question) {
            Err(ApiError::Validation { field: refused, .. }) => assert_eq!(refused, field),
            other => panic!("{page_url} {lang}: {other:?}"),
        }
    }
}

#[test]
fn the_glance_and_a_cards_week_count_the_requests_just_made() {
    let s = site();
    let page = "&page_url=https%3A%2F%2Fwhy.example%2Fsport%2Fa";
    for _ in 0..3 {
        let gptbot = [("User-Agent", "GPTBot/1.1")];
        assert_eq!(s.w.fetch_with(&s.home, page, &gptbot).status, 200);
    }
    // A fragment that resolves and fills nothing: a page of a site with no card.
    let mut w = s.w;
    let bare = w.site("bare.why.example");
    let empty = w.fragment(bare, "/empty", true);
    harness::sync_cache();
    assert_eq!(w.fetch(&empty, "").status, 204);
    let caller = caller(&w.org_id);
    let started = Instant::now();
    let glance = loop {
        let now = jiff::Timestamp::now();
        let glance = ops::reports::glance(&mut db(), &caller.org, now).unwrap();
        if glance.by_hour.total.requests == 4 || started.elapsed() > Duration::from_secs(30) {
            break glance;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        (glance.by_hour.total.requests, glance.by_hour.total.served),
        (4, 3)
    );
    assert_eq!(glance.hours.len(), 24);
    assert_eq!(glance.hours.iter().map(|(_, c)| c.requests).sum::<i64>(), 4);
    let agents: Vec<(String, i64)> = glance
        .top_agents
        .iter()
        .map(|g| (g.key.cells()[0].clone().unwrap(), g.counts.requests))
        .collect();
    assert_eq!(agents, [("GPTBot".to_string(), 3), ("none".to_string(), 1)]);
    let unfilled: Vec<Option<String>> = glance
        .unfilled_fragments
        .iter()
        .map(|g| g.key.cells()[0].clone())
        .collect();
    assert_eq!(unfilled, [Some(empty)]);
    let week = ops::reports::card_week(
        &mut db(),
        &caller.org,
        &CardId::parse(&s.sport_card).unwrap(),
        jiff::Timestamp::now(),
    )
    .unwrap();
    assert_eq!((week.served, week.days.len()), (3, 7));
    assert_eq!(week.days.last().unwrap().1, 3, "today is the last day");
}
