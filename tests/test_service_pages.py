"""The service's pages in headless Chromium (Selenium with Debian's chromium-driver): a candidate
uploads a file and sees the score; the interviewer opens the cohort table and a submission."""

from __future__ import annotations

import os
import re
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
    yield from _chrome()


@pytest.fixture
def browser_without_javascript():
    """Headless Chromium with JavaScript turned off (the pages must work without it)."""
    yield from _chrome(javascript=False)


def _chrome(javascript: bool = True):
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
    if not javascript:
        opts.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
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
    from selenium.webdriver.support.ui import WebDriverWait

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
        # the submission page updates itself (exercise.js polls the API): no reload; a click returns
        # before its page replaces the form, so the wait looks the element up again on every try
        _wait_text(browser, By.ID, "sub-status", "graded", timeout=180)
        assert browser.find_element(By.ID, "score").text == "16/16"
        assert browser.find_element(By.CSS_SELECTOR, ".scorecard").get_attribute("data-view") == "candidate"
        assert "seed" not in browser.find_element(By.CSS_SELECTOR, ".scorecard").text
        assert not browser.find_elements(By.CSS_SELECTOR, "li.mistake")  # all passed: no headline

        # a wrong file: its one mistake is one headline above the table, the page never scrolls sideways
        browser.get(live.url + "/candidate")
        browser.find_element(By.CSS_SELECTOR, "a.exercise").click()
        exercise_url = browser.current_url
        browser.find_element(By.ID, "file").send_keys(str(WRONG))
        browser.find_element(By.ID, "submit").click()
        WebDriverWait(browser, 30).until(lambda d: re.search(r"/candidate/submissions/\d+$", d.current_url))
        submission_url = browser.current_url
        # the exercise page shows the latest attempt too, and updates it in place: a marker set on the
        # page outlives the update (a reload would drop it)
        browser.get(exercise_url)
        browser.execute_script("window.stayed = 'yes'")
        _wait_text(browser, By.ID, "latest-status", "graded", timeout=180)
        assert browser.execute_script("return window.stayed") == "yes"
        assert browser.find_element(By.CSS_SELECTOR, "#result #score").text == "15/16"
        browser.get(submission_url)
        _wait_text(browser, By.ID, "sub-status", "graded", timeout=180)
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


