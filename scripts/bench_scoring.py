"""Benchmark: lm-eval's stock ``hf`` log-likelihood scoring against the suite's prefix-sharing ``lc-hf``.

One process, one loaded model, the same requests (captured from ``lm_eval.simple_evaluate``) scored
both ways, so the ratio does not depend on the machine. Cases: ``quickstart`` (the quick start's
pairwise slice), ``summeval16`` (one SummEval article at all 16 summaries; stock scores a seeded
sample of ``--stock-prompts`` prompts), ``invariance`` (``--limit`` MMLU questions under the four
rotations of their options, zero-shot). Per case, after a warm-up of both sides, ``--repeats``
alternating timed runs (the best of each): seconds per prompt both ways, the ratio, its ceiling
(input tokens / distinct prefix tokens), the largest |delta logprob|, and ``lc-hf``'s FLOP/s
(``_flops.py``) as a share of this machine's fp32 ``torch.matmul`` peak on the model's shapes (same
run, same threads), with the CPU and the load average. ``--avx2``: torch's kernels and BLAS limited
to AVX2; ``--profile FILE``: a torch.profiler table of summeval16's (or the last case's) ``lc-hf`` side.

    LOGIC_CONSISTENCY_DATA=../shared/data/raw .venv/bin/python scripts/bench_scoring.py
"""

from __future__ import annotations

import argparse
import os
import random
import time
from typing import Any

from _bench import cpu_description, load_average, offline_and_quiet  # this folder's helpers (run as files)
from _flops import FlopCounter, matmul_peak

