"""End to end through plain ``lm_eval`` against a real OpenAI-compatible server (llama.cpp's).

``lc-chat`` (choice probabilities from one chat completion) and lm-eval's own
``local-chat-completions`` run the pairwise, PairS, GV and causal-ranking tasks; the
conditional-probability causal tasks are refused with a clear error; concurrency does not change
scores; a resumed run repeats no call; 429 / 500 are retried; a dead endpoint is one clear error.
Small on purpose (two or three instances of three items): CI runs them (marked ``slow``, like the
other real-model tests). More than one instance, because every document's placeholder request
(PairS's final request, a skipped later stage) is the same prompt: none may reach the server.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.common import task_of_samples_file
from logic_consistency.credentials import url_origin
from logic_consistency.harness_ext.task import multistage
from logic_consistency.tasks.pairwise import pairs_task, self_agreement_task

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_DATA = ROOT / "tests" / "fixtures" / "data"
LM_EVAL = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) or "lm_eval"
PAIRWISE = "logic_consistency_caters"
#: The infrastructure tests (concurrency, resume, retries, errors) use the fixtures' toy pairwise task:
#: the same task class with prompts of a few dozen tokens, 3 items = 12 judgements = 12 calls per instance.
TOY = "toy_pairwise"
TOY_TASKS = ("--include_path", str(ROOT / "tests" / "fixtures" / "tasks"))
SMALL = {"max_items": 3, "ks": [3], "pairs_runs": 5}
#: Instances per task: more than one, so that the placeholders of two documents would meet.
LIMIT = 2
PLACEHOLDER_PROMPTS = (
    multistage.PLACEHOLDER_PROMPT,
    pairs_task.PairsRankingTask.PLACEHOLDER_PROMPT,
    self_agreement_task.SelfAgreementTask.PLACEHOLDER_PROMPT,
)

pytestmark = pytest.mark.slow


def _lm_eval(
    model: str,
    model_args: str,
    tasks: str,
    out: Path,
    *extra: str,
    metadata: dict[str, Any] | None = None,
    limit: int = LIMIT,
    key: str = "not-needed",
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "LOGIC_CONSISTENCY_DATA": str(FIXTURE_DATA),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "OPENAI_API_KEY": key,
    }
    command = [
        LM_EVAL,
        "--model",
        model,
        "--model_args",
        model_args,
        "--tasks",
        tasks,
        "--limit",
        str(limit),
        "--apply_chat_template",
        "--metadata",
        json.dumps(metadata or SMALL),
        "--output_path",
        str(out),
        "--log_samples",
        *extra,
    ]
    # generous: a shared CPU slows the server many-fold (CI runs these in a few minutes)
    return children.run(command, capture_output=True, text=True, env=env, timeout=2400, cwd=ROOT)


def _args(url: str, **more: Any) -> str:
    # max_tokens 2 (walk two positions): llama-cpp-python sorts the whole vocabulary in Python for
    # every generated token with log-probabilities, so each extra position costs a fraction of a second
    args = {
        "base_url": url,
        "model": "smollm2",
        "num_concurrent": 1,
        "max_retries": 2,
        "timeout": 120,
        "max_tokens": 2,
        **more,
    }
    return ",".join(f"{key}={value}" for key, value in args.items())


def _results(out: Path) -> dict[str, Any]:
    files = sorted(out.glob("*/results_*.json"))
    assert len(files) == 1, files
    return json.loads(files[0].read_text())["results"]


def _no_placeholder_reached(proxy: Any) -> None:
    assert proxy.bodies, "the run asked the server nothing"
    for body in proxy.bodies:
        text = body.decode()
        assert not [prompt for prompt in PLACEHOLDER_PROMPTS if prompt in text], text[:300]


def _samples(out: Path, task: str) -> list[dict[str, Any]]:
    # samples_<task>_<timestamp>.jsonl: the task's own file, not that of a task whose name extends it (_pairs)
    (path,) = [found for found in sorted(out.glob(f"*/samples_{task}_*.jsonl")) if task_of_samples_file(found) == task]
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_lc_chat_pairwise_and_pairs(counting_proxy: Any, tmp_path: Path) -> None:
    tasks = [PAIRWISE, f"{PAIRWISE}_pairs"]
    run = _lm_eval("lc-chat", _args(counting_proxy.chat_url), ",".join(tasks), tmp_path)
    assert run.returncode == 0, run.stderr[-4000:]
    results = _results(tmp_path)
    pairwise = results[PAIRWISE]
    for name in ("position_bias", "p_first_mean", "s_comm"):
        assert 0.0 <= pairwise[f"{name},none"] <= 1.0, name
    assert -1.0 <= pairwise["pairs_spearman_calibrated,none"] <= 1.0
    # 3 items: 6 ordered pairs x 2 questions = 12 judgements, 2 letters each, each judgement one call
    samples = _samples(tmp_path, PAIRWISE)
    assert len(samples) == LIMIT and all(len(sample["resps"]) == 24 for sample in samples)
    assert 0 <= pairwise["n_choices_missing,none"] <= 24 * LIMIT
    assert 0 <= pairwise["n_ties,none"] <= 12 * LIMIT
    assert -1.0 <= results[f"{PAIRWISE}_pairs"]["pairs_spearman_calibrated,none"] <= 1.0
    assert "n_choices_missing,none" in results[f"{PAIRWISE}_pairs"]
    # the PairS rounds ask prompts the pairwise task asks too: each was sent once
    assert set(counting_proxy.answered.values()) == {1}
    assert "lc-chat: read" in run.stderr
    _no_placeholder_reached(counting_proxy)


def test_lc_chat_runs_pairs_and_a_two_stage_task_at_limit_3(counting_proxy: Any, tmp_path: Path) -> None:
    """Every document's placeholder is the same prompt; sent, lc-chat would refuse the second one."""
    tasks = [f"{PAIRWISE}_pairs", "logic_consistency_gv_triviaqa_true_false"]
    run = _lm_eval("lc-chat", _args(counting_proxy.chat_url), ",".join(tasks), tmp_path, limit=3)
    assert run.returncode == 0, run.stderr[-4000:]
    results = _results(tmp_path)
    assert set(tasks) <= set(results)
    assert len(_samples(tmp_path, f"{PAIRWISE}_pairs")) == 3
    assert len(_samples(tmp_path, "logic_consistency_gv_triviaqa_true_false")) == 3
    assert "ChoiceRequestError" not in run.stderr
    _no_placeholder_reached(counting_proxy)


