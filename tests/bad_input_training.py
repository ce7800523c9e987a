"""Bad-input cases of ``logic-consistency improve`` and its trainer (issue 30 item 6): a base that cannot
be trained, a filtered set with too few examples (naming the round), a NaN loss (naming the step), out of
memory (naming the settings to lower), a folder holding another study, a disk that fills mid-checkpoint
(the last good checkpoint survives), train/test overlap, a mistyped hyperparameter, the missing extra;
``improve repair --train-data``: a mistyped source, a malformed Summarize-from-Feedback file, a post
that holds a test document; the Ray executor flags.
Ctrl-C (no finished-looking adapter, resume) is tests/harness_ext/test_training.py's."""

from __future__ import annotations

import errno
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

from bad_inputs_support import CaseTable
from tiny_model import tiny_base

from logic_consistency.harness_ext.models.adapter_manifest import BaseModelError
from logic_consistency.harness_ext.training import study, study_eval, study_identity, trainer
from logic_consistency.harness_ext.training.libraries import TrainingUnavailable
from logic_consistency.harness_ext.training.trainer import CHECKPOINT_DONE, Example, TrainingError, TrainJob
from logic_consistency.options import OptionError
from logic_consistency.tasks import improve_splits
from logic_consistency.tasks.data import DatasetFormatError
from logic_consistency.tasks.gv.improve_training import TRAINING as GV_TRAINING
from logic_consistency.tasks.pairwise import improve_data

CASES = CaseTable()
EXAMPLES = [Example(f"Q: What is {n} + 1? A:", f" {n + 1}") for n in range(8)]


def _job(base: Path, out: Path, examples: list[Example] = EXAMPLES, **overrides: Any) -> TrainJob:
    settings = GV_TRAINING.settings({"max_steps": 3, "lr": 0.05, "save_steps": 1, **overrides})
    return TrainJob(base, examples, out, settings, "gv", "consistency FT round 2", "train", 4)


def _gguf_only(tmp: Path) -> None:
    from logic_consistency.tasks.pairwise import improve as repair_improve

    (tmp / "model.gguf").write_bytes(b"GGUF")  # the study's driver checks the base once, before any unit
    repair_improve.run_repair_study(repair_improve.RepairStudyOptions(base=tmp / "model.gguf", out=tmp / "s"))


def _unknown_architecture(tmp: Path) -> None:
    base = tiny_base(tmp / "base")
    (base / "config.json").write_text(json.dumps({"model_type": "no_such_architecture"}), encoding="utf-8")
    trainer.train_adapter(_job(base, tmp / "out"))


def _few(tmp: Path, count: int) -> None:
    trainer.train_adapter(_job(tiny_base(tmp / "base"), tmp / "out", EXAMPLES[:count]))


def _nan_loss(tmp: Path) -> None:
    import trl

    original = trl.SFTTrainer.compute_loss

    def nan(self: Any, *args: Any, **kwargs: Any) -> Any:
        return original(self, *args, **kwargs) * float("nan")

    with mock.patch.object(trl.SFTTrainer, "compute_loss", nan):
        trainer.train_adapter(_job(tiny_base(tmp / "base"), tmp / "out"))


def _out_of_memory(tmp: Path) -> None:
    import torch
    import transformers

    def oom(*args: Any, **kwargs: Any) -> Any:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    with mock.patch.object(transformers.Trainer, "train", oom):
        trainer.train_adapter(_job(tiny_base(tmp / "base"), tmp / "out"))


