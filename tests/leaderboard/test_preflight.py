"""Refuse before spending: a build checks its night, backends, tasks and ``extra_args`` before the first
model call; a stand-in ``lm_eval`` counts its launches (none when any input is bad)."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.leaderboard.board.ingest import BootstrapSettings
from logic_consistency.leaderboard.run.extra_args import parse_extra_args
from logic_consistency.leaderboard.run.modellist import load_model_list
from logic_consistency.leaderboard.run.nightly import build, check_night

BOOT = BootstrapSettings(n_resamples=300)
COUNTING_LM_EVAL = "#!{python}\nwith open({launches!r}, 'a') as out:\n    out.write('launch\\n')\n"


class _Counter:
    """A stand-in ``lm_eval`` and embedded-model resolver that count their calls."""

    def __init__(self, tmp_path: Path) -> None:
        self.launches = tmp_path / "launches.txt"
        self.fake = tmp_path / "fake_lm_eval"
        self.fake.write_text(
            COUNTING_LM_EVAL.format(python=sys.executable, launches=str(self.launches)), encoding="utf-8"
        )
        self.fake.chmod(0o755)
        self.resolved: list[str] = []
        self.tmp_path = tmp_path

    def embedded_sha(self, name: str) -> str:
        self.resolved.append(name)
        return "0" * 64

    @property
    def calls(self) -> int:
        launched = len(self.launches.read_text().splitlines()) if self.launches.exists() else 0
        return launched + len(self.resolved)

    def build(self, entries: str, night: str = "2026-01-01", **overrides: Any) -> Any:
        models = self.tmp_path / "models.yaml"
        models.write_text(f"models:\n{entries}", encoding="utf-8")
        return build(
            self.tmp_path / "board",
            model_list=models,
            overrides=overrides,
            night=night,
            lm_eval=str(self.fake),
            bootstrap=BOOT,
            progress=False,
            embedded_sha=self.embedded_sha,
            log=lambda _: None,
        )


GOOD = "  - {name: good, model: lc-embedded, model_args: 'model=smollm2-135m-instruct'}\n"


def test_the_counter_counts_a_good_build(tmp_path: Path) -> None:
    counter = _Counter(tmp_path)
    result = counter.build(GOOD + "  - {name: other, model: dummy}\n")
    assert counter.calls == 3 and counter.resolved == ["smollm2-135m-instruct"]
    assert len(result.failed) == 2  # the stand-in writes no results


@pytest.mark.parametrize(
    ("entries", "night", "overrides", "message"),
    [
        (GOOD, "2026-1-5", {}, r"--night must be written YYYY-MM-DD: got '2026-1-5'; did you mean '2026-01-05'\?"),
        (GOOD, "9999-12-31", {}, r"--night 9999-12-31 is in the future"),
        (
            GOOD + "  - {name: t, model: dummy, tasks: logic_consistency_summevl}\n",
            "2026-01-01",
            {},
            r"models\[1\] \(t\): 'tasks': .*'logic_consistency_summevl'; did you mean 'logic_consistency_summeval'\?",
        ),
        (GOOD, "2026-01-01", {"tasks": "logic_consistency,no_such_task_anywhere"}, r"'no_such_task_anywhere'"),
        (
            GOOD + "  - {name: x, model: dummy, extra_args: ['-a', 'pretrained=other']}\n",
            "2026-01-01",
            {},
            r"sets lm_eval's --model_args",
        ),
        (
            GOOD
            + "  - {name: api, model: lc-chat, model_args: 'model=m,base_url=http://127.0.0.1:9/v1,max_token=1'}\n",
            "2026-01-01",
            {},
            r"models\[1\] \(api\): model_args: .*'max_token'.*'max_tokens'",
        ),
        # a command line's metadata is checked where it is given, before it is merged into any entry
        (GOOD, "2026-01-01", {"metadata": {"seed": -1}}, r"command line: metadata\.seed must be at least 0, got -1"),
        (
            GOOD,
            "2026-01-01",
            {"metadata": {"ks": [3, 6], "max_items": 5}},
            r"metadata.max_items=5 leaves no room for the largest K in metadata.ks=\[3, 6\]",
        ),
        (
            GOOD + "  - {name: hub, model: dummy, extra_args: ['--hf_hub_log_args', 'push_results_to_hub=True']}\n",
            "2026-01-01",
            {},
            r"models\[1\] \(hub\): extra_args: --hf_hub_log_args pushes to the hub .*no HF_TOKEN",
        ),
    ],
    ids=[
        "night not canonical",
        "night in the future",
        "task typo",
        "task override",
        "extra -a",
        "lc-chat model_args typo",
        "metadata seed -1",
        "metadata ks above max_items",
        "hub push without a token",
    ],
)
def test_a_bad_input_is_refused_before_any_model_call(
    tmp_path: Path, entries: str, night: str, overrides: dict[str, Any], message: str
) -> None:
    counter = _Counter(tmp_path)
    with pytest.MonkeyPatch.context() as patch:
        for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
            patch.delenv(name, raising=False)
        with pytest.raises(ValueError, match=message):
            counter.build(entries, night, **overrides)
    assert counter.calls == 0, "a model was called before the refusal"
    assert not (tmp_path / "board" / "runs").exists() or not any((tmp_path / "board" / "runs").iterdir())


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("  - {name: typo, model: lc-chta}\n", r"models\[1\] \(typo\): 'model': .*'lc-chta'; did you mean 'lc-chat'\?"),
        ("  - {name: typo, model: dumy}\n", r"unknown lm-eval backend 'dumy'; did you mean 'dummy'\?"),
    ],
    ids=["backend lc-chta", "backend dumy"],
)
def test_an_unknown_backend_is_refused_before_any_run(tmp_path: Path, entry: str, message: str) -> None:
    """With the suite's own ``lm_eval`` its registry is this process's: a name it lacks is refused first."""
    models = tmp_path / "models.yaml"
    models.write_text(f"models:\n{GOOD}{entry}", encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        build(tmp_path / "board", model_list=models, night="2026-01-01", bootstrap=BOOT, progress=False, log=print)
    assert not (tmp_path / "board" / "runs").exists() or not any((tmp_path / "board" / "runs").iterdir())


def test_a_custom_lm_eval_may_know_backends_this_process_does_not(tmp_path: Path) -> None:
    """A custom ``--lm-eval`` (a wrapper registering its own models) runs a backend unknown here."""
    counter = _Counter(tmp_path)
    result = counter.build("  - {name: plugin, model: my-plugin-model}\n")
    assert counter.calls == 1  # launched; the stand-in writes no results, so the model fails
    assert [outcome.spec.name for outcome in result.failed] == ["plugin"]


@pytest.mark.slow
def test_task_names_resolve_as_lm_eval_resolves_them(tmp_path: Path) -> None:
    """Names, globs, ``.yaml`` files and built-in tasks (the full index, as the runs use it)."""
    counter = _Counter(tmp_path)
    yaml_task = tmp_path / "mine.yaml"
    yaml_task.write_text("task: mine\n", encoding="utf-8")
    counter.build(
        "  - {name: x, model: dummy}\n",
        tasks=f"logic_consistency_summeval,logic_consistency_causal*,{yaml_task},arc_easy",
    )
    assert counter.calls == 1
    with pytest.raises(ValueError, match="'logic_consistency_nothing\\*'"):
        counter.build("  - {name: x, model: dummy}\n", tasks="logic_consistency_nothing*")
    with pytest.raises(ValueError, match="no task file matches .*mine_missing.yaml"):
        counter.build("  - {name: x, model: dummy}\n", tasks=str(tmp_path / "mine_missing.yaml"))
    assert counter.calls == 1


def test_a_night_up_to_one_day_ahead_is_accepted() -> None:
    now = datetime(2026, 3, 10, 23, 59, tzinfo=timezone.utc)
    assert check_night("2026-03-11", now=now) == "2026-03-11"
    assert check_night("1999-12-31", now=now) == "1999-12-31"
    with pytest.raises(ValueError, match="in the future"):
        check_night("2026-03-12", now=now)
    for bad in ("2026-03-10T00:00", " 2026-03-10", "20260310", "2026-02-30"):
        with pytest.raises(ValueError, match="--night"):
            check_night(bad, now=now)


#: Every spelling of an option the build sets itself, as lm_eval's own parser reads it.
OWNED_SPELLINGS = [
    (["-a", "pretrained=B"], "model_args"),
    (["--model_args", "pretrained=B"], "model_args"),
    (["--model_args=pretrained=B"], "model_args"),
    (["--model_arg", "pretrained=B"], "model_args"),
    (["-apretrained=B"], "model_args"),
    (["-M", "hf"], "model"),
    (["--model=hf"], "model"),
    (["-c", "elsewhere"], "use_cache"),
    (["--use_cache=elsewhere"], "use_cache"),
    (["--use_c", "elsewhere"], "use_cache"),
    (["-t", "arc_easy"], "tasks"),
    (["--tasks=arc_easy"], "tasks"),
    (["-o", "elsewhere"], "output_path"),
    (["--output_pat", "elsewhere"], "output_path"),
    (["--output_path=elsewhere"], "output_path"),
    (["-s"], "log_samples"),
    (["-xs"], "log_samples"),
    (["-L", "3"], "limit"),
    (["--lim=3"], "limit"),
    (["-b", "4"], "batch_size"),
    (["--batch_size=4"], "batch_size"),
    (["--metadata", "{}"], "metadata"),
    (["--apply_chat"], "apply_chat_template"),
    (["-C", "config.yaml"], "config"),
    (["--config=config.yaml"], "config"),
]


@pytest.mark.parametrize(("extra", "dest"), OWNED_SPELLINGS, ids=[" ".join(extra) for extra, _ in OWNED_SPELLINGS])
def test_every_spelling_of_a_build_option_is_refused(extra: list[str], dest: str) -> None:
    with pytest.raises(
        ValueError, match=rf"models\[0\] \(m\): 'extra_args' .* sets lm_eval's --{dest}, which the build"
    ):
        parse_extra_args(extra, "models.yaml: models[0] (m)")


def test_other_lm_eval_options_pass_and_unknown_ones_are_refused(tmp_path: Path) -> None:
    given = parse_extra_args(
        ["--num_fewshot", "0", "--seed=3", "--gen_kwargs", "temperature=0", "--include_path", str(tmp_path)], "w"
    )
    assert given["num_fewshot"] == 0 and given["include_path"] == str(tmp_path) and "model_args" not in given
    with pytest.raises(ValueError, match=r"w: 'extra_args' .*unrecognized arguments.*did you mean '--num_fewshot'\?"):
        parse_extra_args(["--num_fewshots", "0"], "w")
    with pytest.raises(ValueError, match="unrecognized arguments: stray"):
        parse_extra_args(["stray"], "w")
    with pytest.raises(ValueError, match="'extra_args'"):
        parse_extra_args(["--help"], "w")


def test_the_model_list_refuses_extra_args_in_any_spelling(tmp_path: Path) -> None:
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  - {name: a, model: dummy, extra_args: [--output_pat, x]}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"models.yaml: models\[0\] \(a\): 'extra_args' .*--output_path"):
        load_model_list(models)
    models.write_text("models:\n  - {name: a, model: dummy, extra_args: [--num_fewshot, '0']}\n", encoding="utf-8")
    assert load_model_list(models)[0].lm_eval_options == {"num_fewshot": 0}


def test_wandb_args_need_wandb_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from logic_consistency.leaderboard.run import preflight

    models = tmp_path / "models.yaml"
    models.write_text("models:\n  - {name: w, model: dummy, extra_args: ['--wandb_args', 'project=p']}\n", "utf-8")
    (spec,) = load_model_list(models)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "wandb" else real(name, *a))
    with pytest.raises(ValueError, match=r"models\[0\] \(w\): extra_args: --wandb_args needs wandb"):
        preflight.check_extra_args(spec)
    monkeypatch.setenv("HF_TOKEN", "hf_x")
    models.write_text(
        "models:\n  - {name: h, model: dummy, extra_args: ['--hf_hub_log_args', 'push_samples_to_hub=True']}\n", "utf-8"
    )
    preflight.check_extra_args(load_model_list(models)[0])  # with a token: accepted
