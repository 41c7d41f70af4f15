"""Each host's own install (appendix 91), in the real CLIs: this checkout validated as a Claude Code marketplace,
a Codex CLI marketplace and a Gemini CLI extension, installed the host's own way from its local path into a
private HOME, and then the fix after a refusal and the budget played through the plugin's hooks alone (the
repository has no project hooks: `donegate install` sees the plugin and writes none). The hooks call `donegate`
by name, so the world's PATH decides which gate answers: this checkout's, behind the logging shim."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import test_claude_code as cc
import test_codex as cx
import test_copilot as cp
import test_gemini as gm
import test_qwen as qw
from claude_server import edit, text
from conftest import ROOT, HostWorld, capture_hooks, cli_path, run_cli
from test_copilot import unpacked  # noqa: F401  Copilot CLI unpacks itself once, before its first start here

pytestmark = pytest.mark.hosts


def host_cli(world: HostWorld, host: str, *args: str, stdin: str | None = None, cwd: Path | None = None) -> str:
    done = run_cli([str(cli_path(host)), *args], world, stdin=stdin, timeout=120, cwd=cwd)
    assert done.returncode == 0, f"{host} {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done.stdout + done.stderr


def plugged(world: HostWorld, host: str, trust: bool = False) -> Path:
    """The project (no project hooks) in a world whose HOME has the gate's plugin installed; the hook-call log."""
    world.project()
    done = world.install(host, *(["--trust"] if trust else []))
    assert "already runs the gate" in done.stdout, done.stdout
    assert not any((world.repo / d).exists() for d in (".claude", ".codex", ".gemini"))
    return capture_hooks(world)


# -- Claude Code: claude plugin validate / marketplace add / install -------------------------------------

def claude_plugin(world: HostWorld) -> Path:
    said = host_cli(world, "claude-code", "plugin", "validate", str(ROOT))
    assert "Validation passed" in said, said
    host_cli(world, "claude-code", "plugin", "validate", str(ROOT / "plugins" / "claude-code"))
    host_cli(world, "claude-code", "plugin", "marketplace", "add", str(ROOT))
    host_cli(world, "claude-code", "plugin", "install", "donegate@donegate")
    return plugged(world, "claude-code")


def test_claude_code_plugin_refuses_a_wrong_fix_then_passes_the_right_one(world):
    log = claude_plugin(world)
    doctor = world.donegate("doctor").stdout
    assert "claude-code  installed as the plugin donegate@donegate" in doctor and "and active" in doctor, doctor
    calc = cc.calc(world)
    run = cc.play(world, log, [[text("Fixing add."), edit(calc, cc.WRONG, "a * b")], [text("Done, add is fixed.")],
                               [edit(calc, "a * b", cc.RIGHT)], [text("Fixed for real.")]])
    assert run.done.returncode == 0, run.done.stderr
    assert run.stop_exits() == [2, 0]
    assert "test_add" in run.after_refusal()[0] and "attempt 1 of 3" in run.after_refusal()[0]
    assert world.check_runs() == 2
    assert cc.status(world).returncode == 0


def test_claude_code_plugin_hands_over_after_the_budget(world):
    log = claude_plugin(world)
    calc, wrong, script = cc.calc(world), [cc.WRONG, "a * b", "a ** b", "a // b", "a % b"], []
    for old, new in zip(wrong, wrong[1:]):
        script += [[edit(calc, old, new)], [text("Done.")]]
    run = cc.play(world, log, [*script, cc.relay])
    assert run.stop_exits() == [2, 2, 2, 0]
    assert world.check_runs() == 4
    assert "HANDED OVER UNVERIFIED" in run.notices()  # stream-json shows the person the hand-over: not relayed
    assert cc.status(world).returncode == 1


# -- Codex CLI: codex plugin marketplace add / plugin add, trust by `donegate install --trust` -------------

def codex_plugin(world: HostWorld) -> Path:
    host_cli(world, "codex", "plugin", "marketplace", "add", str(ROOT))
    said = host_cli(world, "codex", "plugin", "add", "donegate@donegate")
    assert "Added plugin `donegate`" in said, said
    return plugged(world, "codex", trust=True)


