"""DAG expansion of the two campaign configs: run counts per stage, dependencies, commands."""

import sys
from collections import Counter
from pathlib import Path

import pytest

from py4.campaign.dag import DagError, Node, build_dag, select, topological
from py4.campaign.spec import load_campaign
from py4.config import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def makefile_vllm_program() -> str:
    """The ``vllm`` program of the environment ``make vllm-env`` builds, from the Makefile's variables."""
    import re

    variables = dict(re.findall(r"^([A-Z_]+) [:?]?= *(\S+)", (ROOT / "Makefile").read_text(), re.MULTILINE))
    program = "$(VLLM_BIN)/vllm"
    while "$(" in program:
        program = re.sub(r"\$\(([A-Z_]+)\)", lambda m: variables[m.group(1)], program)
    return program


@pytest.fixture(scope="module")
def python4():
    return build_dag(load_campaign(ROOT / "configs/campaign/python4.yaml"))


@pytest.fixture(scope="module")
def smoke():
    return build_dag(load_campaign(ROOT / "configs/campaign/smoke.yaml"))


def test_python4_counts(python4):
    counts = Counter(n.stage for n in python4)
    # 3 models x 3 arms = 9 chains; doses 256/1,024 + the 2,048 matrix on each chat parent (27),
    # + the EFT-512 warm start; GRPO in two resumed segments (32 + 32).
    assert counts == {"corpus": 1, "subset": 3, "pack": 3, "mix": 9, "midtrain": 9, "sft": 9, "graft": 9,
                      "eft_dose": 28, "eft": 28, "grpo": 2,
                      # every model: 9 grafts + 9 parents (dose 0) + 27 EFT models + warm start + 7 ladder + final
                      "eval": 9 + 9 + 27 + 1 + 7 + 1,
                      # probes: those models + 3 bases + 9 midtrained arms
                      "probes": 3 + 9 + 9 + 9 + 27 + 1 + 7 + 1}


def test_python4_glm_prop_arm_uses_the_whole_corpus(python4):
    ids = {n.id: n for n in python4}
    assert "corpus_prop_glm45_air" not in ids
    assert ids["glm45_air/prop/mix"].inputs == ["corpus"]
    assert ids["gemma4_12b/prop/mix"].inputs == ["corpus_prop_gemma4_12b"]


def test_python4_dependencies_and_commands(python4):
    ids = {n.id: n for n in python4}
    order = [n.id for n in python4]
    for n in python4:  # topological: every input comes earlier
        assert all(order.index(i) < order.index(n.id) for i in n.inputs), n.id
    assert ids["gemma4_31b/prop/graft"].inputs == ["gemma4_31b/prop/midtrain"]  # graft onto midtrain, not SFT
    assert ids["gemma4_12b/control/mix"].inputs == ["gemma4_12b/iso/mix"]  # token-matched to iso
    assert ids["gemma4_12b/iso/eft_dose_256"].inputs == ["gemma4_12b/iso/sft", "gemma4_12b/iso/eft_dose_1024"]
    eft2048 = ids["glm45_air/iso/eft_2048"]
    assert "optimisation.epochs=4" in eft2048.argv and "data.allow_held_out_rules=true" in eft2048.argv
    assert ids["glm45_air/iso/eft_1024"].gpus == 4 and ids["gemma4_12b/iso/eft_1024"].gpus == 1
    assert ids["gemma4_31b/prop/midtrain"].gpus == 8
    # accelerate of this interpreter, never a bare `accelerate` from PATH
    assert ids["gemma4_31b/prop/midtrain"].command.startswith(
        f"{sys.executable} -m accelerate.commands.launch --config_file configs/accelerate/fsdp2.yaml "
        "--num_processes 8 -m py4 train midtrain --config ")
    assert ids["gemma4_12b/iso/eft_1024"].command.startswith("py4 train eft --config configs/train/gemma4_12b/eft.yaml")
    assert ids["gemma4_31b/prop/grpo_to32"].argv[-1] == "grpo.stop_at_step=32"
    grpo = ids["gemma4_31b/prop/grpo"]  # one training process; the node's 8 GPUs also hold vLLM
    assert grpo.gpus == 1 and grpo.meta.reserve_gpus == 8 and grpo.command.startswith("py4 train grpo ")
    assert ids["gemma4_31b/prop/grpo"].inputs == ["gemma4_31b/prop/grpo_to32"]
    assert ids["gemma4_31b/prop/warmstart"].inputs == ["gemma4_31b/prop/graft", "gemma4_31b/prop/eft_dose_512"]
    assert ids["eval:gemma4_12b/iso/eft_256"].command.startswith("py4 eval --out runs/campaign/eval/")
    assert "test_heldin,test_heldout" in ids["eval:gemma4_12b/iso/eft_256"].argv


