"""The service's pages in headless Chromium (Selenium with Debian's chromium-driver): a candidate
uploads a file and sees the score; the interviewer opens the cohort table and a submission."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import httpx
import pytest

from service_helpers import INTERVIEWER_TOKEN, get, post, LiveServer, auth

pytestmark = [pytest.mark.service, pytest.mark.browser, pytest.mark.slow]
ROOT = Path(__file__).resolve().parent.parent
GOOD = ROOT / "submissions/samples/softmax/correct_logsumexp.py"
WRONG = ROOT / "submissions/samples/softmax/bug_inplace.py"


@pytest.fixture
def browser():
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not (os.path.exists(chromium) and os.path.exists(driver_path)):
        if os.environ.get("GRADER_REQUIRE_CHROMIUM") == "1":
            pytest.fail("GRADER_REQUIRE_CHROMIUM=1 but chromium/chromedriver are missing")
        pytest.skip("chromium and chromedriver are not installed")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_path), options=opts)
    driver.implicitly_wait(5)
    try:
        yield driver
    finally:
        driver.quit()


def _login(driver, url, token, lands_on):
    """Log in through the form and wait until the browser is on ``lands_on``."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.delete_all_cookies()
    driver.get(url + "/")
    driver.find_element(By.ID, "token").send_keys(token)
    driver.find_element(By.ID, "login").click()
    WebDriverWait(driver, 30).until(lambda d: d.current_url.endswith(lands_on))


def test_candidate_uploads_and_sees_the_score_then_interviewer_reviews(browser, tmp_path):
    from selenium.webdriver.common.by import By

    live = LiveServer(f"sqlite:///{tmp_path / 'b.db'}", tmp_path / "server.log", workers=1).start()
    try:
        i = auth(INTERVIEWER_TOKEN)
        cohort = post(f"{live.url}/api/cohorts", headers=i, json={"name": "browser round", "exercises": ["softmax"]}).json()
        token = post(f"{live.url}/api/cohorts/{cohort['id']}/candidates", headers=i,
                           json={"name": "Grace"}).json()["token"]
        _login(browser, live.url, token, "/candidate")
        assert "Grace" in browser.page_source
        assert browser.find_element(By.ID, "sandbox-warning")  # process sandbox: warned on every page
        browser.find_element(By.CSS_SELECTOR, "a.exercise").click()
        assert "Starting file" in browser.page_source
        browser.find_element(By.ID, "file").send_keys(str(GOOD))
        browser.find_element(By.ID, "submit").click()
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            browser.refresh()
            if browser.find_element(By.ID, "sub-status").text == "graded":
                break
            time.sleep(1)
        assert browser.find_element(By.ID, "score").text == "16/16"
        assert browser.find_element(By.CSS_SELECTOR, ".scorecard").get_attribute("data-view") == "candidate"
        assert "seed" not in browser.find_element(By.CSS_SELECTOR, ".scorecard").text
        assert not browser.find_elements(By.CSS_SELECTOR, "li.mistake")  # all passed: no headline

        # a wrong file: its one mistake is one headline above the table, the page never scrolls sideways
        browser.get(live.url + "/candidate")
        browser.find_element(By.CSS_SELECTOR, "a.exercise").click()
        browser.find_element(By.ID, "file").send_keys(str(WRONG))
        browser.find_element(By.ID, "submit").click()
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            browser.refresh()
            if browser.find_element(By.ID, "sub-status").text == "graded":
                break
            time.sleep(1)
        headlines = browser.find_elements(By.CSS_SELECTOR, "li.mistake pre.headline")
        assert headlines and all(h.is_displayed() for h in headlines)
        page = browser.find_element(By.CSS_SELECTOR, ".scorecard").text
        assert page.count(headlines[0].text.splitlines()[0]) == 1      # said once; per-check detail folded
        assert browser.execute_script("return document.documentElement.scrollWidth <= "
                                      "document.documentElement.clientWidth + 1")
        message_col = browser.find_element(By.CSS_SELECTOR, "table.checks th.msg")
        assert message_col.size["width"] >= 0.45 * browser.find_element(By.CSS_SELECTOR, "table.checks").size["width"]

        _login(browser, live.url, INTERVIEWER_TOKEN, "/interviewer")
        browser.find_element(By.CSS_SELECTOR, "a.cohort").click()
        table = browser.find_element(By.CSS_SELECTOR, "table.cohort-table")
        assert "Grace" in table.text and "15/16" in table.text   # the latest attempt (the wrong file)...
        assert table.find_element(By.CSS_SELECTOR, "td.attempts").text == "2"  # ...of two
        assert browser.find_element(By.CSS_SELECTOR, "img[alt='score distribution']")
        browser.find_element(By.CSS_SELECTOR, "table.cohort-table a.submission").click()
        assert browser.find_element(By.CSS_SELECTOR, ".scorecard").get_attribute("data-view") == "interviewer"
        assert "def softmax" in browser.find_element(By.ID, "source-text").text
        assert not any(n.is_displayed() for n in browser.find_elements(By.CSS_SELECTOR, "table.nums th"))
        browser.find_element(By.CSS_SELECTOR, "details.check-detail summary").click()  # numbers when asked
        numbers = browser.find_elements(By.CSS_SELECTOR, "table.nums th")
        assert any(n.text == "output.tolerance.rtol" for n in numbers)  # numbers as a table, not raw JSON
    finally:
        live.stop()