def test_lc_chat_generated_twin_gv_and_causal_ranking(counting_proxy: Any, tmp_path: Path) -> None:
    tasks = [f"{PAIRWISE}_generate", "logic_consistency_gv_triviaqa_true_false", "logic_consistency_causal_ranking"]
    run = _lm_eval("lc-chat", _args(counting_proxy.chat_url), ",".join(tasks), tmp_path)
    assert run.returncode == 0, run.stderr[-4000:]
    results = _results(tmp_path)
    assert 0 <= results[f"{PAIRWISE}_generate"]["unparseable,none"] <= 12 * LIMIT
    assert "n_choices_missing,none" not in results[f"{PAIRWISE}_generate"]
    gv = results["logic_consistency_gv_triviaqa_true_false"]
    assert 0 <= gv["unparseable_generator,none"] <= LIMIT
    assert "unparseable_generation,none" in results["logic_consistency_causal_ranking"]
    assert "AssertionError" not in run.stderr
    _no_placeholder_reached(counting_proxy)


def test_local_chat_completions_runs_the_generated_twins(counting_proxy: Any, tmp_path: Path) -> None:
    tasks = [
        f"{PAIRWISE}_generate",
        "logic_consistency_gv_triviaqa_true_false_generate",
        "logic_consistency_causal_ranking",
    ]
    args = _args(counting_proxy.chat_url, tokenizer_backend="none")
    run = _lm_eval("local-chat-completions", args, ",".join(tasks), tmp_path)
    assert run.returncode == 0, run.stderr[-4000:]
    results = _results(tmp_path)
    assert set(tasks) <= set(results)
    assert "AssertionError" not in run.stderr
    _no_placeholder_reached(counting_proxy)


def test_whole_sentence_log_likelihoods_are_refused_by_name(counting_proxy: Any, tmp_path: Path) -> None:
    """As the conditional-probability causal tasks would be (they score whole effects).

    The real ``logic_consistency_causal_ctp_*`` tasks reach their scoring stage only for documents
    whose generated intermediates parse, which the embedded 135M model rarely achieves, so the
    end-to-end refusal runs on a fixture task of the same shape; the message for the real task
    names are checked without a server (tests/harness_ext/test_chat_judge.py, tests/test_bad_inputs.py).
    """
    run = _lm_eval("lc-chat", _args(counting_proxy.chat_url), "toy_sentence_probability", tmp_path, *TOY_TASKS)
    assert run.returncode != 0
    # refused when the run starts, from the stage the task declares (the request-level refusal,
    # "asks for the log-likelihood of ...", stays for requests no task declared: test_chat_judge.py)
    assert "lc-chat: task 'toy_sentence_probability' scores, in its stage 'sentence', continuations" in run.stderr
    assert "one-word answer choices" in run.stderr
    assert not counting_proxy.answered  # refused before any call


