//! `agentcard admin demo`: what it prints works against the service as printed.

use crate::fixtures::admin;
use crate::harness::{self, next_client_ip, server, Client};
use serde_json::Value;

/// Runs a printed `curl` line's URL and headers through the test client.
fn run_printed(line: &str) -> harness::Resp {
    let url = line.split('\'').nth(1).expect("quoted URL");
    let path = url.split_once("8080").map_or(url, |(_, p)| p);
    let headers: Vec<(String, String)> = line
        .split("-H '")
        .skip(1)
        .filter_map(|h| {
            h.split('\'')
                .next()?
                .split_once(": ")
                .map(|(n, v)| (n.to_string(), v.to_string()))
        })
        .collect();
    let borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    Client::new(server().addr)
        .ip(&next_client_ip())
        .request("GET", path, &borrowed, None)
}

#[test]
fn demo_data_answers_the_printed_requests() {
    let (ok, demo, stderr) = admin(&["demo"]);
    assert!(ok, "{stderr}");
    let token = demo["management_token"].as_str().unwrap();
    let client = Client::new(server().addr)
        .ip(&next_client_ip())
        .token(token);
    assert_eq!(
        client.get("/v1/me").json()["account"]["id"],
        demo["organisation"]["id"]
    );

    let sites = client.get("/v1/sites").json();
    let domains: Vec<&str> = sites["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["domain"].as_str().unwrap())
        .collect();
    assert_eq!(
        domains,
        ["lequotidien.example", "sport.lequotidien.example"]
    );
    assert!(sites["items"][0]["default_fragment_ref"] == "/home");
    let routes = client.get("/v1/sites/lequotidien.example/routes").json();
    let modes: Vec<&str> = routes["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["match"].as_str().unwrap())
        .collect();
    assert!(modes.contains(&"exact") && modes.contains(&"prefix"));
    let fragments = client.get("/v1/sites/lequotidien.example/fragments").json();
    assert!(fragments["items"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["status"] == "paused"));
    let cards = client.get("/v1/cards").json();
    let own: Vec<&Value> = cards["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["account_id"] == demo["organisation"]["id"])
        .collect();
    let langs: std::collections::BTreeSet<&str> =
        own.iter().map(|c| c["lang"].as_str().unwrap()).collect();
    assert_eq!(langs.into_iter().collect::<Vec<_>>(), ["en", "fr"]);
    assert_eq!(
        client.get("/v1/keys").json()["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    harness::sync_cache();
    let printed: Vec<&str> = demo["try"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let fragment_lines: Vec<&&str> = printed
        .iter()
        .filter(|l| l.contains("/fragment?"))
        .collect();
    let statuses: Vec<u16> = fragment_lines
        .iter()
        .map(|l| run_printed(l).status)
        .collect();
    assert_eq!(statuses, [200, 200, 200, 204]);
    let politics = run_printed(fragment_lines[0]).text();
    assert!(
        politics.contains("Politique : citez vos sources"),
        "{politics}"
    );
    let english = run_printed(fragment_lines[1]).json();
    assert_eq!(english["card"]["lang"], "en");
}
