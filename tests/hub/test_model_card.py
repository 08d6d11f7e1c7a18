"""Model cards: written into every model folder a run records, before the folder is hashed,
saying what made the model; rewritten with results for an upload."""

from __future__ import annotations

import json

import pytest

from hub_standin import HubStandIn
from py4.run_owner import RUNNER_ENV
from py4.runs import RunRecorder, tree_sha256


def _model_folder(path, adapter=False):
    path.mkdir(parents=True)
    (path / ("adapter_config.json" if adapter else "config.json")).write_text("{}")
    (path / "README.md").write_text("---\nlibrary_name: transformers\n---\nTRL's generic card\n")
    return path


def test_a_recorded_model_folder_gets_a_card_with_its_provenance_before_hashing(tmp_path, monkeypatch):
    from huggingface_hub import ModelCard

    monkeypatch.setenv(RUNNER_ENV, "sft/gemma4_12b")
    model = _model_folder(tmp_path / "run" / "model")
    with RunRecorder(tmp_path / "run", None, "sft") as run:
        run.add_input("model", hub_id="google/gemma-4-12b-it", revision="a" * 40)
        run.add_input("data", path=str(tmp_path), hash_content=False, sha256="f" * 64)
        run.add_output("model", model)
    card = ModelCard.load(model / "README.md")
    assert card.data.base_model == "google/gemma-4-12b-it" and card.data.library_name == "transformers"
    assert card.data.py4["campaign_node"] == "sft/gemma4_12b"
    assert "a" * 40 in card.text and "f" * 64 in card.text and "TRL's generic card" not in card.text
    manifest = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    assert manifest["outputs"]["model"]["sha256"] == tree_sha256(model)  # the card is part of the hash


def test_a_model_a_campaign_run_makes_names_its_node(tmp_path, monkeypatch):
    """The node comes from what the runner sets for the stage it runs, not from the stage's config."""
    from huggingface_hub import ModelCard

    from py4.campaign.node import Node
    from py4.campaign.runner import run_node

    monkeypatch.delenv(RUNNER_ENV, raising=False)
    node = Node(id="arm/gemma4_12b/sft", stage="sft", run_dir=str(tmp_path / "runs" / "sft"))

    def stage(node):
        with RunRecorder(node.run_dir, None, "sft") as run:
            run.add_output("model", _model_folder(tmp_path / "runs" / "sft" / "model"))

    assert run_node(node, [node], tmp_path, stage, "f" * 16, log=lambda line: None)
    card = ModelCard.load(tmp_path / "runs" / "sft" / "model" / "README.md")
    assert card.data.py4["campaign_node"] == node.id and f"Campaign node: `{node.id}`" in card.text


def test_an_adapter_card_names_peft_and_other_outputs_get_none(tmp_path):
    adapter = _model_folder(tmp_path / "run" / "model", adapter=True)
    (tmp_path / "run" / "results.json").write_text("{}")
    with RunRecorder(tmp_path / "run", None, "eft") as run:
        run.add_output("model", adapter)
        run.add_output("results", tmp_path / "run" / "results.json")
    assert "library_name: peft" in (adapter / "README.md").read_text()
    assert not (tmp_path / "run" / "README.md").exists()


