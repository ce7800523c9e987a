"""The one ``lm_eval`` run description (issue 56 item 3, issue 54 item 2): every ``lm_eval`` command line
the suite starts is built by :class:`LmEvalCommand`, and the environment of every child that loads the
suite's tasks by :func:`child_environment`, from declared tables of the suite's own variables."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logic_consistency.harness_ext.publish.failure_facts import ENV_FAILURE_FILE, FAILURE_FILE
from logic_consistency.harness_ext.publish.lm_eval_command import (
    PASSED_SETTINGS,
    RUN_SWITCHES,
    LmEvalCommand,
    child_environment,
)
from logic_consistency.harness_ext.shards.shard import ENV_BUILD, ENV_METRICS, ENV_SHARD, Shard
from logic_consistency.harness_ext.task.data_files import READ_LOG_ENV
from logic_consistency.harness_ext.task.loading import ENV_SUITE_TASKS_ONLY
from logic_consistency.harness_ext.training.data_read import READ_LOG
from logic_consistency.harness_ext.training.study_eval import LmEvalRun

ROOT = Path(__file__).resolve().parents[2]
#: The package's own modules (the layers; not tests, scripts or the virtual environment).
PACKAGE_FILES = sorted(
    path
    for path in [*ROOT.glob("*.py"), *(p for d in ("metrics", "harness_ext", "tasks", "leaderboard", "cli") for p in (ROOT / d).rglob("*.py"))]
    if path.name != "setup.py"
)  # fmt: skip


def test_every_variable_of_the_suite_is_declared_set_by_the_run_or_passed() -> None:
    named = set()
    for path in PACKAGE_FILES:
        named.update(re.findall(r"\bLOGIC_CONSISTENCY_[A-Z_]*[A-Z]\b", path.read_text(encoding="utf-8")))
    assert named, "no variable found: the scan is broken"
    assert not set(RUN_SWITCHES) & set(PASSED_SETTINGS)
    assert sorted(named - set(RUN_SWITCHES) - set(PASSED_SETTINGS)) == []


def test_the_passed_settings_are_the_modules_own_names() -> None:
    """The table names them as text (they live in rooms it may not import); each is the constant its reader uses."""
    from logic_consistency.credentials import SECRET_NAMES_VARIABLE
    from logic_consistency.harness_ext.autoload import ENV_SWITCH
    from logic_consistency.harness_ext.models.embedded import CACHE_ENV
    from logic_consistency.leaderboard.run.descendants import MARK_VARIABLE
    from logic_consistency.tasks.data._source import DATA_ENV_VAR

    assert set(PASSED_SETTINGS) == {SECRET_NAMES_VARIABLE, ENV_SWITCH, CACHE_ENV, MARK_VARIABLE, DATA_ENV_VAR}


def test_one_builder_makes_every_lm_eval_command_line() -> None:
    """An ``lm_eval`` command line is spelled in one module: its options that only a command line holds."""
    for option in ('"--log_samples"', '"--output_path"', '"--use_cache"', '["--model_args"'):
        spelled = [p.relative_to(ROOT).as_posix() for p in PACKAGE_FILES if option in p.read_text(encoding="utf-8")]
        assert spelled == ["harness_ext/publish/lm_eval_command.py"], (option, spelled)


def test_the_shells_switches_never_reach_a_child_and_the_users_settings_do() -> None:
    shell = {ENV_SHARD: "0/2", ENV_METRICS: "/tmp/m.json", ENV_BUILD: "other", ENV_SUITE_TASKS_ONLY: "1",
             "LOGIC_CONSISTENCY_SOMETHING_NEW": "x", "LOGIC_CONSISTENCY_DATA": "/data", "PATH": "/bin"}  # fmt: skip
    env = child_environment(shell, {ENV_SHARD: "1/2", "EXTRA": "y"})
    assert env == {"LOGIC_CONSISTENCY_DATA": "/data", "PATH": "/bin", "EXTRA": "y"}
    assert child_environment(shell, switches={ENV_SHARD: "1/3"})[ENV_SHARD] == "1/3"
    with pytest.raises(ValueError, match="undeclared run switches"):
        child_environment(shell, switches={"LOGIC_CONSISTENCY_SHRAD": "0/2"})


def test_a_run_sets_only_its_own_switches(tmp_path: Path) -> None:
    whole = LmEvalCommand("hf", "pretrained=m", "t", tmp_path, lm_eval="lm_eval")
    shell = {ENV_SHARD: "0/2", ENV_BUILD: "b", ENV_SUITE_TASKS_ONLY: "1", ENV_FAILURE_FILE: "/tmp/other.json"}
    # a whole run sets one switch: its failure record, in its own folder (the shell's value never reaches it)
    assert set(whole.environment(shell)) & set(RUN_SWITCHES) == {ENV_FAILURE_FILE}
    assert whole.environment(shell)[ENV_FAILURE_FILE] == str(tmp_path / FAILURE_FILE)
    shard = LmEvalCommand("hf", "pretrained=m", "t", tmp_path, shard=Shard(1, 3), build_id="B", env={"K": "v"})
    env = shard.environment(shell)
    assert (env[ENV_SHARD], env[ENV_BUILD], env[ENV_METRICS], env["K"]) == (
        "1/3",
        "B",
        str(tmp_path / "shard_metrics.json"),
        "v",
    )
    assert ENV_SUITE_TASKS_ONLY not in env


def test_the_log_shows_the_public_model_arguments_and_the_stamp_ignores_where_it_runs(tmp_path: Path) -> None:
    run = LmEvalCommand("hf", "pretrained=/home/alice/m,dtype=float32", "t", tmp_path / "out", lm_eval="/venv/lm_eval")
    assert "/home/alice/m" in " ".join(run.argv()) and "alice" not in " ".join(run.shown())
    argv, at = run.argv(), run.argv().index("--output_path")
    assert run.results_argv() == argv[1:at] + argv[at + 2 :]


def test_the_log_shows_only_the_declared_metadata(tmp_path: Path) -> None:
    """Manual pass of issue 54: a build's ``lm_eval.log`` headed its command with ``--metadata`` as given, so
    an undeclared nested value (``{"x": {"note": TOKEN}}``) reached the run folder; the log shows the declared
    options only (``allowlist.public_metadata``), the run still gets all of it."""
    metadata = {"x": {"note": "m8iS2G8NPRVd"}, "seed": 3}
    run = LmEvalCommand("lc-chat", "model=judge", "t", tmp_path / "out", lm_eval="/venv/lm_eval", metadata=metadata)
    assert "m8iS2G8NPRVd" in " ".join(run.argv())
    shown = run.shown()
    assert "m8iS2G8NPRVd" not in " ".join(shown) and '"x"' not in " ".join(shown)
    assert shown[shown.index("--metadata") + 1] == '{"seed": 3}'


def test_a_study_rows_command_and_stamp_are_as_before(tmp_path: Path) -> None:
    """The study's command line keeps its order, so an evaluation a study finished before stays kept."""
    row = LmEvalRun(Path("/m"), "t", {"instance_split": "test"}, 3, tmp_path, adapter=Path("/a"), gen_kwargs="x=1")
    assert row.command()[1:] == [
        "--model", "lc-hf", "--model_args", "pretrained=/m,dtype=float32,peft=/a", "--tasks", "t",
        "--metadata", '{"instance_split": "test"}', "--batch_size", "4", "--output_path", str(tmp_path),
        "--log_samples", "--limit", "3", "--apply_chat_template", "--gen_kwargs", "x=1",
    ]  # fmt: skip
    # its tasks' data files are listed in its folder (the done marker hashes them: training/data_read.py)
    assert row.lm_eval().switches() == {
        ENV_SUITE_TASKS_ONLY: "1",
        READ_LOG_ENV: str(tmp_path / READ_LOG),
        ENV_FAILURE_FILE: str(tmp_path / FAILURE_FILE),
    }