def test_exercise_page_track_stub_tab_and_the_result_appears_without_reload(browser, tmp_path):
    """The candidate's page to work from (issue 23 item 2): the track named, the stub in the box, Tab
    indents inside the box, and the result replaces "Grading..." in the same document (no reload)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from test_service_fleet import LiveWorker

    db = f"sqlite:///{tmp_path / 'p.db'}"
    live = LiveServer(db, tmp_path / "server.log", workers=0).start()  # nothing grades until the worker starts
    worker = None
    try:
        i = auth(INTERVIEWER_TOKEN)
        cohort = post(f"{live.url}/api/cohorts", headers=i, json={"name": "page", "exercises": ["softmax"]}).json()
        token = post(f"{live.url}/api/cohorts/{cohort['id']}/candidates", headers=i, json={"name": "Ada"}).json()["token"]
        _login(browser, live.url, token, "/candidate")
        browser.find_element(By.CSS_SELECTOR, "a.exercise").click()
        assert browser.find_element(By.ID, "track-name").text == "NumPy"
        stub = (ROOT / "exercises/softmax/stub.py").read_text(encoding="utf-8")
        box = browser.find_element(By.ID, "source")
        assert box.get_attribute("value") == stub
        assert "monospace" in box.value_of_css_property("font-family")
        box.click()
        box.send_keys(Keys.CONTROL, Keys.END)
        box.send_keys(Keys.TAB)
        assert box.get_attribute("value") == stub + "    "                  # four spaces, at the caret
        assert browser.switch_to.active_element == box                      # the box kept the focus
        box.send_keys(Keys.SHIFT, Keys.TAB)
        assert box.get_attribute("value") == stub
        browser.execute_script("arguments[0].value = 'a\\n  b\\nc\\n'; arguments[0].setSelectionRange(0, 5)", box)
        box.send_keys(Keys.TAB)                                             # two lines selected: each indented
        assert box.get_attribute("value") == "    a\n      b\nc\n"
        box.send_keys(Keys.SHIFT, Keys.TAB)
        assert box.get_attribute("value") == "a\n  b\nc\n"
        browser.execute_script("arguments[0].value = arguments[1]", box, stub)
        box.send_keys(Keys.ESCAPE, Keys.TAB)                                # Esc, then Tab: leaves the box
        assert browser.switch_to.active_element != box and box.get_attribute("value") == stub

        browser.find_element(By.CSS_SELECTOR, "a.other-track").click()
        _wait_text(browser, By.ID, "track-name", "PyTorch")
        assert browser.find_element(By.ID, "source").get_attribute("value") == \
            (ROOT / "exercises/softmax/stub_torch.py").read_text(encoding="utf-8")

        browser.get(live.url + "/candidate/exercises/softmax")
        box = browser.find_element(By.ID, "source")
        browser.execute_script("arguments[0].value = arguments[1]", box, GOOD.read_text(encoding="utf-8"))
        browser.find_element(By.ID, "submit").click()
        _wait_text(browser, By.ID, "sub-status", "queued")
        assert re.search(r"/candidate/submissions/\d+$", browser.current_url)
        browser.execute_script("window.sameDocument = 'yes'")  # gone if the page were loaded again
        worker = LiveWorker(db, tmp_path / "worker.log")
        _wait_text(browser, By.ID, "score", "16/16", timeout=240)
        assert browser.execute_script("return window.sameDocument") == "yes"
        assert browser.find_element(By.ID, "sub-status").text == "graded"
        assert not browser.find_elements(By.ID, "pending")
        assert browser.find_element(By.CSS_SELECTOR, ".scorecard").get_attribute("data-view") == "candidate"
        assert browser.find_element(By.ID, "graded-track").text == "NumPy"
    finally:
        if worker is not None:
            worker.stop()
        live.stop()


def test_without_javascript_the_page_still_works_and_the_result_page_refreshes_itself(browser_without_javascript,
                                                                                      tmp_path):
    """No script: the stub is in the box, the unchanged stub is refused with the form again, and a
    pending attempt's page reloads itself (<noscript> refresh) until the result is there."""
    from selenium.webdriver.common.by import By
    from test_service_fleet import LiveWorker

    from selenium.webdriver.common.keys import Keys

    browser = browser_without_javascript
    db = f"sqlite:///{tmp_path / 'n.db'}"
    live = LiveServer(db, tmp_path / "server.log", workers=0).start()
    worker = None
    try:
        i = auth(INTERVIEWER_TOKEN)
        cohort = post(f"{live.url}/api/cohorts", headers=i, json={"name": "nojs", "exercises": ["mha"]}).json()
        token = post(f"{live.url}/api/cohorts/{cohort['id']}/candidates", headers=i, json={"name": "Bo"}).json()["token"]
        _login(browser, live.url, token, "/candidate")
        browser.get(live.url + "/candidate/exercises/mha?track=numpy")
        assert browser.find_element(By.ID, "track-name").text == "NumPy"
        stub = (ROOT / "exercises/mha/stub_numpy.py").read_text(encoding="utf-8")
        box = browser.find_element(By.ID, "source")
        assert box.get_attribute("value") == stub
        box.click()
        box.send_keys(Keys.TAB)                                            # no script: Tab leaves the box
        assert browser.switch_to.active_element != box and box.get_attribute("value") == stub
        browser.find_element(By.ID, "submit").click()                      # the stub as it came: refused
        assert "the starting file, unchanged" in _wait_text(browser, By.ID, "upload-error", "Not submitted")
        assert "0 of 10 used" in browser.find_element(By.ID, "attempts-left").text
        browser.find_element(By.ID, "file").send_keys(str(ROOT / "submissions/samples/mha/numpy/correct_einsum.py"))
        browser.find_element(By.ID, "submit").click()
        _wait_text(browser, By.ID, "sub-status", "queued")
        worker = LiveWorker(db, tmp_path / "worker.log")
        score = _wait_text(browser, By.ID, "score", "/", timeout=300)      # no refresh by the test
        max_score = score.split("/")[1]
        assert score == f"{max_score}/{max_score}"
    finally:
        if worker is not None:
            worker.stop()
        live.stop()


# -- cross-port form posts (issue 20): a page on another loopback port acts as the candidate -----