CASES = ("quickstart", "summeval16", "invariance")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help="embedded model name")
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--batch-size", type=int, default=8, help="rows per forward pass, both sides")
    parser.add_argument("--limit", type=int, default=3, help="instances per task (quickstart), questions (invariance)")
    parser.add_argument("--max-items", type=int, default=5, help="items per instance in the quickstart case")
    parser.add_argument("--stock-prompts", type=int, default=48, help="prompts the stock side scores in summeval16")
    parser.add_argument("--min-shared-tokens", type=int, default=None, help="lc-hf option (default: its own)")
    parser.add_argument("--seed", type=int, default=1234, help="seed of the stock-side sample")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per side, alternating; the best counts")
    parser.add_argument("--avx2", action="store_true", help="torch and its BLAS limited to AVX2 kernels")
    parser.add_argument(
        "--profile", help="write a torch.profiler table of summeval16's (or the last case's) lc-hf side"
    )
    args = parser.parse_args(argv)
    for name in ("batch_size", "limit", "max_items", "stock_prompts", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    return args


def load_model(args: argparse.Namespace) -> tuple[Any, float, float]:
    """The model, the first construction's seconds (library imports included) and a warm start's."""
    from logic_consistency.harness_ext.models.embedded import resolve
    from logic_consistency.harness_ext.prefix.embedded import EmbeddedHFLM

    resolve(args.model)  # convert once (not timed): the warm start is what users see every run
    extra = {} if args.min_shared_tokens is None else {"min_shared_tokens": args.min_shared_tokens}
    timings = []
    for _ in range(2):
        started = time.perf_counter()
        lm = EmbeddedHFLM(model=args.model, batch_size=args.batch_size, device="cpu", **extra)
        timings.append(time.perf_counter() - started)
    return lm, timings[0], timings[1]


def capture(lm: Any, args: argparse.Namespace, case: str) -> list[tuple[str, str]]:
    from logic_consistency.harness_ext.prefix.capture import capture_loglikelihood_requests

    chat = lm.tokenizer.chat_template is not None
    if case == "quickstart":
        return capture_loglikelihood_requests(
            lm,
            tasks=["logic_consistency_pairwise"],
            limit=args.limit,
            metadata={"max_items": args.max_items},
            apply_chat_template=chat,
        )
    if case == "invariance":  # MMLU abstract algebra under the four rotations (tasks/invariance), zero-shot
        return capture_loglikelihood_requests(
            lm, tasks=["logic_consistency_invariance_mmlu_abstract_algebra"], limit=args.limit, apply_chat_template=chat
        )
    return capture_loglikelihood_requests(
        lm, tasks=["logic_consistency_summeval"], limit=1, metadata={"max_items": 16}, apply_chat_template=chat
    )


def score(
    lm: Any, pairs: list[tuple[str, str]], *, prefix_sharing: bool, counter: FlopCounter | None = None
) -> tuple[list[tuple[float, bool]], float]:
    import contextlib

    from logic_consistency.harness_ext.prefix.capture import as_instances

    lm.prefix_sharing = prefix_sharing
    with counter if counter is not None else contextlib.nullcontext():
        started = time.perf_counter()
        answers = lm.loglikelihood(as_instances(pairs), disable_tqdm=True)
        took = time.perf_counter() - started
    return answers, took


def timed(
    lm: Any, pairs: list[tuple[str, str]], stock_pairs: list[tuple[str, str]], repeats: int
) -> tuple[Any, Any, float, float, FlopCounter]:
    """Both sides ``repeats`` times, alternating (lc-hf first), after one untimed warm-up pass of each on a
    few prompts (the first pass of a process pays one-time costs: without it the side timed first loses);
    each side's best time (the machine is shared: the best is the least disturbed) and the FLOPs of lc-hf's
    last run."""
    score(lm, pairs[:8], prefix_sharing=True)
    score(lm, stock_pairs[:8], prefix_sharing=False)
    shared_times, stock_times = [], []
    for _ in range(repeats):
        counter = FlopCounter(lm.model)
        shared, seconds = score(lm, pairs, prefix_sharing=True, counter=counter)
        shared_times.append(seconds)
        stock, seconds = score(lm, stock_pairs, prefix_sharing=False)
        stock_times.append(seconds)
    return shared, stock, min(shared_times), min(stock_times), counter


def profiled(lm: Any, pairs: list[tuple[str, str]], path: str) -> None:
    """The lc-hf side once more under torch.profiler: its operator table, by self CPU time, to ``path``."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        score(lm, pairs, prefix_sharing=True)
    table = prof.key_averages(group_by_input_shape=True).table(sort_by="self_cpu_time_total", row_limit=30)
    with open(path, "w", encoding="utf-8") as out:
        out.write(table)
    print(f"  profile of the lc-hf side: {path}")


def ceiling(lm: Any, pairs: list[tuple[str, str]]) -> float:
    from logic_consistency.harness_ext.prefix.trie import distinct_prefix_tokens

    contexts = sorted({context for context, _ in pairs})
    tokens = [lm.tok_encode(context) for context in contexts]
    return sum(len(t) for t in tokens) / distinct_prefix_tokens(tokens)


def run_case(lm: Any, args: argparse.Namespace, case: str, peak: float) -> str:
    pairs = capture(lm, args, case)
    contexts = sorted({context for context, _ in pairs})
    stock_pairs = pairs
    note = "all prompts both ways"
    if case == "summeval16" and args.stock_prompts < len(contexts):
        sample = set(random.Random(args.seed).sample(contexts, args.stock_prompts))
        stock_pairs = [pair for pair in pairs if pair[0] in sample]
        note = f"stock side: seeded sample of {args.stock_prompts} of {len(contexts)} prompts"
    shared, stock, shared_seconds, stock_seconds, counter = timed(lm, pairs, stock_pairs, args.repeats)
    achieved = counter.flops / shared_seconds / 1e9
    by_pair = dict(zip(pairs, shared, strict=True))
    delta = max(abs(by_pair[p][0] - s[0]) for p, s in zip(stock_pairs, stock, strict=True))
    greedy_differs = sum(by_pair[p][1] != s[1] for p, s in zip(stock_pairs, stock, strict=True))
    n_stock_prompts = len({context for context, _ in stock_pairs})
    per_prompt_stock = stock_seconds / n_stock_prompts
    per_prompt_shared = shared_seconds / len(contexts)
    ratio = per_prompt_stock / per_prompt_shared
    top = ceiling(lm, pairs)
    print(
        f"{case}: {len(pairs)} requests, {len(contexts)} prompts ({note}); "
        f"best of {args.repeats} alternating runs per side after a warm-up of both\n"
        f"  stock hf : {stock_seconds:8.2f} s for {n_stock_prompts} prompts = {per_prompt_stock:.4f} s/prompt\n"
        f"  lc-hf    : {shared_seconds:8.2f} s for {len(contexts)} prompts = {per_prompt_shared:.4f} s/prompt\n"
        f"  ratio {ratio:.2f}x, token ceiling {top:.2f}x, max |dlogprob| {delta:.2e}, "
        f"is_greedy differs on {greedy_differs} of {len(stock_pairs)}\n"
        f"  lc-hf computed {counter.tokens} tokens in {counter.passes} passes, {counter.flops / 1e9:.1f} GFLOP: "
        f"{achieved:.1f} GFLOP/s = {100 * achieved / peak:.0f}% of the fp32 matmul peak ({peak:.1f} GFLOP/s); "
        f"{load_average()}",
        flush=True,
    )
    if args.profile and case == ("summeval16" if "summeval16" in args.cases else args.cases[-1]):
        profiled(lm, pairs, args.profile)
    return (
        f"speedup {case}: {ratio:.2f}x (ceiling {top:.2f}x), max |dlogprob| {delta:.2e}; "
        f"lc-hf {achieved:.1f} GFLOP/s = {100 * achieved / peak:.0f}% of the fp32 matmul peak {peak:.1f} GFLOP/s"
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.avx2:  # before torch loads: its kernels and its BLAS pick their instructions once
        os.environ.update(
            {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
        )
    offline_and_quiet()
    import torch

    print(f"CPU: {cpu_description()}; {load_average()}")
    lm, first, warm = load_model(args)
    print(
        f"model {args.model}: warm start (cached safetensors) {warm:.2f} s "
        f"(first load in this process, library imports included: {first:.2f} s); torch threads {torch.get_num_threads()}; "
        f"kernels: {torch.backends.cpu.get_cpu_capability()}{' (--avx2)' if args.avx2 else ''}"
    )
    text = getattr(lm.model.config, "get_text_config", lambda: lm.model.config)()
    peaks = matmul_peak(int(text.hidden_size), int(text.intermediate_size), int(text.vocab_size))
    peak = max(peaks.values())
    print("fp32 matmul peak, GFLOP/s: " + ", ".join(f"{name} {value:.1f}" for name, value in peaks.items()))
    closing = [run_case(lm, args, case, peak) for case in args.cases]
    print(f"CPU: {cpu_description()}; {load_average()}")
    print("\n".join(closing))


if __name__ == "__main__":
    main()
