"""The console's main journeys in a real browser, run by tests/it/browser.rs against a server
it started: an owner signs in, makes a management token and a delivery key, reads the audit
log, deletes a site after its confirmation page, invites a member;
the member joins, writes a card, previews it, activates it and makes it eligible on a fragment,
and /fragment serves it; the member cannot reach the tokens; both sign out, and the owner signs
in again with the keyboard alone. Every page visited
passes axe-core (WCAG 2 A and AA); a screenshot of each is written to $AGENTCARD_SCREENSHOTS.

Environment (set by tests/it/browser.rs): AGENTCARD_CONSOLE (the console's origin),
AGENTCARD_API (the base host's origin, for /v1 and /fragment), AGENTCARD_OWNER_LINK (the link
with which the owner sets a password), AGENTCARD_OWNER_EMAIL, AGENTCARD_ORG_ID,
AGENTCARD_CLIENT_IP_HEADER and AGENTCARD_CLIENT_IP (the rate limits' client address).
Exits 0 when every journey passed, else prints the first failure and exits 1.
"""

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

from browser import JourneyFailed, Keys, Person, screenshots_folder

env = os.environ
CONSOLE = env["AGENTCARD_CONSOLE"]
API = env["AGENTCARD_API"]
OWNER_PASSWORD = "owner's long passphrase"
MEMBER_PASSWORD = "member's long passphrase"
MEMBER_EMAIL = "member@example.org"
SITE = "journey.example"
FRAGMENT_REF = "/world"
CARD_TITLE = "Read us, agents"
DOOMED_SITE = "doomed.example"