def test_smoke_counts_and_sanity(smoke):
    counts = Counter(n.stage for n in smoke)
    assert counts == {"assets": 1, "corpus": 1, "subset": 2, "pack": 1, "mix": 3, "midtrain": 3, "sft": 3,
                      "graft": 3, "eft_dose": 7, "eft": 7, "grpo": 2, "sanity_bank": 1,
                      "eval": 2 * (3 + 3 + 6 + 1 + 1 + 1),
                      "probes": 1 + 3 + 3 + 3 + 6 + 1 + 1 + 1, "heldout_corpus": 1, "heldout_loss": 1 + 3}
    evals = {n.id: n for n in smoke if n.stage == "eval"}
    for node_id, n in evals.items():
        if node_id.endswith(":train_sanity"):  # its own run: greedy, one sample, the sanity bank
            assert n.argv[n.argv.index("--split") + 1] == "train_sanity" and "sanity_bank" in n.inputs
            assert n.argv[-3:] == ["sampling.temperature=0", "sampling.samples=1",
                                   f"bank_dir={n.run_dir.split('/eval/')[0]}/sanity_bank"]
            assert evals[node_id.removesuffix(":train_sanity")].meta.model_node == n.meta.model_node
        else:
            assert n.argv[n.argv.index("--split") + 1] == "test_heldin,test_heldout" and "sanity_bank" not in n.inputs
            assert "sampling.samples=2" in n.argv and f"{node_id}:train_sanity" in evals
        assert n.gpus == 0
    assert all(n.run_dir.startswith("campaign-out/smoke") for n in smoke)


def test_eft_overrides_reach_the_dose_runs_and_the_warm_start_has_its_own():
    spec = load_campaign(ROOT / "configs/campaign/smoke.yaml")
    nodes = {n.id: n for n in build_dag(spec)}
    for dose in (8, 32):
        argv = nodes[f"tiny/iso/eft_{dose}"].argv
        assert argv[-len(spec.eft.overrides):] == spec.eft.overrides
    warm = nodes["tiny/prop/warmstart"].argv
    assert warm[-len(spec.eft.warmstart_overrides):] == spec.eft.warmstart_overrides
    assert not [o for o in spec.eft.overrides if o.startswith("lora.") and o in warm]  # the table's LoRA
    same = {n.id: n for n in build_dag(load_campaign(ROOT / "configs/campaign/smoke.yaml",
                                                     ["eft.warmstart_overrides=null"]))}
    assert same["tiny/prop/warmstart"].argv[-len(spec.eft.overrides):] == spec.eft.overrides


def test_out_dir_override_moves_every_run(tmp_path):
    spec = load_campaign(ROOT / "configs/campaign/smoke.yaml", [f"out_dir={tmp_path}"])
    for n in build_dag(spec):
        assert n.run_dir.startswith(str(tmp_path))
        assert "campaign-out/smoke" not in n.command


def test_select_and_errors():
    a, b = Node(id="a", stage="x", run_dir="a"), Node(id="b", stage="x", run_dir="b", inputs=["a"])
    assert [n.id for n in topological([b, a])] == ["a", "b"]
    assert [n.id for n in select([a, b], "b")] == ["b"]
    with pytest.raises(DagError, match="unknown run 'zz'"):
        topological([Node(id="c", stage="x", run_dir="c", inputs=["zz"])])
    with pytest.raises(DagError, match="cycle"):
        topological([Node(id="c", stage="x", run_dir="c", inputs=["d"]),
                     Node(id="d", stage="x", run_dir="d", inputs=["c"])])


def test_bad_spec_is_a_clear_error(tmp_path):
    bad = tmp_path / "c.yaml"
    bad.write_text((ROOT / "configs/campaign/smoke.yaml").read_text().replace("model: tiny", "model: huge"))
    with pytest.raises(ConfigError, match="grpo.model"):
        load_campaign(bad)


