"""A course on a real JupyterHub, in a real browser: the instructor releases a lab from a terminal in their
JupyterLab; two learners log in, fetch it from JupyterLab's Assignments panel, work on it in the notebook, validate
and submit it; the instructor collects, grades with `donegate grade`, generates and releases feedback with the
README's commands in that terminal; each learner fetches feedback and reads their own score in it.

The hub is the course's own configuration (grading/hub/), served on 127.0.0.1 from a scratch copy of the course,
with configurable-http-proxy from .ci/run's pinned npm packages and Debian's Chromium driven by Playwright.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PROXY = ROOT / ".cache" / "hosts" / "node_modules" / ".bin" / "configurable-http-proxy"
LAB = "lab04-averaged-scores"
PASSWORD = "a shared course password"
BIN = Path(sys.executable).parent

pytestmark = [pytest.mark.ui, pytest.mark.grading]

if not (CHROMIUM and PROXY.exists()) and os.environ.get("DONEGATE_REQUIRE_UI") != "1":
    pytest.skip("the hub test needs Debian's chromium and configurable-http-proxy (.ci/run installs both: "
                "apt-get install chromium; the npm packages in tests/hosts/package.json)", allow_module_level=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """The course (a scratch copy holding LAB, released) and its hub, started as grading/hub/jupyterhub_config.py
    says; yields (the hub's address, the course, the hub's folder)."""
    base = tmp_path_factory.mktemp("hub")
    course, folder = base / "course", base / "srv"
    for part in (f"solutions/{LAB}", f"labs/{LAB}", "grading/hub"):
        shutil.copytree(ROOT / part, course / part)
    shutil.copy(ROOT / "grading" / "nbgrader_config.py", course / "grading")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=I", "-c", "user.email=i@example.org", "commit", "-q",
                                                 "-m", "the course"]):
        subprocess.run(["git", *args], cwd=course, check=True, capture_output=True)
    (folder / "exchange").mkdir(parents=True)
    settings = folder / "home" / "instructor" / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" / "terminal-extension"
    settings.mkdir(parents=True)  # the terminal's text in the page as well as on its canvas, where a test can read it
    (settings / "plugin.jupyterlab-settings").write_text(json.dumps({"screenReaderMode": True}))
    port = free_port()
    env = {**os.environ, "COURSE_HUB": str(folder), "COURSE_HUB_PASSWORD": PASSWORD,
           "COURSE_HUB_USERS": "ada bo instructor", "COURSE_HUB_PORT": str(port),
           "COURSE_HUB_API_PORT": str(free_port()), "COURSE_HUB_PROXY_PORT": str(free_port()),
           "COURSE_HUB_PROXY": str(PROXY), "PATH": f"{BIN}:{os.environ['PATH']}"}
    log = open(base / "hub.log", "w")
    started = subprocess.Popen([str(BIN / "jupyterhub"), "-f", str(course / "grading" / "hub" / "jupyterhub_config.py")],
                               cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(600):  # polling a server that is starting, not synchronising test steps
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/hub/api/", timeout=2):
                    break
            except OSError:
                assert started.poll() is None, (base / "hub.log").read_text()[-3000:]
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}", course, folder
    finally:
        started.terminate()
        started.wait(timeout=60)
        log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        try:
            yield launched
        finally:
            launched.close()


def log_in(browser, address: str, name: str):
    """A learner's own browser session (cookies of their own), logged in, with JupyterLab open."""
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.goto(f"{address}/hub/login")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit], button[type=submit]")
    page.wait_for_selector(".jp-LabShell", timeout=120_000)
    return page


def assignments(page) -> None:
    """Nbgrader, Assignment List: the panel where a learner fetches, validates, submits and fetches feedback."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Nbgrader$")).click()
    page.get_by_role("menuitem", name=re.compile(r"Assignment List")).click()
    page.get_by_text("Released assignments").first.wait_for(timeout=60_000)


def panel(page, title: str):
    """One of the Assignments panel's lists: "Released", "Downloaded" or "Submitted" assignments."""
    return page.locator(".panel", has=page.locator(".panel-heading", has_text=f"{title} assignments"))


def work(page, answers: dict[str, str]) -> None:
    """Open the fetched notebook in JupyterLab and write each answer (its function's name -> code) into its cell,
    inserted whole into the cell's editor as a paste would, then save."""
    page.goto(page.url.split("/lab")[0] + f"/lab/tree/{LAB}/{LAB}.ipynb")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    for name, code in answers.items():
        cell = page.locator(".jp-CodeCell", has_text=re.compile(rf"def {name}\(")).first
        cell.scroll_into_view_if_needed()
        cell.locator(".cm-content").click()
        page.keyboard.press("Control+A")
        page.keyboard.insert_text(code)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    dirty = page.locator(".lm-TabBar-tab.jp-mod-dirty").first
    for attempt in range(3):  # an edit the editor takes in after the save leaves the tab dirty: save again
        page.keyboard.press("Control+S")
        try:
            dirty.wait_for(state="detached", timeout=40_000)  # saved
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise


def in_terminal(page, command: str, mark: str, timeout: float = 120_000) -> None:
    """Type `command` into the JupyterLab terminal open on `page` and wait until it has ended with exit status 0
    (it echoes "`mark`: $?" after itself; a status other than 0 fails the test with the terminal's text)."""
    page.locator(".jp-Terminal .xterm-screen").first.click()
    page.keyboard.type(f'{command}; echo "{mark}: $?"')  # key by key: xterm reads keys, not pasted input
    page.keyboard.press("Enter")
    tree = page.locator(".jp-Terminal .xterm-accessibility-tree").first
    tree.get_by_text(re.compile(rf"{mark}: \d+")).first.wait_for(timeout=timeout)
    assert f"{mark}: 0" in tree.inner_text(), tree.inner_text()


def answers_of(fixture: str) -> dict[str, str]:
    """A committed fixture's answer cells: the name of the function each defines -> its code."""
    notebook = json.loads((ROOT / "grading" / "fixtures" / fixture / LAB / f"{LAB}.ipynb").read_text())
    return {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in notebook["cells"]
            if c.get("metadata", {}).get("nbgrader", {}).get("solution")}


def validate_and_submit(page) -> str:
    """In the Assignments panel: unfold the lab, Validate its notebook (what the dialog said), then Submit."""
    assignments(page)
    downloaded = panel(page, "Downloaded")
    downloaded.get_by_text(LAB).first.click()  # unfolds its notebooks, each with a Validate button
    downloaded.get_by_role("button", name="Validate").first.click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=300_000)  # nbgrader validate runs the notebook
    said = dialog.inner_text()
    dialog.get_by_role("button").last.click()
    downloaded.get_by_role("button", name="Submit").click()
    panel(page, "Submitted").get_by_text(LAB).first.wait_for(timeout=60_000)
    return said


def test_two_learners_and_an_instructor_run_a_lab_through_the_exchange(hub, browser):
    address, course, folder = hub
    teacher = log_in(browser, address, "instructor")  # a terminal in the instructor's JupyterLab, as the README's
    teacher.locator(".jp-LauncherCard", has_text="Terminal").first.click()  # commands are typed there
    in_terminal(teacher, f"source {BIN / 'activate'} && cd {course / 'grading'} && export DONEGATE_ROOT={course}",
                "ready")  # the course's environment (a login shell starts with the system's PATH)
    in_terminal(teacher, f"donegate release {LAB} && nbgrader release_assignment {LAB}", "released")
    learners = {"ada": answers_of("correct"), "bo": answers_of("averages")}  # bo makes the lab's classic mistake
    pages, validated = {}, {}
    for name, answers in learners.items():
        page = pages[name] = log_in(browser, address, name)
        assignments(page)
        panel(page, "Released").get_by_role("button", name="Fetch").click()
        panel(page, "Downloaded").get_by_text(LAB).first.wait_for(timeout=60_000)
        work(page, answers)
        saved = json.loads((folder / "home" / name / LAB / f"{LAB}.ipynb").read_text())
        assert {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in saved["cells"]
                if c.get("metadata", {}).get("nbgrader", {}).get("solution")} == answers  # saved as written
        validated[name] = validate_and_submit(page)
    assert "passes all the tests" in validated["ada"], validated["ada"]

    # The instructor collects, grades and hands feedback back: the README's commands, in the same terminal.
    in_terminal(teacher, f"nbgrader collect {LAB}", "collected")
    assert sorted(p.name for p in (course / "grading" / "submitted").iterdir()) == ["ada", "bo"]
    in_terminal(teacher, f"donegate grade {LAB} > graded.txt", "graded", timeout=300_000)
    graded = (course / "grading" / "graded.txt").read_text()
    assert "Graded 2 of 2 submission(s)" in graded and re.search(r"ada: 20 / 20", graded), graded
    assert re.search(r"bo: 1?\d / 20", graded), graded
    in_terminal(teacher, f"nbgrader generate_feedback {LAB} && nbgrader release_feedback {LAB}", "feedback")

    # Each learner fetches feedback from the panel and reads their own score in it.
    for name, page in pages.items():
        assignments(page)
        submitted = panel(page, "Submitted")
        submitted.get_by_role("button", name="Fetch Feedback").click()
        submitted.get_by_text("view feedback").first.wait_for(timeout=60_000)
        feedback = list((folder / "home" / name / LAB / "feedback").glob(f"*/{LAB}.html"))
        assert len(feedback) == 1, feedback
        score = re.search(r"Score: ([\d.]+) / ([\d.]+)", feedback[0].read_text())
        assert score and float(score[2]) == 20 and (float(score[1]) == 20) == (name == "ada"), score
        submitted.get_by_text("view feedback").first.click()  # the file browser goes to the feedback's folder
        page.locator(".jp-DirListing-item", has_text=f"{LAB}.html").dblclick()
        shown = page.frame_locator(".jp-HTMLViewer iframe").locator("body")
        shown.get_by_text(f"Score: {score[1]} / {score[2]}").first.wait_for(timeout=60_000)
        page.screenshot(path=str(folder / f"{name}-feedback.png"))
