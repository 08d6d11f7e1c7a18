"""The package's layers point down: a module imports only its own layer or those below it.

Every ``import`` of a py4 module counts, including the ones inside functions (a lazy import
is still a dependency; it only hides a cycle). ``KNOWN_UPWARD`` lists the arrows allowed to
point up, each one to be removed; the test fails on an upward arrow not listed and on a listed
one that is gone, so the list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import py4

# Bottom to top. Packages on one line share a layer and may import each other.
LAYERS: list[set[str]] = [
    # the foundation (no py4 imports above it); endpoint_client: the HTTP client of OpenAI-compatible endpoints;
    # cli_options: a command built from its options model; overrides: a typed key=value and its command-line text;
    # tracking: a training run's trackers, which its evaluations and probe runs log to;
    # hub: dataset folders, cards, the upload call (runs writes model cards)
    {"errors", "fileio", "config", "runs", "threads", "run_progress", "run_owner", "endpoint_client", "binomial",
     "version", "hub", "cli_options", "overrides", "tracking"},
    {"chat"},  # chat formats and training templates: episodes parse them, data renders them, train sets them
    {"lang"},
    {"boa"},
    {"problems"},  # the bank, and beside it the probe set (problems.probe_set), built and checked like it
    {"episodes"},
    {"data"},
    {"corpus", "train"},
    {"evaluate", "graft", "probes", "pinned_datasets"},  # pinned_datasets: a Hub pin as bank, probe set or corpus
    {"inspect_tasks"},
    {"stages"},  # the stage registry: stage name -> the config types and run functions of the packages below
    {"campaign"},
    {"report"},
    {"rehearsal"},
    # command lines (``python -m py4`` too) and the package's face (``__init__``: py4.load_bank,
    # py4.run_eval, py4.load_campaign_results, which call the evaluation, the campaign and the report)
    {"cli", "cli_help", "boa_cli", "stage_cli", "demo", "rehearsal.cli", "__main__", "__init__"},
]

# (importing module, imported module): arrows that point up today.
KNOWN_UPWARD: set[tuple[str, str]] = set()


def _layer_of(module: str) -> int:
    """The layer of the most specific entry naming ``module`` (``rehearsal.cli`` before ``rehearsal``);
    the root package ``py4`` is its ``__init__``."""
    parts = module.split(".")[1:] or ["__init__"]
    for length in range(len(parts), 0, -1):
        name = ".".join(parts[:length])
        for index, layer in enumerate(LAYERS):
            if name in layer:
                return index
    raise AssertionError(f"{module}: in no layer of tests/test_layers.py; add its package")


def _imports() -> set[tuple[str, str]]:
    """(module, imported py4 module) pairs, as the code writes them: the root package ``py4``
    counts where a module names it (``import py4``), not where Python imports it on the way to a
    submodule."""
    root = Path(py4.__file__).parent
    found = set()
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "py4":
                found.add((module, node.module))
            elif isinstance(node, ast.Import):
                found.update((module, alias.name) for alias in node.names if alias.name.split(".")[0] == "py4")
    return found


def test_every_package_has_a_layer():
    for module, imported in _imports():
        _layer_of(module)
        _layer_of(imported)


def test_imports_point_down():
    upward = {(a, b) for a, b in _imports() if _layer_of(b) > _layer_of(a)}
    new = sorted(upward - KNOWN_UPWARD)
    gone = sorted(KNOWN_UPWARD - upward)
    assert not new, "imports that point up a layer (see LAYERS): " + ", ".join(f"{a} -> {b}" for a, b in new)
    assert not gone, "in KNOWN_UPWARD but not upward, remove: " + ", ".join(f"{a} -> {b}" for a, b in gone)