def _disk_full(tmp: Path) -> None:
    import transformers

    original = transformers.Trainer.save_model
    calls = {"n": 0}

    def fills(self: Any, output_dir: str | None = None, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:  # the second checkpoint: half written, then the disk is full
            Path(str(output_dir)).mkdir(parents=True, exist_ok=True)
            (Path(str(output_dir)) / "adapter_model.safetensors").write_bytes(b"half")
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(self, output_dir, *args, **kwargs)

    out = tmp / "out"
    try:
        with mock.patch.object(transformers.Trainer, "save_model", fills):
            trainer.train_adapter(_job(tiny_base(tmp / "base"), out))
    finally:
        checkpoints = out.with_name("out.partial") / "checkpoints"
        assert (checkpoints / "checkpoint-1" / CHECKPOINT_DONE).is_file(), "the last good checkpoint is gone"
        assert not (checkpoints / "checkpoint-2").exists(), "the half-written checkpoint was kept"
        assert not out.exists(), "a half-trained adapter looks finished"


def _other_study(tmp: Path) -> None:
    study.Study(tmp / "s", {"study": "gv", "base": "a"}).open()
    study.Study(tmp / "s", {"study": "repair", "base": "a"}).open()


def _not_a_study(tmp: Path) -> None:
    (tmp / "s").mkdir()
    (tmp / "s" / "notes.txt").write_text("mine", encoding="utf-8")
    study.Study(tmp / "s", {"study": "gv"}).open()


def _mismatched_row(tmp: Path) -> None:
    study.Study(tmp / "s", {"study": "gv", "chat_template": True}).open()
    kept = study.Study(tmp / "s", {"study": "gv", "chat_template": True})
    kept.finish("round_0", {"row": "round_0", "identity": study_identity.row_identity(kept.identity, "round_0")})
    now = study.Study(tmp / "s", {"study": "gv", "chat_template": False}, rebuild_mismatched=True)
    now.open()  # the folder takes the new identity; its row is checked against it
    study.Study(tmp / "s", now.identity).kept("round_0", study_identity.row_identity(now.identity, "round_0"))


def _overlap(tmp: Path) -> None:
    doc = {"id": "arithmetic-00003", "question": "What is 1 + 2?"}
    with mock.patch.object(improve_splits, "split_docs", lambda *args, **kwargs: [doc]):
        improve_splits.check_disjoint(["logic_consistency_gv_arithmetic"], {}, 5)


def _missing_extra(tmp: Path) -> None:
    import importlib

    real = importlib.import_module

    def no_peft(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "peft":
            raise ImportError("No module named 'peft'")
        return real(name, *args, **kwargs)

    with mock.patch.object(importlib, "import_module", no_peft):
        trainer.train_adapter(_job(tiny_base(tmp / "base"), tmp / "out"))


def _several_gpus(tmp: Path) -> None:
    import torch

    with (
        mock.patch.object(torch.cuda, "is_available", lambda: True),
        mock.patch.object(torch.cuda, "device_count", lambda: 2),
    ):
        trainer.train_adapter(_job(tiny_base(tmp / "base"), tmp / "out"))


def _distributed_launch(tmp: Path) -> None:
    with mock.patch.dict("os.environ", {"WORLD_SIZE": "2"}):
        trainer.train_adapter(_job(tiny_base(tmp / "base"), tmp / "out"))


def _qlora_without_gpu(tmp: Path) -> None:
    import torch

    with mock.patch.object(torch.cuda, "is_available", lambda: False):
        trainer.train_adapter(_job(tiny_base(tmp / "base"), tmp / "out", quantize="4bit"))


def _qlora_without_bitsandbytes(tmp: Path) -> None:
    import importlib.util

    import torch

    real = importlib.util.find_spec
    with (
        mock.patch.object(torch.cuda, "is_available", lambda: True),
        mock.patch.object(torch.cuda, "device_count", lambda: 1),
        mock.patch.object(importlib.util, "find_spec", lambda name, *a: None if name == "bitsandbytes" else real(name)),
    ):
        trainer.train_adapter(_job(tiny_base(tmp / "base"), tmp / "out", quantize="4bit"))


def _bad_target_modules(tmp: Path) -> None:
    trainer.train_adapter(_job(tiny_base(tmp / "base"), tmp / "out", lora_target_modules="q_proj+no_such_proj"))


def _bad_feedback_file(tmp: Path) -> None:
    good = {"info": {"id": "t3_a", "post": "A post."}, "summaries": [{"text": "One."}, {"text": "Two."}], "choice": 0}
    path = tmp / "sff.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "choice": 2}) + "\n", encoding="utf-8")
    improve_data.load_feedback(path, None)


def _post_is_a_test_document(tmp: Path) -> None:
    article = "The city council approved a new park on Tuesday after a long debate about its cost and who pays."
    tests = [{"instance_id": "M8-art-7", "context": article}]
    improve_data.check_contexts_disjoint(
        [{"instance_id": "cnndm_7", "context": article}], "logic_consistency_summeval", tests
    )


CASES.add(
    "training: a GGUF-only base", _gguf_only, "--base", "model.gguf", "GGUF-only", "model-path", error=BaseModelError
)
CASES.add(
    "training: a base of an unknown architecture",
    _unknown_architecture,
    "--base",
    "cannot load it",
    error=BaseModelError,
)
CASES.add(
    "training: a filtered set of 0 examples",
    lambda tmp: _few(tmp, 0),
    "round 2",
    "0 examples",
    "not training",
    error=TrainingError,
)
CASES.add(
    "training: a filtered set under --min-examples",
    lambda tmp: _few(tmp, 3),
    "round 2",
    "3 examples",
    "fewer than the 4",
    error=TrainingError,
)
CASES.add("training: a NaN loss", _nan_loss, "loss became nan", "at step 1", error=TrainingError)
CASES.add(
    "training: out of memory",
    _out_of_memory,
    "out of memory",
    "batch_size=8",
    "max_length=1024",
    "grad_accum",
    error=TrainingError,
)
CASES.add(
    "training: the disk fills mid-checkpoint", _disk_full, "disk filled", "checkpoint-1", "resume", error=TrainingError
)
CASES.add("improve: --out holds another study", _other_study, "--out", "holds another study", "study", error=ValueError)
CASES.add("improve: --out holds other files", _not_a_study, "--out", "not an improve study", error=ValueError)
CASES.add(
    "improve: a kept row made with another chat template",
    _mismatched_row,
    "row round_0",
    "chat_template: kept True, now False",
    "--rebuild-mismatched",
    error=ValueError,
)
CASES.add(
    "improve: train and test share an instance",
    _overlap,
    "logic_consistency_gv_arithmetic",
    "share instances",
    "arithmetic-00003",
    error=ValueError,
)
CASES.add(
    "improve: a mistyped --train-args key",
    lambda tmp: GV_TRAINING.settings({"lr_rate": 1}),
    "--train-args",
    "'lr_rate'",
    error=OptionError,
)
CASES.add(
    "training: the train extra is missing",
    _missing_extra,
    "peft is missing",
    "bash scripts/setup.sh train",
    "from a clone",
    error=TrainingUnavailable,
)
CASES.add(
    "training: several GPUs visible (never a silent nn.DataParallel)",
    _several_gpus,
    "sees 2 GPUs",
    "nn.DataParallel",
    "CUDA_VISIBLE_DEVICES",
    "--gpus-per-row 1",
    error=TrainingError,
)
CASES.add(
    "training: one rank of a distributed launch",
    _distributed_launch,
    "WORLD_SIZE=2",
    "once per rank",
    error=TrainingError,
)
CASES.add(
    "training: QLoRA without a GPU",
    _qlora_without_gpu,
    "quantize=4bit",
    "a CUDA GPU",
    "drop quantize=4bit",
    error=TrainingError,
)
CASES.add(
    "training: QLoRA on a GPU without bitsandbytes",
    _qlora_without_bitsandbytes,
    "quantize=4bit",
    "bitsandbytes package",
    error=TrainingError,
)
CASES.add(
    "training: LoRA target modules the model does not have",
    _bad_target_modules,
    "lora_target_modules=q_proj+no_such_proj",
    "no module no_such_proj",
    "q_proj",
    error=TrainingError,
)
CASES.add(
    "improve: a mistyped --train-data",
    lambda tmp: improve_data.parse_train_data("summarize_from_feedback"),
    "--train-data",
    "'summarize_from_feedback'",
    "summarize_feedback:PATH",
    error=ValueError,
)
CASES.add(
    "improve: a malformed Summarize-from-Feedback --train-data file",
    _bad_feedback_file,
    "sff.jsonl",
    "line 2",
    "field 'choice'",
    "must be 0 or 1",
    error=DatasetFormatError,
)
CASES.add(
    "improve: a Summarize-from-Feedback post that is a test document",
    _post_is_a_test_document,
    "post 'cnndm_7'",
    "logic_consistency_summeval",
    "M8-art-7",
    "refusing to train",
    error=TrainingError,
)


def _improve_args(**given: Any) -> Any:
    import argparse

    return argparse.Namespace(**{"executor": "local", "ray_address": None, "gpus_per_row": None, **given})


def _gpus_without_ray(tmp: Path) -> None:
    from logic_consistency.cli import improve

    improve._executor(_improve_args(gpus_per_row=1.0))


def _ray_missing(tmp: Path) -> None:
    from logic_consistency.cli import improve

    with mock.patch.dict("sys.modules", {"ray": None}):  # import ray: ImportError, as without the extra
        improve._executor(_improve_args(executor="ray"))


def _no_head(tmp: Path) -> None:
    from logic_consistency.cli import improve

    improve._executor(_improve_args(executor="ray", ray_address="127.0.0.1:1"))  # nothing listens on port 1


def _gpus_per_row_2(tmp: Path) -> None:
    from logic_consistency.cli import improve

    improve._executor(_improve_args(executor="ray", gpus_per_row=2.0))


def _more_gpus_than_a_node(tmp: Path) -> None:
    from types import SimpleNamespace

    from logic_consistency.harness_ext.training.study_executor import study_executor

    cluster = SimpleNamespace(nodes=lambda: [{"Alive": True, "Resources": {"CPU": 16.0, "GPU": 1.0}}])
    study_executor("ray", gpus_per_row=2)._gpus(cluster)  # type: ignore[arg-type]


CASES.add(
    "improve: --gpus-per-row with --executor local",
    _gpus_without_ray,
    "--gpus-per-row",
    "applies to --executor ray only",
    error=ValueError,
)
CASES.add(
    "improve: --executor ray without the ray extra",
    _ray_missing,
    "--executor ray needs Ray",
    "pip install -e '.[ray]'",
    error=ModuleNotFoundError,
)
CASES.add(
    "improve: --gpus-per-row more than any node has",
    _more_gpus_than_a_node,
    "--gpus-per-row 2",
    "largest node: 1",
    error=ValueError,
)
CASES.add(
    "improve: --gpus-per-row 2 (a row on several GPUs: refused, never nn.DataParallel)",
    _gpus_per_row_2,
    "--gpus-per-row must be in [0, 1]",
    "got 2.0",
    error=OptionError,
)
CASES.add(
    "improve: --ray-address where no Ray head answers",
    _no_head,
    "--ray-address '127.0.0.1:1'",
    "no Ray head answers",
    error=ValueError,
)


def _pickle_adapter(tmp: Path) -> None:
    from logic_consistency.harness_ext.models.provenance import check_adapter_base

    (tmp / "adapter").mkdir()
    (tmp / "adapter" / "adapter_config.json").write_text('{"base_model_name_or_path": "org/base"}')
    (tmp / "adapter" / "adapter_model.bin").write_bytes(b"\x80\x04planted")
    check_adapter_base(f"pretrained=org/base,peft={tmp / 'adapter'}")


CASES.add(
    "peft adapter in pickle format (issue 39: safetensors only)",
    _pickle_adapter,
    "adapter_model.bin is in pickle format",
    "only safetensors adapters are accepted",
    error=ValueError,
)


class Refused(Exception):
    """A command line argparse refused (its one-line message, as the user sees it on stderr)."""


def _improve(tmp: Path, recipe: str, *flags: str) -> Any:
    """``logic-consistency improve RECIPE --base B --out tmp/s FLAGS`` in this process, as a user runs it: a
    refusal (argparse's exit 2, the command's status 2, or its ``ValueError``, which ``main`` prints) is raised
    as :class:`Refused` with its one line."""
    import contextlib
    import io

    from bad_inputs_support import cli

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            status = cli("improve", recipe, "--base", str(tmp / "no-base"), "--out", str(tmp / "s"), *flags)
        except SystemExit as exit:
            status = exit.code
        except ValueError as error:
            raise Refused(f"{type(error).__name__}: {error}") from None
    if status != 0:
        raise Refused(err.getvalue().strip().splitlines()[-1])
    return status


for _name, _flags, _expect in [
    ("--train-args with a key given twice", ("--train-args", "lr=1e-4,lr=2e-4"), ("--train-args", "'lr' given twice")),
    (
        "--max-steps and --train-args max_steps both",
        ("--train-args", "max_steps=5", "--max-steps", "7"),
        ("--max-steps and --train-args max_steps", "give one"),
    ),
    ("--flip above its declared maximum", ("--flip", "1.5"), ("--flip must be", "got 1.5")),
    ("--min-examples below its declared minimum", ("--min-examples", "0"), ("--min-examples must be", "got 0")),
    ("--max-steps 0", ("--max-steps", "0"), ("--max-steps must be", "got 0")),
    (
        "--method elo without a REPAIR-ed row",
        ("--rows", "zero_shot,perturbed", "--method", "elo"),
        ("--method: applies to the REPAIR-ed rows", "--rows zero_shot,perturbed has none"),
    ),
    (
        "--downsample-to perturbed without a REPAIR-ed row",
        ("--rows", "perturbed", "--downsample-to", "perturbed"),
        ("--downsample-to: applies to the REPAIR-ed rows",),
    ),
    ("--metadata with a case variant of an option", ("--metadata", '{"KS": [3]}'), ("--metadata", "'KS'", "'ks'")),
    (
        "--metadata with another family's option (generator_shots in a REPAIR study)",
        ("--metadata", '{"generator_shots": 2}'),
        ("--metadata: 'generator_shots' is an option of the tasks of gv/", "improve repair"),
    ),
    (
        "--metadata instance_split",
        ("--metadata", '{"instance_split": "test"}'),
        ("instance_split is set by the study",),
    ),
    (
        "--train-data msmarco for a CaTeRS study",
        ("--train-data", "msmarco"),
        ("--train-data msmarco", "logic_consistency_caters", "--tasks logic_consistency_msmarco"),
    ),
]:
    CASES.add(f"improve repair: {_name}", lambda tmp, f=_flags: _improve(tmp, "repair", *f), *_expect, error=Refused)

for _recipe, _name, _flags, _expect in [
    ("gv", "--rounds below its declared minimum", ("--rounds", "0"), ("--rounds must be", "got 0")),
    (
        "gv",
        "--selftrain-rounds below its declared minimum",
        ("--selftrain-rounds", "0"),
        ("--selftrain-rounds must be",),
    ),
    ("gv", "--train-args epochs=0", ("--train-args", "epochs=0"), ("epochs must be in (0, 1000)", "got 0")),
    # issue 54 item 6: every argument checked once, in the recipe's declaration, before any work
    (
        "gv",
        "--pooled with one task (a switch that does not apply)",
        ("--pooled",),
        ("--pooled: applies to several --tasks", "this study has one task, logic_consistency_gv_arithmetic_cot"),
    ),
    (
        "gv",
        "a task given twice",
        ("--tasks", "logic_consistency_gv_triviaqa,logic_consistency_gv_arithmetic,logic_consistency_gv_triviaqa"),
        ("--tasks", "logic_consistency_gv_triviaqa given twice", "give each task once"),
    ),
    (
        "gv",
        "App. H's measurement task",
        ("--tasks", "logic_consistency_gv_arithmetic_cot_app_h"),
        (
            "--tasks logic_consistency_gv_arithmetic_cot_app_h: App. H's measurement task",
            "not a study's task",
            "give --tasks logic_consistency_gv_arithmetic_cot",
        ),
    ),
    (
        "gv",
        "a trailing comma in --tasks",
        ("--tasks", "logic_consistency_gv_arithmetic,"),
        ("--tasks 'logic_consistency_gv_arithmetic,': an empty task name", "trailing"),
    ),
    (
        "gv",
        "a REPAIR task (issue 57 item 5)",
        ("--tasks", "logic_consistency_summeval"),
        (
            "--tasks logic_consistency_summeval: not a task of the GV family",
            "improve repair's",
            "logic_consistency_gv_arithmetic_cot",
        ),
    ),
    ("gv", "a GV group", ("--tasks", "logic_consistency_gv"), ("--tasks logic_consistency_gv: a group",)),
    (
        "repair",
        "a trailing comma in --tasks",
        ("--tasks", "logic_consistency_caters,"),
        ("--tasks 'logic_consistency_caters,': an empty task name",),
    ),
    (
        "repair",
        "--merge-weights with no row that trains (a switch that does not apply)",
        ("--rows", "zero_shot", "--merge-weights"),
        ("--merge-weights: applies to the rows that train an adapter", "--rows zero_shot has none"),
    ),
]:
    CASES.add(f"improve {_recipe}: {_name}", lambda tmp, r=_recipe, f=_flags: _improve(tmp, r, *f), *_expect,
              error=Refused)  # fmt: skip

for _recipe, _other, _flags in [
    ("repair", "gv", ("--rounds", "2")),
    ("repair", "gv", ("--selftrain-rounds", "2")),
    ("gv", "repair", ("--flip", "0.2")),
    ("gv", "repair", ("--rows", "zero_shot")),
    ("gv", "repair", ("--method", "elo")),
    ("gv", "repair", ("--train-data", "msmarco")),
    ("gv", "repair", ("--pairs",)),
    ("repair", "gv", ("--pooled",)),
]:
    CASES.add(
        f"improve {_recipe} {_flags[0]}: an option of the other recipe",
        lambda tmp, r=_recipe, f=_flags: _improve(tmp, r, *f),
        f"logic-consistency improve {_recipe}: error: {_flags[0]}: an option of improve {_other}, not of improve {_recipe}",
        error=Refused,
    )


def _msmarco(tmp: Path, edit: Callable[[list[str], list[str]], None]) -> Any:
    """``load_msmarco`` on a copy of the fixture's two files, ``edit``-ed (queries lines, answers)."""
    source = Path(__file__).resolve().parent / "fixtures" / "data" / "msmarco"
    queries = (source / "marco-train-10k.jsonl").read_text(encoding="utf-8").splitlines()
    answers = json.loads((source / "marco-train-10k-gpt3.5.json").read_text(encoding="utf-8"))
    edit(queries, answers)
    folder = tmp / "msmarco"
    folder.mkdir()
    (folder / "marco-train-10k.jsonl").write_text("\n".join(queries) + "\n", encoding="utf-8")
    (folder / "marco-train-10k-gpt3.5.json").write_text(json.dumps(answers), encoding="utf-8")
    return improve_data.load_msmarco(folder, None)


def _repeat_query(queries: list[str], answers: list[str]) -> None:
    queries[1] = queries[0]
    answers[1] = answers[0]


def _empty_answer(queries: list[str], answers: list[str]) -> None:
    answers[1] = ""


CASES.add(
    "improve repair --train-data msmarco:DIR: a repeated query",
    lambda tmp: _msmarco(tmp, _repeat_query),
    "line 2",
    "repeats line 1",
    "boiling point",
    error=DatasetFormatError,
)
CASES.add(
    "improve repair --train-data msmarco:DIR: an empty GPT-3.5 answer",
    lambda tmp: _msmarco(tmp, _empty_answer),
    "entry 1",
    "must be the GPT-3.5 answer string (a ranking)",
    error=DatasetFormatError,
)


def _no_lm_eval(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("an lm_eval run started before the refusal")


def _repair_study(tmp: Path, **given: Any) -> Any:
    from logic_consistency.tasks.pairwise import improve as repair_improve

    options = repair_improve.RepairStudyOptions(base=tiny_base(tmp / "base"), out=tmp / "s", limit=2, **given)
    with (
        mock.patch.object(study_eval, "run_lm_eval", _no_lm_eval),
        mock.patch.object(repair_improve, "run_lm_eval", _no_lm_eval),
    ):
        return repair_improve.run_repair_study(options)


def _qlora_without_gpu_study(tmp: Path) -> None:
    import torch

    with mock.patch.object(torch.cuda, "is_available", lambda: False):
        _repair_study(tmp, train_args={"quantize": "4bit"})


CASES.add(
    "improve repair: quantize=4bit without a GPU, refused before the zero-shot evaluation",
    _qlora_without_gpu_study,
    "quantize=4bit",
    "a CUDA GPU",
    error=TrainingError,
)


def _gv_task_in_repair(tmp: Path) -> Any:
    from logic_consistency.tasks.gv.base import GVTask
    from logic_consistency.tasks.pairwise import improve as repair_improve

    gv_task = GVTask.__new__(GVTask)  # what lm-eval builds for the name (no task index built here)
    with mock.patch.object(repair_improve, "_train_task", lambda *args: (gv_task, [{"id": "arithmetic-1"}])):
        return _repair_study(tmp, tasks="logic_consistency_gv_arithmetic", rows=("zero_shot",))


CASES.add(
    "improve repair: a GV task",
    _gv_task_in_repair,
    "--tasks logic_consistency_gv_arithmetic",
    "not a pairwise task",
    "improve gv's",
    error=TrainingError,
)


def _dangling_out(tmp: Path) -> Any:
    (tmp / "link").symlink_to(tmp / "nowhere")
    return _improve(tmp, "gv", "--out", str(tmp / "link"))


CASES.add("improve: a dangling --out link", _dangling_out, "--out", "which does not exist", error=Refused)


def _adapter_rank(tmp: Path) -> None:
    from logic_consistency.harness_ext.models.adapter_manifest import check_adapter_weights

    folder = tmp / "adapter"
    folder.mkdir()
    header = json.dumps({"base_model.model.layers.0.q_proj.lora_A.weight": {"dtype": "F32", "shape": [16, 32],
                                                                           "data_offsets": [0, 2048]}}).encode()  # fmt: skip
    (folder / "adapter_model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + bytes(2048))
    (folder / "adapter_config.json").write_text(json.dumps({"r": 8, "base_model_name_or_path": "org/base"}))
    check_adapter_weights(folder)


CASES.add(
    "an adapter whose config rank is not its weights'",
    _adapter_rank,
    "adapter_config.json says r=8",
    "adapter_model.safetensors holds rank 16",
    "does not match the weights",
    error=ValueError,
)


def _damaged_history(tmp: Path) -> None:
    from logic_consistency.harness_ext.training.callbacks import HISTORY, keep_history_until

    lines = [json.dumps({"step": 1, "loss": 1.0}), "not json", json.dumps({"step": 2, "loss": 0.5})]
    (tmp / HISTORY).write_text("\n".join(lines) + "\n", encoding="utf-8")
    keep_history_until(tmp, 2)  # a resumed training keeps the history up to its checkpoint


# a damaged line inside a loss history ended a resumed study in a JSONDecodeError traceback (a torn last
# line, the mark of a killed append, is dropped: tests/harness_ext/test_history_resume.py)
CASES.add(
    "loss history with a damaged line", _damaged_history, "history.jsonl: line 2 is not JSON", error=TrainingError
)
