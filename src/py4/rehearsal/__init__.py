"""The campaign rehearsal: the campaign's own configs, end to end, on tiny stand-ins (CPU).

``standins`` builds randomly initialised Gemma-4 / GLM-4.5 models with the classes the
campaign's Hub ids resolve to; ``hub_cache`` lays them (and stand-in datasets) out as Hub
snapshots; ``rehearse`` runs the campaign DAG against them with size-only overrides.
"""
