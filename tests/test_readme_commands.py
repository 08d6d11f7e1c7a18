"""Every command of the README's Usage section works on a fresh clone.

The slow test clones the repository (its committed HEAD) into a temporary folder, makes
``../shared`` reachable beside it as in the real layout, and runs the Usage section's
``bash`` blocks line by line, in order, from the clone's root: with this checkout's
virtual environment (what ``make test`` set up) but the clone's sources first on the path.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def usage_commands(readme: str) -> list[str]:
    """The lines of the ```bash blocks under '## Usage' (up to the next '## '), comments dropped."""
    section = readme.split("\n## Usage\n", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", section, re.S):
        commands += [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]
    return commands


def test_usage_section_lists_runnable_commands():
    commands = usage_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert commands and all(c.split()[0] in ("boa", "py4") for c in commands)
    for command in commands:  # no synopsis left: alternatives and placeholders belong in comments
        code = command.split(" #", 1)[0]
        assert not re.search(r"\w\|\w|\bFILE\b|\bDIR\b|\bID\b|\[key=value", code), command


def test_usage_commands_write_to_folders_of_their_own_not_into_the_demos_runs():
    """A README command once replaced the demo's corpus (`--out campaign-out/smoke/corpus`): only
    the smoke assets, which the smoke configs load from there and the demo reuses, go there."""
    commands = usage_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    for command in commands:
        code = command.split(" #", 1)[0]
        outputs = re.findall(r"(?:--out|out_dir=|output_dir=)\s*(\S+)", code)
        if code.startswith("py4 smoke assets"):
            assert outputs == ["campaign-out/smoke/assets"], command
            continue
        assert all(not o.startswith("campaign-out/") for o in outputs), command


def test_the_taste_of_python4_is_the_example_file():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    taste = re.search(r"A taste of Python-4.*?\n```\n(.*?)```", readme, re.S).group(1)
    assert taste == (ROOT / "examples/taste.py4").read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.timeout(5400)
def test_readme_usage_commands_run_in_order_on_a_fresh_clone(tmp_path):
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs the git checkout and git")
    clone = tmp_path / "repo"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    shared = ROOT.parent / "shared"
    if shared.exists():
        (tmp_path / "shared").symlink_to(shared)  # the repository names ../shared/... beside itself
    venv_bin = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(clone / "src"), "PYTHONUNBUFFERED": "1"}
    env.pop("PY4_SMOKE_ASSETS", None)
    log = tmp_path / "commands.log"
    for command in usage_commands((clone / "README.md").read_text(encoding="utf-8")):
        with log.open("a", encoding="utf-8") as fh:
            fh.write(f"$ {command}\n")
            fh.flush()
            proc = subprocess.run(["bash", "-c", command], cwd=clone, env=env, stdout=fh, stderr=subprocess.STDOUT)
        assert proc.returncode == 0, f"{command} exited {proc.returncode}:\n" + log.read_text()[-4000:]