def test_python4_serves_with_the_vllm_that_make_vllm_env_builds():
    """The campaign's evaluation servers start the ``vllm`` of the environment the repository builds
    (``make vllm-env``; docs/training.md installs the same folder on a GPU node), not a folder no
    command creates."""
    program = makefile_vllm_program()
    assert program == ".venv-vllm/bin/vllm"
    assert load_campaign(ROOT / "configs/campaign/python4.yaml").evaluation.serve.executable == program


def test_python4_evaluations_go_through_a_server_per_model(python4):
    """Defect 9: no campaign evaluation runs the local policy (fp32 on CPU); each has its server."""
    evals = [n for n in python4 if n.stage == "eval"]
    assert len(evals) == 54 and all(n.server is not None for n in evals)
    for n in evals:
        argv, server = n.argv, n.server
        assert "--endpoint" in argv and argv[argv.index("--endpoint") + 1] == server.base_url
        sent = argv[argv.index("--model") + 1]
        assert sent == server.request_model and "/" not in sent  # the served name, never a weights path
        assert server.argv[:3] == [makefile_vllm_program(), "serve", n.meta.base or n.meta.weights]
        family = {"gemma4_12b": "gemma4", "gemma4_31b": "gemma4", "glm45_air": "glm45"}[n.meta.model]
        flags = " ".join(server.argv)
        assert f"--enable-auto-tool-choice --tool-call-parser {family} --reasoning-parser {family}" in flags
        assert f"policy.family={family}" in argv and n.gpus == (4 if family == "glm45" else 1)
        # the folder served (an adapter, not its base): the record's model and the trackers' run
        assert f"policy.weights={n.meta.weights}" in argv
        if n.meta.base:  # an adapter: a LoRA module on its base, served under the name the client sends
            assert f"--enable-lora --max-lora-rank 64 --lora-modules {sent}={n.meta.weights}" in flags
        else:
            assert "--enable-lora" not in flags and f"--served-model-name {sent} " in flags
    ids = {n.id: n for n in evals}
    assert ids["eval:gemma4_12b/iso/eft_256"].meta.base == "runs/campaign/gemma4_12b/iso/sft/model"
    grpo8 = ids["eval:gemma4_31b/prop/grpo@8"].meta
    assert (grpo8.base, grpo8.weights) == ("runs/campaign/gemma4_31b/prop/graft",
                                           "runs/campaign/gemma4_31b/prop/grpo/checkpoint-8")
    assert ids["eval:glm45_air/prop/graft"].meta.base is None and ids["eval:glm45_air/prop/sft"].meta.base is None


def test_gemma4_evaluations_are_served_as_their_language_model_alone(python4):
    """vLLM's --language-model-only, chosen per model in the campaign config, and recorded in the plan."""
    evals = [n for n in python4 if n.stage == "eval"]
    for n in evals:
        gemma = n.meta.model.startswith("gemma4")
        assert ("--language-model-only" in n.server.argv) is gemma
        assert n.server.language_model_only is gemma and n.to_json()["server"]["language_model_only"] is gemma
    text = build_dag(load_campaign(ROOT / "configs/campaign/python4.yaml",
                                   ["evaluation.serve.language_model_only={}"]))
    assert not any("--language-model-only" in n.server.argv for n in text if n.stage == "eval")
    with pytest.raises(ConfigError, match=r"evaluation.serve.language_model_only.glm: 'glm' is not one of the models"):
        load_campaign(ROOT / "configs/campaign/python4.yaml", ["evaluation.serve.language_model_only={glm: true}"])


def test_serving_settings_are_checked_with_the_campaign(tmp_path):
    with pytest.raises(ConfigError, match=r"evaluation.serve.family: no family for model 'glm45_air'"):
        load_campaign(ROOT / "configs/campaign/python4.yaml",
                      ["evaluation.serve.family={gemma4_12b: gemma4, gemma4_31b: gemma4}"])
    with pytest.raises(ConfigError, match=r"evaluation.serve.tensor_parallel.glm: 'glm' is not one of the models"):
        load_campaign(ROOT / "configs/campaign/python4.yaml", ["evaluation.serve.tensor_parallel={glm: 4}"])
    cpu = build_dag(load_campaign(ROOT / "configs/campaign/python4.yaml", ["evaluation.serve.engine=transformers"]))
    graft = next(n for n in cpu if n.id == "eval:gemma4_12b/iso/graft")
    assert graft.server.argv[:5] == [sys.executable, "-m", "transformers.cli.transformers", "serve",
                                     "runs/campaign/eval/gemma4_12b__iso__graft/served_model"]
    assert graft.argv[graft.argv.index("--model") + 1] == "runs/campaign/eval/gemma4_12b__iso__graft/served_model"


