"""The policy registry: each policy's name, config type and builder in one entry; the eval
config's ``policy`` section is chosen by name among the registered types."""

from __future__ import annotations

from typing import Literal

import pytest

from py4.config import ConfigError, load_config
from py4.evaluate import policies
from py4.evaluate.harness import EvalConfig
from py4.evaluate.scripted import SOLUTIONS, ScriptedPolicy


def test_every_registered_name_loads_its_own_config_type():
    assert policies.POLICY_NAMES == (*SOLUTIONS, "local", "endpoint")
    for name in policies.POLICY_NAMES:
        cfg = load_config(EvalConfig, None, [f"policy.name={name}"])
        assert type(cfg.policy) is policies.REGISTRY[name].config and cfg.policy.name == name


def test_an_unknown_policy_names_the_field_and_lists_the_registered_ones():
    with pytest.raises(ConfigError) as caught:
        load_config(EvalConfig, None, ["policy.name=oracle"])
    [problem] = caught.value.problems
    assert problem.startswith("policy.name: unknown 'oracle'; expected one of ")
    assert all(f"'{name}'" in problem for name in policies.POLICY_NAMES)


def test_a_setting_of_another_policy_is_an_unknown_key_of_this_one():
    with pytest.raises(ConfigError) as caught:
        load_config(EvalConfig, None, ["policy.name=gold", "policy.batch_size=4", "policy.endpoint=http://x/v1"])
    assert sorted(caught.value.problems) == ["policy.batch_size: unknown key (allowed: name, tokenizer)",
                                             "policy.endpoint: unknown key (allowed: name, tokenizer)"]
    with pytest.raises(ConfigError, match=r"policy.batchsize: unknown key; did you mean 'batch_size'\?"):
        load_config(EvalConfig, None, ["policy.name=local", "policy.batchsize=4"])


def test_a_section_without_a_name_is_the_default_policy():
    assert load_config(EvalConfig, None, ["policy.tokenizer=tok"]).policy == policies.ScriptedPolicyConfig(
        name="gold", tokenizer="tok")
    assert load_config(EvalConfig).policy.name == policies.DEFAULT_POLICY == "gold"


def test_build_and_check_go_through_the_registry():
    sampling = policies.SamplingConfig()
    built = policies.build_policy(policies.ScriptedPolicyConfig(name="migrated"), sampling)
    assert isinstance(built, ScriptedPolicy) and built.name == "migrated"
    local = load_config(EvalConfig, None, ["policy.name=local"]).policy
    assert policies.check_policy(local) == ["policy.name=local needs policy.model (the model folder; --model PATH)"]
    with pytest.raises(ValueError, match="needs policy.model"):
        policies.build_policy(local, sampling)


def test_a_name_registers_once():
    class Again(policies.PolicySettings):
        name: Literal["gold"]

    with pytest.raises(ValueError, match="policy gold registered twice"):
        policies.register_policy(Again)(lambda policy, sampling: None)
    assert policies.REGISTRY["gold"].config is policies.ScriptedPolicyConfig
