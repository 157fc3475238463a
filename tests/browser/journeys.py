"""The console's main journeys in a real browser, run by tests/it/browser.rs against a server
it started: an owner signs in, follows the first steps of an organisation with no site and maps
one in the browser (a site, a fragment without a reference, one with, a rule, the default, a
page tested, with the keyboard too), makes a management token and a delivery key, writes a card
eligible on the fragment without a reference and /fragment serves it by that fragment's id;
reads the audit
log, deletes a site after its confirmation page, invites a member;
the member joins, writes a card, previews it, activates it and makes it eligible on a fragment,
and /fragment serves it; agents request /fragment, and the member finds on the reports page
(7 days, then 24 hours by agent), the home page and the served card's page (with the pages
that got it) the counts `agentcard admin report` prints for the same window, downloads the view's CSV (the same as
`admin report --format csv`), counts a point of the chart per bucket, and asks "why this card?"
of the page, which names the card /fragment served; the member cannot reach the tokens; both
sign out, and the owner signs in again with the keyboard alone; the owner adds an
authenticator app (its code computed here from the secret on the page), signs out and in with
it; the member registers a passkey (Chromium's virtual authenticator), signs out and in with the
passkey alone, then with the password and the passkey as the second factor; the owner requires a second factor, and a newcomer without one reaches only the
page that adds one until they add it. Every page visited
passes axe-core (WCAG 2 A and AA); a screenshot of each is written to $AGENTCARD_SCREENSHOTS.

Environment (set by tests/it/browser.rs): AGENTCARD_CONSOLE (the console's origin),
AGENTCARD_API (the base host's origin, for /v1 and /fragment), AGENTCARD_OWNER_LINK (the link
with which the owner sets a password), AGENTCARD_OWNER_EMAIL, AGENTCARD_ORG_ID,
AGENTCARD_CLIENT_IP_HEADER and AGENTCARD_CLIENT_IP (the rate limits' client address),
AGENTCARD_BIN and DATABASE_URL (`agentcard admin report` on the server's database). The whole
pages of the reports and of "why this card?" are written as docs-*.png (docs/console.md's).
Exits 0 when every journey passed, else prints the first failure and exits 1.
"""

import base64
import csv
import datetime
import hashlib
import hmac
import io
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import (Protocol, Transport,
                                                            VirtualAuthenticatorOptions)

from browser import JourneyFailed, Keys, Person, expect, screenshots_folder

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
MAPPED_SITE = "map.example"
SIDEBAR_CARD_TITLE = "Sidebar card"
NEWCOMER_EMAIL = "newcomer@example.org"
NEWCOMER_PASSWORD = "newcomer's long passphrase"


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


def owner_maps_a_site(owner):
    """From the first steps on the home page: a site, a fragment without a reference and one
    with, a rule, the default, and a page tested. The id of the fragment without a reference."""
    owner.sees("First steps")
    owner.follow("Add a site", "sites with no site yet")
    owner.fill("Domain", " Map.Example ")
    owner.press("Add the site", "site added")
    owner.sees(f"{MAPPED_SITE}")
    owner.sees("The site was added")
    owner.fill("Name", "Sidebar")
    owner.choose("Language", "en")
    owner.press("Add the fragment", "fragment without a reference added")
    owner.fill("Reference (optional)", "/world")
    owner.fill("Name", "World")
    owner.choose("Language", "en")
    owner.press("Add the fragment", "fragment with a reference added")
    owner.fill("Path", "World/")
    owner.choose("Match", "prefix")
    owner.choose("Fragment", "/world (World)")
    owner.press("Add the rule", "rule added")
    owner.sees("The rule was added")
    owner.choose("Default fragment", "/world (World)")
    owner.press("Set the default", "default set")
    owner.sees("The site's default fragment was set")
    owner.fill("Page URL", f"https://{MAPPED_SITE}/world/story")
    owner.press("Test", "page tested")
    owner.sees("The prefix rule /world/ decides.")
    owner.sees("Fragment: /world (World).")
    # The same box from the keyboard alone.
    owner.driver.get(f"{CONSOLE}/sites/{MAPPED_SITE}")
    owner.tab_to("test-page_url", most=120)
    owner.type_keys(f"https://{MAPPED_SITE}/elsewhere", Keys.ENTER)
    owner.waits_for_query("page_url")
    owner.arrived("page tested with the keyboard")
    owner.sees("No rule matches: the site default decides.")
    sidebar = owner.link_target("Sidebar")
    return sidebar.rsplit("/", 1)[1]


def fills_a_new_card(person, name, brand, title, whose):
    """The new card form filled in English (`whose` names the screenshots)."""
    person.follow("Cards", f"cards of the {whose}")
    person.follow("New card", f"{whose}'s new card")
    person.fill("Name", name)
    person.choose("Language", "en")
    person.fill("Brand", brand)
    person.fill("Title", title)
    person.fill("Text", "Licensing: ask us.")


def owner_writes_a_card_for_the_sidebar(owner):
    """A card eligible only on the fragment without a reference, then active."""
    fills_a_new_card(owner, "Sidebar card", "Map Daily", SIDEBAR_CARD_TITLE, "owner")
    owner.press("Save", "owner's card saved")
    owner.follow("Eligibility", "owner's card eligibility")
    ticks_eligible(owner, MAPPED_SITE, "Sidebar")
    owner.press("Save eligibility", "owner's card eligible on the sidebar")
    owner.follow("Back to the card", "owner's card")
    owner.press("Activate", "owner's card active")
    owner.sees("active")


def owner_reviews_the_site(owner):
    """The site's page with the card on the sidebar and a page tested, in a window tall enough
    to hold it all: docs/images/console-site.png is this screenshot, and
    docs/images/console-site-phone.png its whole page at 390 px."""
    owner.driver.set_window_size(1280, 2000)
    query = urllib.parse.urlencode({"page_url": f"https://{MAPPED_SITE}/world/story"})
    owner.open(f"{CONSOLE}/sites/{MAPPED_SITE}?{query}", "site page")
    owner.sees("Sidebar card (active)")
    owner.sees("Fragment: /world (World).")
    whole_page(owner, "site-phone", 390)
    owner.driver.set_window_size(1280, 900)


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
    fills_a_new_card(member, "Journey card", "Journey Daily", CARD_TITLE, "member")
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


def ticks_eligible(person, site, label_start):
    """Ticks, on a card's eligibility page, the fragment of `site` (its group's legend) whose
    label starts with `label_start` (a reference and its name, or a name)."""
    for group in person.driver.find_elements(By.CSS_SELECTOR, "fieldset.site-choices"):
        if group.find_element(By.TAG_NAME, "legend").text.strip() != site:
            continue
        for label in group.find_elements(By.TAG_NAME, "label"):
            if label.text.strip().startswith(label_start):
                box = person.driver.find_element(By.ID, label.get_attribute("for"))
                if not box.is_selected():
                    box.click()
                return
    raise JourneyFailed(f"{person.name}: no fragment {label_start!r} of {site} on {person.url()}")


def member_makes_the_card_eligible(member):
    member.follow("Eligibility", "eligibility")
    ticks_eligible(member, SITE, f"{FRAGMENT_REF} (")
    member.press("Save eligibility", "eligibility saved")
    member.sees(f"{SITE} {FRAGMENT_REF}")
    member.follow("Cards", "cards with the active one")
    member.sees(CARD_TITLE)


# The User-Agent of every /fragment request of the journeys, for the report to count.
FRAGMENT_REQUESTS = []


def fragment_request(key, org_id, fragment_id, page_url=None, user_agent="GPTBot/1.2"):
    """One /fragment request as an agent's edge sends it: (status, body)."""
    params = {"partner_id": org_id, "fragment_id": fragment_id, "lang": "en"}
    if page_url:
        params["page_url"] = page_url
    query = urllib.parse.urlencode(params)
    request = urllib.request.Request(
        f"{API}/fragment?{query}",
        headers={"X-API-Key": key, "User-Agent": user_agent,
                 env["AGENTCARD_CLIENT_IP_HEADER"]: env["AGENTCARD_CLIENT_IP"]})
    FRAGMENT_REQUESTS.append(user_agent)
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status, answer.read().decode()


