"""Every Hub reference a campaign reads is pinned: the SFT packing
tokenizer had no revision while training pinned one, and Gemma-4's chat template differs
between revisions."""

from __future__ import annotations

import pytest

from py4.campaign.spec import load_campaign
from py4.config import ConfigError, load_config, unpinned_hub_reference, validate_config
from py4.corpus.config import TokenizerSpec
from py4.data.configs import MixConfig, PackConfig
from py4.rehearsal.assets import campaign_hub_refs


@pytest.mark.parametrize("value, revision, unpinned", [
    ("google/gemma-4-12b-it", None, True), ("google/gemma-4-12b-it", "707f0a3b", False),
    ("campaign-out/smoke/assets/tokenizer", None, False), ("./tok", None, False), ("/abs/tok", None, False),
    ("{out}/assets/tokenizer", None, False), (None, None, False),
])
def test_what_counts_as_an_unpinned_hub_reference(value, revision, unpinned):
    assert unpinned_hub_reference(value, revision) is unpinned


def test_a_pack_config_with_an_unpinned_hub_tokenizer_is_refused():
    data = {"kind": "data.pack", "out_dir": "x", "format": "chat", "tokenizer": "google/gemma-4-12b-it",
            "instructions": {"path": "rows.jsonl"}}
    with pytest.raises(ConfigError, match="tokenizer_revision"):
        validate_config(PackConfig, data, "sft.yaml")
    assert validate_config(PackConfig, dict(data, tokenizer_revision="707f0a3b"), "sft.yaml").tokenizer_revision


def test_a_mix_config_with_an_unpinned_count_tokenizer_is_refused():
    config = load_config(MixConfig, "configs/data/campaign/mix_gemma4_12b_iso.yaml")
    data = config.model_dump(exclude_none=True)
    data.pop("count_tokenizer_revision")
    with pytest.raises(ConfigError, match="count_tokenizer_revision"):
        validate_config(MixConfig, data, "mix.yaml")


def test_a_corpus_tokenizer_given_by_hub_id_needs_its_revision():
    with pytest.raises(ValueError, match="tokenizer.revision"):
        TokenizerSpec(name_or_path="unsloth/gemma-3-12b-pt")


def test_every_hub_reference_of_the_campaign_is_pinned():
    refs = campaign_hub_refs(load_campaign("configs/campaign/python4.yaml"))
    assert refs and [r.where for r in refs if not r.revision] == []
