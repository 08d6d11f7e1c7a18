"""Evaluation: episodes of a policy on bank splits, pass@k, per-rule breakdowns (``py4 eval``).

Policies: scripted (``gold``, ``python3``, ``migrated``, ``core-only``, ``silent``), a local
transformers model, an OpenAI-compatible endpoint (:mod:`py4.episodes.endpoint`, below training,
whose EFT replay answers come from the same client). See docs/evaluation.md.
"""
