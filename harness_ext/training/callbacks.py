"""The Trainer callbacks of a training: the guard (a NaN loss stops it, naming the step; each finished
checkpoint is marked complete) and the loss history kept beside the adapter.

The history lives outside the checkpoints folder, which is deleted once the adapter is finished: a
JSON line per log of the Trainer (loss, learning rate, gradient norm, held-out loss, tokens seen), and
TensorBoard event files where ``tensorboard`` is installed (transformers' own callback, pointed there).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from logic_consistency.outputs import atomic_write

from .devices import TrainingError

__all__ = ["CHECKPOINT_DONE", "HISTORY", "callbacks", "history_folder", "keep_history_until"]

#: The file a checkpoint gets once the Trainer has written all of it (a checkpoint without it is partial).
CHECKPOINT_DONE = ".logic_consistency_complete"
#: The loss history's file in :func:`history_folder`.
HISTORY = "history.jsonl"


def history_folder(adapter: Path) -> Path:
    """Where an adapter's loss history goes: ``<adapter>-history`` beside it, in the row's folder."""
    return adapter.with_name(f"{adapter.name}-history")


def keep_history_until(folder: Path, step: int) -> None:
    """Drop the history lines after ``step`` (a rerun resumes from that checkpoint and logs them again), and a
    torn last line (a run killed, or a disk filled, while a line was appended).

    Raises:
        TrainingError: A line before the last is not JSON (naming the file and the line).
    """
    path = folder / HISTORY
    if not path.is_file():
        return
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    kept = []
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):  # only an append that was cut off ends the file this way
                break
            raise TrainingError(
                f"{path}: line {number} is not JSON; remove the file to start its history afresh"
            ) from None
        if record.get("step", 0) <= step:
            kept.append(line)
    atomic_write(path, [f"{line}\n".encode() for line in kept])


def callbacks(transformers: Any, history: Path) -> list[Any]:
    """The guard, the JSONL history and (where installed) TensorBoard, writing under ``history``."""

    class Guard(transformers.TrainerCallback):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            loss = (logs or {}).get("loss")
            if loss is not None and not math.isfinite(float(loss)):
                raise TrainingError(
                    f"the loss became {loss} at step {state.global_step}; stopped (lower --train-args lr, "
                    "or check the training data)"
                )

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if folder.is_dir():
                (folder / CHECKPOINT_DONE).write_text(str(state.global_step), encoding="utf-8")

    class History(transformers.TrainerCallback):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            if not state.is_world_process_zero or not logs:
                return
            history.mkdir(parents=True, exist_ok=True)
            line = {"step": state.global_step, "epoch": state.epoch, **logs}
            with (history / HISTORY).open("a", encoding="utf-8") as handle:  # appended: one line per log
                handle.write(json.dumps(line, allow_nan=True) + "\n")

    found: list[Any] = [Guard(), History()]
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard is optional: the JSONL history is always written
        return found
    board = transformers.integrations.TensorBoardCallback(SummaryWriter(log_dir=str(history / "tensorboard")))
    return [*found, board]
