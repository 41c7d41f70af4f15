"""Shared part of the capture scripts (capture_<host>.py): play a scenario of the real-host suite in a fresh
world, then write the hook calls the real CLI made to demo/hosts/<host>/<scenario>.jsonl, one call a line
({"argv": [...], "env": {...}, "payload": {...}}). capture_transcripts.py keeps the session transcripts the CLI
wrote itself (Claude Code under ~/.claude/projects/, Codex under ~/.codex/sessions/, Gemini under
~/.gemini/tmp/) in demo/transcripts/<host>/<scenario>/, each under the path it had below HOME, in place of the
earlier recording. The world's paths are made
neutral: the folder holding the repository becomes /work, HOME /home/user, this checkout /src/donegate, any
other temporary path /tmp/host-test. Session ids and timestamps are kept."""
from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping

from conftest import ROOT, HostWorld, hook_calls


TRANSCRIPTS = {"claude-code": (".claude/projects", "*.jsonl"), "codex": (".codex/sessions", "*.jsonl"),
               "gemini": (".gemini/tmp", "*.json*")}


def neutral(value: Any, world: HostWorld) -> Any:
    """`value` with the world's paths replaced by fixed ones, in every string it holds."""
    return json.loads(neutral_text(json.dumps(value, ensure_ascii=False), world))


def neutral_text(text: str, world: HostWorld) -> str:
    """`text` with the world's paths replaced by fixed ones (as JSON strings write them)."""
    work = world.tmp / "work"
    # Claude Code names a project folder after its path (~/.claude/projects/-tmp-x-work-repo)
    pairs = [(re.sub(r"[^A-Za-z0-9]", "-", str(work)), "-work")]
    for path, fixed in ((work, "/work"), (world.home, "/home/user"), (ROOT, "/src/donegate"),
                        (world.tmp, "/tmp/host-test")):
        pairs += [(form, fixed) for form in sorted({str(path), str(path.resolve())}, key=len, reverse=True)]
    for old, new in pairs:
        text = text.replace(old, new)
    return text


# Records that carry the CLI's own text (its system prompt, tool descriptions, reminders, skill lists) rather
# than the session's: their long strings are replaced by a marker, so the fixtures keep every record, its
# type and its fields, but not the vendor's prose. Conversation records are kept whole.
LONG = 120


def _cli_text(host: str, record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    if host == "claude-code":
        return record.get("type") in ("attachment", "api-request-shape", "api-request-blob", "api-request")
    if host == "codex":
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
        if record.get("type") in ("session_meta", "world_state"):
            return True
        if payload.get("type") == "message" and payload.get("role") in ("developer", "system"):
            return True
        texts = [c.get("text", "") for c in payload.get("content") or () if isinstance(c, dict)]
        return payload.get("role") == "user" and any(t.lstrip().startswith("<") for t in texts)
    if host == "gemini":  # the session context Gemini sends as the first user message
        return "$set" in record
    return False


def _marked(value: Any) -> Any:
    if isinstance(value, str) and len(value) > LONG:
        return f"[{len(value)} characters of the CLI's own text, not kept in this fixture]"
    if isinstance(value, dict):
        return {k: _marked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_marked(v) for v in value]
    return value


def trimmed(host: str, text: str) -> str:
    """A transcript (JSON Lines) with the CLI's own long texts replaced by a marker, record by record."""
    def one(line: str) -> str:
        try:
            record = json.loads(line)
        except ValueError:
            return line
        return json.dumps(_marked(record), ensure_ascii=False) if _cli_text(host, record) else line
    return "\n".join(one(line) for line in text.split("\n"))


def save_transcripts(host: str, name: str, world: HostWorld) -> list[Path]:
    """Copy the transcripts the CLI wrote in the world's HOME to demo/transcripts/HOST/NAME/ (in place of what was
    there), made neutral and without the CLI's own long texts (`trimmed`)."""
    folder, pattern = TRANSCRIPTS[host]
    out = ROOT / "demo" / "transcripts" / host / name
    shutil.rmtree(out, ignore_errors=True)  # a new recording replaces the old one (its file names change)
    saved = []
    for found in sorted((world.home / folder).rglob(pattern)):
        target = out / neutral_text(str(found.relative_to(world.home)), world)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = trimmed(host, neutral_text(found.read_text(encoding="utf-8"), world))
        target.write_text(text, encoding="utf-8")
        saved.append(target)
    return saved


def capture(host: str, name: str, play: Callable[[HostWorld], Any]) -> Path:
    """Play `play` in a fresh world and write the hook calls it made to demo/hosts/HOST/NAME.jsonl."""
    with tempfile.TemporaryDirectory(prefix=f"capture-{host}-") as tmp:
        world = HostWorld(Path(tmp))
        play(world)
        calls = hook_calls(world.tmp / "hook-calls.jsonl")  # (its transcripts: capture_transcripts.py's corpus)
        if not calls:
            raise SystemExit(f"{host} {name}: the CLI made no hook call (is the gate installed and trusted?)")
        lines = [json.dumps(neutral({"argv": c["argv"], "env": c["env"], "payload": c["payload"]}, world),
                            ensure_ascii=False) for c in calls]
    out = ROOT / "demo" / "hosts" / host
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def standard_scenarios(host: str, module: Any) -> dict[str, Callable[[HostWorld], Any]]:
    """The four scenarios a host's test module plays the same way (fix_after_refusal, budget,
    protected_test_edit, chat_only), each failing loudly when the CLI exits with an error."""
    def cleanly(scenario: Callable[[HostWorld], Any]) -> Callable[[HostWorld], Any]:
        def play(world: HostWorld) -> Any:
            run = scenario(world)
            if run.done.returncode != 0:
                raise SystemExit(f"{host} exited {run.done.returncode}\n{run.done.stderr}")
            return run
        return play
    return {"fix-after-refusal": cleanly(module.fix_after_refusal), "budget": cleanly(module.budget),
            "test-edit-denied": cleanly(module.protected_test_edit), "chat-only": cleanly(module.chat_only)}


def main(host: str, scenarios: Mapping[str, Callable[[HostWorld], Any]], names: list[str]) -> int:
    """Capture the named scenarios (all of them by default); exit 2 naming an unknown one."""
    unknown = [n for n in names if n not in scenarios]
    if unknown:
        print(f"unknown scenario(s): {', '.join(unknown)}; choose from {', '.join(scenarios)}", file=sys.stderr)
        return 2
    for name in names or list(scenarios):
        path = capture(host, name, scenarios[name])
        print(f"{path.relative_to(ROOT)}: {len(path.read_text().splitlines())} hook call(s)")
    return 0
