//! `openapi.json` against the real server: schemathesis (a Python program from PyPI, installed
//! by `scripts/test.sh` into `.venv/`; this test fails when `st` is missing) generates requests from the
//! description for every operation and checks every answer: no `5xx`, statuses, content types,
//! headers and bodies as described, every body the description refuses refused
//! (`negative_data_rejection`) and every body it allows accepted (`positive_data_acceptance`).
//!
//! What the description cannot say is stored data (a fragment that must exist, the site's
//! rules). The run points such members at objects made here: path parameters through the
//! configuration, body members through the hook (`HOOK`), which also spreads the requests over
//! a pool of tokens, each with its own client address, so that no answer is a `429` (the test
//! checks that none is). Each operation writes to its own site, so that no operation changes
//! what another one relies on. Only `PUT …/routes` may answer `422` to a described body: two
//! rules equal after canonicalisation, which JSON Schema cannot see.
//!
//! Seed and examples are fixed so that a run is repeatable; `AGENTCARD_SCHEMATHESIS_SEED`
//! (a number, or `random`) and `AGENTCARD_SCHEMATHESIS_EXAMPLES` explore further.
//!
//! A table of values beside it, the ones schemathesis once found and the edges of each rule, is
//! judged both by the description (Python's `jsonschema`, from PyPI like schemathesis) and by the
//! server: the two verdicts must be the expected one.

use crate::fixtures::{self, ServeProcess};
use crate::harness::{self, db, tenant, Tenant, CLIENT_IP_HEADER};
use agentcard::domain::CardStatus;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The version `scripts/test.sh` installs; another one may read the configuration differently.
const SCHEMATHESIS_VERSION: &str = "4.32.5";
const SEED: &str = "20261124";
const EXAMPLES: &str = "40";
/// The whole run, on a loaded two-core machine, stays well under this.
const RUN_LIMIT: Duration = Duration::from_secs(300);
/// Tokens the hook takes in turn: enough that none reaches its 60 writes a minute.
const TOKENS: usize = 40;

const CHECKS: [&str; 7] = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "positive_data_acceptance",
];

/// The sites of the run, one per group of operations that write to it.
const DEFAULTS_SITE: &str = "example.com";
const FRAGMENTS_SITE: &str = "news.example.com";
const NEW_RULES_SITE: &str = "routes.example.com";
const OLD_RULES_SITE: &str = "rules.example.com";

/// Per request: the next token of the pool and its client address; the stored objects that body
/// members must name; no `default_fragment_ref` for `PUT /v1/sites/{domain}`, whose domain is
/// any described one and so a new site without fragments.
const HOOK: &str = r#"
import itertools
import os

import schemathesis

TOKENS = os.environ["AGENTCARD_SCHEMATHESIS_TOKENS"].split(",")
TURN = itertools.count()


def each(member, **values):
    def pin(body):
        items = body.get(member)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict):
                item.update(values)
    return pin


PINS = {
    "PUT /v1/sites/{domain}": lambda body: body.pop("default_fragment_ref", None),
    "PUT /v1/sites/{domain}/default-fragment": lambda body: body.update(ref="/home"),
    "POST /v1/sites/{domain}/routes": lambda body: body.update(ref="/politics"),
    "PUT /v1/sites/{domain}/routes": each("routes", ref="/politics"),
    "PUT /v1/cards/{id}/eligibility": each("fragments", domain="example.com", ref="/politics"),
}


@schemathesis.hook
def before_call(context, case, kwargs):
    n = next(TURN) % len(TOKENS)
    headers = case.headers if case.headers is not None else {}
    headers["Authorization"] = "Bearer " + TOKENS[n]
    headers["CLIENT_IP_HEADER"] = "10.251.0.%d" % (n + 1)
    case.headers = headers
    pin = PINS.get(case.operation.label)
    if pin is not None and isinstance(case.body, dict):
        pin(case.body)
"#;

/// The objects the run relies on, made through the API and the console's db functions.
struct Stored {
    tenant: Tenant,
    card_id: String,
    key_id: String,
    rule_id: String,
}

