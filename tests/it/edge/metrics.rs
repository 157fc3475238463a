//! The edge's operator metrics (`AGENTCARD_EDGE_METRICS_LISTEN`): a real edge in front of the
//! shared stubs, one request of each kind and one fail-open of each cause, then `/metrics`
//! read by Prometheus's parsers, every count exact; and no listener but the proxy's without
//! the variable.

use super::{cases_sites, get, Edge, Stubs, GPTBOT};
use crate::fixtures::{free_local_addr, scrape, Scrape};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0";
/// Cases of `recipes/cases/` whose card or page makes the edge fail open, by cause.
const FAIL_OPENS: [(&str, &str); 6] = [
    ("/card-no-fill", "no_fill"),
    ("/card-server-error", "card_error"),
    ("/card-slow", "timeout"),
    ("/card-closed", "unreachable"),
    ("/agent-json", "not_html"),
    ("/agent-no-article", "no_article"),
];
/// A case whose page gets its card.
const COMPOSED: &str = "/agent-two-articles";

const REQUESTS: &str = "agentcard_edge_requests_total";
const CARD_CALLS: &str = "agentcard_edge_card_call_duration_seconds_count";
const AGENT_PAGES: &str = "agentcard_edge_agent_page_duration_seconds";
const OPEN: &str = "agentcard_edge_open_connections";

/// The local TCP ports `pid` listens on, from its descriptors and the kernel's socket tables.
fn listening_ports(pid: u32) -> Vec<u16> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter_map(|link| {
            let link = link.to_string_lossy().into_owned();
            Some(
                link.strip_prefix("socket:[")?
                    .strip_suffix(']')?
                    .to_string(),
            )
        })
        .collect();
    let mut ports = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for fields in text
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
        {
            let listening = fields[3] == "0A";
            if listening && inodes.iter().any(|inode| inode == fields[9]) {
                let port = fields[1].rsplit(':').next().unwrap();
                ports.push(u16::from_str_radix(port, 16).unwrap());
            }
        }
    }
    ports.sort_unstable();
    ports
}

/// A request the edge refuses (`400`: a `Content-Length` that is no number).
fn refused(edge: SocketAddr) -> String {
    let mut stream = TcpStream::connect(edge).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let request = "GET /human-chrome HTTP/1.1\r\nHost: news.example\r\nContent-Length: x\r\n\r\n";
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

/// Scrapes until the card calls and the open connections are as expected, for at most 10 s:
/// a call ends on its own coroutine after its page went out, and a connection is counted
/// closed after its socket.
fn scrape_settled(metrics: SocketAddr, calls: f64, open: f64) -> Scrape {
    let started = Instant::now();
    loop {
        let scraped = scrape(metrics);
        let settled =
            scraped.value(CARD_CALLS, &[]) == Some(calls) && scraped.value(OPEN, &[]) == Some(open);
        if settled || started.elapsed() > Duration::from_secs(10) {
            return scraped;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
#[cfg_attr(
    not(feature = "external-tools"),
    ignore = "needs prometheus_client: cargo test --features external-tools"
)]
fn metrics_count_every_request_kind_fail_open_cause_and_placed_card_exactly() {
    let stubs = Stubs::start("none");
    let metrics = free_local_addr();
    let dir = super::tempdir("metrics");
    std::fs::write(dir.join("abc.txt"), "cards.example, acc_1, DIRECT\n").unwrap();
    let abc = dir.join("abc.txt");
    let edge = Edge::start(
        stubs.origin,
        stubs.card,
        &cases_sites(),
        &[
            ("AGENTCARD_EDGE_METRICS_LISTEN", &metrics.to_string()),
            ("AGENTCARD_EDGE_ABC_TXT", abc.to_str().unwrap()),
        ],
    );
    let mut ports = vec![edge.addr.port(), metrics.port()];
    ports.sort_unstable();
    assert_eq!(listening_ports(edge.child.id()), ports);

    let (head, _) = get(edge.addr, "news.example", "/human-chrome", FIREFOX);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    // The proxy's port passes /metrics on to the origin, as any path.
    let (_, body) = get(edge.addr, "news.example", "/metrics", FIREFOX);
    assert!(!String::from_utf8_lossy(&body).contains("agentcard_edge"));
    let (_, page) = get(edge.addr, "news.example", COMPOSED, GPTBOT);
    assert!(String::from_utf8_lossy(&page).contains("class=\"agentcard\""));
    for (path, cause) in FAIL_OPENS {
        get(edge.addr, "news.example", path, GPTBOT);
        let lines = edge.fail_open_lines(&format!("https://news.example{path}"));
        assert_eq!(lines.len(), 1, "{path}: {}", edge.log());
        assert!(
            lines[0].contains(&format!("fail open: {cause} ")),
            "{lines:?}"
        );
    }
    let (head, _) = get(edge.addr, "news.example", "/abc.txt", FIREFOX);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let answer = refused(edge.addr);
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    let held = TcpStream::connect(edge.addr).unwrap();

    let agents = 1.0 + FAIL_OPENS.len() as f64;
    let scraped = scrape_settled(metrics, agents, 1.0);
    drop(held);
    let count = |sample: &str, labels: &[(&str, &str)]| scraped.value(sample, labels);
    for (kind, n) in [
        ("human", 2.0),
        ("agent", agents),
        ("abc_txt", 1.0),
        ("refused", 1.0),
    ] {
        assert_eq!(count(REQUESTS, &[("kind", kind)]), Some(n), "{kind}");
    }
    for (_, cause) in FAIL_OPENS {
        let n = count("agentcard_edge_fail_opens_total", &[("cause", cause)]);
        assert_eq!(n, Some(1.0), "{cause}");
    }
    assert_eq!(count("agentcard_edge_cards_placed_total", &[]), Some(1.0));
    assert_eq!(count(CARD_CALLS, &[]), Some(agents));
    let pages = count(&format!("{AGENT_PAGES}_count"), &[]);
    assert_eq!(pages, Some(agents));
    let all = count(&format!("{AGENT_PAGES}_bucket"), &[("le", "+Inf")]);
    assert_eq!(all, Some(agents));
    // The slow card's page waited out its budget (2 s).
    let within_1s = count(&format!("{AGENT_PAGES}_bucket"), &[("le", "1.0")]);
    assert!(within_1s <= Some(agents - 1.0), "{within_1s:?}");
    let waited = count(&format!("{AGENT_PAGES}_sum"), &[]).unwrap();
    assert!(waited >= 2.0, "{waited}");
    assert_eq!(count("agentcard_edge_card_budget_seconds", &[]), Some(2.0));
    assert_eq!(count(OPEN, &[]), Some(1.0));
}

#[test]
fn without_the_variable_the_edge_listens_on_the_proxy_port_only() {
    let stubs = Stubs::start("none");
    let edge = Edge::start(stubs.origin, stubs.card, &cases_sites(), &[]);
    assert_eq!(listening_ports(edge.child.id()), [edge.addr.port()]);
}

#[test]
fn a_metrics_address_that_is_none_or_taken_stops_the_start_naming_the_variable() {
    let var = "AGENTCARD_EDGE_METRICS_LISTEN";
    super::assert_refused(&cases_sites(), &[(var, "here")], var);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    super::assert_refused(&cases_sites(), &[(var, &taken)], var);
}
