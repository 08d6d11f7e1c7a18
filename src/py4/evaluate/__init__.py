"""Evaluation: episodes of a policy on bank splits, pass@k, per-rule breakdowns (``py4 eval``).

Policies: scripted (``gold``, ``python3``, ``migrated``, ``core-only``, ``silent``), a local
transformers model, an OpenAI-compatible endpoint. See docs/evaluation.md.
"""