def fragment_serves_the_card(key, org_id, fragment_id, title=CARD_TITLE, page_url=None):
    """/fragment serves the card titled `title` for the fragment (for the page, if one)."""
    status, body = fragment_request(key, org_id, fragment_id, page_url)
    expect("/fragment's status", status, 200)
    if title not in body:
        raise JourneyFailed(f"/fragment did not serve the card {title!r}: {body}")
    return body


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


def admin_report(window, *args):
    """`agentcard admin report` for the console's window ('24h' or '7d'), as text."""
    now = datetime.datetime.now(datetime.UTC)
    if window == "24h":
        until = now.replace(minute=0, second=0, microsecond=0) + datetime.timedelta(hours=1)
        since = until - datetime.timedelta(hours=24)
    else:
        today = datetime.datetime.combine(now.date(), datetime.time(), datetime.UTC)
        until = today + datetime.timedelta(days=1)
        since = until - datetime.timedelta(days=7)
    stamp = lambda at: at.strftime("%Y-%m-%dT%H:%M:%SZ")
    command = [env["AGENTCARD_BIN"], "admin", "report", "--org", env["AGENTCARD_ORG_ID"],
               "--since", stamp(since), "--until", stamp(until), *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise JourneyFailed(f"{command}: {done.stderr}")
    return done.stdout


def report_json(window, *args):
    return json.loads(admin_report(window, "--format", "json", *args))


def shows_the_totals(person, prefix, report, what):
    """The page's requests, served and fill rate are the report's."""
    fill = f"{report['fill_rate'] * 100:.1f} %"
    for name, wanted in (("requests", str(report["requests"])),
                         ("served", str(report["served"])), ("fill", fill)):
        expect(f"{what}: {name}", person.value_of(f"#{prefix}-{name}"), wanted)


def chart_points(person):
    return len(person.driver.find_elements("css selector", "svg circle.point.requests"))


def console_download(person, href):
    """A link of the console fetched with the person's cookies: (headers, text)."""
    cookies = "; ".join(f"{c['name']}={c['value']}" for c in person.driver.get_cookies())
    console = urllib.parse.urlparse(CONSOLE)
    request = urllib.request.Request(
        API + urllib.parse.urlparse(href)._replace(scheme="", netloc="").geturl(),
        headers={"Host": console.netloc, "Cookie": cookies,
                 env["AGENTCARD_CLIENT_IP_HEADER"]: env["AGENTCARD_CLIENT_IP"]})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.headers, answer.read().decode()


def whole_page(person, name, width=1280):
    """The whole page as one screenshot `docs-NAME.png` (for docs/console.md), at `width`."""
    driver = person.driver
    before = driver.get_window_size()
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(height + 120, 4000))
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(height + 120, 4000))
    driver.save_screenshot(str(person.screenshots / f"docs-{name}.png"))
    driver.set_window_size(before["width"], before["height"])


