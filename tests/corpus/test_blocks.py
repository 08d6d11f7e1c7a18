import pytest

from py4.corpus.blocks import BlockFormatError, fence, parse_programs


def test_programs_and_claims_are_paired_in_order():
    text = ("intro\n\n" + fence("py4", "print(1)\n") + "\nIt prints:\n\n" + fence("output", "1\n")
            + fence("py3", "def f(): pass\n") + fence("diagnostics", "line 1\nline 2")
            + fence("python", "raise ValueError('x')\n") + fence("raises", "ValueError: x"))
    programs = parse_programs(text)
    assert [p.tag for p in programs] == ["py4", "py3", "python"]
    assert programs[0].output == "1\n" and programs[0].raises is None
    assert programs[1].diagnostics == ("line 1", "line 2")
    assert programs[2].raises == "ValueError: x" and programs[2].output is None


@pytest.mark.parametrize("text, message", [
    ("```\nprint(1)\n```\n", "tag ''"),
    ("```pyhton\nx\n```\n", "tag 'pyhton'"),
    ("```output\n1\n```\n", "must follow a program"),
    ("```py4\nprint(1)\n", "never closed"),
    ("```py3\nprint(1)\n```\n", "must be followed by"),
    ("```py4\nprint(1)\n```\n```output\n1\n```\n```output\n1\n```\n", "second output"),
    ("```py4\nx\n```\n```raises\nA: b\nC: d\n```\n", "one line"),
])
def test_malformed_documents_are_rejected_with_the_line(text, message):
    with pytest.raises(BlockFormatError, match=message):
        parse_programs(text)