def test_concurrency_does_not_change_scores(counting_proxy: Any, tmp_path: Path) -> None:
    scores = []
    for concurrent in (1, 4):
        out = tmp_path / str(concurrent)
        run = _lm_eval("lc-chat", _args(counting_proxy.chat_url, num_concurrent=concurrent), TOY, out, *TOY_TASKS)
        assert run.returncode == 0, run.stderr[-4000:]
        scores.append(_results(out)[TOY])
    assert scores[0] == scores[1]


#: What differs between two runs of the same model on the same documents: when they ran.
TIMES = frozenset({"date", "start_time", "end_time", "total_evaluation_time_seconds"})


def _without_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_times(inner) for key, inner in value.items() if key not in TIMES}
    return [_without_times(inner) for inner in value] if isinstance(value, list) else value


def test_a_placeholder_key_gives_the_results_of_a_real_looking_key(counting_proxy: Any, tmp_path: Path) -> None:
    """Issue 39, done when: OPENAI_API_KEY=-, none or EMPTY (what local servers document) is no secret, so
    nothing in the results is rewritten: results (apart from times) and samples are byte-identical to a run
    with a real-looking key, whose only redaction, the key itself, appears nowhere."""
    written = {}
    for key in ("sk-realLooking0123456789abcdef", "-", "none", "EMPTY"):
        out = tmp_path / (key.strip("-") or "dash")
        run = _lm_eval("lc-chat", _args(counting_proxy.chat_url), TOY, out, *TOY_TASKS, limit=1, key=key)
        assert run.returncode == 0, run.stderr[-4000:]
        (results,) = out.glob("*/results_*.json")
        (samples,) = out.glob("*/samples_*.jsonl")
        recorded = _without_times(json.loads(results.read_text()))
        written[key] = (json.dumps(recorded, sort_keys=True, indent=1), samples.read_bytes())
    real = written.pop("sk-realLooking0123456789abcdef")
    for key, found in written.items():
        assert found[0] == real[0], f"OPENAI_API_KEY={key}: the results differ"
        assert found[1] == real[1], f"OPENAI_API_KEY={key}: the samples differ"
    assert "n-samples" in real[0] and '"s_comm,none"' in real[0]


def test_resume_after_a_server_kill_repeats_no_call(chat_server: Any, counting_proxy: Any, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache" / "lm")
    counting_proxy.after_answers = (5, chat_server.stop)  # the server dies after answering 5 of 24 calls
    args = _args(counting_proxy.chat_url, max_retries=1)
    try:
        killed = _lm_eval("lc-chat", args, TOY, tmp_path / "killed", "--use_cache", cache, *TOY_TASKS)
    finally:
        chat_server.start()
        counting_proxy.down = False
    assert killed.returncode != 0
    assert f"base_url={url_origin(counting_proxy.chat_url)}" in killed.stderr
    assert sum(counting_proxy.answered.values()) == 5
    resumed = _lm_eval("lc-chat", args, TOY, tmp_path / "resumed", "--use_cache", cache, *TOY_TASKS)
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    # every judgement answered exactly once over both runs: the 5 from the cache were not asked again
    assert len(counting_proxy.answered) == 12 * LIMIT
    assert set(counting_proxy.answered.values()) == {1}


def test_429_and_500_are_retried(counting_proxy: Any, tmp_path: Path) -> None:
    counting_proxy.fail_next = [(429, 1), (500, 1)]
    run = _lm_eval("lc-chat", _args(counting_proxy.chat_url, max_retries=3), TOY, tmp_path, *TOY_TASKS)
    assert run.returncode == 0, run.stderr[-4000:]
    assert counting_proxy.injected == 2
    assert len(counting_proxy.answered) == 12 * LIMIT
    # the model name llama.cpp's replies report (its --model_alias) is recorded, and matches: no warning
    (results,) = tmp_path.glob("*/results_*.json")
    assert json.loads(results.read_text())["config"]["reported_models"] == ["smollm2"]
    assert "answers as model 'smollm2'" in run.stderr and "not the 'smollm2' asked for" not in run.stderr


def test_dead_endpoint_is_one_clear_error(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a free port: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    run = _lm_eval("lc-chat", _args(url, max_retries=1), TOY, tmp_path, *TOY_TASKS)
    assert run.returncode != 0
    assert f"lc-chat: the chat endpoint base_url={url_origin(url)} gave no usable answer" in run.stderr
