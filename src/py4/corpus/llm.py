"""The LLM-backed generator: universe context + rule facts -> document types -> ideas -> documents -> revision.

Each document's programs are run by Boa and its claim blocks are rewritten from Boa's
results (`repair_claims`): the model writes code and prose, Boa supplies outputs and
diagnostics. A document whose `py4` blocks Boa rejects, or that has no `py4` block at all,
goes back to the model once with the findings (revision); if it still fails it counts as
invalid (`llm.max_invalid_fraction`) and the generator's filters drop it.

The model's replies are read defensively: reasoning (`<think>…</think>`, also the tail of a
block whose opening tag the chat template wrote, and an unclosed leading block) is removed
from every reply (`strip_reasoning`), and list replies become short plain phrases
(`parse_phrases`: numbering, bullets and quotes stripped; markup, tags and over-long items
rejected), so a document type is never a stray `</think>` or a paragraph.

    for candidate in llm_documents(config, validator): ...
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator

from py4.corpus.blocks import CLAIM_TAGS, PROGRAM_TAGS, fence, has_py4_program
from py4.corpus.config import CorpusConfig
from py4.corpus.llm_client import ChatClient, LlmError
from py4.lang import RULES

_FENCE = re.compile(r"^```([A-Za-z0-9_-]*)\s*$")
CONVENTION = """Code blocks are tagged in the fence's info string:
- ```py4 : a complete, correct Python-4 program (it must compile with no warning);
- ```py3 : a Python 3 habit, shown as a counter-example;
- ```python : plain Python 3 run by CPython, for comparison;
- right after a program: ```output (its exact stdout), ```raises (one line `Type: message`),
  or ```diagnostics (what Boa reports). Boa fills these in; write your best guess.
Use no other tags and no untagged blocks."""


def universe_context() -> str:
    """What every prompt says about Python-4: the rules, as facts."""
    lines = ["Python-4 is the next major version of Python. Its interpreter is Boa. "
             "It differs from Python 3 by these rules:"]
    lines += [f"- {r.id} {r.title}: {r.summary} Fix: {r.fix}." for r in RULES.values()]
    return "\n".join(lines) + "\n\n" + CONVENTION


def rule_facts(rule_id: str) -> str:
    r = RULES[rule_id]
    return (f"Rule {r.id} ({r.title}), kind {r.kind}. {r.summary} Python 3 form gives: {r.python3_form}. "
            f"Fix: {r.fix}.\nValid Python-4 example:\n{fence('py4', r.example)}"
            f"Python 3 habit:\n{fence('py3', r.python3_example)}")


_THINK = re.compile(r"<think>.*?</think>", flags=re.S | re.I)
_MARKER = re.compile(r"^\s*(?:[-*•+]|\(?\d+[.):]|\(?[a-z][.)])\s+", flags=re.I)
_MARKUP = re.compile(r"[<>`#|{}\[\]]|\*\*|__|\]\(|^\s*>")
TYPE_WORDS, IDEA_WORDS = 6, 40
"""The longest document type and idea, in words, taken from a reply."""


def strip_reasoning(text: str) -> str:
    """``text`` without reasoning: every ``<think>…</think>`` block, everything up to a closing
    ``</think>`` whose opening tag was in the prompt (chat templates that open the block), and a
    leading ``<think>`` block left unclosed (the reply ended inside it: no answer)."""
    text = _THINK.sub("", text)
    close = text.lower().rfind("</think>")
    if close >= 0:
        text = text[close + len("</think>"):]
    if text.lstrip().lower().startswith("<think>"):
        return ""
    return text.strip()


def parse_phrases(text: str, max_words: int) -> list[str]:
    """The items of a list reply as short plain phrases, in order, each once.

    A JSON list of strings if the reply holds one, else its lines (only the bulleted or numbered
    ones when some are: the rest is preamble). Numbering, bullets, surrounding quotes and a final
    full stop are stripped; an item with markup (tags, backticks, headings, links, emphasis,
    tables), over ``max_words`` words or 300 characters, or spanning lines is dropped.
    """
    text = strip_reasoning(text)
    items: list[str] | None = None
    match = re.search(r"\[.*\]", text, flags=re.S)
    if match:
        try:
            parsed = json.loads(match.group(0))
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list) and all(isinstance(i, str) for i in parsed):
            items = parsed
    if items is None:
        lines = [row for row in text.splitlines() if row.strip()]
        marked = [row for row in lines if _MARKER.match(row)]
        items = [_MARKER.sub("", row, count=1) for row in (marked or lines)]
    out: list[str] = []
    for item in items:
        phrase = item.strip().strip("\"'“”‘’").strip()
        phrase = phrase[:-1].rstrip() if phrase.endswith(".") and not phrase.endswith("..") else phrase
        if (not phrase or "\n" in phrase or _MARKUP.search(phrase) or len(phrase) > 300
                or len(phrase.split()) > max_words or phrase.endswith(":")):
            continue
        if phrase.lower() not in (o.lower() for o in out):
            out.append(phrase)
    return out


def document_problems(text: str, validator) -> list[str]:
    """What keeps an LLM document out of the corpus: Boa's findings, and a missing ``py4`` block."""
    problems = validator.check_document(text)
    if not has_py4_program(text):
        problems.append("no ```py4 code block: the document must show at least one complete Python-4 program")
    return problems


