"""In a real browser: JupyterLab runs a chapter, a quiz answers a click, a plot renders.

JupyterLab is served on 127.0.0.1 from a temporary copy of the chapter (the committed notebook is
never touched) and driven by Playwright through Debian's Chromium; nothing is downloaded.
"""
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
CHAPTER = ROOT / "chapters" / os.environ.get("DONEGATE_UI_CHAPTER", "02_hooks.ipynb")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TOKEN = "donegate-browser-test"
LEARNER = "browser-learner"

pytestmark = pytest.mark.ui

if not CHROMIUM and os.environ.get("DONEGATE_REQUIRE_UI") != "1":
    pytest.skip(
        "Chromium is not installed (Debian: apt-get install chromium); the browser test needs it. "
        ".ci/run installs it and sets DONEGATE_REQUIRE_UI=1 so that CI never skips this test.",
        allow_module_level=True,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_server(url: str, proc: subprocess.Popen, limit: float = 90.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited early with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)  # polling a server that is starting, not synchronising test steps
    raise RuntimeError(f"JupyterLab did not answer at {url} within {limit:.0f} s")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The README's command, `donegate lab`, on a copy of the workbook (chapters/, labs/, solutions/)."""
    assert CHROMIUM, "Chromium is required in CI (DONEGATE_REQUIRE_UI=1): apt-get install chromium"
    work = tmp_path_factory.mktemp("lab")
    for folder in ("chapters", "labs", "solutions"):
        shutil.copytree(ROOT / folder, work / folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "*.feedback.html"))
    config = work / ".config"
    (config / "labconfig").mkdir(parents=True)
    # No news pop-up, no update check, no browser of its own: nothing reaches outside the machine.
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    port = free_port()
    (config / "jupyter_server_config.json").write_text(json.dumps({
        "ServerApp": {"open_browser": False, "ip": "127.0.0.1", "port": port, "port_retries": 0},
        "IdentityProvider": {"token": TOKEN},
        "LabApp": {"check_for_updates_class": "jupyterlab.NeverCheckForUpdate"},
    }))
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTERLAB_SETTINGS_DIR=str(work / ".settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(work / ".workspaces"),
        JUPYTER_RUNTIME_DIR=str(work / ".runtime"),
        PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
        DONEGATE_ROOT=str(work),
        DONEGATE_PROGRESS_FILE=str(work / "progress.json"),
        DONEGATE_LEARNER=LEARNER,
    )
    log = open(work / "jupyterlab.log", "w")
    proc = subprocess.Popen([str(Path(sys.executable).with_name("donegate")), "lab", f"chapters/{CHAPTER.name}"],
                            cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_server(f"http://127.0.0.1:{port}/api/status?token={TOKEN}", proc)
        yield f"http://127.0.0.1:{port}", work
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        with socket.socket() as probe:  # `donegate lab` is the server itself: stopping it left nothing serving
            assert probe.connect_ex(("127.0.0.1", port)) != 0, f"JupyterLab still serves port {port} after donegate lab ended"


@pytest.fixture(scope="module")
def page(lab):
    from playwright.sync_api import sync_playwright

    base, work = lab
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        pg = browser.new_page(viewport={"width": 1400, "height": 1000})
        pg.goto(f"{base}/lab/tree/chapters/{CHAPTER.name}?token={TOKEN}")
        pg.wait_for_selector(".jp-Notebook", timeout=60_000)
        pg.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
        try:
            yield pg
        finally:
            pg.screenshot(path=str(work / "last.png"), full_page=False)
            browser.close()


def run_all_cells(page) -> None:
    """Run -> Run All Cells, once the kernel is connected; a click that a busy machine's page did not take
    yet (no cell queued within a minute) is made once more."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.locator(".jp-StatusBar-TextItem", has_text=re.compile(r"\|\s*Idle")).first.wait_for(timeout=120_000)
    queued = page.locator(".jp-InputArea-prompt", has_text=re.compile(r"\[(\*|\d+)\]"))
    for attempt in (1, 2):
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click(timeout=10_000)
        page.get_by_role("menuitem", name=re.compile(r"^Run All Cells")).first.click(timeout=10_000)
        try:
            queued.first.wait_for(timeout=60_000)
            return
        except PlaywrightTimeout:
            if attempt == 2:
                raise


def test_chapter_runs_all_cells_and_a_quiz_answers_a_click(page, lab):
    run_all_cells(page)
    quiz = page.locator(".widget-vbox", has=page.locator(".donegate-quiz-feedback")).first
    quiz.wait_for(timeout=300_000)  # a loaded two-core machine can take minutes to run the chapter
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=300_000)
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'] .ansi-red-fg, .jp-RenderedText[data-mime-type='application/vnd.jupyter.error']")
    assert errors.count() == 0, errors.first.inner_text()

    # Before any click: no why of any of the chapter's quizzes is on the page, and no cell names an answer.
    from donegate.quiz import Quiz

    ids = re.findall(r'Quiz\.load\(\\?"([^"\\]+)', CHAPTER.read_text(encoding="utf-8"))
    assert ids, f"{CHAPTER.name} has no quiz to try"
    quizzes = [Quiz.load(i, folder=CHAPTER.parent, learner=LEARNER) for i in ids]
    before = page.locator(".jp-Notebook").first.text_content()  # hidden and off-screen cells too
    assert "answer=" not in before
    for q in quizzes:
        for why in q.options.values():
            assert why.replace("`", "") not in before, why
    q = quizzes[0]
    rows = quiz.locator(".donegate-quiz-option")
    quiz.scroll_into_view_if_needed()
    rows.last.wait_for(timeout=10_000)
    shown = [rows.nth(i).locator(".widget-html-content").text_content().strip() for i in range(rows.count())]
    assert shown == [o.replace("`", "") for o in q.order], "the options are not in this learner's order"

    (lab[1] / "quiz-before-click.png").write_bytes(quiz.screenshot())
    feedback = quiz.locator(".donegate-quiz-feedback")
    for option, verdict in ((next(o for o in q.order if o != q.answer), "Not quite."), (q.answer, "Correct.")):
        rows.nth(q.order.index(option)).locator("button").click()
        quiz.locator("button", has_text="Check").click()
        page.wait_for_function("([el, v]) => el.innerText.trim().startsWith(v)",
                               arg=[feedback.element_handle(), verdict], timeout=10_000)
        text = feedback.inner_text()
        assert q.options[option].replace("`", "") in text, text
    assert "Read section" not in text, "a right answer needs no pointer back"

    plots = page.locator(".jp-OutputArea-output img[src^='data:image/png']")
    assert plots.count() >= 1, "no plot rendered"
    assert plots.first.evaluate("img => img.naturalWidth") > 100


def test_the_file_browser_reaches_a_lab_with_no_validate_button_of_nbgrader(page, lab):
    """The workbook is served from its root: from the chapter, up to the root, into labs/, open lab01. nbgrader's
    Validate (visible tests only) is hidden there, so it cannot contradict `donegate check`."""
    page.locator(".jp-BreadCrumbs-home").first.click()
    for name in ("labs", "lab01-fail-open-hooks", "lab01-fail-open-hooks.ipynb"):
        item = page.locator(".jp-DirListing-item", has=page.locator(".jp-DirListing-itemText", has_text=re.compile(f"^{re.escape(name)}$")))
        item.first.dblclick(timeout=30_000)
    tab = page.locator(".lm-TabBar-tab", has_text="lab01-fail-open-hooks.ipynb")
    tab.first.wait_for(timeout=60_000)
    panel = page.locator(".jp-NotebookPanel:visible")
    panel.locator(".jp-Cell").first.wait_for(timeout=60_000)
    assert "Lab 01" in panel.first.inner_text()
    toolbar = panel.first.locator(".jp-Toolbar").first.inner_text()
    assert "Validate" not in toolbar, toolbar
    (lab[1] / "lab01.png").write_bytes(page.screenshot())


def test_the_class_report_opens_and_shows_every_plot(page, tmp_path):
    """`donegate grade` on a small class writes grading/report/index.html; opened from disk in Chromium,
    every plot loads and is shown, and the page asks for nothing beyond its own folder."""
    aid = "lab04-averaged-scores"
    course = tmp_path / "course"
    for part in (f"solutions/{aid}", f"labs/{aid}"):
        shutil.copytree(ROOT / part, course / part)
    (course / "grading").mkdir()
    for name in ("nbgrader_config.py", "mistakes.json"):
        shutil.copy(ROOT / "grading" / name, course / "grading")
    for student in ("correct", "averages", "stub"):
        shutil.copytree(ROOT / "grading" / "fixtures" / student / aid, course / "grading" / "submitted" / student / aid)
    env = {**os.environ, "DONEGATE_ROOT": str(course), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", aid, "--force"], cwd=course / "grading",
                   env=env, capture_output=True, check=True)
    run = subprocess.run([str(Path(sys.executable).parent / "donegate"), "grade"], cwd=course, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    report = course / "grading" / "report" / "index.html"
    context = page.context.browser.new_context(viewport={"width": 1200, "height": 900})
    other = context.new_page()
    asked = []
    other.on("request", lambda request: asked.append(request.url))
    other.goto(report.as_uri())
    other.wait_for_load_state("load")
    images = other.eval_on_selector_all("img", "els => els.map(e => [e.getAttribute('src'), e.naturalWidth, e.complete])")
    assert sorted(src for src, _, _ in images) == ["class.png", "scores.png", "tests.png"]
    assert all(width > 300 and complete for _, width, complete in images), images
    for img in other.query_selector_all("img"):
        img.scroll_into_view_if_needed()
        assert img.is_visible()
    text = other.inner_text("body")
    assert "averages: " in text and "Hidden tests, most failed first" in text
    assert all(url.startswith("file://") for url in asked), asked
    other.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    context.close()