fn store() -> Stored {
    let t = tenant();
    for site in [
        DEFAULTS_SITE,
        FRAGMENTS_SITE,
        NEW_RULES_SITE,
        OLD_RULES_SITE,
    ] {
        fixtures::new_site(&t, site);
        fixtures::new_fragment(&t, site, "/politics");
    }
    fixtures::new_fragment(&t, DEFAULTS_SITE, "/home");
    let rule = t.client.post(
        &format!("/v1/sites/{OLD_RULES_SITE}/routes"),
        &json!({"path_prefix": "/archives", "match": "prefix", "ref": "/politics"}),
    );
    assert_eq!(rule.status, 201, "{}", rule.text());
    let key = t.client.post("/v1/keys", &json!({"name": "fixture"}));
    assert_eq!(key.status, 201, "{}", key.text());
    let card_id = fixtures::card(Some(&t.org_id), CardStatus::Active).id;
    Stored {
        card_id,
        key_id: key.json()["id"].as_str().unwrap().to_owned(),
        rule_id: rule.json()["id"].as_str().unwrap().to_owned(),
        tenant: t,
    }
}

/// The configuration: the checks, the hook, and the stored objects path parameters name.
fn configuration(stored: &Stored, hook: &Path) -> String {
    // No state kept between runs (schemathesis would reuse what an earlier run found).
    let mut toml = format!(
        "hooks = \"{}\"\n\n[cache]\nenabled = false\n\n[checks]\nenabled = false\n",
        hook.display()
    );
    for check in CHECKS {
        toml.push_str(&format!("{check}.enabled = true\n"));
    }
    // The stateful phase chains positive requests. Its negative check is off: schemathesis
    // validates a path parameter taken from an earlier answer in its encoded form
    // (`%2Fpolitics` against `Ref`) and then calls the request negative.
    toml.push_str(
        "\n[phases.stateful]\ngeneration.mode = \"positive\"\n\
         checks.negative_data_rejection.enabled = false\n",
    );
    let (card, key, rule) = (&stored.card_id, &stored.key_id, &stored.rule_id);
    let pins: [(&str, String); 11] = [
        ("list_fragments", format!("domain = \"{FRAGMENTS_SITE}\"")),
        ("put_fragment", format!("domain = \"{FRAGMENTS_SITE}\"")),
        (
            "put_default_fragment",
            format!("domain = \"{DEFAULTS_SITE}\""),
        ),
        (
            "delete_default_fragment",
            format!("domain = \"{DEFAULTS_SITE}\""),
        ),
        ("list_routes", format!("domain = \"{DEFAULTS_SITE}\"")),
        ("replace_routes", format!("domain = \"{DEFAULTS_SITE}\"")),
        ("create_route", format!("domain = \"{NEW_RULES_SITE}\"")),
        (
            "delete_route",
            format!("domain = \"{OLD_RULES_SITE}\", id = \"{rule}\""),
        ),
        ("get_eligibility", format!("id = \"{card}\"")),
        ("replace_eligibility", format!("id = \"{card}\"")),
        ("revoke_key", format!("id = \"{key}\"")),
    ];
    for (operation, parameters) in pins {
        toml.push_str(&format!(
            "\n[[operations]]\ninclude-operation-id = \"{operation}\"\nparameters = {{ {parameters} }}\n"
        ));
        if operation == "replace_routes" {
            toml.push_str(
                "checks.positive_data_acceptance.expected-statuses = \
                 [\"2xx\", \"401\", \"403\", \"404\", \"409\", \"422\", \"429\", \"5xx\"]\n",
            );
        }
    }
    toml
}

/// `st --version`, or a failure that says how to install it.
fn schemathesis_version() -> String {
    let output = harness::python_tool("st").arg("--version").output();
    let version = output
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    version.unwrap_or_else(|| {
        panic!(
            "schemathesis (`st`) is not installed: {}",
            harness::install_hint(&format!("schemathesis=={SCHEMATHESIS_VERSION}"))
        )
    })
}

