"""Split logic: a pure function of (problems, held-out set, seed)."""

from py4.problems.splits import SplitItem, SplitSizes, assign_splits, select_train_sanity

HELD_OUT = {"P4-13", "P4-19"}


def _items():
    items = []
    rules = {"a": ("P4-12",), "b": ("P4-12",), "c": ("P4-15",), "d": ("P4-15",), "e": ("P4-13",), "f": ("P4-13",),
             "g": ("P4-19",), "h": ("P4-19",), "i": ("P4-17",), "j": ("P4-17",)}
    for fam, r in rules.items():
        for k in range(30):
            exercised = r + (("P4-13",) if fam == "a" and k % 3 == 0 else ())
            items.append(SplitItem(f"py4/{fam}{k:03d}", fam, r, exercised))
    return items


SIZES = SplitSizes(grpo=20, eft_pool=30, test_min=25, test_cap_per_family=10)


def test_deterministic_and_seed_dependent():
    assert assign_splits(_items(), HELD_OUT, 1, SIZES) == assign_splits(_items(), HELD_OUT, 1, SIZES)
    assert assign_splits(_items(), HELD_OUT, 1, SIZES) != assign_splits(_items(), HELD_OUT, 2, SIZES)


def test_test_families_never_train_and_held_in_is_clean():
    items = {it.id: it for it in _items()}
    split = assign_splits(items.values(), HELD_OUT, 3, SIZES)
    fams = {}
    for pid, s in split.items():
        fams.setdefault(s, set()).add(items[pid].family)
    tests = fams.get("test_heldin", set()) | fams.get("test_heldout", set())
    train = fams.get("grpo", set()) | fams.get("eft_pool", set()) | fams.get("eft_large", set())
    assert not tests & train
    assert sum(1 for s in split.values() if s == "grpo") == 20
    for pid, s in split.items():
        it = items[pid]
        if s in ("grpo", "eft_pool", "test_heldin"):
            assert not HELD_OUT & (set(it.rules) | set(it.exercised)), pid
        if s == "test_heldout":
            assert HELD_OUT & set(it.rules)
    # every held-out rule is covered by the held-out test split
    covered = {r for pid, s in split.items() if s == "test_heldout" for r in items[pid].rules}
    assert covered == HELD_OUT


def test_another_held_out_set_rebuilds_differently():
    other = assign_splits(_items(), {"P4-17"}, 3, SIZES)
    held_out = {pid for pid, s in other.items() if s == "test_heldout"}
    assert held_out <= {f"py4/{f}{k:03d}" for f in "ij" for k in range(30)}


class _P:
    def __init__(self, id, family, split, difficulty):
        self.id, self.family, self.split, self.difficulty = id, family, split, difficulty


def test_train_sanity_is_small_varied_and_held_in():
    problems = [_P(f"py4/{f}{k}", f, "eft_pool" if k % 2 else "test_heldin", 1 + k % 3)
                for f in "abcdef" for k in range(8)]
    chosen = select_train_sanity(problems, n=6, seed=1)
    assert len(chosen) == 6 and len({p.family for p in chosen}) == 6
    assert all(p.split == "eft_pool" for p in chosen)
    assert [p.id for p in chosen] == [p.id for p in select_train_sanity(problems, n=6, seed=1)]
