"""A new organisation's owner connects an edge from the console alone, in a real browser (run by
tests/it/browser.rs against a server it started): from the home page's first steps, a site, a
fragment made its default, a card eligible on it and active; then "Connect an edge" from the
first steps: a key made on the page (shown once), a recipe whose download is the text shown,
and one plain HTTP request standing in for the edge, sent with the values the page shows; the
live check, which the page refreshes by itself, turns green. Every page passes axe-core; the
page once green is written as docs-connect.png (docs/console.md's).

Environment: AGENTCARD_CONSOLE, AGENTCARD_API, AGENTCARD_OWNER_LINK, AGENTCARD_CLIENT_IP_HEADER,
AGENTCARD_CLIENT_IP, AGENTCARD_SCREENSHOTS (as for journeys.py). Exits 0 when it passed.
"""

import os
import sys
import urllib.error
import urllib.parse
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from browser import JourneyFailed, Person, expect, screenshots_folder

env = os.environ
CONSOLE = env["AGENTCARD_CONSOLE"]
API = env["AGENTCARD_API"]
PASSWORD = "edge owner's passphrase"
SITE = "edge-day.example"
GPTBOT = "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)"


def maps_a_site_with_a_served_default(owner):
    owner.open(env["AGENTCARD_OWNER_LINK"], "set a password")
    owner.fill("New password (10 to 128 characters)", PASSWORD)
    owner.press("Set password and sign in", "home")
    owner.sees("First steps")
    owner.follow("Add a site", "sites")
    owner.fill("Domain", SITE)
    owner.press("Add the site", "site added")
    owner.fill("Reference (optional)", "/front")
    owner.fill("Name", "Front")
    owner.press("Add the fragment", "fragment added")
    owner.choose("Default fragment", "/front (Front)")
    owner.press("Set the default", "default set")
    owner.follow("Cards", "cards")
    owner.follow("New card", "new card")
    owner.fill("Name", "Edge day card")
    owner.fill("Brand", "Edge Day")
    owner.fill("Title", "Read Edge Day")
    owner.fill("Text", "Licensing: ask us.")
    owner.press("Save", "card saved")
    owner.press("Activate", "card active")


def download(owner, href):
    """A link of the console fetched with the owner's cookies: (headers, text)."""
    cookies = "; ".join(f"{c['name']}={c['value']}" for c in owner.driver.get_cookies())
    path = urllib.parse.urlparse(href)._replace(scheme="", netloc="").geturl()
    request = urllib.request.Request(API + path, headers={
        "Host": urllib.parse.urlparse(CONSOLE).netloc, "Cookie": cookies,
        env["AGENTCARD_CLIENT_IP_HEADER"]: env["AGENTCARD_CLIENT_IP"]})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.headers, answer.read().decode()


def connects_an_edge(owner):
    owner.follow("Home", "home with the first steps")
    owner.follow("Connect an edge", "connect an edge")
    owner.sees("No request yet.")
    owner.press("Make a key for this edge", "key made")
    key = owner.value_of("#secret")
    if not key.startswith("svc_live_"):
        raise JourneyFailed(f"the key shown is {key!r}")
    partner = owner.value_of("#sent-partner")
    fragment = owner.value_of("#sent-fragment")
    # The nginx recipe: its download is the text shown, the site's values in it, the key not.
    shown = owner.driver.find_element(By.ID, "recipe-agentcard-http.conf").get_attribute("value")
    headers, downloaded = download(owner, owner.link_target("Download agentcard-http.conf"))
    expect("the download's name", headers["Content-Disposition"],
           'attachment; filename="agentcard-http.conf"')
    expect("the download is the recipe shown", downloaded, shown)
    for value in (SITE, partner, fragment):
        if value not in downloaded:
            raise JourneyFailed(f"{value} is not in the nginx recipe")
    key_file = owner.driver.find_element(By.ID, "recipe-agentcard-key.conf").get_attribute("value")
    if key not in key_file:
        raise JourneyFailed("the key file shown does not hold the key just made")
    # What the edge sends, sent once by hand.
    lang = owner.value_of("#sent-lang")
    query = urllib.parse.urlencode({"partner_id": partner, "fragment_id": fragment, "lang": lang,
                                    "page_url": f"https://{SITE}/today/story"})
    request = urllib.request.Request(f"{API}/fragment?{query}", headers={
        "X-API-Key": key, "X-Agent-UA": GPTBOT,
        env["AGENTCARD_CLIENT_IP_HEADER"]: env["AGENTCARD_CLIENT_IP"]})
    with urllib.request.urlopen(request, timeout=30) as answer:
        expect("/fragment with the console's key", answer.status, 200)
        if "Read Edge Day" not in answer.read().decode():
            raise JourneyFailed("/fragment did not serve the card")
    # The page refreshes its live check by itself: no reload here.
    WebDriverWait(owner.driver, 30).until(
        lambda driver: driver.find_elements(By.CSS_SELECTOR, "#live .live-ok"))
    owner.arrived("live check green")
    owner.sees("Connected: an agent got a card.")
    owner.sees(f"{SITE}/today/story/")
    owner.sees("GPTBot")
    owner.driver.find_element(By.ID, "live-title").location_once_scrolled_into_view
    owner.driver.save_screenshot(str(owner.screenshots / "docs-connect.png"))


def main():
    folder = screenshots_folder()
    print(f"screenshots: {folder}", flush=True)
    owner = Person("edge-owner", folder)
    try:
        maps_a_site_with_a_served_default(owner)
        connects_an_edge(owner)
    except JourneyFailed as failure:
        print(f"journey failed: {failure}", file=sys.stderr)
        return 1
    finally:
        owner.close()
    print("the edge is connected", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