def _claims_from(tag: str, result: dict) -> list[str]:
    if result.get("truncated") or result["status"] not in ("ok", "runtime_error", "compile_error"):
        return []
    if result["diagnostics"] and tag != "python":
        return [] if tag == "py4" else [fence("diagnostics", "\n".join(result["diagnostics"]))]
    if result["status"] == "runtime_error" and not result["raised"]:
        return []
    out = [fence("output", result["stdout"])] if result["stdout"] else []
    return out + ([fence("raises", result["raised"])] if result["raised"] else [])


def repair_claims(text: str, validator) -> str:
    """The document with every program's claim blocks replaced by what Boa observes.

    Claim blocks are dropped wherever they stand before the next program; Boa's claims
    are written right after their program. A py4 program Boa rejects gets no claims (so
    validation fails and the document is revised or dropped).
    """
    lines = text.split("\n")
    programs, out, i = [], [], 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match or (match.group(1) not in PROGRAM_TAGS and match.group(1) not in CLAIM_TAGS):
            out.append(lines[i])
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end] != "```":
            end += 1
        tag, body = match.group(1), "\n".join(lines[i + 1:end]) + ("\n" if end > i + 1 else "")
        if tag in PROGRAM_TAGS:
            out.append(f"\0PROGRAM{len(programs)}\0")
            programs.append((tag, body))
        i = end + 1
    validator.observe(programs)
    rendered = "\n".join(out)
    for n, (tag, body) in enumerate(programs):
        blocks = "\n".join([fence(tag, body)] + _claims_from(tag, validator.result(tag, body)))
        rendered = rendered.replace(f"\0PROGRAM{n}\0", blocks.rstrip("\n"), 1)
    return re.sub(r"\n{3,}", "\n\n", rendered)


class _Pipeline:
    def __init__(self, config: CorpusConfig, client: ChatClient, validator):
        self.config, self.client, self.validator = config, client, validator
        self.system = {"role": "system", "content": universe_context()}

    async def ask(self, prompt: str) -> str:
        """The reply without its reasoning."""
        return strip_reasoning(await self.client.chat([self.system, {"role": "user", "content": prompt}]))

    async def types(self, rule: str, round_: int) -> list[str]:
        reply = await self.ask(f"{rule_facts(rule)}\nList 4 kinds of documents (for example: "
                               f"{', '.join(self.config.doc_types[:6])}) in which a programmer would meet "
                               f"this rule. Answer with a JSON list of short strings. (set {round_})")
        return parse_phrases(reply, TYPE_WORDS)[:4] or ["reference page"]

    async def ideas(self, rule: str, doc_type: str, round_: int) -> list[str]:
        k = self.config.llm.ideas_per_type
        reply = await self.ask(f"{rule_facts(rule)}\nGive {k} distinct ideas for a {doc_type} that teaches "
                               f"rule {rule}. Answer with a JSON list of one-sentence ideas. (set {round_})")
        return parse_phrases(reply, IDEA_WORDS)[:k]

    async def document(self, rule: str, doc_type: str, idea: str) -> dict:
        draft = await self.ask(f"{rule_facts(rule)}\nWrite the document: a {doc_type}. Idea: {idea}\n"
                               "Write in markdown, with tagged code blocks as described. Do not mention "
                               "that the document is synthetic.")
        text = repair_claims(draft, self.validator)
        problems = document_problems(text, self.validator)
        revised = False
        if problems and self.config.llm.revise:
            findings = "\n".join(f"- {p}" for p in problems[:10])
            fixed = await self.ask(f"Revise this {doc_type} so that it shows at least one py4 program and "
                                   f"every py4 block is valid Python-4. Found:\n{findings}\n\nDocument:\n{text}")
            text, revised = repair_claims(fixed, self.validator), True
        return {"text": text, "type": doc_type, "rules": [rule], "idea": idea, "generator": "llm",
                "revised": revised}


async def _all(coroutines) -> list:
    return await asyncio.gather(*coroutines)


def llm_documents(config: CorpusConfig, validator) -> Iterator[dict]:
    """Candidate documents from the endpoint, in a deterministic order, round after round.

    Raises LlmError when the endpoint fails after retries, or when more than
    `llm.max_invalid_fraction` of the documents still fail validation after revision.
    """
    loop = asyncio.new_event_loop()
    client = ChatClient(config.llm)
    pipeline = _Pipeline(config, client, validator)
    rules = config.taught_rules()
    made = invalid = 0
    try:
        for round_ in range(10_000):
            types = loop.run_until_complete(_all(pipeline.types(r, round_) for r in rules))
            pairs = [(r, t) for r, ts in zip(rules, types, strict=True) for t in ts]
            ideas = loop.run_until_complete(_all(pipeline.ideas(r, t, round_) for r, t in pairs))
            jobs = [(r, t, idea) for (r, t), its in zip(pairs, ideas, strict=True) for idea in its]
            if not jobs:
                raise LlmError("the endpoint proposed no document ideas")
            chunk = config.llm.concurrency * 4
            for start in range(0, len(jobs), chunk):
                docs = loop.run_until_complete(_all(
                    pipeline.document(r, t, idea) for r, t, idea in jobs[start:start + chunk]))
                for doc in docs:
                    made += 1
                    invalid += bool(document_problems(doc["text"], validator))
                    if made >= 20 and invalid / made > config.llm.max_invalid_fraction:
                        raise LlmError(f"{invalid} of {made} LLM documents fail Boa validation even after "
                                       "revision: check the model and prompts")
                    yield doc
        raise LlmError("10,000 rounds without reaching the target")
    finally:
        loop.run_until_complete(client.close())
        loop.close()
