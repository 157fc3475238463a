//! A client generated from `openapi.json` by a real generator, `openapi-python-client` (from
//! PyPI, installed by `scripts/test.sh` into `.venv/`; this test fails when it is missing),
//! drives every `/v1` operation against the running server: each answer's status and its
//! typed fields, an error parsed as the described `Error`. The generator must print no warning
//! (it drops what it cannot read, an operation included), and the script must have called
//! every operation the description lists.

use crate::fixtures;
use crate::harness::{self, server, tenant, CLIENT_IP_HEADER};
use agentcard::domain::CardStatus;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

const GENERATOR: &str = "openapi-python-client";
/// The generated package's name, from the description's title.
const PACKAGE: &str = "agentcard_management_api_client";

/// The user's script: every operation once or more, each answer checked. Prints the names of
/// the operations it drove, as a JSON array, on its last line.
const DRIVER: &str = r#"
import datetime
import json
import os
import sys

from agentcard_management_api_client import AuthenticatedClient
from agentcard_management_api_client.api.cards import list_cards
from agentcard_management_api_client.api.eligibility import get_eligibility, replace_eligibility
from agentcard_management_api_client.api.fragments import list_fragments, put_fragment
from agentcard_management_api_client.api.keys import create_key, list_keys, revoke_key
from agentcard_management_api_client.api.me import get_me
from agentcard_management_api_client.api.routes import (
    create_route, delete_route, list_routes, replace_routes)
from agentcard_management_api_client.api.sites import (
    delete_default_fragment, list_sites, put_default_fragment, put_site)
from agentcard_management_api_client.models import (
    CardList, CardStatus, DefaultFragmentWrite, EligibilityList, EligibilityReplace,
    EligibilityWriteItem, EmptyObject, Error, ErrorErrorCode, FragmentList, FragmentStatus,
    FragmentWrite, FragmentWriteResult, Key, KeyCreate, KeyCreated, KeyList, KeyValuesInput, Lang,
    Match, Me, Route, RouteList, RoutesReplace, RouteWrite, Site, SiteList, SiteWrite)

env = os.environ
client = AuthenticatedClient(
    base_url=env["AGENTCARD_URL"],
    token=env["AGENTCARD_TOKEN"],
    headers={env["AGENTCARD_CLIENT_IP_HEADER"]: env["AGENTCARD_CLIENT_IP"]},
    raise_on_unexpected_status=True,
)
driven = set()


def call(operation, status, model, **arguments):
    """The answer of one operation, which must have `status` and parse as `model`."""
    name = operation.__name__.rsplit(".", 1)[-1]
    response = operation.sync_detailed(client=client, **arguments)
    if response.status_code != status or not isinstance(response.parsed, model):
        sys.exit(f"{name}: {int(response.status_code)} {response.content!r}, "
                 f"expected {status} and a {model.__name__}")
    driven.add(name)
    return response.parsed


def same(what, got, expected):
    if got != expected:
        sys.exit(f"{what}: {got!r}, expected {expected!r}")


me = call(get_me, 200, Me)
same("the token's organisation", me.account.id, env["AGENTCARD_ORG_ID"])

domain = "client.example"
site = call(put_site, 201, Site, domain=domain, body=SiteWrite(name="Client News"))
same("the new site", (site.domain, site.name, site.default_fragment_ref),
     (domain, "Client News", None))
same("its creation time", type(site.created_at), datetime.datetime)
site = call(put_site, 200, Site, domain=domain, body=SiteWrite(name="Client News Daily"))
same("the renamed site", site.name, "Client News Daily")
sites = call(list_sites, 200, SiteList)
same("the sites", [s.domain for s in sites.items], [domain])

politics = call(put_fragment, 201, FragmentWriteResult, domain=domain, ref="/politics",
                body=FragmentWrite(name="Politics", lang=Lang.EN, description="Elections",
                                   key_values=KeyValuesInput.from_dict({"section": ["politics"]})))
same("the new fragment",
     (politics.ref, politics.name, politics.lang, politics.description,
      politics.key_values.to_dict(), politics.status),
     ("/politics", "Politics", Lang.EN, "Elections", {"section": ["politics"]},
      FragmentStatus.ACTIVE))
replaced = call(put_fragment, 200, FragmentWriteResult, domain=domain, ref="/politics",
                body=FragmentWrite(name="Politique"))
same("the replaced fragment (what it left out reset, its status kept)",
     (replaced.id, replaced.name, replaced.lang, replaced.description,
      replaced.key_values.to_dict(), replaced.status),
     (politics.id, "Politique", Lang.FR, None, {}, FragmentStatus.ACTIVE))
home = call(put_fragment, 201, FragmentWriteResult, domain=domain, ref="/home",
            body=FragmentWrite(name="Home"))
archives = call(put_fragment, 201, FragmentWriteResult, domain=domain, ref="/archives",
                body=FragmentWrite(name="Archives", status=FragmentStatus.PAUSED))
same("the paused fragment", archives.status, FragmentStatus.PAUSED)
refused = call(put_fragment, 422, Error, domain=domain, ref="/home", body=FragmentWrite(name=" "))
same("a blank name", (refused.error.code, refused.error.field), (ErrorErrorCode.VALIDATION, "name"))
fragments = call(list_fragments, 200, FragmentList, domain=domain)
same("the fragments", sorted((f.ref, f.id) for f in fragments.items),
     [("/archives", archives.id), ("/home", home.id), ("/politics", politics.id)])

site = call(put_default_fragment, 200, Site, domain=domain, body=DefaultFragmentWrite(ref="/home"))
same("the default", (site.default_fragment_ref, site.default_fragment_id), ("/home", home.id))
site = call(delete_default_fragment, 200, Site, domain=domain, body=EmptyObject())
same("no default", (site.default_fragment_ref, site.default_fragment_id), (None, None))

rule = call(create_route, 201, Route, domain=domain,
            body=RouteWrite(path_prefix="/politique/", match="prefix", ref="/politics"))
same("the new rule", (rule.path_prefix, rule.match, rule.fragment_ref, rule.fragment_id),
     ("/politique/", Match.PREFIX, "/politics", politics.id))
rules = call(list_routes, 200, RouteList, domain=domain)
same("the rules", [r.id for r in rules.items], [rule.id])
rules = call(replace_routes, 200, RouteList, domain=domain, body=RoutesReplace(routes=[
    RouteWrite(path_prefix="/elections/", match="exact", ref="/politics"),
    RouteWrite(path_prefix="/", match="prefix", ref="/home"),
]))
same("the replaced rules", sorted((r.path_prefix, r.match, r.fragment_id) for r in rules.items),
     [("/", Match.PREFIX, home.id), ("/elections/", Match.EXACT, politics.id)])
gone = call(delete_route, 200, Route, domain=domain, id=rules.items[0].id, body=EmptyObject())
same("the deleted rule", gone.id, rules.items[0].id)
left = call(list_routes, 200, RouteList, domain=domain)
same("the rule left", [r.id for r in left.items], [r.id for r in rules.items if r.id != gone.id])

cards = call(list_cards, 200, CardList)
card = [c for c in cards.items if c.id == env["AGENTCARD_CARD_ID"]]
same("the organisation's card", [(c.status, c.account_id) for c in card],
     [(CardStatus.ACTIVE, env["AGENTCARD_ORG_ID"])])
listed = call(replace_eligibility, 200, EligibilityList, id=card[0].id, body=EligibilityReplace(
    fragments=[EligibilityWriteItem(domain=domain, ref="/politics")]))
same("the card's fragments", [(e.domain, e.ref, e.fragment_id) for e in listed.items],
     [(domain, "/politics", politics.id)])