def agents_ask_and_the_member_reads_the_numbers(member, key, fragment_id):
    """Agents request /fragment; the reports page, the home page and the card page show what
    `admin report` prints for the same window; the CSV downloads, parses and matches; the
    chart has a point a bucket; "why this card" names the card /fragment served."""
    page_url = f"https://{SITE}/world/story"
    for agent in ("GPTBot/1.2", "GPTBot/1.2", "ClaudeBot/1.0", "OAI-SearchBot/1.0"):
        status, body = fragment_request(key, env["AGENTCARD_ORG_ID"], fragment_id, page_url,
                                        agent)
        expect("/fragment's status", status, 200)
    served_card = re.search(r'data-card-id="([^"]+)"', body).group(1)
    # The counters reach the database every few seconds: poll for every request made.
    deadline = time.monotonic() + 60
    while report_json("7d")["requests"] != len(FRAGMENT_REQUESTS):
        if time.monotonic() > deadline:
            raise JourneyFailed(f"the report never counts the {len(FRAGMENT_REQUESTS)} requests")
        time.sleep(0.1)
    member.follow("Reports", "reports, the last 7 days")
    shows_the_totals(member, "total", report_json("7d"), "reports, 7 days")
    expect("the chart's points over 7 days", chart_points(member), 7)
    member.choose("Window", "Last 24 hours, by hour")
    member.choose("Group by (optional)", "Agent")
    member.press("Show", "reports, the last 24 hours by agent")
    shows_the_totals(member, "total", report_json("24h"), "reports, 24 hours")
    expect("the chart's points over 24 hours", chart_points(member), 24)
    member.sees("GPTBot")
    whole_page(member, "reports")
    whole_page(member, "reports-phone", 390)
    headers, text = console_download(member, member.link_target("Download this view as CSV"))
    expect("the CSV's type", headers["Content-Type"], "text/csv; charset=utf-8")
    if not headers["Content-Disposition"].startswith("attachment; filename="):
        raise JourneyFailed(f"the CSV is not an attachment: {headers['Content-Disposition']}")
    expect("the CSV", text, admin_report("24h", "--format", "csv", "--by", "agent"))
    rows = list(csv.DictReader(io.StringIO(text)))
    by_agent = {row["agent"]: int(row["requests"]) for row in rows}
    expect("GPTBot's requests in the CSV", by_agent.get("GPTBot"),
           sum(1 for agent in FRAGMENT_REQUESTS if agent.startswith("GPTBot/")))
    member.follow("Home", "home, the last 24 hours")
    shows_the_totals(member, "glance", report_json("24h"), "home")
    expect("the home chart's points", chart_points(member), 24)
    member.follow("Sites", "sites")
    member.follow(SITE, "the site of the journey")
    member.follow("Why this card?", "why this card")
    member.fill("Page URL", page_url)
    member.choose("Language", "en")
    member.fill("fragment_id", fragment_id)
    member.fill("User-Agent (optional)", "GPTBot/1.2")
    member.press("Explain", "why this card, answered")
    shown = member.driver.find_element("css selector", "#why-served").get_attribute("data-card")
    expect("the card why-this-card names", shown, served_card)
    member.sees("marker GPTBot, purpose training")
    whole_page(member, "why-this-card")
    week = report_json("7d", "--by", "card")
    served = next(g["served"] for g in week["groups"] if g["card_id"] == served_card)
    on_site = pages_served_on_the_site()
    member.driver.find_element("css selector", "#why-served").click()
    member.arrived("the served card's page")
    expect("the card's week", member.value_of("#week-served"), str(served))
    expect("the pages that got the card", the_card_pages(member), on_site)


def pages_served_on_the_site():
    """`admin report --by page`'s served of each page of the site, once the page counts hold
    every request (they are written every 10 s): only the served card served there."""
    deadline = time.monotonic() + 60
    while True:
        groups = report_json("7d", "--by", "page")["groups"]
        if all(group["page"] != "(not yet written)" for group in groups):
            break
        if time.monotonic() > deadline:
            raise JourneyFailed(f"the page counts are never written: {groups}")
        time.sleep(0.1)
    served = [(as_shown(g["page"]), str(g["served"])) for g in groups
              if g["page"].startswith(f"{SITE}/") and g["served"] > 0]
    return sorted(served)


def as_shown(page):
    """A canonical page (`host/path/`) as the console shows it: without the slash the canonical
    form adds, each segment percent-decoded (an escaped slash stays escaped)."""
    host, _, path = page.partition("/")
    if not path:
        return page
    segments = path.rstrip("/").split("%2F")
    return host + "/" + "%2F".join(urllib.parse.unquote(s) for s in segments)


def the_card_pages(person):
    """The card page's table of pages: (page, requests served), by page."""
    rows = person.driver.find_elements("css selector", "table.week-pages tbody tr")
    cells = [(row.find_element("css selector", "th").text.strip(),
              row.find_element("css selector", "td").text.strip()) for row in rows]
    return sorted(cells)


