"""Measure ``lc-hf`` against stock ``hf`` in bfloat16 / float16, against stock's own batch noise.

One model, its float32 weights cast to each dtype in turn; the quick start's pairwise slice is
scored by stock ``hf`` at batch sizes 8 and 1 (their spread is stock's own noise), by ``lc-hf`` at
batch size 8, and by ``lc-hf`` in float32 as the reference. Per comparison: max and mean
|delta logprob| and the prompts whose preferred letter flips, also among those whose margin exceeds
that max delta. ``--model tiny-random-llama`` is a seeded random Llama (no hub) with small margins;
``--prompts N`` scores a seeded sample of N prompts.

    LOGIC_CONSISTENCY_DATA=../shared/data/raw .venv/bin/python scripts/bench_precision.py --prompts 12
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections import defaultdict
from typing import Any

from _bench import offline_and_quiet  # this folder's helper (the scripts run as files)

DTYPES = ("bfloat16", "float16", "float32")
TINY = "tiny-random-llama"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help=f"embedded model name, or {TINY}")
    parser.add_argument("--dtypes", nargs="+", choices=DTYPES, default=["bfloat16", "float16"])
    parser.add_argument("--batch-size", type=int, default=8, help="the larger batch size (the other is 1)")
    parser.add_argument(
        "--tasks", nargs="+", default=["logic_consistency_pairwise"], help="quick start: the pairwise group"
    )
    parser.add_argument("--limit", type=int, default=3, help="instances per task (quick start: 3)")
    parser.add_argument("--max-items", type=int, default=5, help="items per instance (quick start: 5)")
    parser.add_argument("--prompts", type=int, default=None, help="seeded sample of prompts (default: all)")
    parser.add_argument("--seed", type=int, default=1234, help="seed of the prompt sample")
    args = parser.parse_args(argv)
    for name in ("batch_size", "limit", "max_items", "prompts"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    return args


def tiny_random_llama(folder: str, *, seed: int = 0) -> str:
    """A seeded random 2-layer Llama with SmolLM2's tokenizer, saved to ``folder`` (no download).

    ``initializer_range`` 0.2 (not the default 0.02) spreads the logits over a few nats, so the two
    answer letters' margins range from ~0 to a few nats, as a weak real judge's do.
    """
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from logic_consistency.harness_ext.models.embedded import resolve

    tokenizer = AutoTokenizer.from_pretrained(str(resolve("smollm2-135m-instruct")))
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        num_hidden_layers=2,
        max_position_embeddings=4096,
        initializer_range=0.2,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def load(args: argparse.Namespace, folder: str) -> Any:
    if args.model == TINY:
        from logic_consistency.harness_ext.prefix.scorer import PrefixSharingHFLM

        return PrefixSharingHFLM(
            pretrained=tiny_random_llama(folder), dtype="float32", device="cpu", batch_size=args.batch_size
        )
    from logic_consistency.harness_ext.prefix.embedded import EmbeddedHFLM

    return EmbeddedHFLM(model=args.model, dtype="float32", device="cpu", batch_size=args.batch_size)


def capture(lm: Any, args: argparse.Namespace) -> list[tuple[str, str]]:
    from logic_consistency.harness_ext.prefix.capture import capture_loglikelihood_requests

    pairs = capture_loglikelihood_requests(
        lm,
        tasks=args.tasks,
        limit=args.limit,
        metadata={"max_items": args.max_items},
        apply_chat_template=lm.tokenizer.chat_template is not None,
    )
    pairs = sorted(set(pairs))  # the same prompt may recur across variants: score it once
    if args.prompts is not None:
        contexts = sorted({context for context, _ in pairs})
        keep = set(random.Random(args.seed).sample(contexts, min(args.prompts, len(contexts))))
        pairs = [pair for pair in pairs if pair[0] in keep]
    return pairs


def score(lm: Any, pairs: list[tuple[str, str]], *, prefix_sharing: bool, batch_size: int) -> list[float]:
    from logic_consistency.harness_ext.prefix.capture import as_instances

    lm.prefix_sharing = prefix_sharing
    lm.batch_size_per_gpu = batch_size
    return [logprob for logprob, _ in lm.loglikelihood(as_instances(pairs), disable_tqdm=True)]


def preferences(pairs: list[tuple[str, str]], logprobs: list[float]) -> dict[str, tuple[bool, float]]:
    """Per two-letter prompt: (first letter preferred, i.e. logprob(A) >= logprob(B); the margin)."""
    letters: dict[str, dict[str, float]] = defaultdict(dict)
    for (context, continuation), logprob in zip(pairs, logprobs, strict=True):
        letters[context][continuation] = logprob
    out = {}
    for context, options in letters.items():
        if len(options) == 2:
            first, second = (options[key] for key in sorted(options))
            out[context] = (first >= second, abs(first - second))
    return out


def compare(pairs: list[tuple[str, str]], a: list[float], b: list[float]) -> dict[str, Any]:
    """max/mean |a - b|, flips of the preferred letter, and flips where b's margin exceeds max |a - b|."""
    deltas = [abs(x - y) for x, y in zip(a, b, strict=True)]
    worst = max(deltas)
    pa, pb = preferences(pairs, a), preferences(pairs, b)
    flips = [context for context in pb if pa[context][0] != pb[context][0]]
    wide = [context for context in pb if pb[context][1] > worst]
    return {
        "max": worst,
        "mean": sum(deltas) / len(deltas),
        "prompts": len(pb),
        "flips": len(flips),
        "wide": len(wide),
        "wide_flips": sum(context in flips for context in wide),
        "ties": sum(pb[context][1] == 0.0 for context in pb),
    }