def test_a_dag_error_is_a_user_error_for_every_command():
    # One base, not a conversion per command (campaign plan/run, demo, rehearse, slurm jobs).
    from py4.errors import Py4Error

    assert issubclass(DagError, Py4Error) and issubclass(DagError, ValueError)


def _processes(launch: list[str]) -> int:
    """``--num_processes`` of an accelerate launch command."""
    return int(launch[launch.index("--num_processes") + 1])


def _launch_config(launch: list[str]) -> Path:
    return ROOT / launch[launch.index("--config_file") + 1]


@pytest.mark.parametrize("gpus", [2, 4, 6])
def test_a_stage_override_of_gpus_is_the_runs_gpus_slurm_request_and_process_count(gpus):
    # stage_overrides reach every run of the stage's command line, so they must reach its GPU count
    # (the plan, the Slurm request, accelerate's process count) too; left out of it, a count with no
    # configs/accelerate/fsdp2_<N>gpu.yaml (2, 6) would launch with a missing file.
    from py4.campaign.slurm import gpu_request
    from py4.stages import load

    spec = load_campaign(ROOT / "configs/campaign/python4.yaml",
                         [f"stage_overrides.midtrain=[optimisation.gpus={gpus}]",
                          f"stage_overrides.mix=[schedule.gpus={gpus}]",  # the midtrain schedules' global batch
                          f"stage_overrides.eft=[optimisation.gpus={gpus}]"])
    runs = [n for n in build_dag(spec) if n.stage in ("midtrain", "eft")]
    assert len(runs) == 9 + 28 and {n.gpus for n in runs} == {gpus}  # the configs say 1, 4 and 8
    for n in runs:
        assert load(n.call).optimisation.gpus == gpus and f"optimisation.gpus={gpus}" in n.argv
        assert _processes(n.launch_argv) == gpus and _launch_config(n.launch_argv).is_file(), n.command
        assert gpu_request(n, spec)[0] == gpus


def test_every_training_run_launches_as_many_processes_as_its_stage_config_says(python4):
    from py4.stages import load

    trained = [n for n in python4 if n.stage in ("midtrain", "sft", "eft", "grpo")]
    assert len(trained) == 9 + 9 + 28 + 2
    for n in trained:
        gpus = load(n.call).optimisation.gpus
        assert n.gpus == gpus, n.id
        if gpus == 1:  # one process: py4 itself
            assert n.launch_argv is None and n.command.startswith(f"py4 train {n.stage} "), n.id
        else:
            assert _processes(n.launch_argv) == gpus and _launch_config(n.launch_argv).is_file(), n.command


def test_the_fsdp2_launch_config_leaves_the_process_count_to_the_launch():
    # One file for every GPU count: a launch without --num_processes is refused by accelerate
    # (num_processes -1), so a run never takes its process count from the file.
    import yaml

    config = yaml.safe_load((ROOT / "configs/accelerate/fsdp2.yaml").read_text())
    assert config["num_processes"] == -1 and config["fsdp_config"]["fsdp_version"] == 2
    assert sorted(p.name for p in (ROOT / "configs/accelerate").glob("*.yaml")) == ["fsdp2.yaml"]


def test_a_training_run_whose_global_batch_is_not_its_schedules_is_refused_when_the_dag_is_built():
    # The SFT pack counts its steps for 1 x 32 x 8 = 256 sequences (Gemma-4 31B); SFT on 4 GPUs would
    # step 128 at a time and stop after the schedule's steps having seen half the data: comparing
    # max_steps alone would let it plan and run.
    with pytest.raises(DagError) as caught:
        build_dag(load_campaign(ROOT / "configs/campaign/python4.yaml", ["stage_overrides.sft=[optimisation.gpus=4]"]))
    message = str(caught.value)
    assert ("run gemma4_31b/iso/sft: configs/train/gemma4_31b/sft.yaml: optimisation trains 128 sequences per step "
            "(micro_batch 1 × grad_accum 32 × gpus 4), but run gemma4_31b/sft_data "
            "(configs/data/campaign/sft_gemma4_31b.yaml) counts its step schedule for 256") in message
    assert "gemma4_12b" not in message  # its SFT is on 4 GPUs already: 2 x 32 x 4 both sides
    # The same change on both sides plans.
    build_dag(load_campaign(ROOT / "configs/campaign/python4.yaml",
                            ["stage_overrides.sft=[optimisation.gpus=4]", "stage_overrides.pack=[schedule.gpus=4]"]))


