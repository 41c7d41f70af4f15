"""Regenerate demo/hosts/claude-code/goal.json: Claude Code's `/goal` beside the gate (test_goal.py's scenarios,
the judge doing what its prompt asks), as chapter 08 shows it: for a claim with no test run and for a weakened
test, what the judge was asked and answered, what the person saw, the code and test left behind and the check
runs, with the gate and without it. Paths made neutral (capture.py).

    uv run python tests/hosts/capture_goal.py
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from capture import neutral  # noqa: E402
from conftest import ROOT, HostWorld, cli_path  # noqa: E402
from test_goal import CONDITION, claim_without_a_run, follows_prompt, goal_run, judged, weakened_test  # noqa: E402

SCENARIOS = {"a claim with no test run": claim_without_a_run, "a test weakened, then a passing run": weakened_test}


def play(scenario: str, gated: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="capture-goal-") as tmp:
        world = HostWorld(Path(tmp))
        run, server = goal_run(world, SCENARIOS[scenario], [follows_prompt] * 3, gated)
        asked = json.loads(server.judge_requests[0].text())
        question = asked["messages"][-1]["content"]
        question = question if isinstance(question, str) else "\n".join(b.get("text", "") for b in question)
        return neutral({
            "scenario": scenario,
            "gate": gated,
            "judge": {"tools": asked["tools"], "asked": question.split("\n\nARGUMENTS:")[0],
                      "answered": [json.dumps(v) for v in judged(server)]},
            "stops": [{"exit": c["exit"], "said": (c["stderr"] or c["stdout"]).strip()[:300]} for c in run.hooks("stop")],
            "result": run.events[-1].get("result"),
            "exit": run.done.returncode,
            "calc.py": world.read("calc.py"),
            "test": world.read("tests/test_calc.py").strip().splitlines()[-1].strip(),
            "check runs": world.check_runs(),
            "model requests": len(run.requests),
        }, world)


if __name__ == "__main__":
    cli_path("claude-code")
    out = ROOT / "demo" / "hosts" / "claude-code" / "goal.json"
    runs = [play(scenario, gated) for scenario in SCENARIOS for gated in (False, True)]
    out.write_text(json.dumps({"condition": CONDITION, "runs": runs}, indent=1, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    print(f"{out.relative_to(ROOT)} written")
