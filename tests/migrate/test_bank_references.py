"""The migrator against its main consumer: the problem bank's Python 3 references.

For a fixed sample of bank problems: the fully migrated reference certifies under Boa,
and the reference migrated without any one targeted rule's fixer does not (the bank's
discrimination gate). Skipped when the bank is not built.
"""

import pytest

from py4.lang.migrate import migrate


@pytest.fixture(scope="module")
def sample():
    try:
        from py4.problems.bank import load_bank
        problems = load_bank()
    except Exception as exc:  # the bank is another part's data; absent → nothing to check
        pytest.skip(f"problem bank not available: {exc}")
    return problems[::100]


def test_migrated_references_certify_and_discriminate(sample):
    from py4.boa.certify import certify_many
    from py4.boa.executor import Executor

    jobs = []
    for problem in sample:
        full = migrate(problem.reference_py3)
        assert not full.cannot_convert, (problem.id, full.cannot_convert)
        assert set(problem.rules) <= set(full.rules_violated), problem.id
        jobs.append((problem, None, full.source))
        for rule in problem.rules:
            jobs.append((problem, rule, migrate(problem.reference_py3, skip_rules={rule}).source))
    with Executor(workers=1) as executor:
        certificates = certify_many([(p, src) for p, _, src in jobs], executor=executor)
    wrong = []
    for (problem, rule, source), cert in zip(jobs, certificates, strict=True):
        if rule is None and not cert.certified:
            wrong.append(f"{problem.id}: migrated reference fails: {cert.failures[:1] or cert.warnings[:1]}\n{source}")
        if rule is not None and cert.certified:
            wrong.append(f"{problem.id}: still certifies without the {rule} fixer")
    assert not wrong, "\n".join(wrong)