class _Attacker:
    """An HTTP server on another port of 127.0.0.1 serving pages that auto-submit a form to the service
    (JavaScript runs on the attacker's page; the service's own pages run none). ``pages`` maps a path
    to ``(html, extra headers)``."""

    def __init__(self):
        import http.server
        import threading

        pages = self.pages = {}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                html, headers = pages.get(self.path, ("not found", {}))
                body = html.encode()
                self.send_response(200 if self.path in pages else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def form(self, path: str, action: str, fields: dict, *, multipart: bool = False, headers: dict | None = None):
        import html as htmllib

        inputs = "".join(f'<textarea name="{htmllib.escape(k)}">{htmllib.escape(v)}</textarea>' for k, v in fields.items())
        enctype = ' enctype="multipart/form-data"' if multipart else ""
        self.pages[path] = (f'<!doctype html><body onload="document.forms[0].submit()">'
                            f'<form method="post" action="{action}"{enctype}>{inputs}</form></body>', headers or {})
        return self.url + path

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def _stored(live) -> dict:
    """Submissions per status in the first cohort, as the interviewer's API counts them."""
    return get(f"{live.url}/api/cohorts/1/summary", headers=auth(INTERVIEWER_TOKEN)).json()["submissions"]


def _wait_page(driver, text: str, timeout: float = 30):
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(lambda d: text in d.page_source)


def _wait_text(driver, by, selector: str, text: str, timeout: float = 30) -> str:
    """Wait until the element at ``selector`` holds ``text`` and return its text.

    A click on a form's submit button returns before the next page replaces the current one, so an
    element found right after it may be the old page's and go stale while it is read; this looks it
    up again on every try (a stale or missing element is one more try), until ``timeout`` seconds."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    seen = {"text": None}

    def holds(d):
        seen["text"] = d.find_element(by, selector).text
        return text in seen["text"]

    try:
        WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,
                                                           NoSuchElementException)).until(holds)
    except Exception as exc:
        raise AssertionError(f"{selector} never held {text!r} (last read {seen['text']!r})") from exc
    return seen["text"]


def test_cross_port_forms_are_refused_and_own_page_forms_work(browser, tmp_path):
    """A page on another loopback port auto-submits an upload, a logout and a login (the attacker's
    own token, with a valid login-form token bound to a pre-session cookie that page planted for
    127.0.0.1, since cookies do not separate ports): each gets the 403 page and changes nothing.
    The same forms from the service's own pages work."""
    import re

    from selenium.webdriver.common.by import By

    live = LiveServer(f"sqlite:///{tmp_path / 'x.db'}", tmp_path / "server.log", workers=1).start()
    evil = _Attacker()
    try:
        i = auth(INTERVIEWER_TOKEN)
        cohort = post(f"{live.url}/api/cohorts", headers=i, json={"name": "csrf round", "exercises": ["softmax"]}).json()
        victim = post(f"{live.url}/api/cohorts/{cohort['id']}/candidates", headers=i, json={"name": "Grace"}).json()
        mallory = post(f"{live.url}/api/cohorts/{cohort['id']}/candidates", headers=i, json={"name": "Mallory"}).json()
        _login(browser, live.url, victim["token"], "/candidate")  # the service's own login form works

        # 1. upload in the victim's name (pasted source, multipart like the real form)
        browser.get(evil.form("/upload", f"{live.url}/candidate/submit",
                              {"exercise": "softmax", "source": GOOD.read_text()}, multipart=True))
        _wait_page(browser, "<h1>403</h1>")
        assert "another site or port" in browser.page_source
        assert _stored(live) == {}
        # 2. log the victim out
        browser.get(evil.form("/logout", f"{live.url}/logout", {}))
        _wait_page(browser, "<h1>403</h1>")
        browser.get(live.url + "/candidate")
        assert "Grace" in browser.page_source  # still logged in
        # 3. log the victim in as Mallory: a login-form token valid for a pre-session cookie that the
        #    attacker's page sets for 127.0.0.1 (read by it from the service's own login page)
        with httpx.Client(base_url=live.url, timeout=60) as own:
            page = own.get("/").text
            planted = own.cookies["grader_presession"]
        form_token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page).group(1)
        browser.get(evil.form("/login", f"{live.url}/login", {"token": mallory["token"], "csrf_token": form_token},
                              headers={"Set-Cookie": f"grader_presession={planted}; Path=/; SameSite=Lax"}))
        _wait_page(browser, "<h1>403</h1>")
        assert any(c["name"] == "grader_presession" and c["value"] == planted for c in browser.get_cookies())
        browser.get(live.url + "/candidate")
        assert "Grace" in browser.page_source and "Mallory" not in browser.page_source
        assert _stored(live) == {}

        # the service's own forms: upload (paste), then log out
        browser.get(live.url + "/candidate/exercises/softmax")
        assert "0 of 10 used" in browser.find_element(By.ID, "attempts-left").text
        browser.find_element(By.ID, "source").send_keys("def softmax(x, axis=-1:\n")
        browser.find_element(By.ID, "submit").click()
        _wait_page(browser, "Submission ")
        assert re.search(r"/candidate/submissions/\d+$", browser.current_url)
        assert sum(_stored(live).values()) == 1
        browser.find_element(By.ID, "logout").click()
        _wait_page(browser, 'id="token"')
        browser.get(live.url + "/candidate")
        assert "<h1>401</h1>" in browser.page_source
    finally:
        evil.stop()
        live.stop()