fn setting(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

/// Runs `st` to its end (killed past `RUN_LIMIT`); its exit success and its output.
fn run_schemathesis(dir: &Path, args: &[String], tokens: &[String]) -> (bool, String) {
    let mut child = harness::python_tool("st")
        .current_dir(dir)
        .args(args)
        .env("AGENTCARD_SCHEMATHESIS_TOKENS", tokens.join(","))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start st");
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let readers = [reader(stdout), reader(stderr)];
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for st") {
            break Some(status);
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let output: String = readers
        .into_iter()
        .map(|r| r.join().unwrap_or_default())
        .collect();
    match status {
        Some(status) => (status.success(), output),
        None => (false, format!("{output}\nst stopped after {RUN_LIMIT:?}")),
    }
}

fn reader(mut pipe: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

/// The operation (`PUT /v1/sites/{domain}`) of a request as sent, by the paths of the description.
fn operation_of(templates: &[String], method: &str, uri: &str) -> Option<String> {
    let path = uri.split_once("://").map_or(uri, |(_, rest)| {
        rest.find('/').map_or("/", |at| &rest[at..])
    });
    let path = path.split('?').next().unwrap_or(path);
    let segments: Vec<&str> = path.split('/').collect();
    templates.iter().find_map(|template| {
        let (template_method, template_path) = template.split_once(' ')?;
        let parts: Vec<&str> = template_path.split('/').collect();
        let fits = template_method == method
            && parts.len() == segments.len()
            && parts
                .iter()
                .zip(&segments)
                .all(|(part, segment)| part.starts_with('{') || part == segment);
        fits.then(|| template.clone())
    })
}

/// What the run's report holds: answers per operation and status, and the checks that ran.
struct Report {
    statuses: BTreeMap<String, BTreeMap<u16, usize>>,
    checks: BTreeSet<String>,
}

fn read_report(dir: &Path, templates: &[String]) -> Report {
    let file = std::fs::read_dir(dir)
        .expect("the report directory")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|e| e == "ndjson"))
        .expect("an ndjson report");
    let mut report = Report {
        statuses: BTreeMap::new(),
        checks: BTreeSet::new(),
    };
    for line in std::fs::read_to_string(file).unwrap().lines() {
        let event: Value = serde_json::from_str(line).expect("an ndjson line");
        let recorder = &event["ScenarioFinished"]["recorder"];
        for checks in recorder["checks"]
            .as_object()
            .into_iter()
            .flat_map(|o| o.values())
        {
            for check in checks.as_array().into_iter().flatten() {
                report
                    .checks
                    .insert(check["name"].as_str().unwrap_or_default().to_owned());
            }
        }
        let interactions = recorder["interactions"].as_object();
        for interaction in interactions.into_iter().flat_map(|o| o.values()) {
            let (request, response) = (&interaction["request"], &interaction["response"]);
            let Some(status) = response["status_code"].as_u64() else {
                continue;
            };
            let method = request["method"].as_str().unwrap_or_default();
            let uri = request["uri"].as_str().unwrap_or_default();
            // The requests with a method the description does not give a path answer `405`.
            let operation = operation_of(templates, method, uri)
                .unwrap_or_else(|| format!("{method} (another method)"));
            *report
                .statuses
                .entry(operation)
                .or_default()
                .entry(u16::try_from(status).unwrap())
                .or_default() += 1;
        }
    }
    report
}

