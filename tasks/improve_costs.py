"""The cost figures of a paper-scale ``improve`` study (docs/improving.md "What a paper-scale study needs",
docs/reproducing.md's Tables 3 and 5 rows), computed from the real prompts and stated inputs.

Prompt tokens are counted by ``logic-consistency plan`` (:func:`~logic_consistency.harness_ext.plan.counts.plan_tasks`)
with the embedded SmolLM2 tokenizer and its chat template (an approximation for Llama-3's and LLaMA's):
first stages exactly, a later stage as an upper bound (each quoted earlier answer at its generation
bound), generated tokens at the stages' ``max_gen_toks``. Everything else is an :class:`Inputs` field,
each with its source: a vendor's figure, a measurement on a named machine, or an assumption said to be
one. The model arithmetic is the usual one: a trained token costs 6 N FLOPs with gradient
checkpointing, a scored token 2 N, a decoded step reads every weight once (2 bytes each in bf16).
:func:`figures` renders each figure as the pages write it; ``tests/test_improve_costs.py`` checks that
the pages hold every one, so a changed template or input changes the test's result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from logic_consistency.common import in_split

__all__ = ["GV_TASK", "Counts", "Inputs", "count", "figures"]

#: The GV study's default task (App. G's chain-of-thought validator) and App. H's validator set.
GV_TASK, GV_APP_H = "logic_consistency_gv_arithmetic_cot", "logic_consistency_gv_arithmetic_cot_app_h"
#: The reproducing page's GV command: ``--metadata '{"n_docs": 20000}' --limit 10000``.
GV_N_DOCS, GV_LIMIT = 20_000, 10_000
#: Documents counted for the per-document means (the prompts differ only in the question's digits).
SAMPLE = 100


@dataclass(frozen=True)
class Inputs:
    """What the projection does not count from the prompts, with its source."""

    #: bf16 dense peak of H100 SXM and H200, FLOP/s (NVIDIA's data sheets).
    peak: float = 989e12
    #: Memory bandwidth, bytes/s (NVIDIA's data sheets).
    bandwidth_h200: float = 4.8e12
    bandwidth_h100: float = 3.35e12
    #: Assumed shares of the peak: LoRA training (bf16, gradient checkpointing), QLoRA (dequantises
    #: every weight it multiplies), scoring (forward only); and of the bandwidth when decoding.
    share_lora: float = 0.30
    share_qlora: float = 0.20
    share_scoring: float = 0.40
    share_bandwidth: float = 0.60
    #: Assumed fixed cost of a micro-batch of 30 layers, s: half the 0.5 s a step of 2 micro-batches
    #: was not busy on the GPU in the H200 study (0.587 s a step, the GPU busy 15%), whose run shared the
    #: GPU with the other study and the evaluations: an average, not a step measured alone.
    fixed_per_micro_batch_30_layers: float = 0.25
    #: Measured on the H200 (SmolLM2-135M scoring at batch 4): the fixed cost of a scoring batch, s.
    fixed_per_scoring_batch: float = 0.018
    #: NVIDIA's 7B LoRA fine-tuning rate, tokens/s (an upper bound, not a measurement of this suite).
    nvidia_rate: float = 24_824
    #: Parameters: Llama-3-8B, LLaMA-30B (Alpaca-30B's base); LLaMA-30B's layers against SmolLM2's 30.
    params_8b: float = 8.03e9
    params_30b: float = 32.5e9
    layers_8b: int = 32
    layers_30b: int = 60
    #: The recipes' batches: the pairwise paper's 4 x 2, the GV paper's 64 (8 x accumulation 8).
    pairwise_batch: tuple[int, int] = (4, 2)
    gv_batch: tuple[int, int] = (8, 8)
    #: Rounds of the GV study: 3 rounds of consistency fine-tuning and one SelfTrain model; App. F's epochs.
    gv_adapters: int = 4
    gv_epochs: int = 3
    #: Liu et al.'s REPAIR rows (Table 2: 14.8K, 30.9K, 61.8K examples) x 2 epochs (App. F).
    repair_rows: tuple[tuple[str, int], ...] = (
        ("REPAIR: perturbed", 14_800),
        ("REPAIR: REPAIR-ed", 30_900),
        ("REPAIR: REPAIR-ed + Neg.", 61_800),
    )
    repair_epochs: int = 2
    #: App. B: "64,832 summary comparisons" in the whole dataset (Table 2's 14.8K is the train split's
    #: count the paper trains on; which the split holds is unknown here: the pages give both).
    sff_comparisons_app_b: int = 64_832

    @classmethod
    def from_recipes(cls) -> Inputs:
        """The inputs with the batches and epochs the recipes train with (each family's ``TRAINING``), not copies."""
        from logic_consistency.tasks.improve_recipes import recipes

        trainings = {name: recipe.options.training for name, recipe in recipes().items()}
        gv_training, repair_training = trainings["gv"], trainings["repair"]
        # StudyRecipe refuses a recipe whose options declare no training
        assert gv_training is not None and repair_training is not None
        gv, repair = gv_training.settings({}), repair_training.settings({})
        return cls(
            pairwise_batch=(repair.batch_size, repair.grad_accum),
            gv_batch=(gv.batch_size, gv.grad_accum),
            gv_epochs=int(gv.epochs),
            repair_epochs=int(repair.epochs),
        )


@dataclass(frozen=True)
class Counts:
    """Prompt tokens per document or request, counted by ``plan`` (see the module docstring)."""

    gv_generator: float  # the generator's prompt
    gv_validator: float  # the validator's prompt, its quoted answer at the generator's bound (≤)
    gv_generated: int  # the generator's and the validator's max_gen_toks
    gv_app_h: float  # App. H's two validator prompts
    gv_app_h_generated: int
    #: SummEval's judgement prompt (the REPAIR study's example size); ``None`` without the data.
    summeval: float | None = None
    #: SummEval's test half at ``max_items`` 5: requests and prompt tokens per row.
    summeval_test: tuple[int, int] | None = None


def count(*, with_summeval: bool = True) -> Counts:
    """Count the prompts with ``plan`` (SummEval's only when ``with_summeval``: it needs the data)."""
    from logic_consistency.harness_ext.plan.counts import load_tokenizer, plan_tasks

    tokenizer = load_tokenizer("smollm2-135m-instruct")
    (gv,) = plan_tasks([GV_TASK], limit=SAMPLE, apply_chat_template=True, tokenizer=tokenizer)
    (app_h,) = plan_tasks([GV_APP_H], limit=SAMPLE, apply_chat_template=True, tokenizer=tokenizer)
    generated = sum(t.generated_tokens for t in gv.building.values()) + sum(b.generated_tokens for b in gv.later_stages)
    summeval, test = None, None
    if with_summeval:
        meta: dict[str, Any] = {"max_items": 5, "ks": [3, 5]}
        (five,) = plan_tasks(
            ["logic_consistency_summeval"], limit=5, metadata=meta, apply_chat_template=True, tokenizer=tokenizer
        )
        half = {**meta, "instance_split": "test"}
        (whole,) = plan_tasks(
            ["logic_consistency_summeval"], metadata=half, apply_chat_template=True, tokenizer=tokenizer
        )
        summeval = five.tokens["request_tokens"] / sum(t.requests for t in five.final.values())
        test = (sum(t.requests for t in whole.final.values()), whole.tokens["request_tokens"])
    return Counts(
        gv_generator=gv.tokens["request_tokens"] / gv.documents,
        gv_validator=gv.tokens["later_stage_tokens_estimate"] / gv.documents,
        gv_generated=generated // gv.documents,
        gv_app_h=app_h.tokens["request_tokens"] / app_h.documents,
        gv_app_h_generated=sum(t.generated_tokens for p in (app_h.building, app_h.final) for t in p.values())
        // app_h.documents,
        summeval=summeval,
        summeval_test=test,
    )


def gv_documents(n_docs: int = GV_N_DOCS, limit: int = GV_LIMIT) -> tuple[int, int]:
    """Train and test documents of the reproducing command (the loader's ids, the instance split, ``--limit``)."""
    ids = [f"arithmetic-{index:05d}" for index in range(n_docs)]
    return min(limit, sum(in_split(i, "train") for i in ids)), min(limit, sum(in_split(i, "test") for i in ids))


def _m(tokens: float) -> str:
    return f"{tokens / 1e6:.1f}M"


def _h(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h"


def gv_figures(c: Counts, i: Inputs) -> dict[str, str]:
    """The GV study's figures (Li et al.: Alpaca-30B, QLoRA, one 80 GB GPU per row)."""
    train, test = gv_documents()
    per_doc = math.ceil(c.gv_generator + c.gv_validator) + c.gv_generated
    tokens = train * per_doc * i.gv_epochs * i.gv_adapters
    micro, accumulation = i.gv_batch
    micro_tokens = micro // 2 * per_doc  # two examples (generator, validator) per document
    fixed = i.fixed_per_micro_batch_30_layers * i.layers_30b / 30
    compute = 6 * i.params_30b * micro_tokens * accumulation / (i.share_qlora * i.peak)
    step = compute + fixed * accumulation
    small_micro = 4 // 2 * per_doc
    small_step = 6 * i.params_30b * small_micro / (i.share_qlora * i.peak) + fixed
    generated = 3 * train * c.gv_generated + 5 * test * c.gv_generated
    app_h_generated = 5 * test * c.gv_app_h_generated
    decode = {
        name: 2 * i.params_30b / (i.share_bandwidth * bw)
        for name, bw in (("H200", i.bandwidth_h200), ("H100", i.bandwidth_h100))
    }
    prompts = math.ceil(c.gv_generator + c.gv_validator) * (3 * train + 5 * test)
    app_h = round(c.gv_app_h) * 5 * test
    scoring_rate = i.share_scoring * i.peak / (2 * i.params_30b)
    return {
        "gv_prompts": f"generator prompt {c.gv_generator:.1f} tokens, validator prompt at most {c.gv_validator:.1f}",
        "gv_per_document": f"at most {per_doc} tokens per document",
        "gv_training_tokens": f"{train:,} x {per_doc} x {i.gv_epochs * i.gv_adapters} = {_m(tokens)}",
        "gv_step": f"8 micro-batches of {micro_tokens:,} tokens, {micro_tokens * accumulation:,} tokens: {compute:.1f} s",
        "gv_training_hours": f"{step:.1f} s, about {micro_tokens * accumulation / step:,.0f} tokens/s, **about {tokens / (micro_tokens * accumulation / step) / 3600:.0f} GPU-hours**",
        "gv_small_batch": f"one micro-batch of {small_micro} tokens, {small_step - fixed:.2f} s of compute plus {fixed:.1f} s: about {small_micro / small_step:,.0f} tokens/s, about {tokens / (small_micro / small_step) / 3600:.0f} GPU-hours",
        "gv_generated": f"at most {_m(generated)} generated tokens, and App. H's validator set beside each test run (2 chains of thought of at most {c.gv_app_h_generated // 2} tokens per document: {_m(app_h_generated)}), **{_m(generated + app_h_generated)}** in all",
        "gv_decoding": f"{decode['H200'] * 1e3:.0f} ms on an H200 ({decode['H100'] * 1e3:.0f} ms on an H100), about {4 / decode['H200']:.0f} tokens/s ({4 / decode['H100']:.0f}): **about {_h((generated + app_h_generated) * decode['H200'] / 4)} on an H200 ({_h((generated + app_h_generated) * decode['H100'] / 4)} on an H100)**",
        "gv_evaluation": f"at most {math.ceil(c.gv_generator + c.gv_validator)} tokens per document, 8 runs: {_m(prompts)}; App. H's two validator prompts, {round(c.gv_app_h)} tokens per test document",
        "gv_evaluation_time": f"5 runs: {_m(app_h)}): {_m(prompts + app_h)} tokens at 2 x 32.5B FLOPs each, 40% of the peak, about {scoring_rate:,.0f} tokens/s: **about {(prompts + app_h) / scoring_rate / 60:.0f} minutes**",
        "gv_reproducing": f"at most {per_doc} tokens per document: {_m(tokens)} training tokens, about {tokens / (micro_tokens * accumulation / step) / 3600:.0f} GPU-hours",
        "gv_generated_short": f"at most {_m(generated + app_h_generated)} generated tokens (about {_h((generated + app_h_generated) * decode['H200'] / 4)} on an H200)",
        "gv_scored": f"{_m(prompts + app_h)} prompt tokens scored (about {_h((prompts + app_h) / scoring_rate)})",
    }


def _repair_rows(c: Counts, i: Inputs) -> list[tuple[str, int, float, float]]:
    """Each REPAIR row: name, examples, tokens, seconds of the projected training (Table 2's counts)."""
    assert c.summeval is not None
    micro, accumulation = i.pairwise_batch
    step_tokens = micro * accumulation * round(c.summeval)
    compute = 6 * i.params_8b * step_tokens / (i.share_lora * i.peak)
    step = compute + i.fixed_per_micro_batch_30_layers * i.layers_8b / 30 * accumulation
    rows = []
    for name, examples in i.repair_rows:
        seen = examples * i.repair_epochs
        rows.append((name, examples, seen * c.summeval, seen / (micro * accumulation) * step))
    return rows


def pairwise_figures(c: Counts, i: Inputs) -> dict[str, str]:
    """The REPAIR study's figures (Liu et al.: Llama-3-8B-Instruct, LoRA, one H100 or H200)."""
    if c.summeval is None or c.summeval_test is None:
        return {}
    micro, accumulation = i.pairwise_batch
    per = round(c.summeval)
    step_tokens = micro * accumulation * per
    flops = 6 * i.params_8b * step_tokens
    compute = flops / (i.share_lora * i.peak)
    fixed = i.fixed_per_micro_batch_30_layers * i.layers_8b / 30 * accumulation
    out = {
        "summeval_prompt": f"a SummEval judgement prompt with the chat template is about {per} tokens",
        "pairwise_step": f"a step is {step_tokens:,} tokens, 6 x 8.03B x {step_tokens:,} = {flops / 1e12:.0f} TFLOP, {compute:.2f} s at 30% of the peak, plus the assumed {fixed:.2f} s (0.25 s a micro-batch of 30 layers, for 32): about **{step_tokens / (compute + fixed):,.0f} tokens/s**",
    }
    rows = _repair_rows(c, i)
    total = sum(tokens for _, _, tokens, _ in rows)
    for name, examples, tokens, seconds in rows:
        steps = examples * i.repair_epochs // (micro * accumulation)
        nvidia = f"{tokens / i.nvidia_rate / 60:.0f} min"
        out[f"table {name}"] = f"| {name} | {examples / 1e3:.1f}K x {i.repair_epochs} | {_m(tokens)} | {nvidia} |"
        out[f"projection {name}"] = (
            f"| {name} | {examples / 1e3:.1f}K x {i.repair_epochs} | {steps:,} | {_h(seconds)} | {nvidia} |"
        )
    scale = i.sff_comparisons_app_b / i.repair_rows[0][1]
    hours = sum(seconds for *_, seconds in rows)
    out["repair_range"] = (
        f"at most {total / 1e6:.0f} M training tokens (about {_h(hours)} projected) if the split holds Table 2's "
        f"{i.repair_rows[0][1] / 1e3:.1f}K comparisons, {total * scale / 1e6:.0f} M ({_h(hours * scale)}) if it holds "
        f"App. B's {i.sff_comparisons_app_b:,}"
    )
    requests, tokens = c.summeval_test
    batch = micro * tokens / requests
    seconds = 2 * i.params_8b * batch / (i.share_scoring * i.peak) + i.fixed_per_scoring_batch
    minutes = tokens / (batch / seconds) / 60
    out["pairwise_evaluation"] = (
        f"{requests:,} requests and {tokens / 1e6:.2f}M prompt tokens per row; at batch 4 a batch is 2 x 8.03B x "
        f"{batch:,.0f} tokens, {seconds - i.fixed_per_scoring_batch:.2f} s at 40% of the peak plus the measured "
        f"18 ms: about {batch / seconds:,.0f} tokens/s, **about {minutes:.1f} minutes a row, {4 * minutes:.0f} minutes** for the four rows"
    )
    return out


def figures(counts: Counts | None = None, inputs: Inputs | None = None) -> dict[str, str]:
    """Every figure, keyed by name, as the pages write it (``counts`` default: :func:`count`)."""
    c, i = counts or count(), inputs or Inputs.from_recipes()
    return {**gv_figures(c, i), **pairwise_figures(c, i)}


if __name__ == "__main__":  # print them: python -m logic_consistency.tasks.improve_costs
    for key, text in figures().items():
        print(f"{key}\t{text}")
