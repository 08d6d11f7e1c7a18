"""The stage registry (py4.stages, docs/dev/stages.md): every stage a campaign runs is in it, and each
stage's command is built from its options (its --help lists them; a call's command line parses back to
the call's options)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
import typer.main
from typer.testing import CliRunner

from py4 import stages
from py4.overrides import overrides
from py4.cli import app

ROOT = Path(__file__).resolve().parents[1]


def _command(words: tuple[str, ...]) -> tuple[click.Command, list[str]]:
    """The command ``py4 WORDS`` runs, and the words left for its arguments (``train STAGE``).

    A group that runs a command when no sub-command is named runs it as its own callback (graft)
    or through its default command (eval: ``episodes``)."""
    command, words_left = typer.main.get_command(app), list(words)
    while words_left and words_left[0] in getattr(command, "commands", {}):
        command = command.commands[words_left.pop(0)]
    if getattr(command, "commands", None) and "episodes" in command.commands:
        command = command.commands["episodes"]
    return command, words_left


def _parsed_options(stage: stages.Stage, words: list[str]):
    """The options the stage's command hands its body for the command line ``py4 WORDS``."""
    from py4.cli_options import options_from_params

    command, arguments = _command(tuple(words[: len(stage.command)]))
    ctx = command.make_context(" ".join(stage.command), [*arguments, *words[len(stage.command):]])
    return options_from_params(stage.options, ctx.params)


def _flat(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


def _sample_value(info):
    """A value of a field's type that is not its default (what a person might pass)."""
    import typing

    annotation = info.annotation
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)[-1]
    kind = args[0] if args and typing.get_origin(annotation) is not list else annotation
    if annotation is bool:
        return not info.default
    if typing.get_origin(kind) is list or kind is list:
        return ["a", "b"]
    return {int: 7, float: 0.5}.get(kind, "some/value")


@pytest.fixture(scope="module")
def campaign_nodes():
    """Every run of the shipped campaigns (smoke, python4)."""
    import os

    from py4.campaign.dag import build_dag
    from py4.campaign.spec import load_campaign

    here = os.getcwd()
    os.chdir(ROOT)
    try:
        return [node for name in ("smoke", "python4")
                for node in build_dag(load_campaign(ROOT / f"configs/campaign/{name}.yaml"))]
    finally:
        os.chdir(here)


def test_every_stage_of_the_campaigns_is_in_the_registry(campaign_nodes):
    from py4.campaign.spec import STAGES

    assert STAGES is stages.STAGES  # the campaign spec's stages are the registry's
    for node in campaign_nodes:
        assert node.stage in stages.STAGES, node.id
        assert node.argv[: len(stages.get_stage(node.stage).command)] == list(stages.get_stage(node.stage).command)


