//! Each console page reads its data in a bounded number of queries, whatever the size of the
//! organisation: with 50 sites, a page that asked for each site's fragments apart (one query
//! per site) would send more than 50.
//!
//! How the queries are counted: the test's server reaches its database through a TCP proxy of
//! the test (`pg_proxy`), which reads the PostgreSQL protocol the server sends and counts, per
//! connection, the statements it runs (`Q`, a simple query; `E`, an execute of the extended
//! protocol) before passing them on. The count is exact and synchronous: a statement is counted before
//! PostgreSQL sees it, so by the time the page is answered every statement of it has been
//! counted (PostgreSQL's own statistics reach `pg_stat_*` only up to seconds later, and
//! `pg_stat_statements` is not loaded on the test machine). A console request runs on one pooled
//! connection, so the page's count is the largest growth of one connection's count during the
//! request; the server's background threads (cache refresher, report flusher) query on
//! connections of their own, a pooled connection reused meanwhile adds one or two at most.

use crate::console_fixtures::{person_in, site_with_front_page, Browser};
use crate::fixtures::card_in;
use crate::harness::own_server_via;
use crate::pg_proxy::PgProxy;
use agentcard::console::{page_table, Access};
use agentcard::db::orgs::Creator;
use agentcard::db::people;
use agentcard::domain::{
    CanonicalPath, CardStatus, DomainName, FragmentRef, MatchMode, OrgName, Role, TokenName,
};
use agentcard::ids::{CardId, FragmentId, KeyId, PersonId, RouteId, TokenId};
use agentcard::ops::{self, routes::RouteWrite, Actor, Scope};

const SITES: usize = 50;
/// More than any page needs (the session, the organisation, its lists, a transaction's `BEGIN`
/// and `COMMIT`: 4 to 8 statements), with room for a background statement on the same pooled
/// connection; far fewer than one query per site.
const BOUND: usize = 12;

/// Every `GET` page of the console's table for a signed-in owner, its captures naming the test's
/// own objects, so that a page added later is counted too.
#[test]
fn each_console_page_reads_an_organisation_of_50_sites_in_a_bounded_number_of_queries() {
    let proxy = PgProxy::start();
    let server = own_server_via(|url| proxy.in_front_of(url));
    let mut db = server.db();
    let org =
        agentcard::db::orgs::create_org(&mut db, &OrgName::parse("Fifty Sites").unwrap()).unwrap();
    let caller = ops::orgs::open(&mut db, &org.id, Actor::Cli).unwrap();
    let front = FragmentRef::parse("front").unwrap();
    let mut fragment = String::new();
    for n in 0..SITES {
        let domain = DomainName::parse(&format!("site{n:02}.example")).unwrap();
        fragment = site_with_front_page(&mut db, &caller, &domain, &front).to_string();
    }
    let last_site = format!("site{:02}.example", SITES - 1);
    let rule = RouteWrite {
        path: CanonicalPath::parse("/news", "path").unwrap(),
        mode: MatchMode::Prefix,
        fragment_ref: front,
    };
    let domain = DomainName::parse(&last_site).unwrap();
    let route = ops::routes::create_route(&mut db, &caller, &domain, &rule)
        .unwrap()
        .id;
    // A live key and token for their revocation pages, revoked ones for their deletion pages.
    let keys: Vec<KeyId> = (0..2)
        .map(|_| {
            ops::keys::create_key(&mut db, &caller, None, "test")
                .unwrap()
                .key
                .id
        })
        .collect();
    ops::keys::revoke_key(&mut db, &caller, &keys[1]).unwrap();
    let name = TokenName::parse("script").unwrap();
    let tokens: Vec<TokenId> = (0..2)
        .map(|_| {
            let made = ops::tokens::create_token(&mut db, &caller, &name, Creator::Owner, "test");
            made.unwrap().token.id
        })
        .collect();
    ops::tokens::revoke_token(&mut db, Scope::Org(&caller), &tokens[1]).unwrap();
    // A pending invitation for its revocation page.
    let url = server.app.config.console_url.clone().unwrap();
    let invited = agentcard::domain::Email::parse("invited@example.org").unwrap();
    ops::members::invite(&mut db, &caller, &url, &invited, Role::Member).unwrap();
    let invitation: i64 = db
        .query_one(
            "SELECT id FROM one_time_links WHERE org_id = $1 AND email = 'invited@example.org'",
            &[&org.id],
        )
        .unwrap()
        .get(0);
    let org_text = org.id.to_string();
    let card = card_in(&mut db, Some(&org_text), CardStatus::Draft).id;
    let member = person_in(&mut db, Some(&org_text), Role::Member);
    let member = people::find_by_email(&mut db, &member).unwrap().unwrap().id;
    let owner = person_in(&mut db, Some(&org_text), Role::Owner);
    let browser = Browser::signed_in_to(&server, &owner);
    let own = |segment: &str, revoked: usize| -> String {
        if segment == "1" {
            invitation.to_string()
        } else if CardId::parse(segment).is_some() {
            card.clone()
        } else if KeyId::parse(segment).is_some() {
            keys[revoked].to_string()
        } else if TokenId::parse(segment).is_some() {
            tokens[revoked].to_string()
        } else if FragmentId::parse(segment).is_some() {
            fragment.clone()
        } else if RouteId::parse(segment).is_some() {
            route.to_string()
        } else if PersonId::parse(segment).is_some() {
            member.to_string()
        } else if segment == "sample.example" {
            last_site.clone()
        } else {
            segment.to_string()
        }
    };

    let signed_in = page_table()
        .into_iter()
        .filter(|p| p.method == "GET" && p.access != Access::Public);
    for page in signed_in {
        let revoked = usize::from(page.path.ends_with("/delete"));
        let segments = page.path.split('/').map(|segment| own(segment, revoked));
        let path = segments.collect::<Vec<_>>().join("/");
        let before = proxy.counts();
        let answer = browser.get(&path);
        let queries = proxy.largest_growth_since(&before);
        // No icon was fetched (the fetch is off in tests): its page reads it and finds none.
        let found = answer.status == 200 || path.ends_with("/icon") && answer.status == 404;
        assert!(found, "{path}: {} {}", answer.status, answer.text());
        assert!(
            (1..=BOUND).contains(&queries),
            "{path} ran {queries} queries for an organisation of {SITES} sites (bound {BOUND})"
        );
        let lists_every_site = ["/sites", "/cards/{card}/eligibility"]
            .iter()
            .any(|pattern| path == pattern.replace("{card}", &card));
        if lists_every_site {
            assert!(
                answer.text().contains(&last_site),
                "{path} lists every site"
            );
        }
    }
}
