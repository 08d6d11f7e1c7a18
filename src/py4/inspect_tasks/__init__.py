"""Inspect integration (``pip install -e '.[inspect]'``): the bank's splits as Inspect tasks.

    inspect eval py4/python4_heldout --model openai/gpt-x -T limit=50 -T samples=4
    inspect eval py4/python4_heldin --model py4/gold            # calibration: certified 1.0

- ``tasks``: ``python4_heldin``, ``python4_heldout``, … (one per split) and ``python4(split=…)``;
- ``solver.boa_episode``: the ``run_code``/``submit`` episode, Inspect tools backed by Boa;
- ``scorer.boa_certification``: outcome and reward as ``py4 eval``; ``py4_summary(log)``;
- ``scripted_model``: ``py4/gold``, ``py4/python3``, … (``py4 eval``'s scripted policies);
- ``py4 eval --inspect-log DIR`` writes its transcripts as an Inspect log (``py4.evaluate.inspect_log``).

Registered through the package's ``inspect_ai`` entry point (``_registry``). See
docs/evaluation.md, "Inspect".
"""
