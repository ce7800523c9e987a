"""What the benchmark scripts that capture a run's requests share before they start."""

from __future__ import annotations

import logging
import os


def offline_and_quiet() -> None:
    """Read the hub offline when a local data folder is set, and keep only lm-eval's and the suite's errors.

    Capturing requests runs the tasks on placeholder answers: their per-task warnings are noise here.
    """
    if os.environ.get("LOGIC_CONSISTENCY_DATA"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    for name in ("lm_eval", "logic_consistency"):
        logging.getLogger(name).setLevel(logging.ERROR)


def cpu_description() -> str:
    """This machine's CPU as ``lscpu`` names it: model name, family/model, cores, and its vector extensions
    (AVX2, AVX-512 and its bf16/VNNI parts, AMX): what every timing names beside it."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return "CPU unrecorded (no /proc/cpuinfo)"
    flags = set(fields.get("flags", "").split())
    wanted = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_tile")
    have = [flag for flag in wanted if flag in flags] or ["no AVX2"]
    return (
        f"{fields.get('model name', 'unknown CPU')} (family {fields.get('cpu family', '?')} model "
        f"{fields.get('model', '?')}), {os.cpu_count()} cores, {' '.join(have)}"
    )


def load_average() -> str:
    """The 1/5/15-minute load averages, to state beside every figure measured on a shared machine."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f}"


def bytecode_description() -> str:
    """Whether the child processes a benchmark starts read and write Python's bytecode cache, as Python does
    unless ``PYTHONDONTWRITEBYTECODE`` is set (then every process compiles every module it imports)."""
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return "bytecode cache not written (PYTHONDONTWRITEBYTECODE is set: every child compiles what it imports)"
    return "bytecode cache written and read (Python's default)"
