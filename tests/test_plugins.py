"""Each host's own install (appendix 91): the committed marketplace, plugins and extension are what the code
writes; `installed_plugins` reads what each host records; `install` writes no project hooks where a plugin
already runs the gate, and trusts a Codex plugin's hooks; `doctor` shows the plugin. The real CLIs installing
them from this checkout: tests/hosts/test_plugin_installs.py."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.plugins import checkout_files, installed_plugins, plugin_files, plugin_trust_keys, write_files

ROOT = Path(__file__).resolve().parent.parent
DONEGATE = str(Path(sys.executable).with_name("donegate"))


@pytest.fixture(autouse=True)
def hermetic(hermetic_gate):
    """Every test runs in the isolated environment of conftest.hermetic_gate."""


def test_the_committed_plugins_are_what_the_code_writes():
    for rel, data in checkout_files().items():
        path = ROOT / rel
        assert path.exists(), f"{rel} is missing: run `uv run python tools/write_plugins.py`"
        assert json.loads(path.read_text()) == data, f"{rel} differs: run `uv run python tools/write_plugins.py`"
    committed = {str(p.relative_to(ROOT)) for p in (ROOT / "plugins").rglob("*") if p.is_file()}
    assert committed == {rel for rel in checkout_files() if rel.startswith("plugins/")}


def test_each_plugin_carries_the_hooks_install_writes_for_its_host():
    from donegate.doctor import installed_hook_entries
    for host in ("claude-code", "codex", "gemini"):
        assert plugin_files(host)["hooks/hooks.json"]["hooks"] == installed_hook_entries(host)


class Home:
    """A private HOME and a git repository, with `donegate` run as a person would in it."""

    def __init__(self, tmp: Path) -> None:
        self.home, self.repo = tmp / "home", tmp / "repo"
        self.home.mkdir()
        self.repo.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=self.repo, check=True)
        self.env = {**os.environ, "HOME": str(self.home)}

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([DONEGATE, *args], cwd=self.repo, capture_output=True, text=True, env=self.env)

    def claude_plugin(self) -> Path:
        """What `claude plugin install donegate@donegate` records (user scope)."""
        cache = self.home / ".claude" / "plugins" / "cache" / "donegate" / "donegate" / "0.1.0"
        write_files(cache, plugin_files("claude-code"))
        (self.home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"donegate@donegate": True}}))
        (self.home / ".claude" / "plugins" / "installed_plugins.json").write_text(json.dumps(
            {"version": 2, "plugins": {"donegate@donegate": [{"scope": "user", "installPath": str(cache)}]}}))
        return cache

    def codex_plugin(self, enabled: bool = True) -> Path:
        """What `codex plugin add donegate@donegate` records."""
        cache = self.home / ".codex" / "plugins" / "cache" / "donegate" / "donegate" / "0.1.0"
        write_files(cache, plugin_files("codex"))
        (self.home / ".codex" / "config.toml").write_text(
            f'[plugins."donegate@donegate"]\nenabled = {"true" if enabled else "false"}\n')
        return cache

    def gemini_extension(self) -> Path:
        """What `gemini extensions install plugins/gemini` records."""
        folder = self.home / ".gemini" / "extensions" / "donegate"
        write_files(folder, plugin_files("gemini"))
        (folder / ".gemini-extension-install.json").write_text(json.dumps({"source": "/x", "type": "local"}))
        return folder


def test_each_host_s_record_of_the_plugin_is_found(tmp_path):
    home = Home(tmp_path)
    env = {"HOME": str(home.home)}
    assert all(installed_plugins(h, home.repo, env) == [] for h in ("claude-code", "codex", "gemini"))
    folders = {"claude-code": home.claude_plugin(), "codex": home.codex_plugin(), "gemini": home.gemini_extension()}
    for host, folder in folders.items():
        (plugin,) = installed_plugins(host, home.repo, env)
        assert plugin.folder == folder and plugin.host == host


def test_a_disabled_plugin_or_one_without_the_gate_s_stop_is_not_counted(tmp_path):
    home = Home(tmp_path)
    env = {"HOME": str(home.home)}
    home.codex_plugin(enabled=False)
    assert installed_plugins("codex", home.repo, env) == []
    cache = home.codex_plugin()
    hooks = json.loads((cache / "hooks/hooks.json").read_text())
    del hooks["hooks"]["Stop"]
    (cache / "hooks/hooks.json").write_text(json.dumps(hooks))
    assert installed_plugins("codex", home.repo, env) == []  # a plugin that does not gate the stop gates nothing


def test_install_writes_no_project_hooks_where_a_plugin_runs_the_gate(tmp_path):
    home = Home(tmp_path)
    home.claude_plugin()
    done = home.run("install", "--host", "claude-code")
    assert done.returncode == 0 and "already runs the gate" in done.stdout, done.stdout
    assert not (home.repo / ".claude").exists()
    doctor = home.run("doctor").stdout
    assert "claude-code  installed as the plugin donegate@donegate" in doctor and "and active" in doctor, doctor


def test_codex_plugin_hooks_are_untrusted_until_install_trust_writes_their_hashes(tmp_path):
    home = Home(tmp_path)
    home.codex_plugin()
    doctor = home.run("doctor")
    assert "codex        installed as the plugin donegate@donegate but NOT active" in doctor.stdout, doctor.stdout
    assert doctor.returncode == 1
    done = home.run("install", "--host", "codex", "--trust")
    assert done.returncode == 0 and not (home.repo / ".codex").exists(), done.stdout
    config = (home.home / ".codex" / "config.toml").read_text()
    (plugin,) = installed_plugins("codex", home.repo, {"HOME": str(home.home)})
    for key, digest in plugin_trust_keys(plugin):
        assert key.startswith("donegate@donegate:hooks/hooks.json:") and f'trusted_hash = "{digest}"' in config
    assert "installed as the plugin donegate@donegate" in home.run("doctor").stdout
    assert "NOT active" not in home.run("doctor").stdout.split("codex", 1)[1].splitlines()[0]
    assert home.run("install", "--host", "codex", "--trust").stdout.count("trusted") == 0  # twice: nothing new


def test_a_plugin_and_project_hooks_together_are_a_problem_doctor_names(tmp_path):
    home = Home(tmp_path)
    assert home.run("install", "--host", "gemini").returncode == 0  # project hooks first
    home.gemini_extension()
    doctor = home.run("doctor")
    assert "gemini       installed TWICE" in doctor.stdout and doctor.returncode == 1, doctor.stdout


def test_install_trust_with_the_gemini_extension_trusts_the_folder_gemini_needs_to_start_in(tmp_path):
    home = Home(tmp_path)
    home.gemini_extension()
    done = home.run("install", "--host", "gemini", "--trust")
    assert done.returncode == 0 and not (home.repo / ".gemini").exists(), done.stdout
    trusted = json.loads((home.home / ".gemini" / "trustedFolders.json").read_text())
    assert trusted == {str(home.repo): "TRUST_FOLDER"}


def test_every_locked_host_package_with_an_install_script_is_allowed_to_run_it():
    """npm 11 runs a dependency's install script only when package.json's allowScripts names it (and refuses the
    install under --strict-allow-scripts): without Claude Code's, `claude` is left without its native binary."""
    folder = Path(__file__).resolve().parent / "hosts"
    allowed = json.loads((folder / "package.json").read_text()).get("allowScripts", {})
    locked = json.loads((folder / "package-lock.json").read_text())["packages"]
    scripted = {path.rpartition("node_modules/")[2] for path, entry in locked.items()
                if entry.get("hasInstallScript") and not entry.get("optional")}
    assert "@anthropic-ai/claude-code" in scripted
    assert {name for name in scripted if allowed.get(name) is not True} == set()


def test_the_readme_s_per_repository_lines_run_as_written(tmp_path):
    """The README's "Per repository" block, each line as written (PATH is a folder of that name here), with each host
    its comment names in turn: every line ends 0, and doctor then sees every host's hooks."""
    lines = (ROOT / "README.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("**Per repository**"))
    block = [line.strip() for line in lines[start + 2:] if line.startswith("    ")][:4]
    install = next(line for line in block if "--host claude-code" in line)
    hosts = install.split("# or ", 1)[1].split(":", 1)[0].split(", ")
    repo, home = tmp_path / "PATH", tmp_path / "home"
    repo.mkdir()
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "DONEGATE_STATE_DIR": str(tmp_path / "state"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
    for line in [*block, *(install.replace("claude-code", host) for host in hosts)]:
        done = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0 or line.startswith("donegate doctor"), f"{line}\n{done.stdout}{done.stderr}"
    doctor = subprocess.run(["donegate", "doctor", "--repo", "PATH"], cwd=tmp_path, env=env, capture_output=True,
                            text=True).stdout
    assert all(f"{host:<12} installed" in doctor for host in ["claude-code", *hosts]), doctor
    assert (repo / "verify.sh").exists()
