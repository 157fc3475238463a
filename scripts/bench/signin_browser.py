#!/usr/bin/env python3
"""scripts/bench/signin_browser.py: a real person signing in from new browsers, during a flood
of scripts/bench-signin-flood.sh.

Usage: signin_browser.py ORIGIN EMAIL PASSWORD TIMES

Headless Chromium (Debian's, driven by Selenium from the project's .venv/) signs in TIMES times
at ORIGIN/sign-in, each time as a new browser (every cookie deleted first, so no device cookie):
it types the email and password and presses Sign in, as a person does; when the page asks for a
proof of work, console.js solves it in its Web Worker and sends the sign-in once it is done; when
the answer is the form again asking for one (the rate spent between the page and the sign-in),
it types the password again and presses Sign in again. Each attempt has 60 seconds. Prints a
line per attempt (ok or failed, seconds, submits, what the page said on failure) and a last line
`successes=N/TIMES durations=…`.
"""

import sys
import time

from selenium import webdriver
from selenium.common.exceptions import (
    NoSuchElementException,
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ATTEMPT_SECONDS = 60
SUBMITS = 3
# What a page that navigates while it is read raises (Chromium's inspector also answers "Node
# with given id does not belong to the document", a plain WebDriverException).
MOVING_PAGE = (StaleElementReferenceException, NoSuchElementException, WebDriverException)


def start_chromium():
    """Headless Chromium with no network of its own (as tests/browser/browser.py)."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


def page_text(driver):
    """The start of what the page says (an error page of the browser's own has no <main>)."""
    return driver.find_element(By.TAG_NAME, "body").text[:200]


def signed_in(driver):
    return "Signed in as" in driver.page_source


def asked_again(driver):
    """The sign-in form again, its password empty: typed again before the next submit."""
    forms = driver.find_elements(By.CSS_SELECTOR, "form[action='/sign-in']")
    return bool(forms) and not driver.find_element(By.ID, "password").get_attribute("value")


def answered(driver):
    """Signed in, refused (another page than the sign-in's), or asked again."""
    return signed_in(driver) or not driver.title.startswith("Sign in") or asked_again(driver)


def attempt(driver, origin, email, password):
    """One sign-in as a new browser: (signed in, submits, what the page said last)."""
    driver.delete_all_cookies()
    driver.get(f"{origin}/sign-in")
    if not driver.find_elements(By.ID, "email"):
        return False, 0, f"the sign-in page was not served: {driver.title!r}, {page_text(driver)!r}"
    driver.find_element(By.ID, "email").send_keys(email)
    deadline = time.monotonic() + ATTEMPT_SECONDS
    for submit in range(1, SUBMITS + 1):
        driver.find_element(By.ID, "password").send_keys(password)
        driver.find_element(By.CSS_SELECTOR, "form[action='/sign-in'] button[type=submit]").click()
        left = max(1.0, deadline - time.monotonic())
        try:
            # Until the page changes: its script may hold the sign-in while it works.
            # The page may change between finding an element and reading it: look again.
            waiting = WebDriverWait(driver, left, ignored_exceptions=MOVING_PAGE)
            waiting.until(answered)
        except TimeoutException:
            return False, submit, "no answer in time"
        if signed_in(driver):
            return True, submit, ""
        if not driver.title.startswith("Sign in"):
            return False, submit, driver.find_element(By.TAG_NAME, "main").text[:200]
    return False, SUBMITS, driver.find_element(By.TAG_NAME, "main").text[:200]


def sign_out(driver):
    driver.find_element(By.XPATH, "//form[@action='/sign-out']//button").click()


def main():
    origin, email, password, times = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    driver = start_chromium()
    successes, durations = 0, []
    try:
        for n in range(1, times + 1):
            started = time.monotonic()
            ok, submits, said = attempt(driver, origin, email, password)
            took = time.monotonic() - started
            print(f"sign-in {n}: {'ok' if ok else 'failed'} in {took:.1f} s, {submits} submit(s)"
                  + (f": {said!r}" if said else ""), flush=True)
            if ok:
                successes += 1
                durations.append(took)
                sign_out(driver)
    finally:
        driver.quit()
    shown = " ".join(f"{d:.1f}" for d in durations) or "-"
    print(f"successes={successes}/{times} durations={shown}")


if __name__ == "__main__":
    main()
