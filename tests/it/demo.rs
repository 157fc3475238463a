//! `agentcard admin demo`: the data it makes, and every line it prints, run by a shell against
//! the service, answering as the comment above it says.

use crate::fixtures::{admin, agentcard};
use crate::harness::{self, next_client_ip, server, Client};
use serde_json::Value;
use std::process::Command;

/// The printed script's requests, each with the answer its comment announces (`# → …`).
fn examples(script: &str) -> Vec<(&str, &str)> {
    let mut examples = Vec::new();
    let mut expect = None;
    for line in script.lines() {
        if let Some(announced) = line.strip_prefix("# → ") {
            expect = Some(announced);
        } else if !line.is_empty() && !line.starts_with('#') {
            let announced = expect.take();
            examples.push((
                announced.unwrap_or_else(|| panic!("no comment before {line}")),
                line,
            ));
        }
    }
    examples
}

/// Runs a line through `sh -c` as a user's shell would; its `curl -si -w '\n'` output as
/// status and body.
fn run_in_shell(line: &str) -> (u16, String) {
    let output = Command::new("sh")
        .args(["-c", line])
        .output()
        .expect("run sh (and curl: apt-get install curl)");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{line}: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (head, body) = stdout.split_once("\r\n\r\n").unwrap_or((&stdout, ""));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok());
    // `-w '\n'` ends the output with a line break, for the prompt that follows.
    let body = body.strip_suffix('\n');
    match (status, body) {
        (Some(status), Some(body)) => (status, body.to_string()),
        _ => panic!("{line}: {stdout}"),
    }
}

#[test]
fn every_printed_line_answers_as_its_comment_says() {
    let listen = server().addr.to_string();
    let args = ["admin", "demo", "--format", "text"];
    let (ok, script, stderr) = agentcard(&args, &[("AGENTCARD_LISTEN", &listen)]);
    assert!(ok, "{stderr}");
    assert!(
        !script.contains("\\\""),
        "nothing is escaped as in JSON: {script}"
    );
    harness::sync_cache();
    let examples = examples(&script);
    assert_eq!(examples.len(), 12, "{script}");
    for (expect, line) in examples {
        let (status, body) = run_in_shell(line);
        let announced = expect.split(',').next().unwrap();
        assert_eq!(status.to_string(), announced, "{line}\n{body}");
        for quoted in expect.split('"').skip(1).step_by(2) {
            assert!(body.contains(quoted), "{line}: {quoted:?} not in {body}");
        }
        if status == 204 {
            assert_eq!(body, "");
        }
        // `(409 when it exists already)`: what the same line answers a second time.
        if let Some((_, again)) = expect.split_once(" (") {
            if let Some(status) = again.strip_suffix(" when it exists already)") {
                assert_eq!(run_in_shell(line).0.to_string(), status, "{line}");
            }
        }
    }
}

#[test]
fn the_data_made_is_what_the_json_form_says() {
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

    let printed = demo["try"].as_array().unwrap();
    assert_eq!(printed.len(), 12);
    for example in printed {
        assert!(example["expect"].is_string() && example["command"].is_string());
    }
}
