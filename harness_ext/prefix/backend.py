"""``lc-hf`` and ``lc-embedded`` declare themselves: lm-eval names, classes, ``--model_args``, what a written
file may record of them, and the private lm-eval name they reach
(:class:`~logic_consistency.harness_ext.models.backend.Backend`).

Apart from ``scorer.py`` and ``embedded.py`` so that reading the declarations (``logic-consistency
options``, a model list's check, the allowlist) imports neither lm-eval nor torch. The names passed on
to ``HFLM`` are lm-eval 0.4.13's (``tests/harness_ext/test_model_args.py`` pins them).
"""

from __future__ import annotations

from logic_consistency.harness_ext.models.args import _HF_PASSED, _HF_PUBLIC, Declaration
from logic_consistency.harness_ext.models.backend import Backend, LmEvalHook
from logic_consistency.harness_ext.models.embedded import DEFAULT_MODEL, EMBEDDED_MODELS
from logic_consistency.options import Declared

__all__ = ["EMBEDDED_ARGS", "HF_ARGS", "LC_EMBEDDED", "LC_HF"]

HF_ARGS = Declaration(
    where="lc-hf --model_args",
    declared=(
        Declared("prefix_sharing", bool, True, "compute each shared prompt prefix once (false = stock hf)"),
        Declared("min_shared_tokens", int, 256, "cache a prefix only when it saves this many token computations", 1),
        Declared("max_cached_prefixes", int, 8, "nested prefix caches alive at once (bounds memory)", 1),
        Declared("mixed_generation", bool, True, "greedy generations of different stops and lengths share batches"),
    ),
    passed=_HF_PASSED,
    unknown="near_miss",
)

EMBEDDED_ARGS = Declaration(
    where="lc-embedded --model_args",
    declared=(
        Declared("model", str, DEFAULT_MODEL, "the embedded model", choices=tuple(EMBEDDED_MODELS)),
        *HF_ARGS.declared,
    ),
    passed=_HF_PASSED - {"pretrained"},
    refused={"pretrained": "lc-embedded takes model=<name>; use --model hf for other models"},
    unknown="near_miss",
)

_PREFIX_SHARING = LmEvalHook(
    "lm_eval.models.huggingface:HFLM._loglikelihood_tokens",
    "overrides",
    "prefix.scorer.PrefixSharingHFLM",
    "prompts that share a prefix are scored from one cached forward pass of it (lc-hf, and lc-embedded on it)",
    "prefix (KV) sharing across requests in lm-eval's hf backend",
)

LC_HF = Backend(
    name="lc-hf",
    target="logic_consistency.harness_ext.prefix.scorer:PrefixSharingHFLM",
    args=HF_ARGS,
    public=_HF_PUBLIC | {arg.name for arg in HF_ARGS.declared},
    hooks=(_PREFIX_SHARING,),
)

LC_EMBEDDED = Backend(
    name="lc-embedded",
    target="logic_consistency.harness_ext.prefix.embedded:EmbeddedHFLM",
    args=EMBEDDED_ARGS,
    public=(_HF_PUBLIC - {"pretrained"}) | {arg.name for arg in EMBEDDED_ARGS.declared},
    hooks=(),  # it inherits lc-hf's override (declared once, by LC_HF)
)