read = call(get_eligibility, 200, EligibilityList, id=card[0].id)
same("the card's fragments read back", read.to_dict(), listed.to_dict())

key = call(create_key, 201, KeyCreated, body=KeyCreate(name="edge worker"))
same("the new key", (key.name, key.key.startswith(key.prefix), key.revoked_at),
     ("edge worker", True, None))
keys = call(list_keys, 200, KeyList)
same("the keys", [k.id for k in keys.items], [key.id])
revoked = call(revoke_key, 200, Key, id=key.id, body=EmptyObject())
same("the revoked key", (revoked.id, type(revoked.revoked_at)), (key.id, datetime.datetime))

print(json.dumps(sorted(driven)))
"#;

/// `operationId` of every operation of the description, sorted.
fn described_operations() -> BTreeSet<String> {
    let text = std::fs::read_to_string(description_path()).expect("read openapi.json");
    let description: Value = serde_json::from_str(&text).expect("openapi.json is JSON");
    let paths = description["paths"].as_object().expect("paths");
    paths
        .values()
        .filter_map(Value::as_object)
        .flat_map(|item| item.values())
        .filter_map(|operation| operation["operationId"].as_str())
        .map(str::to_owned)
        .collect()
}

fn description_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.json")
}

/// Output of a finished program, failing the test with its output unless it succeeded.
#[track_caller]
fn succeeded(what: &str, output: std::io::Result<Output>) -> String {
    let output = output.unwrap_or_else(|e| {
        panic!(
            "cannot run {what} ({e}): {}",
            harness::install_hint(GENERATOR)
        )
    });
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{what} failed:\n{text}");
    text
}

/// Generates the client into `dir/client` as a user would (its formatting by `ruff`, which
/// the generator brings, included); the folder to put on `PYTHONPATH`.
fn generate(dir: &Path) -> PathBuf {
    let out = dir.join("client");
    let said = succeeded(
        GENERATOR,
        harness::python_tool(GENERATOR)
            .arg("generate")
            .arg("--path")
            .arg(description_path())
            .arg("--output-path")
            .arg(&out)
            .output(),
    );
    assert!(
        !said.to_lowercase().contains("warning"),
        "{GENERATOR} warned about openapi.json:\n{said}"
    );
    assert!(out.join(PACKAGE).is_dir(), "no package {PACKAGE}:\n{said}");
    out
}

#[test]
#[cfg_attr(
    not(feature = "external-tools"),
    ignore = "needs openapi-python-client: cargo test --features external-tools"
)]
fn a_client_generated_from_openapi_json_drives_every_v1_operation() {
    let dir = std::env::temp_dir().join(format!("agentcard-client-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let client = generate(&dir);

    let t = tenant();
    let card = fixtures::card(Some(&t.org_id), CardStatus::Active);
    let script = dir.join("drive.py");
    std::fs::write(&script, DRIVER).unwrap();
    let said = succeeded(
        "the generated client's script",
        // Python's warnings about the generated code are errors.
        harness::python_tool("python3")
            .args(["-W", "error::SyntaxWarning"])
            .arg(&script)
            .env("PYTHONPATH", &client)
            .env("AGENTCARD_URL", format!("http://{}", server().addr))
            .env("AGENTCARD_TOKEN", &t.token)
            .env("AGENTCARD_CLIENT_IP_HEADER", CLIENT_IP_HEADER)
            .env("AGENTCARD_CLIENT_IP", harness::next_client_ip())
            .env("AGENTCARD_ORG_ID", &t.org_id)
            .env("AGENTCARD_CARD_ID", &card.id)
            .output(),
    );
    let last = said.lines().last().unwrap_or_default();
    let driven: BTreeSet<String> = serde_json::from_str(last)
        .unwrap_or_else(|_| panic!("no list of operations driven:\n{said}"));
    assert_eq!(driven, described_operations(), "operations driven");
    let _ = std::fs::remove_dir_all(&dir);
}