def test_without_check_a_run_keeps_its_gpus_when_only_its_packs_config_does_not_load():
    # status builds the DAG without checks; the SFT runs' own configs load, so their GPU counts (and
    # launch lines) must not be lost because the pack that writes their schedule does not load.
    from py4.campaign.dag import unresolved_training_runs

    nodes = build_dag(load_campaign(ROOT / "configs/campaign/python4.yaml", ["stage_overrides.pack=[no_such_key=1]"]),
                      check=False)
    sft = [n for n in nodes if n.stage == "sft"]
    assert {n.id: n.gpus for n in sft if n.meta.model == "gemma4_31b"} == {
        f"gemma4_31b/{arm}/sft": 8 for arm in ("control", "iso", "prop")}
    assert unresolved_training_runs(nodes) == []  # the training runs' configs all load
    with pytest.raises(DagError, match="no_such_key"):
        build_dag(load_campaign(ROOT / "configs/campaign/python4.yaml", ["stage_overrides.pack=[no_such_key=1]"]))


def test_a_training_run_on_no_gpu_is_refused_when_the_dag_is_built():
    with pytest.raises(DagError, match=r"configs/train/gemma4_12b/sft.yaml: optimisation.gpus is 0; a training run "
                                       r"needs at least 1"):
        build_dag(load_campaign(ROOT / "configs/campaign/python4.yaml", ["stage_overrides.sft=[optimisation.gpus=0]"]))


def test_a_smoke_training_run_on_several_gpus_is_refused_when_the_dag_is_built():
    # Smoke scale runs each training stage in one process on the CPU (no launch): refused at plan
    # time, not at the stage's world-size guard after the runs before it.
    with pytest.raises(DagError, match=r"configs/train/smoke/midtrain.yaml: optimisation.gpus is 2, but at smoke "
                                       r"scale a training run is one CPU process"):
        build_dag(load_campaign(ROOT / "configs/campaign/smoke.yaml",
                                ["stage_overrides.midtrain=[optimisation.gpus=2]"]))


def test_several_gpus_for_a_stage_that_is_not_multi_gpu_are_refused(monkeypatch):
    # A stage that cannot be started as several processes cannot train on several GPUs (nor plan as
    # one process asking Slurm for 4 GPUs).
    import dataclasses

    from py4 import stages

    monkeypatch.setitem(stages.STAGES, "sft", dataclasses.replace(stages.STAGES["sft"], multi_gpu=False))
    with pytest.raises(DagError, match=r"optimisation.gpus is 4, but stage sft does not run as 4 processes"):
        build_dag(load_campaign(ROOT / "configs/campaign/python4.yaml"))


def test_the_smoke_sft_data_config_reads_what_the_smoke_campaign_gives_its_pack(smoke):
    # configs/data/smoke/sft.yaml run by hand after `make demo` (docs/data.md) reads the instruction
    # set the smoke assets write, as the campaign's pack does (it named a folder nothing writes).
    from py4.stages import StageCall, load

    node = next(n for n in smoke if n.id == "tiny/sft_data")
    config = load(StageCall(stage="pack", config=node.config))
    given = {o.key: o.value for o in node.overrides}
    assert (config.instructions.path, config.tokenizer) == (given["instructions.path"], given["tokenizer"])


def test_the_smoke_dose_keeps_its_configs_instruction_filter(smoke):
    # The DAG gives the smoke doses the assets' instruction folder; the config's filter (none: the
    # set's tool transcripts are kept) stays: a plain folder would reset it to Dolci's filter.
    from py4.stages import load

    for node in (n for n in smoke if n.stage == "eft_dose"):
        instructions = load(node.call).replay_settings.instructions
        assert (instructions.path, instructions.filter) == ("campaign-out/smoke/assets/instructions", "none")
