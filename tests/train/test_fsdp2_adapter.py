"""A LoRA adapter trained under the campaign's FSDP2 launch is saved, and loads.

With sharded checkpoints the Trainer's own ``save_model`` writes nothing under FSDP, and
PEFT's ``save_pretrained`` selects nothing under FSDP's activation checkpointing (its module
names carry ``_checkpoint_wrapped_module``): ``packed.save_final_model`` gathers the adapter
tensors and writes them as PEFT does. The file is also the launched program
(``… launch THIS_FILE OUT_DIR MODEL DATA``): two LoRA steps on the GLM stand-in, then the save.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _worker(out: str, model_path: str, data_path: str) -> None:
    from peft import LoraConfig, get_peft_model
    from transformers import Trainer, TrainingArguments

    from py4.train import loading, packed

    device = loading.device_settings()
    args = TrainingArguments(output_dir=out, max_steps=2, per_device_train_batch_size=1, use_cpu=True,
                             learning_rate=1e-3, report_to=[], save_strategy="no", remove_unused_columns=False,
                             disable_tqdm=True)
    args.device  # noqa: B018 — the process group, before loading
    source = loading.ModelSource(path=model_path)
    model = get_peft_model(loading.load_model(source, device), LoraConfig(r=4, target_modules=["q_proj", "v_proj"]))
    tokenizer = loading.load_tokenizer(source)
    trainer = Trainer(model=model, args=args, train_dataset=packed.load_packed(data_path),
                      data_collator=packed.PackedBlockCollator(tokenizer.pad_token_id))
    trainer.train()
    assert trainer.is_fsdp_enabled
    packed.save_final_model(trainer, Path(out) / "model")


if __name__ == "__main__":
    _worker(*sys.argv[1:4])
    sys.exit(0)

import pytest  # noqa: E402

pytestmark = [pytest.mark.smoke, pytest.mark.timeout(900)]
REPO = Path(__file__).resolve().parents[2]


def test_lora_adapter_under_fsdp2_is_saved_and_loads(tmp_path):
    import socket

    import yaml
    from peft import PeftModel
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    sys.path.insert(0, str(Path(__file__).parent))
    from train_helpers import pack_text

    from py4.rehearsal.standins import build_standin

    standin = build_standin("glm45", "base", tmp_path / "glm45-base", seed=0)
    docs = [("def g%d(x):\n    return x * %d\n" % (i, i)) * 20 for i in range(8)]
    data = pack_text(tmp_path / "data", standin, docs, seq_len=64, micro_batch=1, warmup=0.25)
    config = yaml.safe_load((REPO / "configs/accelerate/fsdp2.yaml").read_text())
    config["num_processes"], config["use_cpu"] = 2, True
    (tmp_path / "accelerate.yaml").write_text(yaml.safe_dump(config))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.run([sys.executable, "-m", "accelerate.commands.launch", "--config_file",
                           str(tmp_path / "accelerate.yaml"), "--main_process_port", str(port), __file__,
                           str(tmp_path / "run"), str(standin), str(data)],
                          cwd=REPO, env={**os.environ, "OMP_NUM_THREADS": "1"}, capture_output=True, text=True,
                          timeout=800)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    saved = load_file(tmp_path / "run" / "model" / "adapter_model.safetensors")
    assert len(saved) == 2 * 2 * 2  # 2 layers x (q_proj, v_proj) x (lora_A, lora_B)
    assert all(".default." not in name for name in saved)
    model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(standin), tmp_path / "run" / "model")
    loaded = {n: t for n, t in model.state_dict().items() if "lora_B" in n}
    assert len(loaded) == 4 and all(bool((t != 0).any()) for t in loaded.values())  # trained, not the zero init
