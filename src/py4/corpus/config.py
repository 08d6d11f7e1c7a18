"""Config types of the corpus generator (`py4 corpus generate --config FILE`).

Defaults live here only. `kind: corpus.generate`; `generator` picks the offline template
generator (no network) or the LLM-backed pipeline (an OpenAI-compatible endpoint).
"""

from __future__ import annotations

from typing import Literal

import pydantic

from py4.config import StrictModel, require_pinned

DOC_TYPES = (
    "reference", "tutorial", "whats_new", "pep", "migration_guide", "qa_thread",
    "code_review", "blog_post", "exercise", "lint_page", "changelog", "cheat_sheet",
    "annotated_program", "error_story",
)


class TokenizerSpec(StrictModel):
    """The tokenizer that counts the corpus's tokens (local folder or Hub id)."""

    name_or_path: str = pydantic.Field(..., description="local tokenizer folder or Hub id")
    revision: str | None = pydantic.Field(None, description="Hub commit; required with a Hub id")
    add_bos: bool = pydantic.Field(True, description="count the BOS token per document (campaign basis)")
    add_eos: bool = pydantic.Field(False, description="count the EOS token per document")
    batch_docs: int = pydantic.Field(256, ge=1, description="documents per batched (Rust) encode call")

    @pydantic.model_validator(mode="after")
    def _pinned(self):
        require_pinned(self.name_or_path, self.revision, "tokenizer.name_or_path", "tokenizer.revision")
        return self


class PoolSpec(StrictModel):
    """Where the code examples come from; each is validated by Boa once (cached by hash)."""

    spec_path: str | None = pydantic.Field("docs/python4.md", description="normative spec whose examples join the pool")
    variants_per_template: int = pydantic.Field(6, ge=1, description="random fillings of each per-rule template")
    migrated_programs: bool = pydantic.Field(True, description="curated Python 3 programs run through the migrator")
    seed: int = 1234


class ValidationSpec(StrictModel):
    workers: int = pydantic.Field(2, ge=1)
    timeout_s: float = pydantic.Field(5.0, gt=0)
    cache_dir: str = pydantic.Field("campaign-out/cache/corpus-boa", description="Boa results by content hash")


class FilterSpec(StrictModel):
    num_perm: int = pydantic.Field(64, ge=16, le=512, description="MinHash permutations (memory per doc)")
    threshold: float = pydantic.Field(0.8, gt=0, lt=1, description="Jaccard above which two docs are near-duplicates")
    shingle_words: int = pydantic.Field(5, ge=1)


class LlmSpec(StrictModel):
    """The OpenAI-compatible endpoint of the LLM-backed generator."""

    base_url: str = "http://127.0.0.1:8000/v1"
    model: str = "Qwen/Qwen2.5-72B-Instruct"
    api_key_env: str | None = pydantic.Field(None, description="environment variable holding the API key")
    concurrency: int = pydantic.Field(8, ge=1)
    max_retries: int = pydantic.Field(4, ge=0)
    backoff_s: float = pydantic.Field(1.0, ge=0)
    request_timeout_s: float = pydantic.Field(120.0, gt=0)
    temperature: float = pydantic.Field(0.9, ge=0)
    max_tokens: int = pydantic.Field(3000, ge=16)
    ideas_per_type: int = pydantic.Field(4, ge=1, description="document ideas asked per (rule, type)")
    revise: bool = pydantic.Field(True, description="one revision pass per document")
    cache_dir: str = pydantic.Field("campaign-out/cache/corpus-llm", description="responses by request hash (resume)")
    max_invalid_fraction: float = pydantic.Field(0.5, ge=0, le=1,
                                                 description="fail when more documents than this are rejected")


class CorpusConfig(StrictModel):
    """`py4 corpus generate`: documents that teach Python-4, validated by Boa."""

    kind: Literal["corpus.generate"] = "corpus.generate"
    name: str = "py4-corpus"
    version: str = "1"
    generator: Literal["offline", "llm"] = "offline"
    seed: int = 0
    target_tokens: int | None = pydantic.Field(None, ge=1, description="stop once kept docs hold this many tokens")
    max_docs: int | None = pydantic.Field(None, ge=1, description="stop after this many kept docs")
    shard_docs: int = pydantic.Field(2000, ge=1, description="documents per jsonl shard")
    doc_types: list[str] = pydantic.Field(default_factory=lambda: list(DOC_TYPES))
    rules: list[str] | None = pydantic.Field(None, description="rules taught (default: all 30, held-out included)")
    max_rules_per_doc: int = pydantic.Field(4, ge=1, le=8)
    stated_fraction: float = pydantic.Field(0.75, ge=0, le=1,
                                            description="chance a rule is stated in prose (else only shown)")
    tokenizer: TokenizerSpec
    pool: PoolSpec = PoolSpec()
    validation: ValidationSpec = ValidationSpec()
    filters: FilterSpec = FilterSpec()
    llm: LlmSpec = LlmSpec()

    @pydantic.model_validator(mode="after")
    def _check(self) -> "CorpusConfig":
        if self.target_tokens is None and self.max_docs is None:
            raise ValueError("set target_tokens or max_docs (or both): the generator needs a stopping point")
        unknown = sorted(set(self.doc_types) - set(DOC_TYPES))
        if unknown or not self.doc_types:
            raise ValueError(f"doc_types: unknown {unknown} (known: {', '.join(DOC_TYPES)})")
        if self.rules is not None:
            from py4.lang import RULES
            bad = sorted(set(self.rules) - set(RULES))
            if bad or not self.rules:
                raise ValueError(f"rules: unknown ids {bad} (expected P4-01 … P4-30)")
        return self

    def taught_rules(self) -> list[str]:
        from py4.lang import RULES
        return sorted(self.rules) if self.rules is not None else sorted(RULES)