fn described_operations(description: &Value) -> Vec<String> {
    let mut operations = Vec::new();
    for (path, item) in description["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if method != "parameters" {
                operations.push(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    operations
}

#[test]
#[cfg_attr(
    not(feature = "external-tools"),
    ignore = "needs schemathesis: cargo test --features external-tools"
)]
fn schemathesis_finds_the_server_as_openapi_json_describes_it() {
    let version = schemathesis_version();
    let description_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("openapi.json");
    let description: Value =
        serde_json::from_str(&std::fs::read_to_string(&description_path).unwrap()).unwrap();
    let templates = described_operations(&description);

    let server = ServeProcess::start_with(&[
        ("RUST_LOG", "warn"),
        ("AGENTCARD_CLIENT_IP_HEADER", CLIENT_IP_HEADER),
        ("AGENTCARD_TRUSTED_PROXIES", "127.0.0.0/8"),
    ]);
    let stored = store();
    let mut db = db();
    let tokens: Vec<String> = (0..TOKENS)
        .map(|_| harness::new_token(&mut db, &stored.tenant.org_id, false).1)
        .collect();

    let dir = std::env::temp_dir().join(format!("agentcard-schemathesis-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let hook = dir.join("hooks.py");
    std::fs::write(&hook, HOOK.replace("CLIENT_IP_HEADER", CLIENT_IP_HEADER)).unwrap();
    let config = dir.join("schemathesis.toml");
    std::fs::write(&config, configuration(&stored, &hook)).unwrap();
    let report_dir = dir.join("report");

    let seed = setting("AGENTCARD_SCHEMATHESIS_SEED", SEED);
    let mut args: Vec<String> = vec![
        "--config-file".into(),
        config.display().to_string(),
        "run".into(),
        description_path.display().to_string(),
        "--url".into(),
        format!("http://{}", server.addr),
        "--max-examples".into(),
        setting("AGENTCARD_SCHEMATHESIS_EXAMPLES", EXAMPLES),
        "--workers".into(),
        "1".into(),
        "--generation-database".into(),
        "none".into(),
        "--generation-with-security-parameters".into(),
        "false".into(),
        "--report".into(),
        "ndjson".into(),
        "--report-dir".into(),
        report_dir.display().to_string(),
        "--no-color".into(),
    ];
    if seed != "random" {
        args.extend(["--seed".into(), seed]);
    }
    let started = Instant::now();
    let (passed, output) = run_schemathesis(&dir, &args, &tokens);
    let elapsed = started.elapsed();
    assert!(
        passed,
        "schemathesis ({version}) found the server and openapi.json apart; \
         configuration and hook in {}:\n{output}",
        dir.display()
    );

    let report = read_report(&report_dir, &templates);
    let summary: Vec<String> = report
        .statuses
        .iter()
        .map(|(operation, statuses)| format!("{operation}: {statuses:?}"))
        .collect();
    println!(
        "{version}, {elapsed:?}, answers per operation and status:\n{}",
        summary.join("\n")
    );
    let missing_checks: Vec<&str> = CHECKS
        .into_iter()
        .filter(|check| !report.checks.contains(*check))
        .collect();
    assert_eq!(missing_checks, Vec::<&str>::new(), "checks that never ran");
    let limited: Vec<&String> = summary.iter().filter(|s| s.contains("429:")).collect();
    assert!(limited.is_empty(), "rate limits hid answers: {limited:?}");
    // Every operation reached its work at least once: the stored objects were the right ones.
    let unserved: Vec<&String> = templates
        .iter()
        .filter(|operation| {
            !report
                .statuses
                .get(*operation)
                .is_some_and(|statuses| statuses.keys().any(|status| (200..300).contains(status)))
        })
        .collect();
    assert!(
        unserved.is_empty(),
        "operations never answered 2xx: {unserved:?}"
    );
    let log = server.log();
    assert!(!log.contains("panicked"), "the server panicked:\n{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Judges each `[pointer, value]` against the description's schema at `pointer`; prints the
/// verdicts as a JSON array.
const JUDGE: &str = r#"
import json
import sys

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

task = json.load(sys.stdin)
description = Resource.from_contents(task["description"], default_specification=DRAFT202012)
registry = Registry().with_resource("urn:openapi", description)
verdicts = [
    Draft202012Validator({"$ref": "urn:openapi#" + pointer}, registry=registry).is_valid(value)
    for pointer, value in task["cases"]
]
print(json.dumps(verdicts))
"#;

/// A value, the request that carries it to the server, and whether both should take it.
struct Case {
    pointer: &'static str,
    value: Value,
    method: &'static str,
    path: String,
    body: Value,
    accepted: bool,
}

/// A body member: the body is the value, under the operation's body schema.
fn body(
    pointer: &'static str,
    method: &'static str,
    path: &str,
    value: Value,
    accepted: bool,
) -> Case {
    Case {
        pointer,
        method,
        path: path.to_owned(),
        body: value.clone(),
        value,
        accepted,
    }
}

fn judged_by_the_description(description: &Value, cases: &[Case]) -> Vec<bool> {
    let task = json!({
        "description": description,
        "cases": cases.iter().map(|c| json!([c.pointer, c.value])).collect::<Vec<_>>(),
    });
    let mut child = harness::python_tool("python3")
        .args(["-c", JUDGE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python3");
    // A judge that failed to start closes its input: its exit status and output say why.
    let _ = std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        task.to_string().as_bytes(),
    );
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "python3 with jsonschema ({}) could not judge the values: {}",
        harness::install_hint("jsonschema"),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
#[cfg_attr(
    not(feature = "external-tools"),
    ignore = "needs jsonschema: cargo test --features external-tools"
)]
fn the_description_and_the_server_refuse_the_same_values() {
    let t = tenant();
    fixtures::new_site(&t, "example.com");
    fixtures::new_fragment(&t, "example.com", "/politics");
    let card = fixtures::card(Some(&t.org_id), CardStatus::Active).id;
    let description_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("openapi.json");
    let description: Value =
        serde_json::from_str(&std::fs::read_to_string(description_path).unwrap()).unwrap();

    const FRAGMENT: &str = "/components/schemas/FragmentWrite";
    const ROUTE: &str = "/components/schemas/RouteWrite";
    const ELIGIBILITY: &str = "/components/schemas/EligibilityReplace";
    const KEY: &str = "/components/schemas/KeyCreate";
    const DOMAIN: &str = "/components/schemas/DomainInput";
    let fragment = "/v1/sites/example.com/fragments/%2Fnamed";
    let routes = "/v1/sites/example.com/routes";
    let eligibility = format!("/v1/cards/{card}/eligibility");
    let named = |name: Value, ok| body(FRAGMENT, "PUT", fragment, json!({"name": name}), ok);
    let described = |text: &str, ok| {
        let value = json!({"name": "n", "description": text});
        body(FRAGMENT, "PUT", fragment, value, ok)
    };
    let valued = |v: &str, ok| {
        let value = json!({"name": "n", "key_values": {"section": [v]}});
        body(FRAGMENT, "PUT", fragment, value, ok)
    };
    let rule = |prefix: &str, mode: &str, ok| {
        let value = json!({"path_prefix": prefix, "match": mode, "ref": "/politics"});
        body(ROUTE, "POST", routes, value, ok)
    };
    let listed = |domain: &str, ok| {
        let value = json!({"fragments": [{"domain": domain, "ref": "/politics"}]});
        body(ELIGIBILITY, "PUT", &eligibility, value, ok)
    };
    let key = |name: &str, ok| body(KEY, "POST", "/v1/keys", json!({ "name": name }), ok);
    let site = |domain: &str, ok| Case {
        pointer: DOMAIN,
        value: json!(domain),
        method: "PUT",
        path: format!("/v1/sites/{}", fixtures::enc(domain)),
        body: json!({}),
        accepted: ok,
    };
    let x = |n: usize| "x".repeat(n);
    let cases = vec![
        // What schemathesis found: the description allowed them, the server refused them.
        listed("0", false),
        valued("a,b", false),
        valued("a\nb", false),
        rule("}\u{5}c", "exact", false),
        // Trimmed whitespace, control characters, lengths after trimming.
        listed(" Example.COM\t", true),
        named(json!(" \t Politics \n"), true),
        named(json!(format!("  {}  ", x(200))), true),
        named(json!(x(201)), false),
        named(json!(" \u{2003} "), false),
        named(json!("Pol\u{85}itics"), false),
        named(json!("Pol\titics"), false),
        named(json!(null), false),
        described("line\r\nbreak\tand tab", true),
        described(&format!(" {} ", x(2000)), true),
        described(&x(2001), false),
        described("bell\u{7}", false),
        valued(" \n politics \t", true),
        valued(&format!(" {} ", x(200)), true),
        valued(&x(201), false),
        valued(" \u{a0} ", false),
        valued("a\u{0}b", false),
        valued("a\u{2028}b", false),
        key(" edge worker ", true),
        key(&x(101), false),
        key("edge\u{7f}", false),
        // Route paths: the syntax exactly, the canonical length as far as a pattern can.
        rule(" /Actualite ", " exact ", true),
        rule("/%C3%A9t%C3%A9", "prefix", true),
        rule("/été/", "exact", true),
        rule(&x(198), "exact", true),
        rule(&format!("/{}/", x(198)), "prefix", true),
        rule(&x(199), "exact", false),
        rule("/a//b", "exact", false),
        rule("/a/%2e/b", "exact", false),
        rule("/a%2", "exact", false),
        rule("/%C3", "exact", false),
        rule("/a b", "exact", false),
        rule("/a", "Exact", false),
        // Domains as the path names them.
        site("Example.COM", true),
        site(" www.example.com ", true),
        site("1.2.3.4", false),
        site("news.example.123", false),
        site("news.example.0x1f", false),
        site("x-.com", false),
        site("x.com.", false),
        site("localhost", false),
        site(&format!("{}.com", x(64)), false),
    ];

    let by_description = judged_by_the_description(&description, &cases);
    let mut disagreements = Vec::new();
    for (case, by_description) in cases.iter().zip(by_description) {
        let resp = t.client.send_json(case.method, &case.path, &case.body);
        let by_server = match resp.status {
            200 | 201 | 409 => true,
            422 => false,
            _ => panic!("{} {}: {}", case.method, case.path, resp.text()),
        };
        if (by_description, by_server) != (case.accepted, case.accepted) {
            disagreements.push(format!(
                "{}: expected {}, description {by_description}, server {by_server} ({})",
                case.value,
                case.accepted,
                resp.text()
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
