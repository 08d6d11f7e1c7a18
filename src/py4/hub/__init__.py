"""Sharing the study's artefacts the way the field does: dataset folders that the Hub and
`datasets.load_dataset(path)` read directly, cards with YAML metadata, model cards with
provenance, and the upload itself as one thin call of `huggingface_hub`.

Deviation from the reference: the as-run campaign uploaded with its own scripts; here every
artefact's folder is complete on disk before anything is sent, so what the Hub would
receive is what the tests load back.
"""
