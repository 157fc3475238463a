//! `agentcard admin` through the real binary, against the test database.

use crate::fixtures::admin;
use crate::harness::{self, next_client_ip, server, Client};
use serde_json::Value;

#[test]
fn org_then_token_then_me() {
    let (ok, org, _) = admin(&["org", "create", "--name", "Le Quotidien"]);
    assert!(ok);
    let org_id = org["id"].as_str().unwrap();
    assert!(org_id.starts_with("acc_") && org_id.len() >= 24);
    assert_eq!(org["name"], "Le Quotidien");

    let (ok, token, _) = admin(&["token", "create", "--org", org_id, "--name", "ci"]);
    assert!(ok);
    let secret = token["token"].as_str().unwrap();
    assert!(secret.starts_with("svc_mgmt_") && secret.len() == 49);
    assert_eq!(token["prefix"], &secret[..12]);
    assert_eq!(token["expires_at"], Value::Null);

    let client = Client::new(server().addr)
        .ip(&next_client_ip())
        .token(secret);
    let me = client.get("/v1/me");
    assert_eq!(me.status, 200);
    assert_eq!(me.json()["account"]["id"], org_id);
    assert_eq!(me.json()["token"]["id"], token["id"]);

    let (ok, listed, _) = admin(&["token", "list", "--org", org_id]);
    assert!(ok);
    assert_eq!(listed["items"].as_array().unwrap().len(), 1);
    assert!(
        !listed.to_string().contains(secret),
        "the token is shown once only"
    );

    let token_id = token["id"].as_str().unwrap();
    let (ok, revoked, _) = admin(&["token", "revoke", token_id]);
    assert!(ok && revoked["revoked_at"].is_string());
    assert_eq!(client.get("/v1/me").status, 401);
    let (ok, deleted, _) = admin(&["token", "delete", token_id]);
    assert!(ok && deleted["deleted"] == true);
}

#[test]
fn support_tokens_carry_their_expiry() {
    let (_, org, _) = admin(&["org", "create", "--name", "Support Test"]);
    let (ok, token, _) = admin(&[
        "token",
        "create",
        "--org",
        org["id"].as_str().unwrap(),
        "--support",
    ]);
    assert!(ok);
    assert_eq!(token["creator"], "support");
    assert!(token["expires_at"].is_string());
}

#[test]
fn errors_go_to_stderr_with_a_failing_exit() {
    let (ok, out, stderr) = admin(&["token", "create", "--org", "acc_doesnotexist"]);
    assert!(!ok);
    assert_eq!(out, Value::Null);
    assert!(stderr.contains("not found"), "{stderr}");
    let (ok, _, stderr) = admin(&["org", "create", "--name", "  "]);
    assert!(!ok && stderr.contains("name: "), "{stderr}");
    let _ = harness::db();
}

#[test]
fn abc_txt_check_reads_leniently_and_names_refused_lines() {
    let dir = std::env::temp_dir().join(format!("agentcard-abc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.txt");
    std::fs::write(
        &good,
        "\u{feff}# ours\nAgentcard.example, acc_1, direct # comment\n\nb.example,acc_2,RESELLER,x\n",
    )
    .unwrap();
    let (ok, stdout, stderr) =
        crate::fixtures::agentcard(&["abc-txt", "check", good.to_str().unwrap()], &[]);
    assert!(ok, "{stderr}");
    let records: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        records,
        serde_json::json!({"records": ["agentcard.example, acc_1, DIRECT", "b.example, acc_2, RESELLER"]})
    );
    let bad = dir.join("bad.txt");
    std::fs::write(
        &bad,
        "a.example, acc_1, DIRECT\nb.example acc_2\n# fine\n, acc_3, DIRECT\nd.example, acc_4, PARTNER\n",
    )
    .unwrap();
    let (ok, stdout, stderr) =
        crate::fixtures::agentcard(&["abc-txt", "check", bad.to_str().unwrap()], &[]);
    assert!(!ok && stdout.is_empty());
    // Every refused line, each on a line of its own.
    let bad = bad.display();
    assert_eq!(
        stderr,
        format!(
            "agentcard: {bad}: line 2: a line needs three fields: provider domain, account id, relationship\n\
             agentcard: {bad}: line 4: the provider domain and the account id must not be empty\n\
             agentcard: {bad}: line 5: the relationship must be DIRECT or RESELLER\n"
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn admin_abc_txt_prints_the_line_a_publisher_adds_as_json_or_text() {
    let (_, org, _) = admin(&["org", "create", "--name", "ABC"]);
    let org_id = org["id"].as_str().unwrap();
    let args = ["admin", "abc-txt", "--org", org_id];
    let host = [("AGENTCARD_BASE_HOST", "Cards.Example:8443")];
    let (ok, stdout, stderr) = crate::fixtures::agentcard(&args, &host);
    assert!(ok, "{stderr}");
    let line = format!("cards.example, {org_id}, DIRECT");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).unwrap(),
        serde_json::json!({
            "line": line, "domain": "cards.example", "account_id": org_id, "relationship": "DIRECT",
        })
    );
    let text = [&args[..], &["--format", "text"]].concat();
    let (ok, stdout, stderr) = crate::fixtures::agentcard(&text, &host);
    assert!(ok, "{stderr}");
    assert_eq!(stdout, format!("{line}\n"));
    let (ok, _, stderr) = crate::fixtures::agentcard(&args, &[]);
    assert!(!ok && stderr.contains("AGENTCARD_BASE_HOST"), "{stderr}");
    let unknown = ["admin", "abc-txt", "--org", "acc_nobody"];
    assert!(!crate::fixtures::agentcard(&unknown, &host).0);
}

#[test]
fn key_create_makes_a_delivery_key_shown_once() {
    let (_, org, _) = admin(&["org", "create", "--name", "Key Maker"]);
    let org_id = org["id"].as_str().unwrap();
    let (ok, key, stderr) = admin(&["key", "create", "--org", org_id, "--name", " edge "]);
    assert!(ok, "{stderr}");
    let secret = key["key"].as_str().unwrap();
    assert!(
        secret.starts_with("svc_live_") && secret.len() == 49,
        "{secret}"
    );
    assert_eq!(key["name"], "edge");
    assert_eq!(key["prefix"], &secret[..12]);
    let (ok, listed, _) = admin(&["token", "create", "--org", org_id]);
    assert!(ok);
    let client = Client::new(server().addr)
        .ip(&next_client_ip())
        .token(listed["token"].as_str().unwrap());
    let keys = client.get("/v1/keys").json();
    assert_eq!(keys["items"][0]["id"], key["id"]);
    assert!(
        !keys.to_string().contains(secret),
        "the key is shown once only"
    );

    let (ok, _, stderr) = admin(&["key", "create", "--org", "acc_nobody"]);
    assert!(!ok && stderr.contains("not found"), "{stderr}");
    let (ok, _, stderr) = admin(&["key", "create", "--org", org_id, "--name", "a\nb"]);
    assert!(!ok && stderr.contains("control characters"), "{stderr}");
}