@pytest.mark.parametrize("name", list(stages.STAGES))
def test_each_stage_commands_help_lists_every_option_with_its_description(name):
    from py4.cli_options import described

    stage = stages.get_stage(name)
    words = [*stage.command, *([name] if stage.command == ("train", name) else []), "--help"]
    result = CliRunner().invoke(app, words, env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    shown = _flat(result.output)
    for flag, description in described(stage.options).items():
        assert description, f"{name}: {flag} has no description"
        assert f"{flag.split('/')[0]} " in shown and _flat(description) in shown, f"{name}: {flag} {description!r}"


@pytest.mark.parametrize("name", list(stages.STAGES))
def test_a_call_with_every_option_set_parses_back_to_the_same_options(name):
    stage = stages.get_stage(name)
    options = {field: _sample_value(info) for field, info in stage.options.model_fields.items() if field != "config"}
    config = "some/config.yaml" if "config" in stage.options.model_fields else None
    call = stages.StageCall(stage=name, config=config, options=options)
    assert _parsed_options(stage, stages.argv(call)) == stages.options_of(call)


def test_every_node_of_the_campaigns_parses_back_to_its_options(campaign_nodes):
    """What a Slurm job or `--subprocess` runs is what the runner's in-process call holds."""
    for node in campaign_nodes:
        stage = stages.get_stage(node.stage)
        assert _parsed_options(stage, node.argv) == stages.options_of(node.call), node.id


def test_py4_train_takes_the_registrys_training_stages():
    from py4.stage_cli import TRAINING_STAGES

    assert TRAINING_STAGES == [n for n, s in stages.STAGES.items() if s.multi_gpu]
    assert TRAINING_STAGES == ["midtrain", "sft", "eft_dose", "eft", "grpo"]
    help_text = " ".join(CliRunner().invoke(app, ["train", "--help"]).output.split())
    assert "midtrain | sft | eft_dose | eft | grpo" in help_text
    result = CliRunner().invoke(app, ["train", "sfy", "--config", "x.yaml"])
    assert result.exit_code == 2 and "did you mean 'sft'" in result.output


def test_python_m_py4_is_the_py4_command():
    import py4.__main__ as entry
    from py4.cli import app

    assert entry.app is app


def test_a_call_is_written_as_its_command_line_and_read_back():
    call = stages.StageCall(stage="eval", config="configs/eval/x.yaml",
                            options={"out": "o", "model": "m", "split": ["a", "b"], "progress": False},
                            overrides=(*overrides({"limit": 3, "episode.verbatim": True, "name": None}),
                                       *overrides(["sampling.temperature=0.70"])))
    assert stages.argv(call) == ["eval", "--out", "o", "--model", "m", "--split", "a,b", "--no-progress",
                                 "--config", "configs/eval/x.yaml", "limit=3", "episode.verbatim=true", "name=null",
                                 "sampling.temperature=0.70"]  # a spec's text is kept as written
    assert [o.value for o in call.overrides] == [3, True, None, 0.7]
    heldout = stages.StageCall(stage="heldout_loss", options={"model": "m", "docs": "d", "exclude": ["a", "b"],
                                                              "max_tokens": 5, "out": "o"})
    assert stages.argv(heldout) == ["smoke", "heldout-loss", "--model", "m", "--docs", "d", "--exclude", "a",
                                    "--exclude", "b", "--max-tokens", "5", "--out", "o"]


def test_check_names_the_option_or_field_and_what_was_expected():
    subset = stages.StageCall(stage="subset", options={"corpus": "c", "target_tokens": "lots", "seed": 1, "out": "o"})
    assert stages.check(subset) == ["options of subset: target_tokens: Input should be a valid integer, unable to "
                                    "parse string as an integer (given 'lots')"]
    assert "unknown stage 'sfy'; did you mean 'sft'?" in stages.check(stages.StageCall(stage="sfy"))[0]
    assets = stages.StageCall(stage="assets", config=str(ROOT / "configs/train/smoke/smoke_assets.yaml"),
                              options={"out": "o"}, overrides=tuple(overrides(["it_training.step=3"])))
    [problem] = stages.check(assets)
    assert "smoke_assets.yaml: it_training.step: unknown key; did you mean 'steps'?" in problem


@pytest.mark.parametrize("name", list(stages.STAGES))
def test_each_stage_names_importable_config_and_result_types(name):
    import pydantic

    from py4.config import resolve_reference

    stage = stages.get_stage(name)
    assert issubclass(stage.config_class(), pydantic.BaseModel), name
    assert isinstance(resolve_reference(stage.result_type, "result_type", f"stage {name}"), type), stage.result_type
    if stage.multi_gpu:  # a training stage: its module trains (run(config, callbacks=()))
        assert callable(stage.module().run), name


def test_result_summary_names_steps_loss_resumption_and_weights():
    # py4 train's last line and a campaign run's stage log share it (the runner's own copy
    # printed only steps and weights).
    from dataclasses import dataclass

    from py4.stages import result_summary

    @dataclass
    class Trained:
        global_step: int
        model_dir: str
        train_loss: float | None = None
        resumed_from: str | None = None

    assert result_summary(Trained(12, "out/sft", 1.23456, "out/sft/checkpoint-8")) == (
        "12 steps, train loss 1.2346, resumed from out/sft/checkpoint-8 -> out/sft")
    assert result_summary(Trained(3, "out/m")) == "3 steps -> out/m"
    assert result_summary("out/dose_8") == "-> out/dose_8"
    assert result_summary({"k": "v" * 500}).endswith("...") and len(result_summary({"k": "v" * 500})) == 200


def test_every_stage_summarises_its_result_in_one_readable_line():
    """A campaign run's stage log says what each stage made, not the result's repr (a corpus
    manifest's dict, a GraftResult(...), an eval's results cut at 200 characters)."""
    from pathlib import Path

    from py4.graft.engine import GraftResult
    from py4.stages import STAGES, result_summary

    assert [name for name, stage in STAGES.items() if stage.summary is None] == []
    corpus = {"name": "py4-corpus-smoke", "docs": 400, "tokens": 346279, "tokenizer": {"name_or_path": "t"}}
    assert result_summary(corpus, "corpus") == result_summary(corpus, "heldout_corpus") == "400 docs, 346279 tokens"
    assert result_summary({**corpus, "docs": 91, "tokens": 80077}, "subset") == "91 docs, 80077 tokens"
    pack = {"kind": "sft_pack", "rows": 200, "total_tokens": 204800, "counts": {"conversations": 460},
            "step_schedule": {"max_steps": 30, "warmup_steps": 1}}
    assert result_summary(pack, "pack") == "sft_pack: 200 rows, 204800 tokens, max_steps 30"
    mix = {"kind": "midtrain_mix", "arm": "control", "total_mix_tokens": 320308, "counts": {"sequences": 626},
           "step_schedule": {"max_steps": 79}}
    assert result_summary(mix, "mix") == "midtrain_mix (control): 320308 tokens, 626 sequences, max_steps 79"
    split = {"certified_rate": 0.5, "pass_at_k": {"1": 0.5}, "outcomes": {"certified": 1, "truncated": 1},
             "mean_reward": 0.25, "per_rule": {}}
    assert result_summary({"policy": {"name": "gold"}, "splits": {"test_heldin": split, "test_heldout": split}},
                          "eval") == ('test_heldin: certified 0.500, pass@k {"1": 0.5}, outcomes {"certified": 1, '
                                      '"truncated": 1}, mean reward +0.250; test_heldout: certified 0.500, pass@k '
                                      '{"1": 0.5}, outcomes {"certified": 1, "truncated": 1}, mean reward +0.250')
    scored = {"all": {"accuracy": 0.349, "ci_low": 0.27, "ci_high": 0.4286}, "heldin": {"accuracy": 0.4},
              "heldout": {"accuracy": 0.3}}
    assert result_summary({"pairs": 126, "summary": scored, "base": {"summary": scored}}, "probes") == (
        "model accuracy 0.349 [0.270, 0.429], held-in 0.400, held-out 0.300; "
        "base accuracy 0.349 [0.270, 0.429], held-in 0.400, held-out 0.300 on 126 pairs")
    assert result_summary({"pairs": 126, "summary": scored, "base": None}, "probes").startswith("model accuracy")
    assert result_summary(7, "sanity_bank") == "train_sanity: 7 problems"
    loss = {"all": {"loss": 8.0437, "scored_tokens": 39921}, "documents": 39, "dropped_as_trained_on": 0}
    assert result_summary(loss, "heldout_loss") == (
        "held-out loss 8.0437 over 39921 tokens (39 documents, 0 dropped as trained on)")
    assert result_summary(Path("out/assets"), "assets") == "-> out/assets"
    assert result_summary(Path("out/dose_8"), "eft_dose") == "-> out/dose_8"
    graft = GraftResult(out=Path("out/graft"), shards=["model-00001-of-00001.safetensors"], total_size=542592,
                        grafted=["a", "b"], copied={"c": "take_it: only in it"}, skipped={}, on_base={},
                        mid_rounded={}, resumed_shards=0, written_shards=1, stream_seconds=0.1,
                        stream_cpu_seconds=0.1, peak_rss_bytes=1, largest_tensor_bytes=1)
    assert result_summary(graft, "graft") == (
        "grafted 2 tensors, copied 1, skipped 0 -> out/graft (1 shard(s), 0.5 MB; 0 resumed)")



def _adding_a_stage_code() -> list[str]:
    """The Python blocks of docs/dev/stages.md's "Adding a stage", in order."""
    import re

    section = (ROOT / "docs/dev/stages.md").read_text(encoding="utf-8").split("## Adding a stage", 1)[1]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_a_toy_stage_is_a_module_an_entry_and_a_config(tmp_path, monkeypatch):
    """docs/dev/stages.md's recipe, followed as written: three files (the module, the STAGES entry,
    a config) give a stage its command, its command line, its checks, its run and a campaign file."""
    import importlib.util
    import sys

    import yaml

    from py4.campaign.spec import load_campaign
    from py4.stage_cli import add_stage_commands

    module_code, entry_code, *_ = _adding_a_stage_code()
    # 1. the module (py4.corpus.toy, as the recipe names it)
    module_file = tmp_path / "toy.py"
    module_file.write_text(module_code)
    spec = importlib.util.spec_from_file_location("py4.corpus.toy", module_file)
    toy = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "py4.corpus.toy", toy)
    spec.loader.exec_module(toy)
    # 2. its entry in STAGES
    monkeypatch.setitem(stages.STAGES, "toy", eval(entry_code.strip().rstrip(","), {"Stage": stages.Stage, "toy": toy}))
    # 3. its config
    config = tmp_path / "toy.yaml"
    config.write_text("greeting: hey\n")

    out = tmp_path / "out"
    call = stages.StageCall(stage="toy", config=str(config), options={"out": str(out), "times": 3},
                            overrides=tuple(overrides(["greeting=hi"])))
    assert stages.argv(call) == ["toy", "--config", str(config), "--out", str(out), "--times", "3", "greeting=hi"]
    assert stages.check(call) == []
    [problem] = stages.check(stages.StageCall(stage="toy", config=str(config), options={"out": "o"},
                                              overrides=tuple(overrides(["greting=x"]))))
    assert "greting: unknown key; did you mean 'greeting'?" in problem

    monkeypatch.setattr(app, "registered_commands", list(app.registered_commands))  # the command goes with the test
    assert add_stage_commands(app) == ["toy"]
    assert _parsed_options(stages.STAGES["toy"], stages.argv(call)) == stages.options_of(call)
    shown = _flat(CliRunner().invoke(app, ["toy", "--help"], env={"COLUMNS": "400"}).output)
    assert all(f"{flag} " in shown and text in shown for flag, text in
               {"--config": "toy YAML (ToyConfig)", "--out": "output folder (greeting.txt)",
                "--times": "how many greetings"}.items()), shown
    result = CliRunner().invoke(app, stages.argv(call))
    assert result.exit_code == 0, result.output
    assert (out / "greeting.txt").read_text() == "hi\n" * 3
    assert f"done toy: 3 greeting(s) -> {out / 'greeting.txt'}" in _flat(result.output)
    assert stages.run_call(stages.StageCall(stage="toy", config=str(config), options={"out": str(out)})) == {
        "lines": 1, "path": str(out / "greeting.txt")}

    campaign = yaml.safe_load((ROOT / "configs/campaign/smoke.yaml").read_text())
    campaign["models"]["tiny"]["files"]["toy"] = str(config)
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(campaign))
    monkeypatch.chdir(ROOT)
    assert load_campaign(tmp_path / "campaign.yaml").models["tiny"].files.get("toy") == str(config)
