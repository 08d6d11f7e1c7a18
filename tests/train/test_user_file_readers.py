"""Files a user gives or a previous stage wrote are read through py4.fileio: a malformed
one is a Py4Error naming ``path:line`` (it was a JSONDecodeError traceback), a missing one names
the file and what writes it."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest

from py4.errors import FileFormatError, Py4Error

BROKEN = '{\n  "rows": 64,\n  "sha256": \n}\n'  # line 4: a value expected


def test_dose_manifest(tmp_path):
    from py4.train.eft import read_dose_manifest

    (tmp_path / "manifest.json").write_text(BROKEN)
    with pytest.raises(FileFormatError, match=f"^{tmp_path / 'manifest.json'}:4: invalid JSON"):
        read_dose_manifest(tmp_path)


def test_dose_drawn_from(tmp_path):
    """``draw_from``: the bigger dose's manifest, read after its rows."""
    import random

    from py4.train.eft_data import draw_rows

    (tmp_path / "data.jsonl").write_text(json.dumps({"messages": [], "source": "gold", "problem_id": "p"}) + "\n")
    with pytest.raises(Py4Error, match="manifest.json: no dose manifest"):
        draw_rows(tmp_path, 1, 0, random.Random(0))
    (tmp_path / "manifest.json").write_text(BROKEN)
    with pytest.raises(Py4Error, match=f"{tmp_path / 'manifest.json'}:4: invalid JSON"):
        draw_rows(tmp_path, 1, 0, random.Random(0))


def test_data_manifest(tmp_path):
    from py4.data.errors import DataError
    from py4.data.packed_io import read_data_manifest

    (tmp_path / "manifest.json").write_text(BROKEN)
    with pytest.raises(DataError, match=f"^{tmp_path / 'manifest.json'}:4: invalid JSON"):
        read_data_manifest(tmp_path)
    with pytest.raises(DataError, match="no data manifest"):
        read_data_manifest(tmp_path / "elsewhere")


def test_packed_stage_manifest_of_its_data(tmp_path):
    """A training stage records its data's manifest: a malformed one names the file."""
    from py4.train.loading import ModelSource
    from py4.train.packed import record_inputs

    class Recorder:
        def add_input(self, *args, **kwargs):
            pass

    (tmp_path / "manifest.json").write_text(BROKEN)
    with pytest.raises(FileFormatError, match=f"{tmp_path / 'manifest.json'}:4"):
        record_inputs(Recorder(), ModelSource(path="owner/model", revision="abc"), str(tmp_path), None)


def test_step_schedule(tmp_path):
    from py4.data.errors import DataError
    from py4.data.schedule import read_step_schedule

    (tmp_path / "step_schedule.json").write_text(BROKEN)
    with pytest.raises(DataError, match=f"^{tmp_path / 'step_schedule.json'}:4: invalid JSON"):
        read_step_schedule(tmp_path)
    (tmp_path / "step_schedule.json").write_text(json.dumps({"max_steps": 3, "colour": "red"}))
    with pytest.raises(DataError, match=r"not a step schedule: missing field\(s\) \['unit'.*"
                                        r"unknown field\(s\) \['colour'\]"):
        read_step_schedule(tmp_path)


def _write_probes(folder, lines: list[str]) -> None:
    raw = ("\n".join(lines) + "\n").encode()
    (folder / "probes-v1.jsonl.gz").write_bytes(gzip.compress(raw))
    (folder / "probes-v1.manifest.json").write_text(json.dumps({"jsonl_sha256": hashlib.sha256(raw).hexdigest()}))


def test_probe_set(tmp_path):
    from py4.problems.probe_set.build import load_probes

    _write_probes(tmp_path, ['{"id": "a"}', '{"id": "b"'])
    with pytest.raises(FileFormatError, match=f"^{tmp_path / 'probes-v1.jsonl.gz'}:2: invalid JSON"):
        load_probes(tmp_path)
    (tmp_path / "probes-v1.manifest.json").write_text("{\n")
    with pytest.raises(FileFormatError, match=f"^{tmp_path / 'probes-v1.manifest.json'}:2: invalid JSON"):
        load_probes(tmp_path)
    (tmp_path / "probes-v1.manifest.json").write_text(json.dumps({"jsonl_sha256": "0" * 64}))
    with pytest.raises(FileFormatError, match="content hash does not match"):
        load_probes(tmp_path)
    with pytest.raises(FileFormatError, match="no probe manifest"):
        load_probes(tmp_path / "empty")


def test_smoke_assets_manifest(tmp_path):
    from py4.train.assets import MANIFEST_NAME, held_out_episode_rows

    with pytest.raises(FileFormatError, match="py4 smoke assets --out DIR writes it"):
        held_out_episode_rows(tmp_path)
    (tmp_path / MANIFEST_NAME).write_text(BROKEN)
    with pytest.raises(FileFormatError, match=f"{MANIFEST_NAME}:4: invalid JSON"):
        held_out_episode_rows(tmp_path)