def app_code(secret, steps=0):
    """The code an authenticator app shows for this base32 secret, `steps` 30-second steps from
    now (RFC 6238: HMAC-SHA-1, 6 digits)."""
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    counter = int(time.time()) // 30 + steps
    digest = hmac.new(key, counter.to_bytes(8, "big"), hashlib.sha1).digest()
    at = digest[-1] & 15
    return f"{(int.from_bytes(digest[at:at + 4], 'big') & 0x7FFFFFFF) % 1_000_000:06d}"


def adds_an_authenticator_app(person):
    """From the page of second factors: the app's secret read from the page, its code typed
    back; the recovery codes are shown. Answers the secret."""
    person.follow("Second factors", "second factors")
    person.follow("Add an authenticator app", "add an authenticator app")
    secret = person.value_of("#totp-secret")
    person.fill("Code shown by the app", app_code(secret))
    person.press("Add the app", "recovery codes")
    person.sees("Your recovery codes")
    return secret


def signs_in(person, email, password, what):
    person.open(CONSOLE + "/sign-in", "sign-in page")
    person.fill("Email", email)
    person.fill("Password", password)
    person.press("Sign in", what)


def owner_signs_in_with_an_authenticator_app(owner):
    secret = adds_an_authenticator_app(owner)
    signs_out(owner)
    signs_in(owner, env["AGENTCARD_OWNER_EMAIL"], OWNER_PASSWORD, "second factor asked")
    owner.sees("Second factor")
    # The code that added the app was used: the next step's is the one accepted.
    owner.fill("Code", app_code(secret, 1))
    owner.press("Sign in", "home, after the second factor")
    owner.sees(env["AGENTCARD_OWNER_EMAIL"])


def waits_for_the_passkey(person, path, status):
    """Polls until the passkey's answer has taken the browser from `path`; else what the page
    said went wrong."""
    try:
        person.waits_to_leave(path)
    except TimeoutException as timeout:
        said = person.value_of(status)
        raise JourneyFailed(f"{person.name}: no passkey was used on {path}: {said!r}") from timeout


def keeps_what_the_passkey_form_sends(person):
    """Keeps, in the tab's sessionStorage, the answer and the ceremony the page's script is
    about to send: what someone who saw them could send again."""
    person.driver.execute_script("""
        const submit = HTMLFormElement.prototype.submit;
        HTMLFormElement.prototype.submit = function () {
          for (const name of ["credential", "ceremony"]) {
            sessionStorage.setItem(name, this.elements.namedItem(name).value);
          }
          submit.call(this);
        };""")


def the_same_answer_again_is_refused(person):
    """A passkey's answer signs in once: sent again, with its ceremony, it is refused (422)
    and opens no session. (Chromium's virtual authenticator counts its signatures, so its
    counter refuses this answer too; a synced passkey, whose counter stays 0, is refused by the
    ceremony being spent.)"""
    person.open(CONSOLE + "/sign-in", "sign-in page, for the answer sent again")
    status = person.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const body = new URLSearchParams();
        for (const name of ["credential", "ceremony"]) body.set(name, sessionStorage.getItem(name) || "");
        if (!body.get("credential") || !body.get("ceremony")) return done("nothing kept to send");
        fetch("/sign-in/passkey", { method: "POST", body, redirect: "manual" })
          .then((answer) => done(answer.status), (error) => done(String(error)));""")
    if status != 422:
        raise JourneyFailed(f"{person.name}: the passkey's answer sent again got {status!r}, not 422")
    person.open(CONSOLE + "/", "home, without a session")
    if not person.url().startswith(CONSOLE + "/sign-in"):
        raise JourneyFailed(f"{person.name}: the answer sent again opened a session: {person.url()}")


def member_signs_in_with_a_passkey_alone(member):
    """Chromium's virtual authenticator (user verification on) makes the passkey."""
    options = VirtualAuthenticatorOptions()
    options.protocol = Protocol.CTAP2
    options.transport = Transport.INTERNAL
    options.has_resident_key = True
    options.has_user_verification = True
    options.is_user_verified = True
    member.driver.add_virtual_authenticator(options)
    signs_in(member, MEMBER_EMAIL, MEMBER_PASSWORD, "home")
    member.follow("Second factors", "second factors")
    member.press("Add a passkey", "adding a passkey")
    waits_for_the_passkey(member, "/second-factors", "#passkey-add-status")
    member.arrived("recovery codes, after the passkey")
    member.sees("Your recovery codes")
    signs_out(member)
    member.open(CONSOLE + "/sign-in", "sign-in page")
    keeps_what_the_passkey_form_sends(member)
    member.press("Sign in with a passkey", "signing in with a passkey")
    waits_for_the_passkey(member, "/sign-in", "#passkey-status")
    member.arrived("home, signed in with the passkey")
    member.sees(MEMBER_EMAIL)
    signs_out(member)
    the_same_answer_again_is_refused(member)
    # After the password, the passkey is the second factor.
    signs_in(member, MEMBER_EMAIL, MEMBER_PASSWORD, "second factor asked")
    member.press("Use a passkey", "using a passkey as the second factor")
    waits_for_the_passkey(member, "/sign-in/second-factor", "#passkey-status")
    member.arrived("home, after the passkey as second factor")
    member.sees(MEMBER_EMAIL)