def test_codex_plugin_hooks_need_their_trust_and_then_refuse_a_wrong_fix(world):
    log = codex_plugin(world)
    hooks = cx.listed_hooks(world)  # Codex's own view of the plugin's hooks
    plugin_hooks = [h for h in hooks if h.get("source") == "plugin"]
    assert plugin_hooks and all(h["trustStatus"] == "trusted" for h in plugin_hooks), hooks
    assert "codex        installed as the plugin donegate@donegate" in world.donegate("doctor").stdout
    run = cx.codex_exec(world, [[cx.patch_add(cx.WRONG, "    return a * b")], [cx.message("Fixed.")],
                                [cx.patch_add("    return a * b", "    return a + b")], [cx.message("Fixed for real.")]],
                        log)
    assert run.done.returncode == 0, run.done.stderr
    assert [c["exit"] for c in run.stops()] == [2, 0]
    assert "attempt 1 of 2" in run.texts()[2] and "test_add" in run.texts()[2]
    assert world.check_runs() == 2
    assert world.donegate("status", check=False).returncode == 0


def test_codex_plugin_hands_over_after_the_budget(world):
    log = codex_plugin(world)
    turns = []
    for old, new in zip((cx.WRONG, *cx.WRONG_FIXES[:2]), cx.WRONG_FIXES[:3]):
        turns += [[cx.patch_add(old, new)], [cx.message("Fixed.")]]
    run = cx.codex_exec(world, [*turns, cx.relay], log)
    assert [c["exit"] for c in run.stops()] == [2, 2, 2, 0]  # the budget of 3, the relay request included
    assert world.check_runs() == 3
    assert "HANDED OVER UNVERIFIED" in cx.agent_messages(run)[-1]
    assert world.donegate("status", check=False).returncode == 1


def test_codex_plugin_without_trust_runs_no_hook_and_doctor_says_so(world):
    host_cli(world, "codex", "plugin", "marketplace", "add", str(ROOT))
    host_cli(world, "codex", "plugin", "add", "donegate@donegate")
    log = plugged(world, "codex")
    doctor = world.donegate("doctor", check=False)
    assert "donegate@donegate but NOT active" in doctor.stdout and "--trust" in doctor.stdout, doctor.stdout
    run = cx.codex_exec(world, [[cx.patch_add(cx.WRONG, "    return a * b")], [cx.message("Fixed.")]], log)
    assert run.calls == []  # Codex skipped the untrusted plugin hooks without a word


# -- Gemini CLI: gemini extensions validate / install ------------------------------------------------------

def gemini_extension(world: HostWorld) -> Path:
    extension = str(ROOT / "plugins" / "gemini")
    host_cli(world, "gemini", "extensions", "validate", extension)
    # --consent answers the install's own questions; the trust of the source folder is asked on stdin. Run from
    # outside the repository, which --consent would trust as well: here `donegate install --trust` does that.
    host_cli(world, "gemini", "extensions", "install", extension, "--consent", stdin="y\n", cwd=world.tmp)
    user = world.home / ".gemini" / "settings.json"
    kept = json.loads(user.read_text()) if user.exists() else {}
    user.write_text(json.dumps({**kept, **gm.USER_SETTINGS}))
    return plugged(world, "gemini", trust=True)


def test_gemini_extension_refuses_a_wrong_fix_then_passes_the_right_one(world):
    log = gemini_extension(world)
    assert "gemini       installed as the plugin donegate" in world.donegate("doctor").stdout
    run = gm.gemini(world, gm.fix_after_refusal(world), log)
    assert run.done.returncode == 0, run.done.stderr
    assert run.attempts() == ["1 of 3"]
    assert world.read("calc.py") == gm.RIGHT
    assert world.check_runs() == 2


def test_gemini_extension_hands_over_after_the_budget(world):
    log = gemini_extension(world)
    run = gm.gemini(world, gm.five_wrong_fixes(world), log)
    assert run.attempts() == ["1 of 3", "2 of 3", "3 of 3"], run.attempts()
    assert "HANDED OVER UNVERIFIED" in run.done.stderr  # Gemini prints the hook's message for the person
    assert world.check_runs() == 4
    assert world.donegate("status", check=False).returncode == 1


# -- more of each host's scenarios, with the gate coming from the host's own install -----------------------

