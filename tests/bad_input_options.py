"""Bad-input cases of the run options: the pairwise task's metadata and prompts, ``--limit``, and the
suite's option checks (``options.py``); each message names the task and the option at fault."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from bad_inputs_support import CaseTable, task_config

from logic_consistency.harness_ext.task.base import PromptedTask
from logic_consistency.harness_ext.task.placeholders import placeholder
from logic_consistency.options import Choices, Interval, OfType, OptionError, reject_unknown
from logic_consistency.tasks.data.seed import check_seed
from logic_consistency.tasks.pairwise.options import PairwiseOptions

CASES = CaseTable()

PROMPTS = {
    "prompts": {"normal": "{{context}}", "negated": "not {{context}}"},
    "answer_instructions": {"direct": "Answer A or B."},
}

for _metadata, _message in [
    ({"ks": 3}, "metadata.ks"),
    ({"ks": [2]}, "metadata.ks"),
    ({"ks": []}, "metadata.ks"),
    ({"ks": "35"}, "metadata.ks"),
    ({"ks": [3, True]}, "metadata.ks"),
    ({"calibrated": "false"}, "metadata.calibrated"),
    ({"calibrated": 1}, "metadata.calibrated"),
    ({"seed": -3}, "metadata.seed"),
    ({"seed": "1"}, "metadata.seed"),
    ({"max_items": 2}, "metadata.max_items"),
    ({"max_items": "10"}, "metadata.max_items"),
    ({"transitivity_samples": 0}, "metadata.transitivity_samples"),
    ({"transitivity_samples": "many"}, "metadata.transitivity_samples"),
    ({"pairs_runs": -1}, "metadata.pairs_runs"),
    ({"pairs_runs": True}, "metadata.pairs_runs"),
    ({"max_itemz": 5}, "'max_items'"),
    ({"calibrate": True}, "'calibrated'"),
    ({"seeds": 1}, "'seed'"),
    ({"Max_Items": 5}, "unknown option 'Max_Items'; did you mean 'max_items'?"),  # issue 39: case or separators
    ({"MAX-ITEMS": 5}, "unknown option 'MAX-ITEMS'; did you mean 'max_items'?"),
    ({"pairsRuns": 5}, "unknown option 'pairsRuns'; did you mean 'pairs_runs'?"),
    ({"pairs_method": "beem"}, "metadata.pairs_method"),
    ({"pairs_metod": "beam"}, "'pairs_method'"),
    ({"pairs_beam_size": 5}, "metadata.pairs_beam_size applies to pairs_method 'beam' only"),
    ({"pairs_method": "beam", "pairs_beam_size": 0}, "metadata.pairs_beam_size"),
    ({"pairs_method": "beam", "pairs_beam_size": 2.5}, "metadata.pairs_beam_size"),
    ({"pairs_method": "beam", "pairs_prob_gap": 0.7}, "metadata.pairs_prob_gap"),
    ({"pairs_method": "beam", "pairs_prob_gap": "0.1"}, "metadata.pairs_prob_gap"),
]:
    CASES.add(
        f"task metadata {_metadata}",
        lambda tmp, md=_metadata: PairwiseOptions.from_config(PROMPTS, md, task="t"),
        "task 't'",
        _message,
    )

for _prompt_config, _message in [
    ({**PROMPTS, "prompts": {"normal": "{{ unclosed"}}, "prompts.normal"),
    ({**PROMPTS, "prompts": {"normal": "x", "negatd": "y"}}, "negatd"),
    ({**PROMPTS, "prompts": "just a string"}, "prompts"),
    ({**PROMPTS, "prompt_style": "cot"}, "answer_instructions.cot"),
    ({**PROMPTS, "choices": ["A"]}, "choices"),
    ({**PROMPTS, "template_id": 3, "paraphrases": [PROMPTS["prompts"]]}, "template_id"),
]:
    CASES.add(
        f"task prompts {sorted(_prompt_config)} {_message}",
        lambda tmp, pc=_prompt_config: PairwiseOptions.from_config(pc, {}, task="t"),
        "task 't'",
        _message,
    )

for _limit in (0, -1, -480):
    CASES.add(
        f"--limit {_limit}",
        lambda tmp, limit=_limit: PromptedTask.remember_formatting(
            SimpleNamespace(config=SimpleNamespace(task="logic_consistency_summeval")), {"limit": limit}
        ),  # type: ignore[arg-type]
        "--limit",
        "logic_consistency_summeval",
    )

CASES.add(
    "options unknown key suggests the closest",
    lambda tmp: reject_unknown(["max_itemz"], ["max_items", "seed"], where="--metadata"),
    "max_itemz",
    "'max_items'",
    "--metadata",
)
CASES.add("options int given a bool", lambda tmp: Interval(int).check(True, label="n_docs", where=None), "n_docs")
CASES.add(
    "options int below minimum",
    lambda tmp: Interval(int, 1).check(0, label="n_docs", where=None),
    "n_docs",
    "at least 1",
)
CASES.add("options seed negative", lambda tmp: check_seed(-1), "seed")
CASES.add(
    "options bool given 'yes'", lambda tmp: OfType(bool).check("yes", label="calibrated", where=None), "calibrated"
)
CASES.add(
    "options choice typo",
    lambda tmp: Choices(("coherence", "fluency")).check("coherance", label="aspect", where=None),
    "aspect",
    "'coherence'",
)


def _self_agreement_with(samples: object) -> Any:
    config = task_config("logic_consistency_caters_cot_sc")
    config.pop("tag", None)
    config["metadata"] = {**(config.get("metadata") or {}), "samples": samples}
    return config["class"](config=config)


for _samples in (1, 0, "10"):  # one sample always agrees with itself: at least 2
    CASES.add(
        f"self-agreement metadata.samples {_samples!r}",
        lambda tmp, samples=_samples: _self_agreement_with(samples),
        "task 'logic_consistency_caters_cot_sc'",
        "metadata.samples",
    )
# a placeholder (a request answered without a model call) of a request type it cannot answer
CASES.add(
    "placeholder request type",
    lambda tmp: placeholder("multiple_choice", {}, "p", ("t", 0, 1)),
    "placeholder request_type",
    "multiple_choice",
)


# ----------------------------------------------------------------------------- issue 39: keys given twice
def _duplicate_metadata(_: Any) -> Any:
    from logic_consistency.options import metadata_from_json

    return metadata_from_json('{"max_items": 5, "max_items": 7}')


def _duplicate_model_args(_: Any) -> Any:
    from logic_consistency.harness_ext.models.args import parse_model_args

    return parse_model_args("model=m,max_tokens=8,max_tokens=16")


def _duplicate_on_lm_eval_command_line(_: Any) -> Any:
    from logic_consistency.harness_ext.publish.command_line import check_lm_eval_argv

    return check_lm_eval_argv(["--tasks", "t", "--gen_kwargs", "temperature=0,temperature=1"])


CASES.add("--metadata with a key given twice", _duplicate_metadata, "--metadata: key 'max_items' given twice")
CASES.add("--model_args with a key given twice", _duplicate_model_args, "--model_args: key 'max_tokens' given twice")
CASES.add(
    "lm_eval --gen_kwargs with a key given twice",
    _duplicate_on_lm_eval_command_line,
    "--gen_kwargs: key 'temperature' given twice",
)


def _lm_eval_argv(*argv: str) -> Callable[[Any], Any]:
    def run(_: Any) -> Any:
        from logic_consistency.harness_ext.publish.command_line import check_lm_eval_argv

        return check_lm_eval_argv(["--model", "dummy", "--tasks", "t", *argv])

    return run


# Issue 46: what the suite's lm_eval hook reads is spelled in full, and a key is given once across repeats.
for _label, _argv, _expect in [
    ("an abbreviated --metadata", ("--metadat", "max_items=5"), ("--metadat", "abbreviation of --metadata")),
    ("an abbreviated --model_args", ("--model_arg=seed=1",), ("--model_arg", "--model_args", "in full")),
    (
        "a key given twice across repeated --metadata",
        ("--metadata", "max_items=5", "--metadata", "seed=1", "max_items=7"),
        ("--metadata: key 'max_items' given twice", "'--metadata max_items=5'", "'--metadata seed=1 max_items=7'"),
    ),
    (
        "a key given twice in --metadata's JSON and key=value",
        ("--metadata", '{"max_items": 5}', "--metadata=max_items=6"),
        ("--metadata: key 'max_items' given twice", "max_items=6"),
    ),
    ("a key given twice in one -a", ("-a", "seed=1", "seed=2"), ("--model_args: key 'seed' given twice",)),
    (
        "a JSON --metadata followed by values lm-eval drops",
        ("--metadata", '{"max_items": 5}', "seed=1"),
        ("--metadata", "reads only the JSON object", "seed=1"),
    ),
    ("--cache_requests (dill pickles)", ("--cache_requests",), ("--cache_requests", "dill pickles", "--use_cache")),
    # issue 54 item 6: inside one JSON object too (Python's json would keep the last)
    (
        "a key given twice in one JSON --metadata",
        ("--metadata", '{"max_items": 5, "seed": 1, "max_items": 7}'),
        ("lm_eval --metadata: key 'max_items' given twice",),
    ),
    (
        "a key given twice in one JSON --gen_kwargs",
        ("--gen_kwargs", '{"temperature": 0, "temperature": 1}'),
        ("lm_eval --gen_kwargs: key 'temperature' given twice",),
    ),
]:
    CASES.add(f"lm_eval {_label}", _lm_eval_argv(*_argv), *_expect, error=OptionError)


# Issue 46 (leftover): every spelling argparse accepts is read by argparse itself, so a value glued to a
# short option is checked like the long form.
for _label, _argv, _expect in [
    (
        "a key given twice across -a and a glued -apretrained=",
        ("-a", "pretrained=x", "-apretrained=y"),
        ("--model_args: key 'pretrained' given twice", "'-a pretrained=x'", "'-a pretrained=y'"),
    ),
    ("a key given twice across -a and -a=", ("-a", "seed=1", "-a=seed=2"), ("--model_args: key 'seed' given twice",)),
    (
        "a key given twice across combined flags -sapretrained= and --model_args",
        ("-sapretrained=y", "--model_args", "pretrained=z"),
        ("--model_args: key 'pretrained' given twice", "'-a pretrained=y'"),
    ),
]:
    CASES.add(f"lm_eval {_label}", _lm_eval_argv(*_argv), *_expect, error=OptionError)


def _lm_eval_config(yaml_text: str, *argv: str) -> Callable[[Any], Any]:
    """``lm_eval --config FILE`` (``-CFILE`` glued) with ``yaml_text`` in the file."""

    def run(tmp: Any) -> Any:
        from logic_consistency.harness_ext.publish.command_line import check_lm_eval_argv

        path = tmp / "config.yaml"
        path.write_text(yaml_text, encoding="utf-8")
        return check_lm_eval_argv(["--model", "dummy", "--tasks", "t", f"-C{path}", *argv])

    return run


for _label, _yaml, _argv, _expect in [
    (
        "cache_requests: true (dill pickles)",
        "cache_requests: true\n",
        (),
        ("config.yaml: cache_requests", "dill pickles"),
    ),
    (
        "a key repeated inside model_args",
        "model_args:\n  pretrained: x\n  pretrained: y\n",
        (),
        ("--config", "config.yaml", "['pretrained'] given twice"),
    ),
    (
        "a key repeated in model_args text",
        "model_args: pretrained=x,pretrained=y\n",
        (),
        ("--model_args: key 'pretrained' given twice", "config.yaml: model_args"),
    ),
    (
        "metadata also given on the command line (lm-eval drops the file's)",
        "metadata: {max_items: 5, seed: 1}\n",
        ("--metadata", "seed=2"),
        ("lm_eval --metadata: given in", "config.yaml: metadata", "drop every key of the file's metadata"),
    ),
]:
    CASES.add(f"lm_eval --config with {_label}", _lm_eval_config(_yaml, *_argv), *_expect, error=OptionError)


# Issue 54 item 6: an empty stop string is refused on every backend (stock hf ends the generation after its first
# token on it, lc-hf's mixed batches skipped it): lm_eval's --gen_kwargs in each spelling, and a task's stage.
def _empty_stop(gen_kwargs: Any) -> Callable[[Any], Any]:
    def run(_: Any) -> Any:
        from logic_consistency.harness_ext.models.args import check_gen_kwargs

        return check_gen_kwargs(gen_kwargs)

    return run


for _label, _given in [
    ("until= (as lm-eval parses it)", {"until": ""}),
    ("until among other stops", {"until": ["\n", ""]}),
    ("until in a JSON --gen_kwargs", '{"until": [""], "max_gen_toks": 8}'),
    ("until= as text", "until=,max_gen_toks=8"),
]:
    CASES.add(
        f"lm_eval --gen_kwargs with an empty stop string: {_label}",
        _empty_stop(_given),
        "--gen_kwargs: until: an empty stop string",
        "refused on every backend",
        error=OptionError,
    )


def _empty_stop_in_a_stage(_: Any) -> Any:
    from logic_consistency.harness_ext.task.multistage import Stage

    spec = {"name": "generator", "prompts": {"main": "Q: {{question}}"}, "generation_kwargs": {"until": ["", "\n"]}}
    return Stage.from_yaml(spec, task="my_task", index=0)


CASES.add(
    "a task stage with an empty stop string",
    _empty_stop_in_a_stage,
    "task 'my_task': stages[0].generation_kwargs.until: an empty stop string",
    error=OptionError,
)


def _wrapped(base_task: Any, **metadata: Any) -> Callable[[Any], Any]:
    """Build a wrapped task (tasks/invariance) of ``base_task`` with ``metadata``."""

    def run(tmp: Any) -> Any:
        from logic_consistency.tasks.invariance.task import InvarianceTask

        return InvarianceTask(config={"task": "my_wrapped", "base_task": base_task, "metadata": metadata})

    return run


CASES.add("options invariance: a transform that does not exist", _wrapped("mmlu_anatomy", transform="rotate"),
          "my_wrapped", "metadata.transform", "'rotate'")  # fmt: skip
CASES.add("options invariance: a near miss of an option", _wrapped("mmlu_anatomy", transfrom="cyclic"),
          "my_wrapped", "'transfrom'", "'transform'")  # fmt: skip
CASES.add("options invariance: a base task lm-eval does not know", _wrapped("mmlu_astrology"),
          "my_wrapped", "base_task 'mmlu_astrology'")  # fmt: skip
CASES.add("options invariance: a group as the base task", _wrapped("mmlu"), "my_wrapped", "'mmlu' is a group")
CASES.add("options invariance: a generative base task without self_validate", _wrapped("triviaqa"), "my_wrapped",
          "'triviaqa' is generate_until", "self_validate: true")  # fmt: skip
CASES.add("options invariance: a generative base task under a transform",
          _wrapped("triviaqa", transform="cyclic", self_validate=True), "my_wrapped", "transform varies",
          "'triviaqa' is generate_until")  # fmt: skip
CASES.add("options invariance: a near miss of an option on a generative base",
          _wrapped("triviaqa", self_validate=True, self_validat=True), "my_wrapped", "'self_validat'",
          "'self_validate'")  # fmt: skip
CASES.add("options invariance: a log-likelihood base task", _wrapped("lambada_openai"), "my_wrapped",
          "'loglikelihood'", "multiple_choice")  # fmt: skip
