"""The README's map ("What is where") names every package folder and top-level module of py4
and every folder at the repository's root that is part of the project."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Not the project's own: outputs and environments made by running it.
NOT_MAPPED = {"campaign-out", "readme-out", "gpu_wheels", "build", "dist"}


def _map() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## What is where", 1)[1]
    return re.search(r"```\n(.*?)```", section, re.S).group(1)


def _names(block: str) -> set[str]:
    """The paths the map writes (``src/py4/``, ``threads.py``, ``runtime*.py``), each also as its
    first folder (``src``)."""
    paths = {word.rstrip("/") for word in block.split() if re.fullmatch(r"[\w.*-]+(/[\w.*-]+)*/?", word)}
    return paths | {p.split("/")[0] for p in paths}


def test_every_package_and_top_level_module_is_on_the_map():
    names = _names(_map())
    package = ROOT / "src" / "py4"
    wanted = {p.name for p in package.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    wanted |= {p.name for p in package.glob("*.py") if p.name != "__init__.py"}
    covered = {w for w in wanted if w in names or any(n.endswith("*.py") and w.startswith(n[:-4]) for n in names)}
    assert wanted - covered == set()


def _listed_files() -> dict[str, set[str]]:
    """package folder -> the files and folders the map lists under it, for the packages whose
    files it lists (``lang/``, ``boa/``): the leading names of the lines indented under the
    package's own line."""
    listed: dict[str, set[str]] = {}
    package = None
    for line in _map().split("src/py4/\n", 1)[1].splitlines():
        indent = len(line) - len(line.lstrip())
        words = line.split()
        if indent < 2 or not words:
            break
        if indent == 2:
            package = words[0].rstrip("/") if words[0].endswith("/") else None
        elif indent == 4 and package:
            for word in words:
                if not re.fullmatch(r"[\w*]+(\.py|/)", word):
                    break
                listed.setdefault(package, set()).add(word.rstrip("/"))
    return listed


def test_a_package_whose_files_the_map_lists_has_every_file_listed():
    for name, listed in _listed_files().items():
        if not any(n.endswith(".py") for n in listed):  # problems/: a subfolder on the map, not its files
            continue
        folder = ROOT / "src" / "py4" / name
        wanted = {p.name for p in folder.glob("*.py") if p.name != "__init__.py"}
        wanted |= {p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
        covered = {w for w in wanted if w in listed or any(n.endswith("*.py") and w.startswith(n[:-4]) for n in listed)}
        assert wanted - covered == set(), name


def test_every_project_folder_at_the_root_is_on_the_map():
    names = _names(_map())
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert {f for f in folders - NOT_MAPPED if "venv" not in f and not f.endswith(".egg-info")} - names == set()
