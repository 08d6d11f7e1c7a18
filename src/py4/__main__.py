"""``python -m py4 …`` is the ``py4`` command: the same words, the same program (`py4.cli`).

It is how a process that is not the console script starts py4: accelerate's launch of a
multi-GPU training run (``accelerate launch … -m py4 train STAGE --config FILE …``), a campaign
run in a child process, and an interpreter of another environment (the rehearsal's vLLM one).
"""

from py4.cli import app

if __name__ == "__main__":
    app(prog_name="py4")
