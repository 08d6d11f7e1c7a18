"""docs/api.md: every ``python`` block runs, in order, in one namespace; the exports are lazy."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
API_DOC = ROOT / "docs" / "api.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_api_doc_examples_run(tmp_path, monkeypatch):
    pytest.importorskip("inspect_ai")  # the last block runs an Inspect task
    blocks = BLOCK.findall(API_DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 5
    (tmp_path / "configs").symlink_to(ROOT / "configs")  # the campaign YAML names configs/... paths
    monkeypatch.chdir(tmp_path)  # runs/, logs/ and the campaign's out_dir land here
    for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    namespace: dict = {"__name__": "api_doc"}
    try:
        for number, code in enumerate(blocks, 1):
            exec(compile(code, f"{API_DOC}:block {number}", "exec"), namespace)  # our own docs
    finally:
        from py4.episodes.pool import close_shared_executors

        close_shared_executors()
    assert (tmp_path / "runs" / "eval-gold" / "results.json").is_file()


def test_package_exports_load_on_first_use():
    """``import py4`` and ``import py4.boa`` import no Boa, language or bank module until a name is used."""
    code = ("import sys, py4, py4.boa\n"
            "heavy = [m for m in sys.modules if m.startswith(('py4.boa.', 'py4.lang', 'py4.problems', 'pydantic'))]\n"
            "assert heavy == [], heavy\n"
            "from py4.boa import Executor, RunResult, certify, certify_many, compile_py4, check\n"
            "from py4.boa.executor import Executor as E\n"
            "from py4.lang import compile_py4 as c\n"
            "assert Executor is E and compile_py4 is c and 'py4.boa.certify' in sys.modules\n"
            "assert set(py4.boa.__all__) <= set(dir(py4.boa))\n"
            "from py4.boa import cgroups, isolation\n"  # submodules still import by name
            "assert callable(py4.load_bank) and callable(py4.run_eval) and callable(py4.load_campaign_results)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_unknown_boa_name_is_an_attribute_error():
    import py4.boa

    with pytest.raises(AttributeError, match="no attribute 'Executer'"):
        py4.boa.Executer  # noqa: B018
    with pytest.raises(ValueError, match="unknown split 'test_heldot'"):
        __import__("py4").load_bank(split="test_heldot")


@pytest.mark.parametrize("first", ["import py4.episodes", "from py4.boa.certify import Certificate", "pass"])
def test_boa_certify_is_the_function_whatever_was_imported_before(first):
    """``py4/boa/certify.py`` shares the function's name: importing the module must not shadow it."""
    code = (f"{first}\n"
            "import py4.boa\n"
            "from py4.boa import certify\n"
            "import py4.boa.certify\n"  # importing the submodule (again) changes nothing
            "from py4.boa.certify import certify as function\n"
            "assert certify is function and py4.boa.certify is function, (certify, py4.boa.certify)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_run_eval_names_a_missing_model_folder(tmp_path):
    import py4
    from py4.config import ConfigError

    with pytest.raises(ConfigError, match=r"model '.*/no-such-model': no such folder"):
        py4.run_eval(tmp_path / "eval", policy="local", model=str(tmp_path / "no-such-model"), splits=["test_heldin"])
    assert not (tmp_path / "eval").exists()
