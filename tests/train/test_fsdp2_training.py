"""Full-parameter training under ``accelerate launch`` with the campaign's FSDP2 config.

The campaign's ``configs/accelerate/fsdp2.yaml`` with only ``num_processes: 2`` and
``use_cpu: true`` changed, two CPU processes over gloo, the campaign's Gemma-4 31B midtraining
config with size-only overrides (model, data, steps, batch, save interval; a larger LR so
that every update survives bf16 rounding), on a tiny Gemma-4 stand-in stored in bf16:

- the final model is saved in the source checkpoint's dtype (bf16), not FSDP's fp32
  master weights, and its weights moved;
- rank 1 never holds the weights before FSDP shards them (its parameters are on
  ``meta`` right after loading) and the trained model equals that of a launch where every
  rank reads the checkpoint;
- the save_steps checkpoints are sharded (DCP folders, no full weights or
  optimizer file), and a run killed after its first checkpoint resumes at the right step
  with the same learning rates and the same final weights as the uninterrupted run;
- FSDP really runs (DTensor parameters, FSDP's non-reentrant activation checkpointing), and
  the Trainer's own gradient checkpointing (use_reentrant False) works in its place.

The file is also the launched program: ``python -m accelerate.commands.launch … THIS_FILE
--facts DIR [--exit-at-step N] CONFIG [key=value …]`` runs the midtrain stage and writes what
each rank saw to DIR/rank<N>.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CAMPAIGN_ACCELERATE = Path("configs/accelerate/fsdp2.yaml")
CAMPAIGN_MIDTRAIN = Path("configs/train/gemma4_31b/midtrain_iso.yaml")
GLM_MIDTRAIN = Path("configs/train/glm45_air/midtrain_iso.yaml")


# ---------------------------------------------------------------- the launched program


def _worker(argv: list[str]) -> None:
    """Run the midtrain stage; record what this rank loaded and how FSDP wrapped the model."""
    import argparse

    from transformers import TrainerCallback

    from py4.config import load_config
    from py4.train import loading, midtrain

    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", required=True)
    parser.add_argument("--exit-at-step", type=int, default=None)
    parser.add_argument("config")
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args(argv)
    rank = int(os.environ.get("RANK", "0"))
    facts: dict = {"rank": rank}
    out = Path(args.facts)
    out.mkdir(parents=True, exist_ok=True)

    def write() -> None:
        (out / f"rank{rank}.json").write_text(json.dumps(facts, indent=2))

    real_load = loading.load_model

    def load_and_record(source, device):
        model = real_load(source, device)
        params = list(model.parameters())
        facts["loaded"] = {  # before the Trainer and FSDP see the model
            "parameters": len(params),
            "on_meta": sum(p.device.type == "meta" for p in params),
            "materialised_bytes": sum(p.numel() * p.element_size() for p in params if p.device.type != "meta"),
        }
        return model

    loading.load_model = load_and_record

    class Record(TrainerCallback):
        def on_train_begin(self, targs, state, control, model=None, **kwargs):
            from accelerate.state import AcceleratorState

            names = {type(m).__name__ for m in model.modules()}
            facts["prepared"] = {
                "distributed_type": str(AcceleratorState().distributed_type),
                "parameter_class": type(next(model.parameters())).__name__,
                "fsdp_modules": sum(type(m).__name__.startswith("FSDP") for m in model.modules()),
                # fully_shard renames a sharded CheckpointWrapper FSDPCheckpointWrapper
                "checkpoint_wrappers": sum(type(m).__name__.endswith("CheckpointWrapper") for m in model.modules()),
                "hf_gradient_checkpointing": bool(getattr(model, "is_gradient_checkpointing", False)),
                "gradient_checkpointing_kwargs": targs.gradient_checkpointing_kwargs,
                "wrapped_classes": sorted(n for n in names if n.startswith("FSDP"))[:4],
            }
            write()

        def on_step_end(self, targs, state, control, **kwargs):
            if args.exit_at_step is not None and state.global_step >= args.exit_at_step:
                facts["exited_at_step"] = state.global_step
                write()
                os._exit(17)  # a kill: no clean-up, no final save

    config = load_config(midtrain.MidtrainConfig, args.config, args.overrides)
    result = midtrain.run(config, callbacks=[Record()])
    facts["result"] = {"global_step": result.global_step, "resumed_from": result.resumed_from}
    write()


if __name__ == "__main__":
    _worker(sys.argv[1:])
    sys.exit(0)


# ---------------------------------------------------------------- the tests

import pytest  # noqa: E402
import torch  # noqa: E402

pytestmark = [pytest.mark.smoke, pytest.mark.timeout(1500)]

REPO = Path(__file__).resolve().parents[2]
MAX_STEPS = 4


def _accelerate_config(tmp: Path, name: str, **fsdp_changes) -> Path:
    """The campaign's FSDP2 config on 2 CPU processes (and the named fsdp_config changes)."""
    import yaml

    data = yaml.safe_load((REPO / CAMPAIGN_ACCELERATE).read_text())
    data["num_processes"], data["use_cpu"] = 2, True
    data["fsdp_config"].update(fsdp_changes)
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _launch(accelerate_config: Path, standin: Path, data: Path, run_dir: Path, facts: Path,
            *extra: str, exit_at: int | None = None,
            stage_config: Path = CAMPAIGN_MIDTRAIN) -> subprocess.CompletedProcess:
    overrides = [f"model.path={standin}", "model.revision=null", f"data.path={data}", "data.schedule=null",
                 f"optimisation.max_steps={MAX_STEPS}", "optimisation.gpus=2", "optimisation.micro_batch=1",
                 "optimisation.grad_accum=1", "optimisation.learning_rate=1e-3", "run.save_steps=2",
                 f"run.output_dir={run_dir}", "run.report_to=[]", "run.progress_bar=false", *extra]
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(accelerate_config),
           "--main_process_port", str(_free_port()), str(Path(__file__).resolve()), "--facts", str(facts),
           *(["--exit-at-step", str(exit_at)] if exit_at is not None else []),
           str(REPO / stage_config), *overrides]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    (run_dir.parent / f"{run_dir.name}.log").write_text(proc.stdout + proc.stderr)
    return proc


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _facts(facts: Path) -> dict[int, dict]:
    return {r: json.loads((facts / f"rank{r}.json").read_text()) for r in (0, 1)}


