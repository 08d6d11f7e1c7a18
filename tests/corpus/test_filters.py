from py4.corpus.config import FilterSpec
from py4.corpus.filters import ExactDuplicateFilter, NearDuplicateFilter, python3_presented_as_python4


def _text(seed: int, words: int = 300) -> str:
    import random
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(2000)]
    return " ".join(rng.choice(vocab) for _ in range(words))


def test_near_duplicates_are_caught_and_distinct_texts_kept():
    near = NearDuplicateFilter(FilterSpec())
    base = _text(1)
    edited = base.replace(base.split()[10], "changed", 1)
    assert near.check_and_add(base, 1) is False
    assert near.check_and_add(edited, 2) is True
    assert near.check_and_add(_text(2), 3) is False
    assert near.count == 2


def test_exact_duplicates():
    exact = ExactDuplicateFilter()
    assert exact.check_and_add("ab" * 32) is False
    assert exact.check_and_add("ab" * 32) is True


def test_prose_that_recommends_python3_spellings_is_flagged():
    assert python3_presented_as_python4("In Python-4, use `def` to define functions.")
    assert python3_presented_as_python4("`elif` is valid Python-4 syntax.")
    assert not python3_presented_as_python4("In Python-4, use `fn` instead of `def`... wait: `fn`.")
    # code blocks are not prose
    assert not python3_presented_as_python4("```py3\nIn Python-4, use `def`\n```\n")
