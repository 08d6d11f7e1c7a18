"""Chat formats: how a model's turns are written as text, below everything that reads or writes them.

- :mod:`py4.chat.templates`: the chat-template families (``smoke``, ``gemma4``, ``glm4moe``),
  each family's training template (``training_templates/*.jinja``, with ``{% generation %}``
  markers) and tool-call format; the episodes parse turns with it, data packing renders
  rows with it, training sets it on the tokenizer.
- :mod:`py4.chat.smoke_format`: the smoke tokenizer's own chat format (tokens, template,
  response template).
- :mod:`py4.chat.smoke_tokenizer`: the locally trained byte-level BPE tokenizer that speaks it.

The package imports nothing of py4 outside itself, so episodes, data, train and the
rehearsal can all use it (tests/test_layers.py).
"""
