"""A pairwise judge for the tiny fixture (``tests/fixtures/data/tiny_pairwise``): it prefers the larger
number (the smaller one for the negated question), so it is perfectly consistent and agrees with the
fixture's human scores; shared by the tests that add a dataset."""

from __future__ import annotations

import math
import re
from typing import Any

from lm_eval.api.model import LM

_OPTIONS = re.compile(r"A: item-(\d+)\nB: item-(\d+)\nWhich is (larger|smaller)\?")


class Judge(LM):
    """Prefers the larger number (the smaller one for the negated question): perfectly consistent."""

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        out = []
        for request in requests:
            context, continuation = request.args
            a, b, relation = _OPTIONS.search(context).groups()
            preferred = "A" if (int(a) > int(b)) != (relation == "smaller") else "B"
            out.append((math.log(0.9 if continuation.strip() == preferred else 0.1), False))
        return out

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        raise NotImplementedError

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError
