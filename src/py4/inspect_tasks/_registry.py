"""What the ``inspect_ai`` entry point loads: the tasks and the ``py4/<policy>`` model provider."""

from py4.inspect_tasks.scripted_model import ScriptedModelAPI  # noqa: F401 - registers py4/<policy>
from py4.inspect_tasks.tasks import (  # noqa: F401 - registers the tasks
    python4, python4_eft_large, python4_eft_pool, python4_grpo, python4_heldin, python4_heldout,
)