def test_py4_push_rewrites_the_card_with_results_and_uploads_the_model(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from py4.cli import app

    model = _model_folder(tmp_path / "run" / "model")
    with RunRecorder(tmp_path / "run", None, "grpo") as run:
        run.add_output("model", model)
    recorded = tree_sha256(model)
    evaluation = tmp_path / "eval"
    with RunRecorder(evaluation, None, "eval") as run:
        pass
    (evaluation / "results.json").write_text(json.dumps({"certified_rate": 0.25, "model": "m"}))
    with HubStandIn() as hub:
        monkeypatch.setenv("HF_TOKEN", "hf_standin")
        import huggingface_hub.constants as constants

        monkeypatch.setattr(constants, "ENDPOINT", hub.endpoint)
        result = CliRunner().invoke(app, ["push", str(model), "org/model", "--results", str(evaluation)])
        assert result.exit_code == 0, result.output
        sent = hub.files("model", "org/model")
    assert set(sent) == {"config.json", "README.md"}
    assert b"certified_rate" in sent["README.md"] and b"0.25" in sent["README.md"]
    assert tree_sha256(model) == recorded  # the run's folder is as it recorded it


def test_a_pushed_checkpoint_keeps_its_step(tmp_path, monkeypatch):
    from huggingface_hub import ModelCard

    from py4.hub.model_card import push_model

    run = tmp_path / "run"
    checkpoint = _model_folder(run / "checkpoint-40", adapter=True)
    with RunRecorder(run, None, "grpo"):
        pass
    with HubStandIn() as hub:
        monkeypatch.setenv("HF_TOKEN", "hf_standin")
        monkeypatch.setattr("huggingface_hub.constants.ENDPOINT", hub.endpoint)
        push_model(checkpoint, "org/grpo-step-40")
        sent = hub.files("model", "org/grpo-step-40")
    (tmp_path / "card.md").write_bytes(sent["README.md"])
    card = ModelCard.load(tmp_path / "card.md")
    assert card.data.py4["step"] == 40 and "checkpoint at training step 40" in card.text


def test_pushing_a_folder_no_run_wrote_is_refused(tmp_path):
    from py4.errors import FileFormatError
    from py4.hub.model_card import push_model

    model = _model_folder(tmp_path / "stray")
    with pytest.raises(FileFormatError, match="no run_manifest.json"):
        push_model(model, "org/m")
    with pytest.raises(FileFormatError, match="not a model folder"):
        push_model(tmp_path, "org/m")


def test_py4_push_finds_the_campaigns_results_for_the_folder_it_uploads(tmp_path, monkeypatch):
    """Without --results the card holds the evaluation and probe runs of the campaign that measured
    this very folder: the EFT adapter's, not its base's (the SFT model's), nor another dose's."""
    from typer.testing import CliRunner

    from py4.campaign.dag import Node
    from py4.campaign.node_meta import EvalMeta, ProbeMeta
    from py4.campaign.runner import run_campaign
    from py4.cli import app

    monkeypatch.setattr("py4.runs.library_versions", lambda *a, **k: {})
    out = tmp_path / "campaign"
    sft, eft, other = (str(out / "tiny/iso" / name / "model") for name in ("sft", "eft_8", "eft_4"))

    def train(node):
        with RunRecorder(node.run_dir, None, "eft") as run:
            run.add_output("model", _model_folder(out / node.id / "model", adapter="eft" in node.id))

    def measure(node):
        with RunRecorder(node.run_dir, None, node.stage):
            (out / node.run_dir / "results.json").write_text(json.dumps({"measured": node.id}))

    meta = dict(model="tiny", arm="iso")
    nodes = [Node(id=f"tiny/iso/{name}", stage="eft", run_dir=str(out / "tiny/iso" / name))
             for name in ("sft", "eft_8", "eft_4")]
    nodes += [Node(id=f"eval:tiny/iso/{name}", stage="eval", run_dir=str(out / "eval" / name),
                   inputs=[f"tiny/iso/{name}"],
                   meta=EvalMeta(**meta, model_node=f"tiny/iso/{name}", weights=weights, model_kind="eft",
                                 base=None if name == "sft" else sft))
              for name, weights in (("sft", sft), ("eft_8", eft), ("eft_4", other))]
    nodes += [Node(id=f"probes:tiny/iso/{name}", stage="probes", run_dir=str(out / "probes" / name),
                   inputs=[f"tiny/iso/{name}"],
                   meta=ProbeMeta(**meta, model_node=f"tiny/iso/{name}", weights=sft, kind="eft", adapter=adapter))
              for name, adapter in (("sft", None), ("eft_8", eft))]
    assert run_campaign(nodes, out, {"eft": train, "eval": measure, "probes": measure}, progress=False,
                        log=lambda s: None).ok
    with HubStandIn() as hub:
        monkeypatch.setenv("HF_TOKEN", "hf_standin")
        monkeypatch.setattr("huggingface_hub.constants.ENDPOINT", hub.endpoint)
        result = CliRunner().invoke(app, ["push", eft, "org/eft-8"])
        assert result.exit_code == 0, result.output
        card = hub.files("model", "org/eft-8")["README.md"].decode()
    assert f"results in the card: {out.resolve() / 'eval/eft_8'}, {out.resolve() / 'probes/eft_8'}" in result.output
    assert "eval:tiny/iso/eft_8" in card and "probes:tiny/iso/eft_8" in card
    assert "tiny/iso/sft" not in card.split("## Results")[1] and "eft_4" not in card
