"""A person at the console, in Debian's Chromium driven by Selenium: what the journeys of
journeys.py do with a page (follow a link, fill a field by its label, press a button), each page
checked with axe-core for WCAG 2 A and AA and saved as a screenshot.

The person acts the way a keyboard or screen-reader user finds things: a field by the text of
its <label>, a button or link by its text. A page that loses a label fails the journey, as it
would fail that user.
"""

import json
import os
import re
import urllib.parse
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

HERE = Path(__file__).resolve().parent
AXE = HERE / "node_modules" / "axe-core" / "axe.min.js"
# The standards axe checks every page against.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


class JourneyFailed(AssertionError):
    pass


def expect(what, got, wanted):
    if got != wanted:
        raise JourneyFailed(f"{what}: got {got!r}, expected {wanted!r}")


def start_chromium():
    """Headless Chromium with no network of its own: without the background-networking flags it
    tries Google's hosts at every start, and this machine refuses them."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1280,900"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


class Person:
    """One browser session: its own cookies, its own screenshots' numbering."""

    def __init__(self, name, screenshots):
        self.name = name
        self.driver = start_chromium()
        self.screenshots = screenshots
        self.step = 0
        self.axe_source = AXE.read_text()

    def close(self):
        self.driver.quit()

    # Moving around

    def open(self, url, what):
        self.driver.get(url)
        self.arrived(what)

    def follow(self, link_text, what):
        self._link(link_text).click()
        self.arrived(what)

    def press(self, button_text, what):
        self._button(button_text).click()
        self.arrived(what)

    def fill(self, label, value):
        field = self.field(label)
        field.clear()
        field.send_keys(value)

    def choose(self, label, option_text):
        field = self.field(label)
        for option in field.find_elements(By.TAG_NAME, "option"):
            if option.text.strip() == option_text:
                option.click()
                return
        raise JourneyFailed(f"{self.name}: no option {option_text!r} under {label!r}")

    def tick(self, label):
        box = self.field(label)
        if not box.is_selected():
            box.click()

    def tab_to(self, element_id, most=20):
        """Presses Tab, as a keyboard user does, until the element with this id has the focus."""
        for _ in range(most):
            ActionChains(self.driver).send_keys(Keys.TAB).perform()
            if self.driver.switch_to.active_element.get_attribute("id") == element_id:
                return
        raise JourneyFailed(f"{self.name}: {most} presses of Tab never reached #{element_id}")

    def waits_to_leave(self, path, seconds=30):
        """Polls until the browser has left `path` (a form sent from the keyboard)."""
        WebDriverWait(self.driver, seconds).until(
            lambda driver: not urllib.parse.urlparse(driver.current_url).path == path)

    def waits_for_query(self, name, seconds=30):
        """Polls until the address carries the query parameter `name` (a GET form sent from the
        keyboard that stays on its page)."""
        WebDriverWait(self.driver, seconds).until(
            lambda driver: name in urllib.parse.parse_qs(urllib.parse.urlparse(
                driver.current_url).query))

    def link_target(self, link_text):
        return self._link(link_text).get_attribute("href")

    def type_keys(self, *keys):
        """Keys typed into whatever has the focus."""
        ActionChains(self.driver).send_keys(*keys).perform()

    def field(self, label):
        """The input a <label> with this text names (by `for`, or by holding it)."""
        for element in self.driver.find_elements(By.TAG_NAME, "label"):
            if _text(element) != label:
                continue
            target = element.get_attribute("for")
            if target:
                return self.driver.find_element(By.ID, target)
            inner = element.find_elements(By.CSS_SELECTOR, "input, select, textarea")
            if inner:
                return inner[0]
        raise JourneyFailed(f"{self.name}: no field labelled {label!r} on {self.url()}")

    # What is on the page

    def url(self):
        return self.driver.current_url

    def text(self):
        return self.driver.find_element(By.TAG_NAME, "body").text

    def sees(self, text):
        if text not in self.text():
            raise JourneyFailed(f"{self.name}: {text!r} not on {self.url()}:\n{self.text()}")

    def does_not_see(self, text):
        if text in self.text():
            raise JourneyFailed(f"{self.name}: {text!r} unexpectedly on {self.url()}")

    def has_link(self, link_text):
        try:
            self._link(link_text)
            return True
        except JourneyFailed:
            return False

    def value_of(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css).text.strip()

    # Checks every page gets

    def arrived(self, what):
        """Each page reached: a screenshot named after the step, then axe."""
        self.step += 1
        slug = re.sub(r"[^a-z0-9]+", "-", what.lower()).strip("-")
        path = self.screenshots / f"{self.name}-{self.step:02d}-{slug}.png"
        self.driver.save_screenshot(str(path))
        self.check_accessibility(what)

    def check_accessibility(self, what):
        self.driver.execute_script(self.axe_source)
        result = self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}})"
            ".then(r => done(JSON.stringify(r.violations)), e => done(JSON.stringify("
            "[{id: 'axe-error', help: String(e), nodes: []}])));",
            AXE_TAGS,
        )
        violations = json.loads(result)
        if violations:
            lines = [f"{v['id']}: {v['help']} ({len(v['nodes'])} nodes: "
                     f"{', '.join(n['target'][0] for n in v['nodes'][:3])})" for v in violations]
            raise JourneyFailed(f"{self.name}, {what} ({self.url()}): axe found\n  "
                                + "\n  ".join(lines))

    def _link(self, text):
        for element in self.driver.find_elements(By.TAG_NAME, "a"):
            if _text(element) == text:
                return element
        raise JourneyFailed(f"{self.name}: no link {text!r} on {self.url()}")

    def _button(self, text):
        for element in self.driver.find_elements(By.CSS_SELECTOR, "button, input[type=submit]"):
            if _text(element) == text or element.get_attribute("value") == text:
                return element
        raise JourneyFailed(f"{self.name}: no button {text!r} on {self.url()}")


def _text(element):
    return " ".join(element.text.split())


def screenshots_folder():
    """The folder of this run's screenshots, emptied of an earlier run's."""
    folder = Path(os.environ["AGENTCARD_SCREENSHOTS"])
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    return folder


__all__ = ["Person", "JourneyFailed", "Keys", "screenshots_folder"]
