"""Run folders: resolved config, manifest status on success and failure, hashes."""

from __future__ import annotations

import json

import pytest

from py4.config import StrictModel
from py4.runs import MANIFEST_NAME, RunRecorder, read_manifest, run_is_done, tree_sha256


class Cfg(StrictModel):
    seed: int = 42


def test_success_marks_done(tmp_path):
    (tmp_path / "in.txt").write_text("hello")
    with RunRecorder(tmp_path / "run", Cfg(), kind="unit") as run:
        run.add_input("data", path=tmp_path / "in.txt", revision="abc")
        run.set(rows=3)
    manifest = read_manifest(tmp_path / "run")
    assert manifest["status"] == "done" and manifest["rows"] == 3
    assert manifest["inputs"]["data"]["sha256"] == tree_sha256(tmp_path / "in.txt")
    assert (tmp_path / "run" / "resolved_config.yaml").read_text().strip() == "seed: 42"
    assert run_is_done(tmp_path / "run")


def test_failure_is_recorded_and_propagates(tmp_path):
    with pytest.raises(RuntimeError):
        with RunRecorder(tmp_path, Cfg(), kind="unit"):
            raise RuntimeError("boom")
    manifest = json.loads((tmp_path / MANIFEST_NAME).read_text())
    assert manifest["status"] == "failed" and "boom" in manifest["error"]
    assert not run_is_done(tmp_path)


def test_attempts_count_up(tmp_path):
    for _ in range(2):
        with RunRecorder(tmp_path, None, kind="unit"):
            pass
    assert read_manifest(tmp_path)["attempt"] == 2


def test_tree_hash_depends_on_names_and_content(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x").write_text("1")
    h1 = tree_sha256(tmp_path / "a")
    (tmp_path / "a" / "x").write_text("2")
    h2 = tree_sha256(tmp_path / "a")
    (tmp_path / "a" / "x").rename(tmp_path / "a" / "y")
    assert len({h1, h2, tree_sha256(tmp_path / "a")}) == 3


def test_a_malformed_manifest_names_its_file_and_line_instead_of_reading_as_none(tmp_path):
    # Read as "no manifest", a campaign would take a done run for pending and run it again.
    from py4.errors import FileFormatError

    (tmp_path / MANIFEST_NAME).write_text('{\n  "status": "done",\n  "attempt": \n}\n')
    with pytest.raises(FileFormatError, match=rf"{MANIFEST_NAME}:4: invalid JSON"):
        read_manifest(tmp_path)
    assert read_manifest(tmp_path / "none") is None  # no manifest is still None


def test_run_status_is_one_of_the_run_statuses(tmp_path):
    from py4.errors import FileFormatError
    from py4.runs import RUN_STATUSES, run_status

    assert run_status(tmp_path) is None
    with RunRecorder(tmp_path, None, "test"):
        assert run_status(tmp_path) == "running"
    assert run_status(tmp_path) == "done" and RUN_STATUSES == ("running", "done", "failed", "interrupted")
    (tmp_path / MANIFEST_NAME).write_text(json.dumps({"status": "finished"}))
    with pytest.raises(FileFormatError, match=r"status 'finished': expected one of running, done, failed, interrupted"):
        run_status(tmp_path)


def _git(cwd, *args):
    import subprocess

    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(cwd), "PATH": "/usr/bin:/bin"})


def test_a_checkout_s_commit_and_dirty_flag_are_read_from_its_work_tree(tmp_path):
    import subprocess

    from py4.runs import checkout_version

    package = tmp_path / "src" / "py4"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "x")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    assert checkout_version(package, "0.1.0") == {"package": "0.1.0", "git_commit": head, "git_dirty": False}
    (package / "new.py").write_text("")  # an untracked file is code too
    assert checkout_version(package, "0.1.0")["git_dirty"] is True


def test_an_installed_copy_has_its_package_version_only(tmp_path):
    from py4.runs import checkout_version

    site = tmp_path / "site-packages" / "py4"
    site.mkdir(parents=True)
    assert checkout_version(site, "0.1.0") == {"package": "0.1.0"}
    _git(tmp_path, "init", "-q")  # a git folder around site-packages is not py4's checkout
    assert checkout_version(site, "0.1.0") == {"package": "0.1.0"}


def test_every_run_manifest_says_which_code_and_command_made_it(tmp_path, monkeypatch):
    import sys

    from py4.runs import code_version

    monkeypatch.setattr(sys, "orig_argv", ["python", "py4", "train", "sft", "--config", "x.yaml"])
    with RunRecorder(tmp_path, Cfg(), kind="unit"):
        pass
    manifest = read_manifest(tmp_path)
    assert manifest["provenance"] == {"code": code_version(), "command": [sys.executable, "py4", "train", "sft",
                                                                           "--config", "x.yaml"]}
    assert manifest["provenance"]["code"]["package"]
    assert {"torch", "transformers", "trl", "peft", "accelerate", "datasets", "vllm"} <= set(manifest["libraries"])


def test_a_process_started_with_python_c_records_its_code():
    """The campaign runner and the rehearsal start each run as ``python -c CODE ARGS``; ``sys.argv``
    holds ``-c`` in CODE's place, which would leave the command that made the run unrepeatable."""
    import subprocess
    import sys

    code = "import json; from py4.runs import provenance; print(json.dumps(provenance()['command']))"
    done = subprocess.run([sys.executable, "-c", code, "data", "mix", "--config", "x.yaml"], capture_output=True,
                          text=True, check=True, timeout=120)
    assert json.loads(done.stdout) == [sys.executable, "-c", code, "data", "mix", "--config", "x.yaml"]
