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


# How corpus documents read fences where the spec reads them otherwise (py4.lang.fences, strict):
# these pin the corpus's side of each difference.
@pytest.mark.parametrize("text, message", [
    ("intro\n```py4 extra\nx\n```\n", r"^line 2: malformed fence '```py4 extra'"),  # the spec: text
    ("```py4.x\nx\n```\n", r"^line 1: malformed fence"),  # tag outside [A-Za-z0-9_-]; the spec: any \S
    ("````\nx\n````\n", r"^line 1: malformed fence"),
    ("\n```py4\nprint(1)\n``` \n", r"^line 2: code block is never closed"),  # "``` " closes only in the spec
    ("```pyhton\nx\n", r"^line 1: code block is never closed"),  # the tag is checked once the block closes
])
def test_corpus_fence_syntax_is_strict_and_errors_name_the_line(text, message):
    with pytest.raises(BlockFormatError, match=message):
        parse_programs(text)


def test_blocks_do_not_nest_a_fence_inside_a_block_is_its_body():
    (program,) = parse_programs("```py4\n```python\nprint(1)\n```\n```output\n1\n```\n")
    assert (program.source, program.output, program.line) == ("```python\nprint(1)\n", "1\n", 1)


def test_windows_line_ends_leave_the_closing_fence_unclosed():
    # the corpus splits on "\n" only: "```\r" is not a closing fence (documents are written with "\n")
    with pytest.raises(BlockFormatError, match="line 1: code block is never closed"):
        parse_programs("```py4\r\nprint(1)\r\n```\r\n")
