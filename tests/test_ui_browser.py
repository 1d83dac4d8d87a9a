"""The run report and the ask page in a real headless browser (Debian's chromium + chromedriver,
driven by Selenium), as a person would use them, on one tiny project built with the real
pipeline and the real 0.5B model:

- the report, opened from disk: filter to wrong numeric answers, open one, and the unit the
  model pointed at and the unit holding the gold value are marked;
- the ask page (``python -m stages.serve`` on loopback): ask a train question and get the cited
  document with its URL; a bad request gets a message;
- on both, a corpus line holding ``<script>`` shows as text (no alert), the console has no
  errors and no request leaves loopback (file:, data: or http://127.0.0.1 only, from the
  browser's performance log).

Screenshots go to docs/report.png and docs/ask.png. Without chromium/chromedriver the test fails
under CI (``CI`` set) and is skipped with the install command elsewhere; ``scripts/setup.sh test``
installs them when run as root.
"""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tiny_project import ROOT, dvc, make_project

pytestmark = pytest.mark.llm

CHROMIUM, DRIVER = shutil.which("chromium") or "/usr/bin/chromium", shutil.which("chromedriver") or \
    "/usr/bin/chromedriver"
XSS = "<script>alert(1)</script>"
DOCS = ROOT / "docs"
# what the browser may load: the page from disk or loopback, data: URIs, and the browser's own internal pages
ALLOWED = ("file://", "data:", "http://127.0.0.1", "about:", "chrome://", "chrome-untrusted://", "chrome-error:",
           "devtools:")


def _require_browser() -> None:
    missing = [p for p in (CHROMIUM, DRIVER) if not Path(p).exists()]
    if not missing:
        return
    msg = f"{', '.join(missing)} missing: apt-get install -y chromium chromium-driver (scripts/setup.sh test does it as root)"
    if os.environ.get("CI"):
        pytest.fail(msg)
    pytest.skip(msg)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The tiny project, built once with a corpus line holding a script tag, and a second labels file
    whose gold for the numeric q3 is another number its context states, from another document (so
    the run has a wrong numeric answer whose gold evidence sits in the context the reader saw)."""
    _require_browser()
    built = os.environ.get("TREERAG_UI_PROJECT")  # rerun the browser checks on a project this fixture built
    if built:
        proj = Path(built)
        os.environ["TREERAG_CACHE_DIR"] = str(proj.parent / "cache")
        shutil.copytree(ROOT / "stages", proj / "stages", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
        return proj
    tmp = tmp_path_factory.mktemp("ui")
    os.environ["TREERAG_CACHE_DIR"] = str(tmp / "cache")
    proj = make_project(tmp)
    md = proj / "data" / "corpus" / "water2022.md"
    md.write_text(md.read_text().replace(
        "Training the model consumed 700,000 liters of clean freshwater in total.",
        f"Training the model consumed 700,000 liters of clean freshwater in total. The log line read {XSS} verbatim."))
    dvc(proj, "init", "--no-scm", "-q")
    dvc(proj, "repro")
    with (proj / "data" / "questions.csv").open() as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        if r["id"] == "q3":
            r.update(answer="90 liters", answer_value="90", ref_id="['solar2023']",
                     supporting_materials="This avoids about 90 metric tons of CO2e annually.")
    with (proj / "data" / "wrong_gold.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return proj


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    _require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", "--window-size=1400,1000",
              f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def _requests(driver) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return urls


def _check_clean(driver) -> list[str]:
    """No console error, no alert, and every request stayed on file:, data: or loopback."""
    from selenium.common.exceptions import NoAlertPresentException

    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == [], errors
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018  (the corpus line's script must not have run)
    urls = _requests(driver)
    assert urls and all(u.startswith(ALLOWED) for u in urls), urls
    return urls


def test_report_filter_open_and_marks(project, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    out = project / "metrics" / "wrong_gold_report.html"
    t0 = time.perf_counter()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    r = subprocess.run([sys.executable, "-m", "stages.score", "--labels", "data/wrong_gold.csv", "--submission",
                        "submissions/submission.csv", "--html", str(out)], cwd=project, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    print(f"report: {out.stat().st_size / 1024:.0f} KB, rendered in {time.perf_counter() - t0:.1f} s (with start-up)")
    assert (project / "metrics" / "report.html").exists()  # the stage's own report exists too

    browser.get_log("performance")  # count only what this page loads
    browser.get(out.as_uri())
    Select(browser.find_element(By.ID, "f-type")).select_by_visible_text("numeric")
    Select(browser.find_element(By.ID, "f-right")).select_by_value("wrong")
    visible = [b for b in browser.find_elements(By.CSS_SELECTOR, "tbody.q") if b.is_displayed()]
    assert [b.get_attribute("data-id") for b in visible] == ["q3"], browser.find_element(By.ID, "f-count").text
    assert all(b.get_attribute("data-type") == "numeric" and b.get_attribute("data-right") == "wrong"
               for b in visible)
    row = visible[0].find_element(By.CSS_SELECTOR, "tr.sum")
    row.click()
    detail = visible[0].find_element(By.CSS_SELECTOR, "tr.det")
    assert detail.is_displayed()
    assert detail.find_element(By.CSS_SELECTOR, ".gold-v").text == "90"
    assert detail.find_element(By.CSS_SELECTOR, ".pred-v").text == "700000"
    context = detail.find_element(By.CSS_SELECTOR, ".context")
    pointed = context.find_elements(By.CSS_SELECTOR, ".unit.pointed")
    gold = context.find_elements(By.CSS_SELECTOR, ".unit.gold-value")
    assert pointed and pointed[0].is_displayed() and "700,000 liters" in pointed[0].text
    assert gold and gold[0].is_displayed() and "90 metric tons" in gold[0].text
    assert "gold-quote" in gold[0].get_attribute("class")
    assert "gold value" in gold[0].text and "pointed by member 0" in pointed[0].text
    # q3's context holds the corpus line with a script tag: it is text in the page, and visible
    texts = browser.execute_script(
        "return Array.from(document.querySelectorAll('pre.text')).map(e => e.textContent)")
    assert any(XSS in t for t in texts) and XSS in pointed[0].text
    assert browser.execute_script("return document.scripts.length") == 1  # the page's own script only
    browser.execute_script("arguments[0].scrollIntoView()", row)
    DOCS.mkdir(exist_ok=True)
    browser.save_screenshot(str(DOCS / "report.png"))
    urls = _check_clean(browser)
    print(f"report: requests {sorted(set(u.split(':')[0] for u in urls))}")


def _submit_and_wait(browser, by, timeout: float = 600) -> None:
    """Click Ask and wait until a new page has loaded: otherwise a find may read the old page.

    The old page is marked with a window property, which the new document does not have. (Waiting for
    the old <html> element to go stale raced too: Chrome 156 may answer "Node with given id does not
    belong to the document" instead of a stale-element error.) Errors while the page changes are retried."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    browser.execute_script("window.__treerag_old_page = true")
    browser.find_element(by.ID, "ask-button").click()
    WebDriverWait(browser, timeout, ignored_exceptions=(WebDriverException,)).until(
        lambda b: b.execute_script("return window.__treerag_old_page === undefined "
                                   "&& document.readyState === 'complete'"))


def test_ask_page_answers_a_train_question(project, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen([sys.executable, "-m", "stages.serve", "--port", "0"], cwd=project, env=env,
                              stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        url = None
        deadline = time.time() + 600
        lines = []
        while time.time() < deadline and url is None:
            line = server.stderr.readline()
            if not line and server.poll() is not None:
                break
            lines.append(line)
            m = re.search(r"serve: (http://127\.0\.0\.1:\d+/)", line)
            url = m.group(1) if m else None
        assert url, "".join(lines)[-3000:]
        browser.get_log("performance")
        browser.get(url)
        _submit_and_wait(browser, By)  # empty question: a message, not a stack trace
        error = WebDriverWait(browser, 60).until(ec.presence_of_element_located((By.ID, "error")))
        assert "empty" in error.text
        browser.get_log("browser")  # the 400 itself is logged as a console error: that one is expected
        for question, unit, doc, doc_url in [
                ("How much electricity does the Maryland solar farm generate per year?", "MWh", "solar2023",
                 "https://example.org/solar"),  # a train question: its replies are in the response cache
                ("What is the peak power draw of one A100 GPU, in watts?", "W", None, None),  # new: its latency
                ("How many liters of freshwater did training the model consume?", "liters", "water2022",
                 "https://example.org/water")]:
            box = browser.find_element(By.ID, "question")
            box.clear()
            box.send_keys(question)
            u = browser.find_element(By.ID, "unit")
            u.clear()
            u.send_keys(unit)
            t0 = time.perf_counter()
            _submit_and_wait(browser, By)
            WebDriverWait(browser, 600).until(ec.presence_of_element_located((By.ID, "result")))
            print(f"ask: {question!r}: page in {time.perf_counter() - t0:.2f} s; "
                  f"{browser.find_element(By.ID, 'timing').text}")
            assert "empty" not in browser.page_source and not browser.find_elements(By.ID, "error")
            if doc is None:
                continue
            refs = browser.find_element(By.ID, "refs")
            assert doc in refs.text and doc_url in refs.text
            assert refs.find_element(By.TAG_NAME, "a").get_attribute("href") == doc_url
            assert browser.find_elements(By.CSS_SELECTOR, "#tree .unit.pointed")
            if doc == "solar2023":
                assert browser.find_element(By.ID, "answer-value").text == "150"
                DOCS.mkdir(exist_ok=True)
                browser.save_screenshot(str(DOCS / "ask.png"))
        texts = browser.execute_script(
            "return Array.from(document.querySelectorAll('#context pre.text')).map(e => e.textContent)")
        assert any(XSS in t for t in texts)
        assert browser.execute_script("return document.scripts.length") == 0
        _check_clean(browser)
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
