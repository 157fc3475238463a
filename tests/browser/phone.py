"""Every page of the console at a phone's width, run by tests/it/browser.rs against a server
it started with demo data: the demo's owner sets a password through their link and signs in at
390x844 CSS pixels, then follows every link of the console from the home page (each page once,
its links queued). Each page passes axe-core (WCAG 2 A and AA, with WCAG 2.2's target size)
and does not scroll sideways (WCAG 1.4.10 Reflow: document.documentElement.scrollWidth is at
most the viewport's width), no table's cell ends past the viewport's right edge (no column hidden
in a table that scrolls on its own), and the header is under 120 px tall; a screenshot of each is written to $AGENTCARD_SCREENSHOTS.

Environment (set by tests/it/browser.rs): AGENTCARD_CONSOLE (the console's origin),
AGENTCARD_OWNER_LINK (the link with which the owner sets a password), AGENTCARD_PAGES (a JSON
list of the path patterns of the console's GET pages, `/cards/{card}`: each must be reached).
Exits 0 when every page passed, else prints the failures and exits 1.
"""

import json
import os
import re
import sys
import urllib.parse

from browser import JourneyFailed, Person, screenshots_folder

env = os.environ
CONSOLE = env["AGENTCARD_CONSOLE"]
PASSWORD = "phone owner's passphrase"
WIDTH, HEIGHT = 390, 844
# The header's most height at this width: the navigation is one row behind its menu button.
MOST_HEADER = 120
# axe's tags for this pass: WCAG 2 A and AA up to 2.2, whose AA holds target size (2.5.8).
PHONE_AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
# Pages a crawl must not open: files (a site's stored icon, the recipes of "Connect an edge",
# and its live check, the fragment console.js fetches into that page), and one-time links
# (opened once, on purpose, below).
# The factor's step is reached only after a password (journeys.py checks it); a report mail's
# unsubscribe page only from its mail (tests/it/report_mail.rs opens it).
SKIPPED = re.compile(
    r"^/(console\.css|console\.js|link/|unsubscribe/|sign-in/second-factor$)|/icon$|/connect/[^/]+$")
MOST_PAGES = 300


def public_links(phone):
    """The console's pages the sign-in page links, as a visitor reads it."""
    phone.open(CONSOLE + "/sign-in", "sign in")
    return [link for link in phone.links() if link.split("?")[0] != "/sign-in"]


class Phone(Person):
    """A person on a phone: the viewport of a common phone, every page also checked for
    sideways scrolling."""

    def __init__(self, name, screenshots):
        super().__init__(name, screenshots)
        # Not `mobile`: a mobile viewport zooms out to fit wide content, which would widen
        # `innerWidth` to the very overflow this pass looks for.
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})

    def check_accessibility(self, what):
        self.driver.execute_script(self.axe_source)
        result = self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document, {runOnly: {type: 'tag', values: arguments[0]},"
            " rules: {'target-size': {enabled: true}}})"
            ".then(r => done(JSON.stringify(r.violations)), e => done(JSON.stringify("
            "[{id: 'axe-error', help: String(e), nodes: []}])));",
            PHONE_AXE_TAGS,
        )
        problems = [f"{v['id']}: {v['help']} ({len(v['nodes'])} nodes: "
                    f"{', '.join(str(n['target'][0]) for n in v['nodes'][:3])})"
                    for v in json.loads(result)]
        widths = self.driver.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth];")
        if widths[0] > widths[1]:
            problems.append(f"scrolls sideways: {widths[0]} px of content in {widths[1]} px")
        problems.extend(self.cut_off_cells())
        header = self.driver.execute_script(
            "const h = document.querySelector('body > header');"
            " return h ? h.getBoundingClientRect().height : 0;")
        if header >= MOST_HEADER:
            problems.append(f"the header is {header:.0f} px tall (at most {MOST_HEADER})")
        if problems:
            raise JourneyFailed(f"{what} ({self.url()}):\n  " + "\n  ".join(problems))

    def cut_off_cells(self):
        """Each table's cells whose right edge is past the viewport: columns a person would
        have to scroll to inside the table."""
        cut = self.driver.execute_script(
            "return Array.from(document.querySelectorAll('table'), (t, i) => {"
            " const cells = Array.from(t.querySelectorAll('th, td'))"
            "   .filter(c => c.getClientRects().length > 0"
            "     && c.getBoundingClientRect().right > window.innerWidth + 0.5);"
            " return cells.length ? [t.id || t.className || `table ${i + 1}`,"
            "   cells.length, cells[0].textContent.trim().slice(0, 40)] : null;"
            "}).filter(Boolean);")
        return [f"table {name}: {n} cells past {WIDTH} px (the first: {text!r})"
                for name, n, text in cut]

    def links(self):
        """The console paths (with their query) that this page links to."""
        found = []
        for href in self.driver.execute_script(
                "return Array.from(document.querySelectorAll('a[href]'), a => a.href);"):
            url = urllib.parse.urlsplit(href)
            if f"{url.scheme}://{url.netloc}" != CONSOLE or SKIPPED.search(url.path):
                continue
            found.append(url.path + (f"?{url.query}" if url.query else ""))
        return found


def matches(pattern, path):
    """Whether a path (without its query) is one of a page pattern's: `{kind}` is a segment."""
    want, got = pattern.strip("/").split("/"), path.strip("/").split("/")
    return len(want) == len(got) and all(
        w == g or (w.startswith("{") and w.endswith("}") and g) for w, g in zip(want, got))


def main():
    folder = screenshots_folder()
    print(f"screenshots: {folder}", flush=True)
    patterns = json.loads(env["AGENTCARD_PAGES"])
    phone = Phone("phone", folder)
    failures, visited = [], []
    try:
        phone.open(env["AGENTCARD_OWNER_LINK"], "set a password")
        phone.fill("New password (10 to 128 characters)", PASSWORD)
        phone.press("Set password and sign in", "home")
        queue, seen = ["/"], {"/"}
        while queue and len(visited) < MOST_PAGES:
            path = queue.pop(0)
            try:
                phone.open(CONSOLE + path, path)
            except JourneyFailed as failure:
                failures.append(str(failure))
            visited.append(path)
            for link in phone.links():
                if link not in seen:
                    seen.add(link)
                    queue.append(link)
        # The sign-in page, as a visitor (the session's cookie gone) sees it, and the pages it
        # links ("forgot your password").
        phone.driver.delete_all_cookies()
        for path, name in [("/sign-in", "sign in")] + [(p, p) for p in public_links(phone)]:
            try:
                phone.open(CONSOLE + path, name)
            except JourneyFailed as failure:
                failures.append(str(failure))
            visited.append(path)
    except JourneyFailed as failure:
        failures.append(f"signing in: {failure}")
    finally:
        phone.close()
    paths = {path.split("?")[0] for path in visited}
    unreached = [p for p in patterns
                 if not SKIPPED.search(p) and not any(matches(p, path) for path in paths)]
    if unreached:
        failures.append("no link of the console reaches: " + ", ".join(unreached))
    print(f"visited {len(visited)} pages: {json.dumps(visited)}", flush=True)
    if failures:
        print("phone-width pass failed:\n" + "\n".join(failures), file=sys.stderr)
        return 1
    print(f"every page passed at {WIDTH}x{HEIGHT}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
