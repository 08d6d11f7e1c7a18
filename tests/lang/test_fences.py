"""The one fenced-block scanner (py4.lang.fences) that the spec and the corpus documents share."""
import pytest

from py4.lang.fences import FenceError, FencedBlock, fenced_blocks

CORPUS = {"tag_pattern": r"[A-Za-z0-9_-]*", "strict": True}


def test_blocks_come_in_order_with_body_and_both_fence_lines():
    lines = ["intro", "```py4", "print(1)", "```", "", "```", "```"]
    assert list(fenced_blocks(lines)) == [FencedBlock("py4", "print(1)\n", 2, 4), FencedBlock("", "", 6, 7)]


@pytest.mark.parametrize("options", [{}, CORPUS], ids=["spec", "corpus"])
def test_blocks_do_not_nest(options):
    (block,) = fenced_blocks(["```py4", "```python", "x", "```"], **options)
    assert (block.tag, block.body, block.end) == ("py4", "```python\nx\n", 4)


@pytest.mark.parametrize("options", [{}, CORPUS], ids=["spec", "corpus"])
def test_an_unclosed_block_names_its_opening_line(options):
    with pytest.raises(FenceError, match="^line 2: code block is never closed$") as caught:
        list(fenced_blocks(["text", "```py4", "x"], **options))
    assert (caught.value.line, caught.value.reason) == (2, "code block is never closed")


def test_strict_rejects_a_stray_fence_and_a_closing_fence_with_trailing_spaces():
    with pytest.raises(FenceError, match="^line 1: malformed fence '```py4 x'"):
        list(fenced_blocks(["```py4 x", "```"], **CORPUS))
    with pytest.raises(FenceError, match="^line 1: code block is never closed"):
        list(fenced_blocks(["```py4", "x", "```  "], **CORPUS))


def test_lenient_reads_a_stray_fence_as_text_and_closes_at_trailing_spaces():
    assert list(fenced_blocks(["```py4 x", "```py4.1", "x", "```  "])) == [FencedBlock("py4.1", "x\n", 2, 4)]


def test_tags_are_checked_when_the_fence_opens():
    with pytest.raises(FenceError, match=r"^line 1: unknown code block tag 'py5' \(known: py4, text\)$"):
        list(fenced_blocks(["```py5", "x"], tags=("py4", "text", "")))
    assert [b.tag for b in fenced_blocks(["```", "```"], tags=("py4", ""))] == [""]
