"""The step a run resumed from, when the Trainer has since removed that checkpoint."""

from py4.train.packed import checkpoint_step


def test_a_resumed_checkpoint_rotated_out_by_save_total_limit_still_counts_its_step(tmp_path):
    # resumed from checkpoint-8; 16 and 20 saved since, and save_total_limit 2 removed checkpoint-8
    assert checkpoint_step(str(tmp_path / "run" / "checkpoint-8")) == 8


def test_the_step_comes_from_the_trainer_state_when_the_checkpoint_is_there(tmp_path):
    folder = tmp_path / "renamed-by-hand"
    folder.mkdir()
    (folder / "trainer_state.json").write_text('{"global_step": 12}')
    assert checkpoint_step(str(folder)) == 12
    assert checkpoint_step(None) == 0
    assert checkpoint_step(str(tmp_path / "gone-and-not-a-checkpoint-name")) == 0
