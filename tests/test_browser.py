"""In a real browser: the address `donegate lab` prints opens chapter 00, JupyterLab runs the learner's copy of a
chapter, a quiz answers a click on an option's text, a plot renders, the feedback page hides the hidden tests.

JupyterLab is served on 127.0.0.1 from a temporary copy of the workbook (the committed notebooks are
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
from playwright.sync_api import expect

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
    """The README's command, `donegate lab` with no argument, on a copy of the workbook (chapters/, labs/,
    solutions/): it copies the chapters into work/chapters/ and serves the workbook's root."""
    assert CHROMIUM, "Chromium is required in CI (DONEGATE_REQUIRE_UI=1): apt-get install chromium"
    work = tmp_path_factory.mktemp("lab")
    for folder in ("chapters", "labs", "solutions"):
        shutil.copytree(ROOT / folder, work / folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "*.feedback.html", "*.feedback.js"))
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
    proc = subprocess.Popen([str(Path(sys.executable).with_name("donegate")), "lab"],
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
        pg.goto(f"{base}/lab/tree/work/chapters/{CHAPTER.name}?token={TOKEN}")
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


def printed_address(work: Path) -> str:
    """The address JupyterLab printed for the learner to open (its path; the token is shown as `...`)."""
    log = (work / "jupyterlab.log").read_text(encoding="utf-8", errors="replace")
    found = re.findall(r"http://127\.0\.0\.1:\d+(/\S*?)\?token=", log)
    assert found, log[-2000:]
    return found[-1]


def test_the_address_jupyterlab_prints_opens_your_copy_of_chapter_00(page, lab):
    """The README says `donegate lab` opens chapter 00: the address a learner copies from the terminal does."""
    base, work = lab
    address = printed_address(work)
    assert address == "/lab/tree/work/chapters/00_start_here.ipynb", address
    context = page.context.browser.new_context(viewport={"width": 1400, "height": 1000})
    other = context.new_page()
    try:
        other.goto(f"{base}{address}?token={TOKEN}")
        tab = other.locator(".lm-TabBar-tab.lm-mod-current", has_text="00_start_here.ipynb")
        tab.first.wait_for(timeout=60_000)
        tab.first.hover()  # the tab's tooltip names the file's path
        other.wait_for_function("t => (t.title || '').includes('work/chapters/00_start_here.ipynb')",
                                arg=tab.first.element_handle(), timeout=10_000)
        panel = other.locator(f"[id='{tab.first.get_attribute('data-id')}']")
        panel.locator(".jp-Cell").first.wait_for(timeout=60_000)
        expect(panel).to_contain_text("Start here", timeout=60_000)
        other.screenshot(path=str(work / "printed-address.png"))
    finally:
        context.close()


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
    # The widget draws its rows one after another: expect() retries until all of them read as this learner's order.
    expect(rows).to_have_text([f"{'ABCDEFGHIJ'[i]}. {o.replace('`', '')}" for i, o in enumerate(q.order)],
                              use_inner_text=True, timeout=10_000)

    (lab[1] / "quiz-before-click.png").write_bytes(quiz.screenshot())
    feedback = quiz.locator(".donegate-quiz-feedback")
    wrong = next(o for o in q.order if o != q.answer)
    for option, verdict in ((wrong, "is not the answer."), (q.answer, "is right.")):
        letter = "ABCDEFGHIJ"[q.order.index(option)]
        # A click on the option's words, away from its box: the whole option is the click target.
        rows.nth(q.order.index(option)).get_by_text(option.replace("`", "")[-12:]).click()
        quiz.locator("button", has_text="Check").click()
        page.wait_for_function("([el, v]) => el.innerText.trim().startsWith(v)",
                               arg=[feedback.element_handle(), f"{letter} {verdict}"], timeout=10_000)
        text = feedback.inner_text()
        assert not re.match(r"\S+ is (right|not the answer)\. (Yes|No)\b", text), text
    assert "Read section" not in text, "a right answer needs no pointer back"
    (lab[1] / "quiz-after-click.png").write_bytes(quiz.screenshot())

    plots = page.locator(".jp-OutputArea-output img[src^='data:image/png']")
    assert plots.count() >= 1, "no plot rendered"
    assert plots.first.evaluate("img => img.naturalWidth") > 100

    # Saved with its outputs, as JupyterLab's autosave would: into the learner's copy, never the tracked chapter.
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^File$")).click(timeout=10_000)
    page.get_by_role("menuitem", name=re.compile(r"^Save( Notebook)?\b")).first.click(timeout=10_000)
    mine, tracked = lab[1] / "work" / "chapters" / CHAPTER.name, lab[1] / "chapters" / CHAPTER.name
    deadline = time.monotonic() + 60
    while '"output_type"' not in mine.read_text(encoding="utf-8") and time.monotonic() < deadline:
        time.sleep(0.25)  # polling a file the server writes, not synchronising test steps
    assert '"output_type"' in mine.read_text(encoding="utf-8"), "the learner's copy was not saved with its outputs"
    assert tracked.read_bytes() == CHAPTER.read_bytes(), "running the chapter changed the tracked chapters/ file"


def test_a_questionnaire_shows_its_model_answer_only_after_the_learner_writes(page, lab):
    """After the chapter ran (the test above): no model answer is on the page; the button waits for an answer of a
    few words; pressing it shows the model answer under the learner's own."""
    from donegate.practice import load_bank

    forms = page.locator(".donegate-practice")
    forms.first.wait_for(timeout=60_000)
    items = [i for i in load_bank(CHAPTER.parent / "practice").values() if i.group == CHAPTER.name[:2]]
    assert items, f"{CHAPTER.name} has no exercises or questions"
    before = page.locator(".jp-Notebook").first.text_content()
    for item in items:
        assert item.model.replace("`", "") not in before, item.item_id
    form = forms.last  # the questionnaire's last question
    form.scroll_into_view_if_needed()
    button = form.locator("button")
    assert button.is_disabled()
    form.locator("textarea").fill("the guard crashed and the runner skipped it")
    page.wait_for_function("b => !b.disabled", arg=button.element_handle(), timeout=10_000)
    button.click()
    answer = form.locator(".donegate-practice-answer")
    page.wait_for_function("el => el.innerText.includes('Compare it with yours')", arg=answer.element_handle(),
                           timeout=10_000)
    (lab[1] / "questionnaire-after-reveal.png").write_bytes(form.screenshot())
    marked = json.loads((lab[1] / "progress.json").read_text(encoding="utf-8"))["practice"]
    assert set(marked) <= {i.item_id for i in items} and len(marked) == 1, marked


def test_after_run_all_a_prediction_comes_first_and_an_exercise_runs_again(page, lab):
    """After Run All (the tests above): a "predict, then run" form holds none of its code's output; a prediction
    and the button run the code into the form; an exercise cell run again after Run All raises nothing."""
    form = page.locator(".donegate-practice", has_text="Predict, then run").first
    form.scroll_into_view_if_needed()
    assert form.locator(".jp-OutputArea-output").count() == 0, "the code ran before the learner predicted"
    # a sideways scrollbar shows where a box that scrolls (overflow auto or scroll) holds more than its width
    wide = page.locator(".donegate-practice").evaluate_all("""forms => forms.filter(form => {
        for (let el = form; el && !el.classList.contains('jp-Cell'); el = el.parentElement) {
            const x = getComputedStyle(el).overflowX;
            if ((x === 'auto' || x === 'scroll') && el.scrollWidth > el.clientWidth + 1) return true;
        }
        return false;
    }).length""")
    assert wide == 0, f"{wide} practice form(s) show a sideways scrollbar"
    form.locator("textarea").fill("the write is refused and the shell call is refused too")
    button = form.locator("button")
    page.wait_for_function("b => !b.disabled", arg=button.element_handle(), timeout=10_000)
    button.click()
    expect(form.locator(".jp-OutputArea-output").first).to_contain_text("MultiEdit", timeout=60_000)
    (lab[1] / "predict-after-run.png").write_bytes(form.screenshot())
    cell = page.locator(".jp-CodeCell", has_text="def no_push_to_main").first
    cell.scroll_into_view_if_needed()
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    expect(cell.locator(".jp-OutputArea-output").first).to_contain_text("git push origin main", timeout=60_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
    assert cell.locator("[data-mime-type='application/vnd.jupyter.error']").count() == 0


def test_the_file_browser_reaches_a_lab_with_no_validate_button_of_nbgrader(page, lab):
    """The workbook is served from its root: from the chapter, up to the root, into labs/, open lab01. nbgrader's
    Validate (visible tests only) is hidden there, so it cannot contradict `donegate check`."""
    page.locator(".jp-BreadCrumbs-home").first.click()
    for name in ("labs", "lab01-fail-open-hooks", "lab01-fail-open-hooks.ipynb"):
        item = page.locator(".jp-DirListing-item", has=page.locator(".jp-DirListing-itemText", has_text=re.compile(f"^{re.escape(name)}$")))
        item.first.dblclick(timeout=30_000)
    tab = page.locator(".lm-TabBar-tab", has_text="lab01-fail-open-hooks.ipynb")
    tab.first.wait_for(timeout=60_000)
    # The tab names its own panel (data-id): while the tabs switch, the chapter's panel may still be visible too.
    panel = page.locator(f"[id='{tab.first.get_attribute('data-id')}']")
    panel.locator(".jp-Cell").first.wait_for(timeout=60_000)
    expect(panel).to_contain_text("Lab 01", timeout=60_000)
    toolbar = panel.locator(".jp-Toolbar").first.inner_text()
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


def _in_jupyterlab_terminal(base: str, command: str, limit: float = 90.0) -> str:
    """Run `command` in a terminal of the served JupyterLab (its REST and websocket API, as the Terminal tab
    does) and return what the terminal showed, ANSI codes removed, up to the marker the command ends with."""
    import asyncio

    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    request = urllib.request.Request(f"{base}/api/terminals", data=b"{}", method="POST",
                                     headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        name = json.loads(answer.read())["name"]

    async def talk() -> str:
        ws_url = f"{base.replace('http', 'ws', 1)}/terminals/websocket/{name}"
        ws = await websocket_connect(HTTPRequest(ws_url, headers={"Authorization": f"token {TOKEN}"}))
        await ws.write_message(json.dumps(["stdin", f"{command}; echo END-$((40+2))\r"]))
        seen, deadline = "", time.monotonic() + limit
        while "END-42" not in seen and time.monotonic() < deadline:
            message = await asyncio.wait_for(ws.read_message(), timeout=max(1.0, deadline - time.monotonic()))
            if message is None:
                break
            kind, *rest = json.loads(message)
            if kind == "stdout":
                seen += rest[0]
        ws.close()
        return seen

    from concurrent.futures import ThreadPoolExecutor

    try:  # a thread of its own: Playwright's sync API keeps an event loop running in this one
        with ThreadPoolExecutor(1) as pool:
            seen = pool.submit(lambda: asyncio.run(talk())).result()
    finally:
        urllib.request.urlopen(urllib.request.Request(f"{base}/api/terminals/{name}", method="DELETE",
                                                      headers={"Authorization": f"token {TOKEN}"}), timeout=30)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r", "", seen)


def test_start_in_jupyterlab_s_own_terminal_points_to_its_file_browser(lab):
    """JupyterLab's terminal (jupyter_server_terminals) sets JUPYTER_SERVER_ROOT: `donegate start` typed there
    says to open the copy from the file browser, not to start another JupyterLab."""
    base, work = lab
    donegate = Path(sys.executable).with_name("donegate")
    shown = _in_jupyterlab_terminal(base, f"echo ROOTS-$(env | grep -c '^JUPYTER_SERVER_ROOT={work}$')-; '{donegate}' start lab01")
    said = shown[shown.rindex("start lab01"):]
    # the input may echo before the shell's prompt, so the count carries its own marker rather than a line
    assert re.search(r"ROOTS-1-", shown), f"JUPYTER_SERVER_ROOT is not the served folder in its terminal:\n{shown}"
    assert "file browser (the folder icon on the left): work/lab01-fail-open-hooks/lab01-fail-open-hooks.ipynb" in said, said
    assert "donegate lab" not in said, said


def test_the_feedback_page_shows_failures_first_and_no_hidden_line_until_unfolded(page, lab):
    """`donegate check` on a fail-open lab01: in Chromium, the failed tests head the table, no line that only the
    hidden tests have is visible (nor in the terminal), each fold has a visible toggle, and opening one shows the
    hidden test. The page names its run as the terminal does; once a newer check has run, it says it is out of date."""
    base, work = lab
    aid = "lab01-fail-open-hooks"
    mine = work / "feedback-check" / f"{aid}.ipynb"
    mine.parent.mkdir()
    shutil.copyfile(ROOT / "grading" / "fixtures" / "fail-open" / aid / f"{aid}.ipynb", mine)
    env = {**os.environ, "DONEGATE_ROOT": str(work), "DONEGATE_PROGRESS_FILE": str(mine.parent / "progress.json")}
    run = subprocess.run([str(Path(sys.executable).with_name("donegate")), "check", str(mine)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stdout + run.stderr
    released = (ROOT / "labs" / aid / f"{aid}.ipynb").read_text(encoding="utf-8")
    hidden = []
    for cell in json.loads((ROOT / "solutions" / aid / f"{aid}.ipynb").read_text(encoding="utf-8"))["cells"]:
        inside = False
        for line in "".join(cell["source"]).splitlines():
            if line.strip() in ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"):
                inside = line.strip().startswith("### BEGIN")
            elif inside and len(line.strip()) > 12 and line.strip() not in released:
                hidden.append(line.strip())  # a line only the hidden tests have
    assert len(hidden) > 10, hidden
    assert not [line for line in hidden if line in run.stdout], [line for line in hidden if line in run.stdout]
    printed = re.search(r"Feedback page \(run ([0-9a-f]{6}), ", run.stdout)
    assert printed, run.stdout

    context = page.context.browser.new_context(viewport={"width": 1200, "height": 900})
    other = context.new_page()
    asked = []
    other.on("request", lambda request: asked.append(request.url))
    other.goto(mine.with_name(f"{aid}.feedback.html").as_uri())
    assert f"run {printed[1]}." in other.locator("#donegate-run").inner_text()
    rows = other.locator("#donegate-tests tr").all_inner_texts()[1:]
    verdicts = ["0.0 /" in row.split("\t")[1] for row in rows]
    assert verdicts == sorted(verdicts, reverse=True) and verdicts[0], rows
    shown = other.inner_text("body")
    assert not [line for line in hidden if line in shown], [line for line in hidden if line in shown][:3]
    other.screenshot(path=str(work / "feedback-top.png"))
    first = other.locator("div.donegate-test", has=other.locator("b.donegate-fail")).filter(
        has_text="in a hidden test").first
    toggle = first.locator("details.donegate-test-source > summary")
    toggle.scroll_into_view_if_needed()
    assert toggle.is_visible() and toggle.evaluate("s => getComputedStyle(s).display") == "list-item"
    assert toggle.bounding_box()["height"] > 10
    other.screenshot(path=str(work / "feedback-folded.png"))
    line_fold = first.locator("details.donegate-hidden-line summary")
    line_fold.click()
    assert [line for line in hidden if line in first.inner_text()], "opening the line's fold shows the line"
    toggle.click()
    assert [line for line in hidden if line in other.inner_text("body")], "opening the fold shows the hidden test"
    other.screenshot(path=str(work / "feedback-unfolded.png"))

    from datetime import datetime, timezone

    from donegate.selfcheck import FeedbackRun, write_stamp
    stale = other.locator("#donegate-stale")
    assert stale.is_hidden(), "a page that is the latest check says nothing about being out of date"
    write_stamp(FeedbackRun("0a1b2c", datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc), mine), "done", "22 / 22")
    other.evaluate("donegateFeedbackCheck()")  # what the page does every three seconds and when its tab is shown
    stale.wait_for(state="visible", timeout=10_000)
    assert "out of date" in stale.inner_text() and "22 / 22" in stale.inner_text() and "0a1b2c" in stale.inner_text()
    other.screenshot(path=str(work / "feedback-stale.png"))
    assert all(url.startswith("file://") for url in asked), asked
    context.close()