def api(method, path, token=None, body=None):
    """One call to the base host: (status, parsed JSON or None, raw text)."""
    headers = {env["AGENTCARD_CLIENT_IP_HEADER"]: env["AGENTCARD_CLIENT_IP"]}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(API + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            status, text = answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode()
    try:
        return status, json.loads(text), text
    except ValueError:
        return status, None, text


def expect(what, got, wanted):
    if got != wanted:
        raise JourneyFailed(f"{what}: got {got!r}, expected {wanted!r}")


def shown_secret(person, prefix):
    """The secret a page shows once, as selectable text in an element of class `secret`."""
    secret = person.value_of(".secret")
    if not secret.startswith(prefix):
        raise JourneyFailed(f"{person.name}: the secret shown is {secret!r}, not {prefix}…")
    return secret


def owner_signs_in(owner):
    owner.open(env["AGENTCARD_OWNER_LINK"], "set a password")
    owner.fill("New password (10 to 128 characters)", OWNER_PASSWORD)
    owner.press("Set password and sign in", "home")
    owner.sees(env["AGENTCARD_OWNER_EMAIL"])
    owner.sees("Your role: owner.")


def owner_makes_a_token_that_works_on_v1(owner):
    """The token then writes the site and fragment the card will be shown on: the token and
    the fragment's id."""
    owner.follow("Tokens", "tokens")
    owner.fill("Name", "journey script")
    owner.press("Create token", "token created")
    token = shown_secret(owner, "svc_mgmt_")
    owner.press("Copy the token", "token copied")
    copied = owner.value_of("button[data-copy]")
    if copied not in ("Copied", "Selected: press Ctrl+C"):
        raise JourneyFailed(f"the copy button of the token says {copied!r}")
    owner.sees("journey script")
    status, me, text = api("GET", "/v1/me", token)
    expect(f"GET /v1/me with the console's token ({text})", status, 200)
    expect("the token's organisation", me["account"]["id"], env["AGENTCARD_ORG_ID"])
    status, _, text = api("PUT", f"/v1/sites/{SITE}", token, {"name": "Journey"})
    expect(f"PUT the site ({text})", status, 201)
    reference = urllib.parse.quote(FRAGMENT_REF, safe="")
    status, fragment, text = api("PUT", f"/v1/sites/{SITE}/fragments/{reference}", token,
                                 {"name": "World news", "lang": "en"})
    expect(f"PUT the fragment ({text})", status, 201)
    return token, fragment["id"]


def owner_makes_a_delivery_key(owner):
    owner.follow("Delivery keys", "delivery keys")
    owner.fill("Name", "journey edge")
    owner.press("Create key", "key created")
    return shown_secret(owner, "svc_live_")


def owner_reads_the_audit_log(owner, token, key):
    """The console's writes name the owner, /v1's the token's prefix; no secret is shown."""
    owner.follow("Audit log", "audit log")
    owner.sees("token created")
    owner.sees("key created")
    owner.sees(env["AGENTCARD_OWNER_EMAIL"])
    owner.sees(token[:12])
    owner.sees("site saved")
    source = owner.driver.page_source
    for secret in (token, key):
        if secret in source:
            raise JourneyFailed("the audit log shows a secret")


def owner_deletes_a_site(owner, token):
    """A site made through /v1, with a fragment, deleted after its confirmation page."""
    status, _, text = api("PUT", f"/v1/sites/{DOOMED_SITE}", token, {"name": "Doomed"})
    expect(f"PUT the doomed site ({text})", status, 201)
    status, _, text = api("PUT", f"/v1/sites/{DOOMED_SITE}/fragments/%2Fgone", token,
                          {"name": "Gone soon", "lang": "en"})
    expect(f"PUT the doomed fragment ({text})", status, 201)
    owner.follow("Sites", "sites")
    owner.sees(DOOMED_SITE)
    owner.follow(f"Delete {DOOMED_SITE}", "site deletion confirmation")
    owner.sees("What goes with it")
    owner.sees("Fragments: /gone")
    owner.press("Delete the site", "site deleted")
    owner.sees("The site was deleted")
    owner.does_not_see(DOOMED_SITE)
    status, _, text = api("GET", f"/v1/sites/{DOOMED_SITE}/fragments", token)
    expect(f"GET the deleted site ({text})", status, 404)


def owner_invites_a_member(owner):
    owner.follow("Members", "members")
    owner.fill("Email", MEMBER_EMAIL)
    owner.choose("Role", "member")
    owner.press("Make an invitation link", "invitation made")
    link = owner.value_of(".secret")
    if not link.startswith(CONSOLE + "/link/"):
        raise JourneyFailed(f"the invitation link {link!r} is not the console's")
    return link


def member_joins(member, link):
    member.open(link, "invitation")
    member.fill("New password (10 to 128 characters)", MEMBER_PASSWORD)
    member.press("Set password and sign in", "home")
    member.sees(MEMBER_EMAIL)
    member.sees("Your role: member.")


def member_writes_previews_and_activates_a_card(member):
    member.follow("Cards", "cards")
    member.follow("New card", "new card")
    member.fill("Name", "Journey card")
    member.choose("Language", "en")
    member.fill("Brand", "Journey Daily")
    member.fill("Title", CARD_TITLE)
    member.fill("Text", "Licensing: ask us.")
    member.press("Preview", "card preview")
    frame = member.driver.find_element("css selector", "iframe")
    expect("the preview frame's sandbox", frame.get_attribute("sandbox"), "")
    member.driver.switch_to.frame(frame)
    member.sees(CARD_TITLE)
    member.sees("Sample article")
    member.driver.switch_to.default_content()
    member.press("Save", "card saved")
    member.sees("draft")
    member.press("Activate", "card active")
    member.sees("active")


def member_makes_the_card_eligible(member):
    member.follow("Eligibility", "eligibility")
    member.tick(f"{SITE} {FRAGMENT_REF}")
    member.press("Save eligibility", "eligibility saved")
    member.sees(f"{SITE} {FRAGMENT_REF}")
    member.follow("Cards", "cards with the active one")
    member.sees(CARD_TITLE)


def fragment_serves_the_card(key, org_id, fragment_id):
    query = urllib.parse.urlencode({
        "partner_id": org_id, "fragment_id": fragment_id,
        "page_url": f"https://{SITE}/world/story", "lang": "en"})
    request = urllib.request.Request(
        f"{API}/fragment?{query}",
        headers={"X-API-Key": key, "User-Agent": "GPTBot/1.2",
                 env["AGENTCARD_CLIENT_IP_HEADER"]: env["AGENTCARD_CLIENT_IP"]})
    with urllib.request.urlopen(request, timeout=30) as answer:
        expect("/fragment's status", answer.status, 200)
        body = answer.read().decode()
    if CARD_TITLE not in body:
        raise JourneyFailed(f"/fragment did not serve the card: {body}")


def member_cannot_reach_the_tokens(member):
    if member.has_link("Tokens"):
        raise JourneyFailed("a member is shown the tokens link")
    member.driver.get(CONSOLE + "/tokens")
    member.arrived("tokens refused")
    member.sees("owners")
    member.does_not_see("Create token")


def signs_out(person):
    person.press("Sign out", "signed out")
    person.sees("Sign in")
    person.driver.get(CONSOLE + "/")
    if not person.url().endswith("/sign-in"):
        raise JourneyFailed(f"{person.name} is still signed in: {person.url()}")


def signs_in_with_the_keyboard_only(person, email, password):
    """From the sign-in page, Tab to the email field, type, Tab, type, Enter: no mouse."""
    person.open(CONSOLE + "/sign-in", "sign-in page")
    person.tab_to("email")
    person.type_keys(email, Keys.TAB, password, Keys.ENTER)
    person.waits_to_leave("/sign-in")
    person.arrived("signed in with the keyboard")
    person.sees(email)


def main():
    folder = screenshots_folder()
    print(f"screenshots: {folder}", flush=True)
    owner = Person("owner", folder)
    member = Person("member", folder)
    try:
        owner_signs_in(owner)
        token, fragment_id = owner_makes_a_token_that_works_on_v1(owner)
        key = owner_makes_a_delivery_key(owner)
        owner_reads_the_audit_log(owner, token, key)
        owner_deletes_a_site(owner, token)
        link = owner_invites_a_member(owner)
        member_joins(member, link)
        member_writes_previews_and_activates_a_card(member)
        member_makes_the_card_eligible(member)
        fragment_serves_the_card(key, env["AGENTCARD_ORG_ID"], fragment_id)
        member_cannot_reach_the_tokens(member)
        signs_out(member)
        signs_out(owner)
        signs_in_with_the_keyboard_only(owner, env["AGENTCARD_OWNER_EMAIL"], OWNER_PASSWORD)
    except JourneyFailed as failure:
        print(f"journey failed: {failure}", file=sys.stderr)
        return 1
    finally:
        owner.close()
        member.close()
    print("every journey passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
