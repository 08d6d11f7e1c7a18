"""py4's evaluation and probes against a real ``vllm serve`` (the tier's quick part; CI runs it).

The server is the campaign's command line for an adapter node (conftest.py). ``py4 eval`` runs one
episode through vLLM's Gemma-4 tool-call parser and scores it; ``py4 eval probes --endpoint``
scores pairs from vLLM's prompt log-probabilities, in token mode and in text mode, compared with
py4's local scoring of the same weights.
"""

from __future__ import annotations

import json

import httpx
import pytest

from vllm_tier import LIMIT_SEED, SPLIT, caller_prompts, py4

pytestmark = pytest.mark.vllm

PROBE_LIMIT = 120  # every k-th pair (k = 10 of 1,260): every rule and context, and empty prefixes
TOLERANCE = 1e-4


def test_served_episode_calls_run_code_and_submit_through_vllms_parser_and_is_scored(served, problem, base_model,
                                                                                       tmp_path):
    from transformers import AutoTokenizer

    # The prompt vLLM renders is one the adapter was trained on (else the test would rest on luck).
    from py4.episodes import TOOL_SCHEMAS, EpisodeConfig
    from py4.episodes.endpoint import to_openai_messages
    from py4.episodes.environment import initial_messages

    messages = to_openai_messages(initial_messages(problem, EpisodeConfig(enable_thinking=False)))
    root = served.base_url.removesuffix("/v1")
    rendered = httpx.post(f"{root}/tokenize", timeout=60, json={
        "model": served.request_model, "messages": messages, "tools": TOOL_SCHEMAS, "add_generation_prompt": True,
        "chat_template_kwargs": {"enable_thinking": False}}).json()["tokens"]
    # and exactly the one transformers and TRL render in training (string contents, not content parts)
    assert rendered == caller_prompts(AutoTokenizer.from_pretrained(base_model), problem, parts=False)[0]

    out = tmp_path / "eval"
    done = py4("eval", "episodes", "--endpoint", served.base_url, "--model", served.request_model,
               "--split", SPLIT, "--limit", "1", "--temperature", "0", "--out", str(out), "--no-progress",
               f"limit_seed={LIMIT_SEED}", "policy.family=gemma4", "episode.enable_thinking=false")
    assert done.returncode == 0, done.stderr[-3000:]

    [record] = [json.loads(line) for line in (out / "transcripts.jsonl").read_text().splitlines()]
    assert record["problem_id"] == problem.id
    turn = record["turns"][0]
    # vLLM's gemma4 parser returned both calls as OpenAI tool_calls (not as text for py4 to read)
    assert [c["function"]["name"] for c in turn["api_tool_calls"]] == ["run_code", "submit"]
    assert [json.loads(c["function"]["arguments"]) for c in turn["api_tool_calls"]] == [{"code": problem.gold}] * 2
    assert record["outcome"] == "certified" and record["malformed_calls"] == 0
    results = json.loads((out / "results.json").read_text())
    assert results["splits"][SPLIT]["certified_rate"] == 1.0
    assert results["policy"]["name"] == "endpoint" and results["policy"]["endpoint"] == served.base_url


@pytest.fixture(scope="module")
def base_model(caller):
    """The model folder served as ``<name>.base`` (the adapter's base)."""
    return caller[0]


def _scores(run) -> dict[str, dict]:
    return {row["id"]: row for row in json.loads((run / "results.json").read_text())["scores"]}


@pytest.fixture(scope="module")
def local_probe_scores(base_model, tmp_path_factory):
    """py4's own scoring of the served base's weights (transformers, float32)."""
    out = tmp_path_factory.mktemp("probes") / "local"
    done = py4("eval", "probes", "--model", str(base_model), "--limit", str(PROBE_LIMIT), "--out", str(out),
               "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    return _scores(out)


def _probe_pairs() -> list[dict]:
    from py4.problems.probe_set.build import load_probes
    from py4.probes.evaluate import select_probes

    return select_probes(load_probes(), PROBE_LIMIT)


def test_served_probes_token_mode_equal_local_scoring(served, base_model, local_probe_scores, tmp_path):
    out = tmp_path / "token"
    done = py4("eval", "probes", "--endpoint", served.base_url, "--model", f"{served.request_model}.base",
               "--tokenizer", str(base_model), "--limit", str(PROBE_LIMIT), "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    served_scores = _scores(out)
    assert served_scores.keys() == local_probe_scores.keys() and len(served_scores) >= PROBE_LIMIT
    for pair_id, local in local_probe_scores.items():
        row = served_scores[pair_id]
        assert (row["p4_tokens"], row["py3_tokens"]) == (local["p4_tokens"], local["py3_tokens"]), pair_id
        for key in ("p4_logprob", "py3_logprob"):
            assert row[key] == pytest.approx(local[key], abs=TOLERANCE), (pair_id, key)


def test_served_probes_text_mode_equal_local_scoring_where_spans_tokenize_alike(served, base_model,
                                                                                 local_probe_scores, tmp_path):
    """Text mode (no --tokenizer): vLLM tokenizes; pairs with an empty prefix are among those scored.

    A pair is ``boundary_merged`` exactly when the prefix's tokens (with BOS, as the server adds
    it) are not the start of prefix + member's tokens. Where the server's span is the local
    scorer's span (same tokens), the log-probabilities agree within 1e-4.
    """
    from transformers import AutoTokenizer

    from py4.probes.score import pair_token_ids

    pairs = _probe_pairs()
    assert any(p["prefix"] == "" for p in pairs), "the selection must hold a pair with an empty prefix"
    out = tmp_path / "text"
    done = py4("eval", "probes", "--endpoint", served.base_url, "--model", f"{served.request_model}.base",
               "--limit", str(PROBE_LIMIT), "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    served_scores = _scores(out)
    assert served_scores.keys() == local_probe_scores.keys()

    tokenizer = AutoTokenizer.from_pretrained(base_model)
    compared = 0
    for pair in pairs:
        prefix, *spans = pair_token_ids(tokenizer, pair)
        wholes = [tokenizer(pair["prefix"] + pair[k])["input_ids"] for k in ("p4", "py3")]
        merged = any(whole[:len(prefix)] != prefix for whole in wholes)
        row, local = served_scores[pair["id"]], local_probe_scores[pair["id"]]
        assert row.get("boundary_merged", False) == merged, pair["id"]
        if [whole[len(prefix):] for whole in wholes] == spans:
            compared += 1
            for key in ("p4_logprob", "py3_logprob"):
                assert row[key] == pytest.approx(local[key], abs=TOLERANCE), (pair["id"], key)
    assert compared >= len(pairs) // 2
