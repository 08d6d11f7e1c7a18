"""Output files honour the umask: colleagues on a shared filesystem read them.

`tempfile.mkstemp` creates 0600 files; an atomic writer that renames such a file into place
leaves results.json, run_manifest.json and the graft's config/tokenizer unreadable to the group.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from py4.runs import RunRecorder, atomic_write_json, atomic_write_text


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_atomic_writes_are_readable_by_group_and_others(tmp_path, umask_022):
    text = atomic_write_text(tmp_path / "a" / "results.md", "x\n")
    data = atomic_write_json(tmp_path / "results.json", {"a": 1})
    assert _mode(text) == 0o644
    assert _mode(data) == 0o644
    assert not [p for p in (tmp_path / "a").iterdir() if p.name.startswith(".")]  # no temp file left


def test_a_stricter_umask_is_honoured_too(tmp_path):
    old = os.umask(0o077)
    try:
        path = atomic_write_text(tmp_path / "private.txt", "x")
    finally:
        os.umask(old)
    assert _mode(path) == 0o600


def test_run_manifest_and_resolved_config_are_readable(tmp_path, umask_022):
    from py4.config import StrictModel

    class Cfg(StrictModel):
        a: int = 1

    with RunRecorder(tmp_path / "run", Cfg(), kind="test"):
        pass
    assert _mode(tmp_path / "run" / "run_manifest.json") == 0o644
    assert _mode(tmp_path / "run" / "resolved_config.yaml") == 0o644


def test_graft_aux_copies_are_readable(tmp_path, umask_022):
    from py4.train.model_files import copy_files

    src = tmp_path / "config.json"
    src.write_text("{}")
    src.chmod(0o600)  # the copy takes the umask's mode, not the source's
    dst_dir = tmp_path / "out"
    dst_dir.mkdir()
    copy_files(tmp_path, dst_dir, ["config.json"])
    assert _mode(dst_dir / "config.json") == 0o644
