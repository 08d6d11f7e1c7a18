"""A typed override reads back from its command-line text as the same value (py4.overrides).

A campaign gives a stage its overrides as typed values in its own process, and writes them as
``key=value`` text where a process boundary needs a command line (a Slurm job, an accelerate
launch). Both must load the same config: for every value, parsing the text with the parser
that ``py4 train`` and the config loader use gives an equal value of the same type.
"""

from __future__ import annotations

import datetime
import math

import pytest

from py4.config import ConfigError, StrictModel, load_config
from py4.overrides import Override, overrides, parse_value, same_value, value_text

# Strings YAML 1.1 reads as something else when written bare, beside their harmless siblings.
TRICKY_STRINGS = [
    # floats and ints as strings
    "1e5", "1.0e5", "1e-05", "1.0e-05", "2e-5", ".5", "+1", "-0", "017", "0017", "0o17", "0x10", "0b101", "1_000",
    "1,000", "12:30", "1:20:30", "190:20:30", ".inf", "-.inf", ".nan", "NaN", "inf", "3.", "1.5.2", "v1",
    # bools and nulls as strings
    "yes", "no", "Yes", "NO", "on", "off", "y", "n", "true", "False", "TRUE", "null", "Null", "NULL", "~", "None",
    # dates and times
    "2024-01-01", "2024-01-01 10:00:00", "2024-01-01T10:00:00Z", "2024-1-1",
    # YAML syntax
    "", " ", "  padded  ", "[a, b]", "[]", "{a: 1}", "{}", "a: b", "- x", "#comment", "a #b", "&anchor", "*alias",
    "!tag x", "!!str 1", "'quoted'", '"double"', "x,y", "%x", "@x", "`x", "|", ">", "---", "...", "<<", "?", ":",
    "a=b", "=", "[unclosed", "{unclosed", "it's", 'say "hi"', "back\\slash",
    # control characters and other scripts
    "line\nbreak", "tab\there", "trailing\n", "é", "日本語", "emoji 😀",
    # what campaigns write: paths, Hub ids, URLs
    "runs/campaign/gemma4_12b/iso/midtrain/model", "/abs/path", "~/home", "google/gemma-4-12b",
    "http://127.0.0.1:8000/v1", "{out}/x", "model@abc123",
]

OTHER_VALUES = [
    0, 1, -1, 42, 10**20, 0.0, 0.5, 0.7, 1e-5, 2e-05, 1e300, -3.25, math.inf, -math.inf, math.nan, True, False, None,
    [], [1, 2], ["yes", "1e5", "null", "0x10"], [None, True, 1, 1.5, "a, b"], [[1, ["2024-01-01"]], {}],
    {}, {"a": 1}, {"yes": "no", "null": None}, {"nested": {"lr": 1e-5, "names": ["on", "off"], "x": {"y": "017"}}},
    {1: "int key"}, datetime.date(2024, 1, 1),
]


@pytest.mark.parametrize("value", TRICKY_STRINGS + OTHER_VALUES, ids=repr)
def test_a_typed_value_reads_back_from_its_command_line_text(value):
    override = Override(key="a.b", value=value)
    (parsed,) = overrides([str(override)])  # the parser `py4 train` and load_config use
    assert parsed.path == ["a", "b"]
    assert same_value(parsed.value, value), f"{str(override)!r} reads back as {parsed.value!r}"


@pytest.mark.parametrize("value", [v for v in TRICKY_STRINGS if same_value(parse_value(v), v)], ids=repr)
def test_a_string_yaml_reads_as_itself_is_written_bare(value):
    """Paths, ids and words keep their text: the campaign's command lines (and fingerprints) do not change."""
    assert value_text(value) == value


def test_a_string_yaml_would_retype_is_quoted():
    assert value_text("yes") == '"yes"' and value_text("1_000") == '"1_000"' and value_text("null") == '"null"'
    assert value_text(1e-5) == "1.0e-05"  # YAML 1.1 reads 1e-05 as a string
    assert value_text(["a", "b"]) == "['a', 'b']"  # Python's spelling where it reads back


def test_same_value_tells_types_apart():
    assert not same_value(1, True) and not same_value(1, 1.0) and not same_value("1", 1)
    assert not same_value({"a": 1, "b": 2}, {"b": 2, "a": 1})  # the order a command line writes them
    assert same_value(math.nan, math.nan) and same_value([{"a": [None]}], [{"a": [None]}])


@pytest.mark.parametrize("value", [{1, 2}, datetime.time(10, 0), object()], ids=repr)
def test_a_value_no_text_reads_back_as_is_refused(value):
    with pytest.raises(ConfigError, match="no key=value text reads back"):
        Override(key="k", value=value)


def test_paths_and_tuples_are_given_as_a_config_file_holds_them(tmp_path):
    assert Override(key="k", value=tmp_path).value == str(tmp_path)
    assert Override(key="k", value=("a", 1)).value == ["a", 1]


def test_text_as_written_is_kept():
    """A spec's ``lr=2e-5`` stays as written on the command line (YAML reads it as the string)."""
    override, = overrides(["optimisation.lr=2e-5"])
    assert override.text == "2e-5" and override.value == "2e-5" and str(override) == "optimisation.lr=2e-5"


def test_malformed_items_are_all_named():
    with pytest.raises(ConfigError) as info:
        overrides(["novalue", "=x", "a..b=1", "ok=1"])
    assert len(info.value.problems) == 3


class _Config(StrictModel):
    name: str = "x"
    lr: float = 0.1
    steps: int = 1
    flag: bool = False
    tags: list[str] = []
    extra: dict[str, str | None] = {}
    maybe: str | None = "set"


@pytest.mark.parametrize("given", [
    {"name": "yes", "lr": 1e-5, "steps": 1000, "flag": True, "tags": ["on", "2024-01-01", "0x10"],
     "extra": {"a": "null", "b": None}, "maybe": None},
    {"name": "1e5", "tags": ["1_000"], "maybe": "~"},
    {"name": "12:30", "extra": {"k": "017"}, "maybe": "None"},
])
def test_a_config_loads_the_same_in_process_and_from_the_command_line(given):
    typed = overrides(given)
    assert load_config(_Config, None, typed) == load_config(_Config, None, [str(o) for o in typed])
