"""A hiring round's tools in headless Chromium (issue 21): a candidate uploads a notebook through the
form and reads the note; the interviewer regrades the cohort with the page's button, chooses which
scorecards stand, and opens the similarity page."""

from __future__ import annotations

import time

import nbformat
import pytest

from service_helpers import INTERVIEWER_TOKEN, LiveServer, auth, post
from test_service_pages import _login, _wait_text, browser  # noqa: F401 - the fixture

pytestmark = [pytest.mark.service, pytest.mark.browser, pytest.mark.slow]

CODE = ("import numpy as np\n\ndef softmax(x, axis=-1):\n    m = np.max(x, axis=axis, keepdims=True)\n"
        "    m = np.where(np.isfinite(m), m, 0)\n    e = np.exp(x - m)\n    s = e.sum(axis=axis, keepdims=True)\n"
        "    return np.divide(e, s, out=np.zeros_like(e), where=s > 0).astype(x.dtype)")


def _wait(browser, element_id, text, timeout=180):
    """Reload until #element_id reads ``text`` (the page has no live updates); an element of the page
    a click is leaving goes stale while read, which is one more try."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if browser.find_element(By.ID, element_id).text == text:
                return
        except (StaleElementReferenceException, NoSuchElementException):
            pass
        time.sleep(1)
        browser.refresh()
    raise AssertionError(f"#{element_id} never read {text!r}: {browser.page_source[-2000:]}")


def test_notebook_upload_regrade_choice_and_similarity_pages(browser, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("!pip install numpy\n" + CODE), nbformat.v4.new_code_cell("%timeit 1")]
    path = tmp_path / "work.ipynb"
    path.write_text(nbformat.writes(nb))
    live = LiveServer(f"sqlite:///{tmp_path / 'r.db'}", tmp_path / "server.log", workers=1).start()
    try:
        i = auth(INTERVIEWER_TOKEN)
        cohort = post(f"{live.url}/api/cohorts", headers=i, json={"name": "nb round", "exercises": ["softmax"]}).json()
        token = post(f"{live.url}/api/cohorts/{cohort['id']}/candidates", headers=i, json={"name": "Lin"}).json()["token"]
        _login(browser, live.url, token, "/candidate")
        browser.find_element(By.CSS_SELECTOR, "a.exercise").click()
        browser.find_element(By.ID, "file").send_keys(str(path))
        browser.find_element(By.ID, "submit").click()
        _wait(browser, "sub-status", "graded")
        assert browser.find_element(By.ID, "score").text == "16/16"
        note = browser.find_element(By.CSS_SELECTOR, ".notebook-note").text
        assert "Graded the 2 code cells" in note and "!pip install numpy" in note and "%timeit 1" in note

        _login(browser, live.url, INTERVIEWER_TOKEN, "/interviewer")
        browser.get(f"{live.url}/interviewer/cohorts/{cohort['id']}")
        browser.find_element(By.CSS_SELECTOR, "#regrade button").click()
        WebDriverWait(browser, 30).until(lambda d: "/regrades/" in d.current_url)
        _wait(browser, "regrade-status", "done")
        assert len(browser.find_elements(By.CSS_SELECTOR, "tr.change")) == 1
        assert "not this regrade's" in browser.find_element(By.ID, "standing").text
        browser.find_element(By.ID, "accept-regrade").click()
        _wait_text(browser, By.ID, "standing", "These regraded scorecards stand")
        browser.get(f"{live.url}/interviewer/cohorts/{cohort['id']}")
        assert "stands" in browser.find_element(By.ID, "regrades").text
        browser.find_element(By.ID, "similarity").click()
        _wait_text(browser, By.ID, "disclaimer", "never a verdict")
        rows = browser.find_elements(By.CSS_SELECTOR, "#pairs tr.pair")
        assert rows and "Lin" in rows[0].text
    finally:
        live.stop()