def _tensors(folder: Path) -> dict:
    from safetensors.torch import load_file

    tensors = {}
    for shard in sorted(folder.glob("*.safetensors")):
        tensors.update(load_file(shard))
    return tensors


def _ok(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    sys.path.insert(0, str(Path(__file__).parent))
    from train_helpers import pack_text

    from py4.rehearsal.standins import build_standin

    root = tmp_path_factory.mktemp("fsdp2")
    standin = build_standin("gemma4", "base", root / "gemma4-base", seed=0)
    docs = [("def f%d(x):\n    return x + %d\n" % (i, i)) * 20 for i in range(24)]
    data = pack_text(root / "data", standin, docs, seq_len=64, micro_batch=1, warmup=0.25)
    return root, standin, data


@pytest.fixture(scope="module")
def reference(setup):
    """The campaign's config on 2 CPU processes, uninterrupted."""
    root, standin, data = setup
    run_dir, facts = root / "reference", root / "reference-facts"
    _ok(_launch(_accelerate_config(root, "campaign"), standin, data, run_dir, facts))
    return run_dir, _facts(facts)


def test_fsdp2_really_shards_and_checkpoints_activations_on_cpu(reference):
    _, facts = reference
    for rank in (0, 1):
        prepared = facts[rank]["prepared"]
        assert prepared["distributed_type"] == "DistributedType.FSDP"
        assert prepared["parameter_class"] == "DTensor"  # sharded by fully_shard, not replicated (DDP)
        assert prepared["fsdp_modules"] > 6  # every decoder layer, embeddings/head, the root
        # FSDP's activation checkpointing wraps each _no_split_modules block: 6 text and 2
        # vision decoder layers and the vision patch embedder …
        assert prepared["checkpoint_wrappers"] == 9
        # … and the Trainer's own is off (the Trainer refuses both at once).
        assert not prepared["hf_gradient_checkpointing"]


def test_final_model_is_saved_in_the_source_dtype_and_trained(setup, reference):
    _, standin, _ = setup
    run_dir, _ = reference
    source, saved = _tensors(standin), _tensors(run_dir / "model")
    assert set(saved) == set(source)
    assert {name: t.dtype for name, t in saved.items()} == {name: t.dtype for name, t in source.items()}
    assert {t.dtype for t in saved.values()} == {torch.bfloat16}
    config = json.loads((run_dir / "model" / "config.json").read_text())
    assert config["dtype"] == "bfloat16" and config["text_config"]["dtype"] == "bfloat16"
    # Training moved the language model (the vision tower sees no image: no gradient).
    language = [n for n in source if ".language_model." in n and n.endswith("proj.weight")]
    assert len(language) == 6 * 7 - 1  # q,k,v,o + gate,up,down; the full-attention layer has no v_proj
    unchanged = [n for n in language if torch.equal(source[n], saved[n])]
    assert not unchanged, unchanged
    manifest = json.loads((run_dir / "run_manifest.json").read_text())
    assert manifest["saved_model"] == {"saved_dtype": "bfloat16", "source_dtype": "bfloat16"}


def test_checkpoints_are_sharded_and_only_the_final_model_is_full(reference):
    run_dir, _ = reference
    for step in (2, 4):
        checkpoint = run_dir / f"checkpoint-{step}"
        names = {p.name for p in checkpoint.iterdir()}
        assert {"pytorch_model_fsdp_0", "optimizer_0", "trainer_state.json", "scheduler.pt"} <= names
        # no gathered copy of the fp32 weights or of the optimizer state on rank 0
        assert not [n for n in names if n.endswith((".safetensors", ".bin")) or n == "optimizer.pt"], names
        assert list((checkpoint / "pytorch_model_fsdp_0").glob("*.distcp"))  # a file per rank
        assert len(list((checkpoint / "optimizer_0").glob("*.distcp"))) == 2


def test_only_rank0_reads_the_weights_and_the_result_is_the_same(setup, reference):
    root, standin, data = setup
    run_dir, facts = reference
    loaded = {rank: facts[rank]["loaded"] for rank in (0, 1)}
    assert loaded[1]["on_meta"] == loaded[1]["parameters"] and loaded[1]["materialised_bytes"] == 0
    assert loaded[0]["on_meta"] == 0 and loaded[0]["materialised_bytes"] > 0
    manifest = json.loads((run_dir / "run_manifest.json").read_text())
    assert manifest["loading"]["weights_read_by"] == "rank 0 only"

    # Every rank reads the checkpoint; the Trainer's gradient checkpointing instead of FSDP's.
    other_dir, other_facts = root / "every-rank", root / "every-rank-facts"
    config = _accelerate_config(root, "every-rank", fsdp_cpu_ram_efficient_loading=False,
                                fsdp_activation_checkpointing=False)
    _ok(_launch(config, standin, data, other_dir, other_facts, "optimisation.gradient_checkpointing=true"))
    other = _facts(other_facts)
    assert other[1]["loaded"]["on_meta"] == 0
    assert other[1]["loaded"]["materialised_bytes"] == loaded[0]["materialised_bytes"]
    prepared = other[0]["prepared"]
    assert prepared["checkpoint_wrappers"] == 0 and prepared["hf_gradient_checkpointing"]
    assert prepared["gradient_checkpointing_kwargs"] == {"use_reentrant": False}
    ours, theirs = _tensors(run_dir / "model"), _tensors(other_dir / "model")
    assert set(ours) == set(theirs)
    different = [n for n in ours if not torch.equal(ours[n], theirs[n])]
    assert not different, different


def test_killed_run_resumes_from_its_sharded_checkpoint(setup, reference):
    root, standin, data = setup
    run_dir, _ = reference
    config = _accelerate_config(root, "campaign")
    killed_dir, facts = root / "killed", root / "killed-facts"
    proc = _launch(config, standin, data, killed_dir, facts, exit_at=3)
    assert proc.returncode != 0
    assert _facts(facts)[0]["exited_at_step"] == 3
    assert (killed_dir / "checkpoint-2" / "trainer_state.json").exists()
    assert not (killed_dir / "model").exists()

    _ok(_launch(config, standin, data, killed_dir, root / "resumed-facts"))
    resumed = _facts(root / "resumed-facts")[0]["result"]
    assert resumed["global_step"] == MAX_STEPS and resumed["resumed_from"].endswith("checkpoint-2")
    manifest = json.loads((killed_dir / "run_manifest.json").read_text())
    reference_trace = json.loads((run_dir / "run_manifest.json").read_text())["lr_trace"]
    assert manifest["lr_trace"]["steps"] == [3, 4]
    assert manifest["lr_trace"]["lr"] == reference_trace["lr"][2:]
    ours, theirs = _tensors(killed_dir / "model"), _tensors(run_dir / "model")
    different = [n for n in ours if not torch.equal(ours[n], theirs[n])]
    assert not different, different


def test_glm_moe_stand_in_trains_under_the_same_launch(setup, tmp_path):
    """GLM-4.5-Air's config (mixture of experts) through the same launch: rank-0 loading, bf16 save.

    One override beyond sizes: ``optim=adamw_torch``, because torchao (adamw_torch_8bit) is not in
    CI's install — and on CPU its compiled 8-bit step fails on the stand-in's uneven shards.
    """
    import sys as _sys

    _sys.path.insert(0, str(Path(__file__).parent))
    from train_helpers import pack_text

    from py4.rehearsal.standins import build_standin

    root, _, _ = setup
    standin = build_standin("glm45", "base", root / "glm45-base", seed=0)
    docs = [("def g%d(x):\n    return x * %d\n" % (i, i)) * 20 for i in range(24)]
    data = pack_text(root / "glm-data", standin, docs, seq_len=64, micro_batch=1, warmup=0.25)
    run_dir, facts = root / "glm", root / "glm-facts"
    _ok(_launch(_accelerate_config(root, "campaign"), standin, data, run_dir, facts,
                "optimisation.optim=adamw_torch", stage_config=GLM_MIDTRAIN))
    seen = _facts(facts)
    assert seen[1]["loaded"]["materialised_bytes"] == 0 and seen[0]["prepared"]["parameter_class"] == "DTensor"
    source, saved = _tensors(standin), _tensors(run_dir / "model")
    # transformers drops the MTP layer (model.layers.<N>.*) on load: the graft handles it
    assert set(saved) < set(source)
    assert all(saved[name].dtype == source[name].dtype == torch.bfloat16 for name in saved)
    experts = [n for n in saved if ".mlp.experts." in n or n.endswith("proj.weight")]
    assert experts and not [n for n in experts if torch.equal(source[n], saved[n])]
