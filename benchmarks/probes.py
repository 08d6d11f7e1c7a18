"""Probe scoring throughput: batched shared-prefix scorer vs each member in its own full pass.

    .venv/bin/python benchmarks/probes.py [--model DIR] [--pairs 120] [--batch-size 16] [--repeats 3]
        [--vllm .venv-vllm/bin/vllm [--family gemma4]]

All paths score the same pairs with the same model in the same run, interleaved over
``--repeats`` rounds (the best round of each counts, so a burst of load on a shared machine
hits one round, not one path). Prints pairs/s of:
  naive            each member in its own full forward pass, one at a time (the baseline)
  shared_prefix_1  the prefix once, both members from its cache, one pair at a time
  naive_B          each member its own full sequence, but B pairs (2B rows, right-padded) per call:
                   batching without sharing the prefix, to tell the two gains apart
  shared_prefix_B  the prefix once, B pairs per model call (left-padded prefixes, right-padded spans)
and the ratios to naive (goal >= 1.8x). Default model: the smoke tiny base.

With ``--vllm`` (the ``vllm`` program of ``make vllm-env``) the same weights are also served by a
real ``vllm serve`` (``py4.evaluate.serve``, float32, a 1 GiB KV cache) and scored through py4's
endpoint client, in the same rounds:
  vllm_token_B     prompts as token ids (``--tokenizer``), B pairs per request
  vllm_text_B      prompts as text (the server tokenizes), B pairs per request
The server's start (until it lists the model) is printed beside them.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import socket
import tempfile
import time


def naive_batched(model, tokenizer, pairs: list[dict], batch_size: int) -> list[float]:
    """Span log-probabilities with each member as its own full row, ``batch_size`` pairs per call."""
    import torch

    from py4.probes.score import pair_token_ids

    out: list[float] = []
    pad = tokenizer.pad_token_id or 0
    with torch.no_grad():
        for start in range(0, len(pairs), batch_size):
            rows = []  # (prefix length, full ids)
            for prefix, p4, py3 in (pair_token_ids(tokenizer, p) for p in pairs[start:start + batch_size]):
                rows += [(len(prefix), prefix + p4), (len(prefix), prefix + py3)]
            width = max(len(ids) for _, ids in rows)
            ids = torch.tensor([r + [pad] * (width - len(r)) for _, r in rows])
            mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for _, r in rows])
            lp = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits.float(), -1)
            for i, (n, r) in enumerate(rows):
                out.append(float(sum(lp[i, j - 1, r[j]] for j in range(n, len(r)))))
    return out


def main() -> None:
    from py4.problems.probe_set.build import load_probes
    from py4.probes.evaluate import load_model
    from py4.probes.score import score_pairs, score_pairs_naive

    parser = argparse.ArgumentParser()
    found = sorted(glob.glob("/tmp/py4-smoke-assets-*/base/model.safetensors"))
    parser.add_argument("--model", default=found[-1].rsplit("/", 1)[0] if found else "campaign-out/smoke/assets/base")
    parser.add_argument("--pairs", type=int, default=120)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--vllm", help="vllm program (.venv-vllm/bin/vllm): also score through a real vllm serve")
    parser.add_argument("--family", default="gemma4", help="with --vllm: the parsers' family (plan_server's)")
    args = parser.parse_args()
    probes = load_probes()
    pairs = probes[::max(1, len(probes) // args.pairs)][:args.pairs]
    model, tokenizer = load_model(args.model)
    score_pairs(model, tokenizer, pairs[:4])  # warm-up
    paths = {"naive": lambda: score_pairs_naive(model, tokenizer, pairs),
             "shared_prefix_1": lambda: score_pairs(model, tokenizer, pairs, batch_size=1),
             f"naive_{args.batch_size}": lambda: naive_batched(model, tokenizer, pairs, args.batch_size),
             f"shared_prefix_{args.batch_size}": lambda: score_pairs(model, tokenizer, pairs,
                                                                     batch_size=args.batch_size)}
    with contextlib.ExitStack() as stack:
        if args.vllm:
            paths.update(served_paths(stack, args, tokenizer, pairs))
        best = {name: 0.0 for name in paths}
        for _ in range(args.repeats):
            for name, run in paths.items():
                start = time.perf_counter()
                run()
                best[name] = max(best[name], len(pairs) / (time.perf_counter() - start))
    print(f"model {args.model}, {len(pairs)} pairs, best of {args.repeats} rounds")
    for name, rate in best.items():
        print(f"{name}: {rate:.1f} pairs/s ({rate / best['naive']:.2f}x naive)")


def served_paths(stack: contextlib.ExitStack, args, tokenizer, pairs: list[dict]) -> dict:
    """The endpoint paths against a vllm serve of ``args.model``, started now and stopped with ``stack``."""
    from py4.evaluate.serve import ServeConfig, plan_server, serving
    from py4.probes.endpoint import ProbeEndpoint

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    config = ServeConfig(engine="vllm", executable=args.vllm, port=port, family={"bench": args.family},
                         max_model_len=4096, extra_args=["--dtype", "float32"])
    plan = plan_server(config, args.model, name="bench", model_key="bench")
    log = os.path.join(tempfile.mkdtemp(prefix="probes-bench-"), "server.log")
    server = stack.enter_context(serving(plan, log))
    print(f"vllm serve ready in {server.ready_s:.0f} s (log {log})")
    token = ProbeEndpoint(server.base_url, server.request_model, tokenizer=tokenizer, batch_size=args.batch_size)
    text = ProbeEndpoint(server.base_url, server.request_model, batch_size=args.batch_size)
    for client in (token, text):
        stack.callback(client.close)
        client.score_pairs(pairs[:4])  # warm-up
    return {f"vllm_token_{args.batch_size}": lambda: token.score_pairs(pairs),
            f"vllm_text_{args.batch_size}": lambda: text.score_pairs(pairs)}


if __name__ == "__main__":
    main()
