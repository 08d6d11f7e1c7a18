"""Loss of a model on held-out Python-4 documents (`py4 smoke heldout-loss`).

The campaign's evidence that midtraining learned something beyond probes: the mean
next-token loss on Python-4 documents none of the arms trained on. A Python-4 arm's loss
must be below the control arm's (docs/campaign.md, "The smoke study").

The documents come from a corpus folder (``shards/*.jsonl``, ``py4 corpus generate``); any
document whose sha256 (or text) is also in an ``exclude`` corpus — the training corpus — is
dropped, so nothing scored was trained on. Documents are read in order, each with ``<bos>``,
concatenated and cut into blocks of ``block`` tokens (one causal sequence per block, as the
smoke mixes pack them), up to ``max_tokens``. Besides the overall loss, the loss over the
documents of held-in and of held-out rules (a document counts as held-out when any rule it
teaches is held out).
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

from py4.errors import FileFormatError, Py4Error
from py4.fileio import iter_jsonl


def read_documents(corpus_dir: str | Path) -> list[dict[str, Any]]:
    """Every document of a corpus folder, in shard order.

    Raises FileFormatError (a user's error, py4.errors) naming the folder when it has no
    shards, or the shard, line and field of a malformed document.
    """
    shards = sorted(Path(corpus_dir).glob("shards/*.jsonl"))
    if not shards:
        raise FileFormatError(f"{corpus_dir}: no shards/*.jsonl (expected a `py4 corpus generate` folder)")
    return [doc for shard in shards for _, doc in iter_jsonl(shard, fields={"text": str})]


def _key(doc: dict[str, Any]) -> str:
    return doc.get("sha256") or hashlib.sha256(doc["text"].encode("utf-8")).hexdigest()


def held_out_documents(docs_dir: str | Path, exclude_dirs: list[str | Path]) -> tuple[list[dict], int]:
    """The documents of ``docs_dir`` not in any ``exclude_dirs`` corpus, and how many were dropped."""
    seen: set[str] = set()
    texts: set[str] = set()
    for other in exclude_dirs:
        for doc in read_documents(other):
            seen.add(_key(doc))
            texts.add(doc["text"])
    docs = read_documents(docs_dir)
    kept = [d for d in docs if _key(d) not in seen and d["text"] not in texts]
    return kept, len(docs) - len(kept)


def document_loss(model, tokenizer, docs: list[dict], max_tokens: int, block: int = 512) -> dict[str, Any]:
    """Mean next-token loss (nats) over ``docs``, overall and by held-in / held-out rule documents."""
    import torch

    from py4.lang.rules import DEFAULT_HELD_OUT
    from py4.run_progress import report

    held_out = set(DEFAULT_HELD_OUT)
    ids: list[int] = []
    group: list[str] = []  # per token: the group of the document it belongs to
    used = 0
    for doc in docs:
        if len(ids) >= max_tokens:
            break
        toks = tokenizer(doc["text"], add_special_tokens=False)["input_ids"]
        toks = ([tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []) + toks
        toks = toks[: max_tokens - len(ids)]
        name = "heldout" if set(doc.get("rules", [])) & held_out else "heldin"
        ids += toks
        group += [name] * len(toks)
        used += 1
    sums = {"all": 0.0, "heldin": 0.0, "heldout": 0.0}
    counts = {"all": 0, "heldin": 0, "heldout": 0}
    model.eval()
    with torch.no_grad():
        for start in range(0, len(ids), block):
            chunk = ids[start:start + block]
            if len(chunk) < 2:
                continue
            logits = model(input_ids=torch.tensor([chunk])).logits[0, :-1].float()
            nll = torch.nn.functional.cross_entropy(logits, torch.tensor(chunk[1:]), reduction="none").tolist()
            for value, name in zip(nll, group[start + 1:start + len(chunk)], strict=True):
                for g in ("all", name):
                    sums[g] += value
                    counts[g] += 1
            report("tokens", min(start + block, len(ids)), len(ids))
    out: dict[str, Any] = {"documents": used, "tokens": len(ids)}
    for g in sums:
        loss = sums[g] / counts[g] if counts[g] else float("nan")
        out[g] = {"loss": loss, "perplexity": math.exp(loss) if counts[g] else float("nan"),
                  "scored_tokens": counts[g]}
    return out


def heldout_loss(model_dir: str, docs_dir: str, exclude_dirs: list[str], max_tokens: int, out_dir: str | Path) -> dict:
    """Score ``model_dir`` on the held-out documents; write ``out_dir/results.json``; return it.

    ``out_dir`` is a run folder: its ``run_manifest.json`` records the code, command line and
    library versions that scored, with the model and documents as inputs."""
    from py4.runs import RunRecorder

    with RunRecorder(out_dir, None, kind="heldout_loss") as recorder:
        recorder.add_input("model", path=model_dir, hash_content=False)
        recorder.add_input("docs", path=docs_dir)
        result = _score(model_dir, docs_dir, exclude_dirs, max_tokens, out_dir)
        recorder.add_output("results", Path(out_dir) / "results.json")
    return result


def _score(model_dir: str, docs_dir: str, exclude_dirs: list[str], max_tokens: int, out_dir: str | Path) -> dict:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from py4.runs import atomic_write_json

    docs, dropped = held_out_documents(docs_dir, exclude_dirs)
    if not docs:
        raise Py4Error(f"{docs_dir}: every document is also in {', '.join(map(str, exclude_dirs))}: "
                         "nothing held out to score (generate the held-out corpus with another seed)")
    from py4.threads import use_cpu_threads

    use_cpu_threads()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    result = {"model": model_dir, "docs_dir": str(docs_dir), "exclude": [str(e) for e in exclude_dirs],
              "dropped_as_trained_on": dropped, "max_tokens": max_tokens,
              **document_loss(model, tokenizer, docs, max_tokens)}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "results.json", result)
    return result
