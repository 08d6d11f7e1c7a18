"""The files a graft reads that a person or an earlier run wrote (a weight index, the -it model's
config.json, the graft's own journal): a malformed one is a GraftError naming path:line (exit 2
under the CLI), never a JSONDecodeError traceback nor a silent "none"."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from graft_fixtures import graft_config, related_triple, write_triple
from py4.cli import app as py4_app
from py4.graft import GraftError, run
from py4.graft.engine import JOURNAL_NAME

MALFORMED = '{\n  "weight_map": {"a": "model.safetensors",\n}\n'  # line 3: a trailing comma


@pytest.fixture
def dirs(tmp_path):
    return write_triple(tmp_path / "in", related_triple())


def test_verify_names_the_line_of_a_malformed_weight_index(tmp_path, dirs):
    out = tmp_path / "out"
    run(graft_config(dirs, out), show_progress=False)
    index = out / "model.safetensors.index.json"
    index.write_text(MALFORMED)
    res = CliRunner().invoke(py4_app, ["graft", "verify", "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert f"error: {index}:3: invalid JSON" in res.output and "Traceback" not in res.output
    index.write_text(json.dumps({"metadata": {}}))  # no weight_map: was a KeyError traceback
    res = CliRunner().invoke(py4_app, ["graft", "verify", "--out", str(out)])
    assert res.exit_code == 2 and f"{index}: weight_map: expected a mapping" in res.output, res.output


def test_an_input_checkpoints_malformed_weight_index_names_its_line(tmp_path, dirs):
    (dirs["base"] / "model.safetensors.index.json").write_text(MALFORMED)
    with pytest.raises(GraftError, match=r"model.safetensors.index.json:3: invalid JSON"):
        run(graft_config(dirs, tmp_path / "out"), show_progress=False)


def test_a_malformed_it_config_is_named_not_read_as_no_mtp_layers(tmp_path, dirs):
    # Read as "no multi-token-prediction layers", the graft would go on without them.
    (dirs["it"] / "config.json").write_text('{"num_hidden_layers": 2,\n "num_nextn_predict_layers": }\n')
    with pytest.raises(GraftError, match=rf"{dirs['it']}/config.json:2: invalid JSON"):
        run(graft_config(dirs, tmp_path / "out"), show_progress=False)


def test_a_malformed_journal_is_named_not_taken_for_a_fresh_start(tmp_path, dirs):
    out = tmp_path / "out"
    out.mkdir()
    (out / JOURNAL_NAME).write_text('{"plan": "abc",\n')
    with pytest.raises(GraftError, match=rf"{JOURNAL_NAME}:2: invalid JSON"):
        run(graft_config(dirs, out), show_progress=False)