THROUGH_PLUGIN = {
    "claude-code": (cc, claude_plugin, ["test_a_stop_without_a_new_edit_after_a_refusal_hands_over_at_once",
                                        "test_a_test_file_edit_is_denied_and_a_shell_edit_of_it_is_refused_at_the_stop",
                                        "test_a_chat_only_turn_is_not_checked", "test_a_committed_wrong_fix_is_refused",
                                        "test_a_check_rewritten_by_a_redirect_is_refused_and_the_advice_to_restore_it_runs"]),
    "codex": (cx, codex_plugin, ["test_a_stop_without_a_new_edit_after_a_refusal_hands_over_at_once",
                                 "test_a_test_file_edit_is_denied_and_a_shell_edit_of_it_is_refused_at_the_stop",
                                 "test_a_chat_only_turn_is_not_checked", "test_a_committed_wrong_fix_is_refused",
                                 "test_a_check_rewritten_by_a_redirect_is_refused_and_the_advice_to_restore_it_runs"]),
    "gemini": (gm, gemini_extension, ["test_a_stop_with_no_new_edit_after_a_refusal_hands_over_at_once",
                                      "test_edits_to_the_test_file_are_denied_and_a_shell_edit_is_refused_at_the_stop",
                                      "test_a_chat_only_turn_is_not_checked", "test_a_committed_wrong_fix_is_refused",
                                      "test_a_check_rewritten_by_a_redirect_is_refused_and_the_advice_to_restore_it_runs"]),
}


@pytest.mark.parametrize("host,name", [(h, n) for h, (_, _, names) in THROUGH_PLUGIN.items() for n in names])
def test_the_host_s_scenario_holds_with_the_gate_from_its_own_install(world, monkeypatch, host, name):
    """The host's own test, unchanged, with the module's `gated` (the project set up, the gate installed, the
    hook-call log) replaced by the host's own install of the plugin."""
    module, install, _ = THROUGH_PLUGIN[host]
    monkeypatch.setattr(module, "gated", lambda world, **_: install(world))
    getattr(module, name)(world)


# -- the README's own lines, as written ----------------------------------------------------------------------

