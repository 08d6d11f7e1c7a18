"""The rehearsal's resume drill kills a run at its first complete checkpoint: one every process of
the launch has finished writing, not only process 0 (which writes trainer_state.json last of its
own files while each other process writes its RNG state apart)."""

from __future__ import annotations

import torch

from py4.rehearsal.rehearse import _complete


def test_a_checkpoint_is_complete_once_every_process_wrote_its_part(tmp_path):
    checkpoint = tmp_path / "checkpoint-2"
    (checkpoint / "pytorch_model_fsdp_0").mkdir(parents=True)
    (checkpoint / "trainer_state.json").write_text("{}")
    torch.save({"cpu": torch.random.get_rng_state()}, checkpoint / "rng_state_0.pth")
    assert not _complete(checkpoint, 2)  # process 1 has not written its RNG state yet
    (checkpoint / "rng_state_1.pth").write_bytes(b"")
    assert not _complete(checkpoint, 2)  # it is writing it
    (checkpoint / "rng_state_1.pth").write_bytes((checkpoint / "rng_state_0.pth").read_bytes())
    assert _complete(checkpoint, 2)
    assert not _complete(checkpoint, 1)  # one process writes rng_state.pth
    (checkpoint / "rng_state.pth").write_bytes((checkpoint / "rng_state_0.pth").read_bytes())
    assert _complete(checkpoint, 1)
