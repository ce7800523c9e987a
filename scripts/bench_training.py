"""Training and generation throughput of the improve wing at two model sizes, for the projection in
docs/improving.md ("What a paper-scale study needs").

Training: ``train_adapter`` (TRL's SFTTrainer, LoRA) for a few optimizer steps on examples of a set
prompt length, the manifest's tokens (those the steps ran) over the Trainer's run time. Generation:
transformers' ``generate`` (what lm-eval's hf backend calls), greedy, a fixed number of new tokens for a
batch of prompts. Both also report tokens per CPU-second of this process, which a shared machine's
load changes less than the wall rate.

Usage: python scripts/bench_training.py [--models smollm2-135m-instruct,gemma-3-270m] [--steps 3]
       [--batch 4] [--accum 2] [--prompt-tokens 220] [--new-tokens 32] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.jobs.processes import run_captured

SENTENCE = "She opened the door, looked at the empty street and decided to walk to the station. "


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _prompt(tokenizer: Any, tokens: int) -> str:
    """A chat-formatted prompt of about ``tokens`` tokens (the SummEval and CaTeRS prompts: 836, 224)."""
    text = SENTENCE
    while len(tokenizer(text)["input_ids"]) < tokens:
        text += SENTENCE
    text += "Which is more coherent? Answer with A or B."
    if tokenizer.chat_template is None:  # a base model (Gemma-3-270M): the study's --no-chat-template prompt
        return text + "\nAnswer:"
    chat = [{"role": "user", "content": text}]
    return str(tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True))


def train(base: Path, args: argparse.Namespace, tokenizer: Any) -> dict[str, Any]:
    from logic_consistency.harness_ext.training.recipe_api import Example, TrainJob, train_adapter
    from logic_consistency.tasks.pairwise.improve_options import TRAINING

    prompt = _prompt(tokenizer, args.prompt_tokens)
    examples = [Example(prompt, " A" if n % 2 else " B") for n in range(args.batch * args.accum * args.steps)]
    overrides = {"max_steps": args.steps, "batch_size": args.batch, "grad_accum": args.accum, "save_steps": 10_000}
    settings = TRAINING.settings({**overrides, "gradient_checkpointing": args.gradient_checkpointing})
    with tempfile.TemporaryDirectory() as folder:
        cpu = _cpu_seconds()
        manifest = train_adapter(TrainJob(base, examples, Path(folder) / "adapter", settings, "repair", "bench"))
        cpu = _cpu_seconds() - cpu
    return {
        "steps": manifest["steps"],
        "examples_per_step": args.batch * args.accum,
        "train_tokens": manifest["train_tokens"],
        "train_runtime_s": manifest["train_runtime_s"],
        "train_tokens_per_s": manifest["train_tokens_per_s"],
        "train_tokens_per_cpu_s": round(manifest["train_tokens"] / cpu, 1),
        "gradient_checkpointing": manifest["gradient_checkpointing"],
        "bf16": manifest["bf16"],
    }


def generate(base: Path, args: argparse.Namespace, tokenizer: Any) -> dict[str, Any]:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32).eval()
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    prompts = [_prompt(tokenizer, 165)] * args.batch  # a GV arithmetic prompt is about 165 tokens
    batch = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    new = args.new_tokens
    with torch.no_grad():
        started, cpu = time.perf_counter(), _cpu_seconds()
        model.generate(**batch, max_new_tokens=new, min_new_tokens=new, do_sample=False)
        wall, cpu = time.perf_counter() - started, _cpu_seconds() - cpu
    tokens = new * args.batch
    return {
        "batch": args.batch,
        "new_tokens": tokens,
        "wall_s": round(wall, 2),
        "generated_tokens_per_s": round(tokens / wall, 1),
        "generated_tokens_per_cpu_s": round(tokens / cpu, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="smollm2-135m-instruct,gemma-3-270m")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--accum", type=int, default=2)
    parser.add_argument("--prompt-tokens", type=int, default=220)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--gradient-checkpointing", choices=("yes", "no"), default="yes")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    from transformers import AutoTokenizer

    results: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "load_before": os.getloadavg()},
        "settings": vars(args) | {"out": str(args.out)},
    }
    for name in args.models.split(","):
        found = run_captured([str(Path(sys.executable).parent / "logic-consistency"), "model-path", name])
        if found.returncode:
            raise RuntimeError(f"logic-consistency model-path {name} failed:\n{found.stderr[-2000:]}")
        path = found.stdout.strip()
        base = Path(path)
        tokenizer = AutoTokenizer.from_pretrained(base)
        results[name] = {"training": train(base, args, tokenizer), "generation": generate(base, args, tokenizer)}
        results[name]["load_after"] = os.getloadavg()
        print(json.dumps({name: results[name]}), flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
