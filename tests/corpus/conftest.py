"""Shared fixtures: a small local tokenizer and a Boa results cache shared by the session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tokenizer_dir(tmp_path_factory):
    from py4.chat.smoke_tokenizer import stdlib_texts, train_tokenizer
    path = tmp_path_factory.mktemp("tokenizer")
    train_tokenizer(stdlib_texts(300_000), vocab_size=400).save_pretrained(str(path))
    return str(path)


@pytest.fixture(scope="session")
def boa_cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("boa-cache"))


@pytest.fixture
def small_config(tokenizer_dir, boa_cache):
    from py4.corpus.config import CorpusConfig

    def make(**fields):
        data = {"max_docs": 42, "shard_docs": 10, "tokenizer": {"name_or_path": tokenizer_dir},
                "pool": {"variants_per_template": 1}, "validation": {"cache_dir": boa_cache}}
        data.update(fields)
        return CorpusConfig.model_validate(data)
    return make
