"""The probe set: minimal Python-4 / Python 3 pairs per rule, built and checked like the bank.

``build`` makes the pairs from ``templates`` and confirms each with Boa and Python 3; ``verify``
finds probe text in what a model learns from (the corpus, the bank). The set ships in ``data/``
beside its manifest. Scoring models on it is ``py4.probes``, a layer above.
"""
