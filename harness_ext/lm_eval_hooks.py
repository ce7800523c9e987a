"""Every reach of the suite into lm-eval 0.4.13 beyond its public API, listed once.

``tests/harness_ext/test_lm_eval_hooks.py`` pins each upstream object's signature (an lm-eval upgrade
fails in the suite's tests, not in a user's run) and finds every private lm-eval name the package
uses, failing on one missing here. A backend declares its own reaches beside its code (``Backend.hooks``,
``models/backend.py``); this table adds them to the machinery's. The patches applied at import are in
``autoload.py``, which does not import this table (it runs at every Python start-up).
docs/architecture.md shows it as a table.
"""

from __future__ import annotations

from logic_consistency.harness_ext.backends.registry import built_in
from logic_consistency.harness_ext.models.backend import LmEvalHook

__all__ = ["LM_EVAL_HOOKS", "SUITE_HOOKS", "LmEvalHook"]

#: The reaches of the suite's machinery (not of one backend: each backend declares its own, ``Backend.hooks``).
SUITE_HOOKS: tuple[LmEvalHook, ...] = (
    LmEvalHook(
        "lm_eval.tasks.manager:TaskManager.__init__",
        "wraps",
        "autoload._patch_task_manager (task.loading.remember_task_manager)",
        "plain `lm_eval --tasks logic_consistency` finds the suite's YAML without --include_path; a wrapped "
        "task (tasks/invariance) finds its base task in the run's index, --include_path included",
        "task plug-ins by entry point (group lm_eval.tasks) in a release; the hook then steps aside by itself",
    ),
    LmEvalHook(
        "lm_eval.tasks.manager:TaskManager._index",
        "reads",
        "autoload._indexes_suite_folder",
        "asks whether this lm-eval already indexes the suite's folder (entry-point discovery)",
        "the same release as above (the probe can then be removed with the patch)",
    ),
    LmEvalHook(
        "lm_eval.evaluator:evaluate",
        "wraps",
        "autoload._patch_evaluator (task.current_run.publish_lm, task.placeholders.answered_here, shards.shard.shard_evaluate)",
        "two-stage tasks run later stages with the run's model while requests are built; requests whose answer "
        "is ignored never reach the model; a shard evaluates only its documents; lc-chat refuses tasks first",
        "chained (multi-stage) tasks in lm-eval; a request flag for answers that are not used; sharded evaluation",
    ),
    LmEvalHook(
        "lm_eval.evaluator:simple_evaluate",
        "wraps",
        "autoload.refuse_credentials_first (publish.run.publishing, publish.command_line.refuse_request_pickles)",
        "a credential in --model_args or --metadata is refused first; logs and tracebacks are redacted; the "
        "results record only the model arguments and options declared public (publish/allowlist.py); an --output_path the "
        "file system cannot hold is refused first (publish/results_path.py); an unknown metric's KeyError: None names its task file; "
        "cache_requests (dill pickles) is refused first",
        "lm-eval redacting or refusing credentials in the configuration it writes (and checking output paths and metric names)",
    ),
    LmEvalHook(
        "lm_eval.api.model:CachingLM.__init__",
        "wraps",
        "autoload._guard_request_cache (publish.request_cache.guard_caching_lm)",
        "a corrupt or busy --use_cache file is one line naming it, not an sqlite traceback; answers are "
        "redacted before they are stored (publish.request_cache.RedactingStore) and stored as JSON, never pickle "
        "(publish.cache_json.json_store: hash_args keys, str / float / (float, bool) answers round-trip exactly); "
        "a pickled answer is refused unread, naming the file",
        "CachingLM checking its database when it opens it, and storing answers in a format that cannot run code",
    ),
    LmEvalHook(
        "lm_eval.__main__:cli_evaluate",
        "wraps",
        "autoload._one_line_option_errors (publish.command_line.check_lm_eval_argv, publish.failure_facts)",
        "a task's refusal of a bad option, or a task file it cannot use ('Tasks not found', an unknown metric), ends "
        "lm_eval with one line naming it and exit status 2, not a traceback; so do an abbreviation of an option the "
        "suite reads, a key given twice across repeated --model_args/--gen_kwargs/--metadata, --cache_requests and a refused credential; "
        "the class and HTTP status of the exception a run ended with go to its launcher's record file",
        "lm_eval's CLI reporting task configuration errors as argument errors",
    ),
    LmEvalHook(
        "lm_eval._cli.run:Run._execute",
        "wraps",
        "autoload._public_summary (publish.run.public_prints: the module's global print)",
        "lm_eval's summary line (MODEL ({model_args}), gen_kwargs: ...) prints the model arguments as given: it "
        "shows the public ones (a private base_url path and query, a home folder never reach the terminal or a "
        "build's lm_eval.log)",
        "lm_eval printing the configuration it records (or a hook on the summary line)",
    ),
    LmEvalHook(
        "lm_eval.api.task:load_from_cache",
        "wraps",
        "autoload._never_read_request_pickles (publish.command_line.guard_load_from_cache)",
        "--cache_requests files are dill pickles, which run code when read: a request cache is refused, never "
        "read, even where cache_requests reaches evaluate() directly (lm_eval and simple_evaluate refuse it first)",
        "a request cache in a format that cannot run code (JSON of the instances)",
    ),
    LmEvalHook(
        "lm_eval.caching.cache:_cache_file_path",
        "calls",
        "autoload._never_read_request_pickles",
        "the refusal of a request cache names lm-eval's own file",
        "the same format change as above",
    ),
    LmEvalHook(
        "lm_eval._cli.utils:split_top_level",
        "calls",
        "publish.command_line",
        "a key given twice across repeated --model_args, --gen_kwargs or --metadata is found in the pairs lm-eval "
        "itself splits (commas inside brackets and quotes kept)",
        "lm_eval refusing a key given twice",
    ),
    LmEvalHook(
        "lm_eval.api.task:Task.doc_iterator",
        "wraps",
        "autoload._shard_documents (shards.shard.shard_doc_iterator)",
        "under LOGIC_CONSISTENCY_SHARD a task lists only its shard's documents",
        "document sharding in lm-eval beyond its data-parallel rank/world_size",
    ),
    LmEvalHook(
        "lm_eval.api.task:ConfigurableTask.download",
        "wraps",
        "autoload._local_hub_copies (task.hub_copies.redirected_download)",
        "with LOGIC_CONSISTENCY_DATA set, lm-eval's own tasks on a declared hub dataset (cais/mmlu, TriviaQA) read "
        "the suite's local copy (tasks/data/_hub_copies_yaml); other datasets still read the hub",
        "a documented way to point a hub dataset at a local copy per task in lm-eval",
    ),
    LmEvalHook(
        "lm_eval.api.task:Task.build_all_requests",
        "wraps",
        "autoload._local_hub_copies (task.hub_copies.checked_build)",
        "a few-shot run whose few-shot split the local copy lacks is refused in one line, not served test rows",
        "the same local-copy mechanism in lm-eval",
    ),
    *(
        LmEvalHook(
            f"lm_eval.api.task:ConfigurableTask.{table}",
            "reads",
            "task.base.PromptedTask (sets it), task.multistage (reads which aggregations exist)",
            "a task's metrics, aggregations and directions come from the suite's own declarations, so lm-eval "
            "never looks a metric up on the HF evaluate hub",
            "a public API for a task to declare its metrics from Python",
        )
        for table in ("_metric_fn_list", "_metric_fn_kwargs", "_aggregation_list", "_higher_is_better")
    ),
    LmEvalHook(
        "lm_eval.api.task:ConfigurableTask._filters",
        "reads",
        "tasks.invariance.generative (GenerativeValidationTask)",
        "a generative base's answer is validated as its first filter ensemble extracts it, by lm-eval's own "
        "filter objects, so the validated answer is the one the base task scores",
        "a public accessor for a task's filter ensembles",
    ),
    LmEvalHook(
        "lm_eval.tasks._yaml_loader:load_yaml",
        "calls",
        "task.check_task",
        "check-task loads a YAML exactly as lm-eval does (include:, !function), so its verdict is lm-eval's",
        "a public YAML loader in lm_eval.tasks",
    ),
    LmEvalHook(
        "lm_eval.tasks._index:log",
        "reads",
        "task.check_task._task_manager",
        "the index's warnings about the suite's tags seen twice (the user's folder and the suite) are silenced",
        "task plug-ins by entry point, which index the suite once",
    ),
    LmEvalHook(
        "lm_eval.evaluator_utils:_process_results",
        "calls",
        "shards.merge",
        "merged shards are scored by lm-eval's own aggregation over the union of the per-document values",
        "a public function that aggregates per-document values into results",
    ),
    LmEvalHook(
        "lm_eval.evaluator_utils:_compute_task_aggregations",
        "wraps",
        "autoload._aggregate_over_defined (task.undefined.over_defined_documents)",
        "a metric undefined on some documents is None there (counted by the task) and aggregated by lm-eval over "
        "the others, with no warning about metrics scored on different numbers of documents",
        "per-metric document counts in lm-eval's task aggregation (its TODO in _compute_task_aggregations)",
    ),
    LmEvalHook(
        "lm_eval.evaluator_utils:stderr_for_metric",
        "wraps",
        "autoload._aggregate_over_defined (task.corpus_stderr.with_declared_stderrs)",
        "a corpus statistic (RStd, pick rates, their KL, PriDe's prior: tasks/invariance) gets a bootstrap standard error over "
        "questions in <metric>_stderr, with lm-eval's bootstrap_iters, where lm-eval gives a custom aggregation N/A",
        "a way for a task's aggregation to declare its standard error (or bootstrap it) in lm-eval",
    ),
    LmEvalHook(
        "lm_eval.api.group:Group.aggregate",
        "wraps",
        "autoload._groups_over_every_member (task.undefined.over_every_member)",
        "a group of the suite's tasks aggregates a metric over all its tasks or not at all (a task leaves out a "
        "metric undefined on every document), with no warning that the metric is missing in some tasks",
        "a group option to aggregate only over members that all report the metric",
    ),
    LmEvalHook(
        "lm_eval.evaluator_utils:EvalAcc._to_eval_results",
        "calls",
        "shards.merge",
        "the merged results have lm-eval's own layout, so ingest and correlate read them unchanged",
        "the same public aggregation function",
    ),
    LmEvalHook(
        "lm_eval._cli.run:Run.create",
        "calls",
        "leaderboard.run.extra_args, publish.command_line",
        "a model list's extra_args are checked with lm_eval's own parser before any run; lm_eval's own options "
        "tell an abbreviation of an option the suite reads from the full name",
        "a public function returning lm_eval's argument parser",
    ),
    LmEvalHook(
        "lm_eval.api.model:hash_args",
        "calls",
        "tasks.pairwise.self_agreement_task",
        "self-agreement samples are keyed in CachingLM's database in the format hash_args gives its own keys",
        "caching of sampled generations in lm-eval (keyed by sample index)",
    ),
)

#: Every reach into lm-eval 0.4.13 beyond its public API: the machinery's, then each of the suite's own
#: backends' (their declarations, ``chat/backend.py``, ``prefix/backend.py``).
#: ``tests/harness_ext/test_lm_eval_hooks.py`` pins each upstream object's signature, so an lm-eval upgrade
#: fails in the suite's tests, not in a user's run; on another installed version
#: ``autoload._warn_if_unpinned`` warns once before any patch.
LM_EVAL_HOOKS: tuple[LmEvalHook, ...] = (*SUITE_HOOKS, *(hook for backend in built_in() for hook in backend.hooks))
