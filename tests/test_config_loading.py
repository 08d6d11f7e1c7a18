"""Strict config loading: unknown keys, overrides, collected errors, resolved dumps."""

from __future__ import annotations

import pydantic
import pytest

from py4.config import ConfigError, StrictModel, apply_overrides, dump_config, load_config


class Optim(StrictModel):
    lr: float = 1e-5
    weight_decay: float = 0.01


class Stage(StrictModel):
    name: str = "midtrain"
    steps: int = 10
    optim: Optim = Optim()
    tags: list[str] = pydantic.Field(default_factory=list)


def write(tmp_path, text):
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    return path


def test_defaults_without_file():
    assert load_config(Stage).steps == 10


def test_yaml_and_overrides(tmp_path):
    path = write(tmp_path, "steps: 3\noptim:\n  lr: 2.0e-5\n")
    cfg = load_config(Stage, path, ["optim.weight_decay=0", "tags=[a, b]"])
    assert (cfg.steps, cfg.optim.lr, cfg.optim.weight_decay, cfg.tags) == (3, 2e-5, 0.0, ["a", "b"])


def test_unknown_keys_are_errors_with_suggestion(tmp_path):
    path = write(tmp_path, "stepz: 3\noptim:\n  lr_rate: 1\n")
    with pytest.raises(ConfigError) as err:
        load_config(Stage, path)
    text = str(err.value)
    assert str(path) in text
    assert "stepz: unknown key; did you mean 'steps'?" in text
    assert "optim.lr_rate: unknown key" in text
    assert len(err.value.problems) == 2  # every problem reported at once


def test_type_errors_name_field_and_value(tmp_path):
    path = write(tmp_path, "steps: many\n")
    with pytest.raises(ConfigError, match=r"steps: .*given 'many'"):
        load_config(Stage, path)


def test_yaml_syntax_error_names_line(tmp_path):
    path = write(tmp_path, "steps: 3\noptim: [unclosed\n")
    with pytest.raises(ConfigError, match=r"line \d+"):
        load_config(Stage, path)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_config(Stage, tmp_path / "nope.yaml")


def test_malformed_override():
    with pytest.raises(ConfigError, match="expected key=value"):
        apply_overrides({}, ["steps"])


def test_configs_are_frozen():
    cfg = load_config(Stage)
    with pytest.raises(pydantic.ValidationError):
        cfg.steps = 5  # type: ignore[misc]


def test_dump_round_trips(tmp_path):
    cfg = load_config(Stage, None, ["optim.lr=3e-4"])
    again = load_config(Stage, write(tmp_path, dump_config(cfg)))
    assert again == cfg


def test_a_module_name_reference_resolves_or_names_its_field_and_file():
    from py4.config import ReferenceNotFound, resolve_reference

    assert resolve_reference("py4.config:load_config", "function", kind="function") is load_config
    cases = {"py4.config": "expected 'module:type'", "py4.config:NoSuchType": "'py4.config:NoSuchType' not found",
             "py4.no_such_module:T": "No module named 'py4.no_such_module'"}
    for reference, says in cases.items():
        with pytest.raises(ReferenceNotFound) as caught:
            resolve_reference(reference, "model.config_type", "configs/x.yaml", kind="type")
        assert caught.value.source == "configs/x.yaml"
        assert caught.value.problems[0].startswith("model.config_type: ") and says in caught.value.problems[0]
        assert isinstance(caught.value, ConfigError) and isinstance(caught.value, ImportError)
    with pytest.raises(ReferenceNotFound, match="reward: 'py4.config:__all__' is not callable"):
        resolve_reference("py4.config:__all__", "reward", kind="function")
