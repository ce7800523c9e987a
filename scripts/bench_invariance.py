"""Benchmark: the invariance family's wrapped MMLU run (``cyclic``) scored by ``lc-hf`` against stock ``hf``.

One process, one loaded model (SmolLM2-135M-Instruct, no chat template), the same requests both ways: those
``lm_eval.simple_evaluate`` sends for ``logic_consistency_invariance`` (abstract algebra, anatomy; 4 prompts
per question, 4 letters each). ``zero-shot``: as sent. ``five-shot-synthetic``: a five-shot header after each
subject's description, in MMLU's format, from the subject's last five test questions (never posed; the local
copy has no dev split): prompts to measure prefix sharing on, not a five-shot evaluation. Per case: an untimed
warm-up of both sides, then ``--repeats`` alternating timed runs, the best of each side; seconds per prompt,
the ratio, the token ceiling (input tokens / distinct prefix tokens) and the ratio's share of it, max
|delta logprob|, and ``lc-hf``'s FLOP/s as a share of the fp32 matmul peak (``_flops.py``); CPU and load.

    LOGIC_CONSISTENCY_DATA=../shared/data/raw .venv/bin/python scripts/bench_invariance.py --limit 2
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from _bench import cpu_description, load_average, offline_and_quiet  # this folder's helpers (run as files)
from _flops import matmul_peak
from bench_scoring import ceiling, timed

CASES = ("zero-shot", "five-shot-synthetic")
GROUP = "logic_consistency_invariance"
SUBJECTS = ("abstract_algebra", "anatomy")
LETTERS = "ABCD"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help="embedded model name")
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--batch-size", type=int, default=8, help="rows per forward pass, both sides")
    parser.add_argument("--limit", type=int, default=8, help="questions per subject")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per side, alternating; the best counts")
    parser.add_argument("--min-shared-tokens", type=int, default=None, help="lc-hf option (default: its own)")
    args = parser.parse_args(argv)
    for name in ("batch_size", "limit", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    return args


def load_model(args: argparse.Namespace) -> Any:
    from logic_consistency.harness_ext.models.embedded import resolve
    from logic_consistency.harness_ext.prefix.embedded import EmbeddedHFLM

    resolve(args.model)
    extra = {} if args.min_shared_tokens is None else {"min_shared_tokens": args.min_shared_tokens}
    return EmbeddedHFLM(model=args.model, batch_size=args.batch_size, device="cpu", **extra)


def description(subject: str) -> str:
    """lm-eval's ``mmlu_<subject>`` description (its YAML)."""
    return f"The following are multiple choice questions (with answers) about {subject.replace('_', ' ')}.\n\n"


def header(subject: str, limit: int, shots: int = 5) -> str:
    """The last ``shots`` test questions of ``subject``, in lm-eval's MMLU few-shot format
    (``doc_to_text``, target delimiter " ", few-shot delimiter a blank line)."""
    data = Path(os.environ.get("LOGIC_CONSISTENCY_DATA", "../shared/data/raw")) / "mmlu" / "mmlu_test.jsonl"
    rows = [
        row for row in map(json.loads, data.read_text(encoding="utf-8").split("\n")[:-1]) if row["subject"] == subject
    ]
    if len(rows) < limit + shots:
        raise SystemExit(f"--limit {limit}: {subject} has {len(rows)} questions, too few for {shots} other ones")
    shots_text = []
    for row in rows[-shots:]:
        options = "".join(f"\n{letter}. {text}" for letter, text in zip(LETTERS, row["choices"], strict=True))
        shots_text.append(f"{row['question'].strip()}{options}\nAnswer: {LETTERS[row['answer']]}\n\n")
    return "".join(shots_text)


def five_shot(pairs: list[tuple[str, str]], limit: int) -> list[tuple[str, str]]:
    """The captured requests with a synthetic five-shot header after each subject's description."""
    heads = {description(subject): header(subject, limit) for subject in SUBJECTS}
    out = []
    for context, continuation in pairs:
        head = next(text for text in heads if context.startswith(text))
        out.append((head + heads[head] + context[len(head) :], continuation))
    return out


def run_case(lm: Any, pairs: list[tuple[str, str]], case: str, peak: float, repeats: int) -> str:
    contexts = sorted({context for context, _ in pairs})
    shared, stock, shared_seconds, stock_seconds, counter = timed(lm, pairs, pairs, repeats)
    achieved = counter.flops / shared_seconds / 1e9
    delta = max(abs(a[0] - b[0]) for a, b in zip(shared, stock, strict=True))
    picks_differ = sum(
        max(range(4), key=lambda i: shared[q + i][0]) != max(range(4), key=lambda i: stock[q + i][0])
        for q in range(0, len(pairs), 4)
    )
    ratio = stock_seconds / shared_seconds
    top = ceiling(lm, pairs)
    tokens = sum(len(lm.tok_encode(context)) for context in contexts)
    print(
        f"{case}: {len(pairs)} requests, {len(contexts)} prompts, {tokens} prompt tokens "
        f"({tokens / len(contexts):.0f} per prompt); best of {repeats} alternating runs per side\n"
        f"  stock hf : {stock_seconds:8.2f} s = {stock_seconds / len(contexts):.4f} s/prompt\n"
        f"  lc-hf    : {shared_seconds:8.2f} s = {shared_seconds / len(contexts):.4f} s/prompt\n"
        f"  ratio {ratio:.2f}x, token ceiling {top:.2f}x: {100 * ratio / top:.0f}% of the ceiling; "
        f"max |dlogprob| {delta:.2e}, the picked letter differs on {picks_differ} of {len(pairs) // 4} prompts\n"
        f"  lc-hf computed {counter.tokens} tokens in {counter.passes} passes, {counter.flops / 1e9:.1f} GFLOP: "
        f"{achieved:.1f} GFLOP/s = {100 * achieved / peak:.0f}% of the fp32 matmul peak ({peak:.1f} GFLOP/s); "
        f"{load_average()}",
        flush=True,
    )
    return (
        f"speedup {case}: {ratio:.2f}x of a {top:.2f}x token ceiling ({100 * ratio / top:.0f}%), "
        f"max |dlogprob| {delta:.2e}; lc-hf {100 * achieved / peak:.0f}% of the fp32 matmul peak {peak:.1f} GFLOP/s"
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    offline_and_quiet()
    import torch

    from logic_consistency.harness_ext.prefix.capture import capture_loglikelihood_requests

    print(f"CPU: {cpu_description()}; {load_average()}; torch threads {torch.get_num_threads()}")
    started = time.perf_counter()
    lm = load_model(args)
    pairs = capture_loglikelihood_requests(lm, tasks=[GROUP], limit=args.limit)
    print(
        f"model {args.model}, batch size {args.batch_size}; {GROUP} ({', '.join(SUBJECTS)}), "
        f"--limit {args.limit}, cyclic: {len(pairs)} requests captured in {time.perf_counter() - started:.1f} s"
    )
    text = getattr(lm.model.config, "get_text_config", lambda: lm.model.config)()
    peaks = matmul_peak(int(text.hidden_size), int(text.intermediate_size), int(text.vocab_size))
    peak = max(peaks.values())
    print("fp32 matmul peak, GFLOP/s: " + ", ".join(f"{name} {value:.1f}" for name, value in peaks.items()))
    closing = []
    for case in args.cases:
        case_pairs = pairs if case == "zero-shot" else five_shot(pairs, limit=args.limit)
        closing.append(run_case(lm, case_pairs, case, peak, args.repeats))
    print(f"CPU: {cpu_description()}; {load_average()}")
    print("\n".join(closing))


if __name__ == "__main__":
    main()