def owner_requires_a_second_factor_of_a_newcomer(owner, newcomer):
    """The owner requires a factor; a newcomer without one reaches only the page that adds one,
    until they add it."""
    owner.follow("Security", "security")
    owner.tick("Require a second factor")
    owner.press("Save", "security saved")
    owner.follow("Members", "members")
    owner.fill("Email", NEWCOMER_EMAIL)
    owner.choose("Role", "member")
    owner.press("Make an invitation link", "invitation made")
    newcomer.open(owner.value_of(".secret"), "invitation")
    newcomer.fill("New password (10 to 128 characters)", NEWCOMER_PASSWORD)
    newcomer.press("Set password and sign in", "a second factor required")
    newcomer.sees("requires a second factor")
    for path in ("/cards", "/sites", "/members"):
        newcomer.open(CONSOLE + path, f"{path} held back")
        expect(f"{path} without a factor", urllib.parse.urlparse(newcomer.url()).path,
               "/second-factors")
    adds_an_authenticator_app(newcomer)
    newcomer.open(CONSOLE + "/cards", "cards, with a factor")
    expect("/cards with a factor", urllib.parse.urlparse(newcomer.url()).path, "/cards")


def main():
    folder = screenshots_folder()
    print(f"screenshots: {folder}", flush=True)
    owner = Person("owner", folder)
    member = Person("member", folder)
    newcomer = Person("newcomer", folder)
    try:
        owner_signs_in(owner)
        sidebar_id = owner_maps_a_site(owner)
        token, fragment_id = owner_makes_a_token_that_works_on_v1(owner)
        key = owner_makes_a_delivery_key(owner)
        owner_writes_a_card_for_the_sidebar(owner)
        owner_reviews_the_site(owner)
        fragment_serves_the_card(key, env["AGENTCARD_ORG_ID"], sidebar_id, SIDEBAR_CARD_TITLE)
        owner_reads_the_audit_log(owner, token, key)
        owner_deletes_a_site(owner, token)
        link = owner_invites_a_member(owner)
        member_joins(member, link)
        member_writes_previews_and_activates_a_card(member)
        member_makes_the_card_eligible(member)
        fragment_serves_the_card(key, env["AGENTCARD_ORG_ID"], fragment_id,
                                 page_url=f"https://{SITE}/world/story")
        agents_ask_and_the_member_reads_the_numbers(member, key, fragment_id)
        member_cannot_reach_the_tokens(member)
        signs_out(member)
        signs_out(owner)
        signs_in_with_the_keyboard_only(owner, env["AGENTCARD_OWNER_EMAIL"], OWNER_PASSWORD)
        owner_signs_in_with_an_authenticator_app(owner)
        member_signs_in_with_a_passkey_alone(member)
        owner_requires_a_second_factor_of_a_newcomer(owner, newcomer)
    except JourneyFailed as failure:
        print(f"journey failed: {failure}", file=sys.stderr)
        return 1
    finally:
        owner.close()
        member.close()
        newcomer.close()
    print("every journey passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
