#!/usr/bin/env bash
# The GPU check (docs/rehearsal.md, "GPU check"): real-width layer probes, the LoRA sync drift,
# FSDP2 save and resume and two GRPO steps on one GPU in the trainer environment; one JSON per
# probe and a go/no-go line per campaign stage in $OUT (at most 8 files).
#
# On the device (no internet; torch, transformers, accelerate, peft preinstalled), from the repository root:
#   bash scripts/gpu_check.sh                 # every default probe, BUDGET_S=520 in all
#   bash scripts/gpu_check.sh --tiny          # the same paths at tiny sizes (CPU or GPU)
#   bash scripts/gpu_check.sh --steps layers_gemma4_31b,lora_drift
# On a machine with internet, beforehand (wheels for the device's Python, no dependencies):
#   bash scripts/gpu_check.sh --fetch-wheels [PYTHON_VERSION, default 3.12]
#
# Environment: OUT (report folder; default runs/gpu_check), WHEELS (carried wheels; default
# gpu_wheels), WORK (models, runs and logs, GBs; default /tmp/py4_gpu_check), DEPS (where missing
# packages are installed; default /tmp/py4_gpu_deps),
# PYTHON (default python3), BUDGET_S (default 520).
set -uo pipefail
cd "$(dirname "$0")/.."

WHEELS=${WHEELS:-gpu_wheels}
DEPS=${DEPS:-/tmp/py4_gpu_deps}
PY=${PYTHON:-python3}
OUT=${OUT:-runs/gpu_check}
WORK=${WORK:-/tmp/py4_gpu_check}  # models and runs (GBs): outside $OUT, which the device tool brings back
BUDGET_S=${BUDGET_S:-520}
# The trainer environment's pure-Python packages (envs/vllm-common.txt) and py4's own needs that the
# device image lacks or has at another version: ~7 MB of wheels (huggingface_hub at the trainer
# environment's version, which datasets 5.2 needs). transformers stays the device's (5.17.0, the
# trainer environment's pin); torch, pyarrow (55 MB: not carried), tokenizers, safetensors are the image's.
PINS=(accelerate==1.16.0 peft==0.21.2 trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19
      pydantic==2.14.4 pydantic_core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 datasketch==2.0.0
      huggingface_hub==1.33.0)

if [[ "${1:-}" == "--fetch-wheels" ]]; then
    pyver=${2:-3.12}
    mkdir -p "$WHEELS"
    "$PY" -m pip download --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp \
        --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
        -d "$WHEELS" "${PINS[@]}" || exit 2
    ls -l "$WHEELS" | awk 'NR > 1 {printf "%8.1f MB  %s\n", $5 / 1e6, $9}'
    du -sh "$WHEELS"  # the device tool carries at most 64 MiB in all: carry only what the device lacks
    exit 0
fi

mkdir -p "$OUT" "$DEPS" "$WORK"
# Install from the carried wheels only what is missing or at another version than pinned; the
# device's own torch (and anything already right) stays. Unavailable wheels are reported, not fatal:
# the report records every package version the checks ran with.
"$PY" - "$WHEELS" "$DEPS" "${PINS[@]}" <<'EOF' 2>&1 | tee "$WORK/install.log"
import glob, importlib.metadata as md, os, re, subprocess, sys
wheels, target, pins = sys.argv[1], sys.argv[2], sys.argv[3:]
for pin in pins:
    name, version = pin.split("==")
    try:
        have = md.version(name)
    except md.PackageNotFoundError:
        have = None
    if have == version:
        print(f"{name} {have}: preinstalled"); continue
    norm = lambda text: re.sub(r"[-_.]+", "_", text).lower()
    found = [w for w in glob.glob(f"{wheels}/*.whl")
             if norm(os.path.basename(w)).startswith(norm(f"{name}-{version}") + "_")]
    if not found:
        state = f"have {have}, want {version}" if have else f"MISSING (want {version})"
        print(f"{name}: {state}, no wheel in {wheels}"); continue
    rc = subprocess.call([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                          "--target", target, "--upgrade", found[0]])
    print(f"{name}: {'installed' if rc == 0 else 'FAILED to install'} {version} (had {have})")
EOF

export PYTHONPATH="$PWD/src:$DEPS${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
"$PY" -c 'import sys, torch, transformers; print("python", sys.version.split()[0], "torch", torch.__version__,
  "cuda", torch.cuda.is_available(), "transformers", transformers.__version__)' | tee -a "$WORK/install.log"
"$PY" -m py4.rehearsal.gpu_check --out "$OUT" --work "$WORK" --budget-s "$BUDGET_S" "$@"
rc=$?
cat "$OUT/GPU_CHECK_REPORT.md" 2>/dev/null | cut -c1-2000
exit $rc