def readme_block(after: str) -> list[str]:
    """The command lines of the README's first code block after the line starting with `after`."""
    lines = (ROOT / "README.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(after))
    block = []
    for line in lines[start + 1:]:
        if line.startswith("    "):
            block.append(line.strip())
        elif block:
            return block
    return block


def test_the_readme_s_host_installs_run_as_written_without_a_terminal_and_doctor_says_what_is_left(world):
    """The clone's marketplace at ~/donegate (the README's example; a copy, since Qwen Code writes into it), a fresh
    HOME, no terminal: each line of the README's "host's own install" runs as written and ends by itself. doctor then
    calls the plugins active only where the host will run their hooks here, and after the README's trust lines, all
    five; Gemini's extension then gates."""
    for rel in (".claude-plugin", ".agents", "plugins"):
        shutil.copytree(ROOT / rel, world.home / "donegate" / rel)
    installs = readme_block("**The host's own install**")
    hosts = ("claude ", "codex ", "gemini ", "qwen ", "copilot ")
    assert [host for host, line in zip(hosts, installs) if host in line] == list(hosts), installs
    for line in installs:
        done = run_cli(["bash", "-c", line], world, cwd=world.tmp, timeout=90,
                       env={"COPILOT_PKG_CACHE_HOME": str(cp.PKG_CACHE)})
        assert done.returncode == 0, f"{line}:\n{done.stdout}{done.stderr}"
    world.project()
    before = world.donegate("doctor", check=False).stdout
    lines = {line.split()[1]: line for line in before.splitlines() if line.startswith("hooks ")}
    assert all("installed as the plugin donegate" in line for line in lines.values()), before
    assert [host for host, line in lines.items() if "NOT active" in line] == ["codex", "gemini"], before
    assert "Gemini does not trust the folder" in lines["gemini"], before
    user = world.home / ".gemini" / "settings.json"
    user.write_text(json.dumps({**(json.loads(user.read_text()) if user.exists() else {}), **gm.USER_SETTINGS}))
    log = capture_hooks(world)
    untrusted = gm.gemini(world, gm.fix_after_refusal(world), log)
    assert untrusted.done.returncode == 55 and untrusted.calls == [], untrusted.done.stderr  # as doctor said
    trusts = readme_block("trust there")
    assert trusts and all(line.startswith("donegate install --host") for line in trusts), trusts
    for line in trusts:
        done = run_cli(["bash", "-c", line], world, cwd=world.repo, timeout=90)
        assert done.returncode == 0, f"{line}:\n{done.stdout}{done.stderr}"
    after = world.donegate("doctor").stdout
    assert after.count("installed as the plugin donegate") == 5 and "NOT active" not in after, after
    run = gm.gemini(world, gm.fix_after_refusal(world), log)
    assert run.done.returncode == 0 and run.attempts() == ["1 of 3"], run.done.stderr
    assert world.read("calc.py") == gm.RIGHT


# -- another host's plugin: Qwen Code and Copilot CLI install Claude Code's, Qwen Code Gemini CLI's ------------

def qwen_extension(world: HostWorld, source: str) -> Path:
    """The project (no project hooks), with `source` installed as a Qwen Code extension; the hook-call log."""
    world.project()
    qw.quiet_settings(world)
    host_cli(world, "qwen", "extensions", "install", source, "--consent", cwd=world.tmp)
    return capture_hooks(world)


def copilot_claude_plugin(world: HostWorld) -> Path:
    world.project()
    for args in (["plugin", "marketplace", "add", str(ROOT)], ["plugin", "install", "donegate@donegate"]):
        done = run_cli([str(cli_path("copilot")), *args], world, cwd=world.tmp, timeout=120,
                       env={"COPILOT_PKG_CACHE_HOME": str(cp.PKG_CACHE)})
        assert done.returncode == 0, done.stdout + done.stderr
    return capture_hooks(world)


def marketplace_copy(world: HostWorld) -> Path:
    """This checkout's Claude Code marketplace, copied: Qwen Code stages the plugin inside the marketplace's folder."""
    market = world.tmp / "market"
    for rel in (".claude-plugin", "plugins/claude-code"):
        shutil.copytree(ROOT / rel, market / rel)
    return market


def test_qwen_code_running_claude_code_s_plugin_is_seen_and_gates(world, monkeypatch):
    monkeypatch.setattr(qw, "gated", lambda world: qwen_extension(world, f"{marketplace_copy(world)}:donegate"))
    run = qw.fix_after_refusal(world)
    assert [c["exit"] for c in run.stops()] == [2, 0] and "return a + b" in world.read("calc.py")
    doctor = world.donegate("doctor").stdout
    assert "qwen         installed as the plugin donegate" in doctor and "and active" in doctor, doctor
    assert "already runs the gate" in world.install("qwen").stdout  # no second set of hooks beside it


def test_qwen_code_given_gemini_s_extension_says_at_once_that_nothing_is_gated(world):
    log = qwen_extension(world, str(ROOT / "plugins" / "gemini"))
    run = qw.qwen(world, [*qw.edit(world, "calc.py", qw.WRONG, "    return a * b"), qw.say("Fixed.")], log)
    (start,) = run.calls  # Qwen Code calls the extension's SessionStart, and none of its other events
    assert start["argv"][:2] == ["hook", "session-start"]
    assert "never calls their stop (AfterAgent)" in json.loads(start["stdout"])["systemMessage"], start["stdout"]
    status = world.donegate("status", check=False)
    assert status.returncode == 1 and "calc.py" in status.stdout, status.stdout
    doctor = world.donegate("doctor", check=False)
    assert "qwen         installed as the plugin donegate but NOT active: its hooks were written for Gemini CLI" \
        in doctor.stdout and doctor.returncode == 1, doctor.stdout
    install = world.install("qwen")  # the extension runs no stop: the project's hooks are written
    assert "runs no stop of the gate" in install.stdout and (world.repo / ".qwen" / "settings.json").exists()


def test_copilot_cli_running_claude_code_s_plugin_relays_the_hand_over(world, monkeypatch):
    """Copilot CLI shows the person no hook output, whichever plugin's hooks it runs: the hand-over comes in the
    agent's last words, as with the gate installed for Copilot itself."""
    monkeypatch.setattr(cp, "gated", lambda world, trust=True: copilot_claude_plugin(world))
    run = cp.budget(world)
    asked = [t for t in cp.told(run) if "End your turn now with a final message" in t]
    assert len(asked) == 1 and world.check_runs() == 3, cp.told(run)
    assert run.done.returncode == 0
    last = run.done.stdout.rstrip().splitlines()[-1]
    assert "HANDED OVER UNVERIFIED" in last, run.done.stdout
    assert world.donegate("status", check=False).returncode == 1
    doctor = world.donegate("doctor").stdout
    assert "copilot      installed as the plugin donegate@donegate" in doctor and "and active" in doctor, doctor