def _table(rows: list[tuple[str, str, dict[str, Any]]]) -> None:
    print(
        f"\n{'dtype':9} {'comparison':22} {'max|d|':>8} {'mean|d|':>8} {'flips':>9} "
        f"{'flips where margin > max|d|':>28} {'ties in 2nd':>11}"
    )
    for dtype, label, c in rows:
        print(
            f"{dtype:9} {label:22} {c['max']:8.4f} {c['mean']:8.4f} {c['flips']:4d}/{c['prompts']:<4d} "
            f"{c['wide_flips']:>21d}/{c['wide']:<6d} {c['ties']:>11d}",
            flush=True,
        )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    offline_and_quiet()
    import torch

    with tempfile.TemporaryDirectory() as folder:
        lm = load(args, folder)
        pairs = capture(lm, args)
        weights = {name: tensor.clone() for name, tensor in lm.model.state_dict().items()}
        n_prompts = len({context for context, _ in pairs})
        print(
            f"model {args.model}: {len(pairs)} requests, {n_prompts} prompts; torch {torch.__version__}, "
            f"{torch.get_num_threads()} threads",
            flush=True,
        )
        started = time.perf_counter()
        reference = score(lm, pairs, prefix_sharing=True, batch_size=args.batch_size)
        print(f"float32 reference (lc-hf) {time.perf_counter() - started:.0f} s", flush=True)
        margins = sorted(preferences(pairs, reference)[c][1] for c in preferences(pairs, reference))
        print(
            f"float32 margins |lp(A) - lp(B)|: min {margins[0]:.4f}, median {margins[len(margins) // 2]:.4f}, "
            f"{sum(m < 0.1 for m in margins)} of {len(margins)} below 0.1",
            flush=True,
        )
        for dtype in args.dtypes:
            rows = []
            lm.model.to(torch.float32)
            lm.model.load_state_dict(weights)
            lm.model.to(getattr(torch, dtype))
            started = time.perf_counter()
            runs = {
                "lc-hf b8": score(lm, pairs, prefix_sharing=True, batch_size=args.batch_size),
                "hf b8": score(lm, pairs, prefix_sharing=False, batch_size=args.batch_size),
                "hf b1": score(lm, pairs, prefix_sharing=False, batch_size=1),
            }
            print(f"{dtype}: scored 3 ways in {time.perf_counter() - started:.0f} s", flush=True)
            for label, a, b in (
                ("lc-hf b8 vs hf b8", runs["lc-hf b8"], runs["hf b8"]),
                ("hf b1 vs hf b8", runs["hf b1"], runs["hf b8"]),
                ("hf b8 vs float32", runs["hf b8"], reference),
                ("hf b1 vs float32", runs["hf b1"], reference),
                ("lc-hf b8 vs float32", runs["lc-hf b8"], reference),
            ):
                rows.append((dtype, label, compare(pairs, a, b)))
            _table(rows)  # after each dtype, so a long run shows its first figures early


if __name__ == "__main__":
    main()
