"""What a secret is, and the forms in which an endpoint may echo one (issue 39).

* **Not a secret**: a placeholder (:data:`PLACEHOLDERS`: empty, ``-``, ``none``, ``EMPTY``, ...) or a
  value shorter than :data:`MIN_SECRET_LENGTH` characters (:func:`is_placeholder`). Redacting it
  would rewrite every ``-`` or ``none`` of a results file (field and metric names included), so it is
  never used as a redaction pattern; :mod:`logic_consistency.credentials` says so in one line, and
  refuses a backend whose real key would be that short.
* **Echoed forms** of a secret, all redacted (:func:`literal_forms`, :class:`Echoes`): as written,
  JSON-escaped, percent-encoded (reserved characters or every byte), ``\\u``-escaped, hex, base64 and
  base64url (at each of the three byte alignments, so also inside a longer encoded blob), the key
  split by whitespace or zero-width characters, and any part of :data:`MIN_PART` or more characters.
  No redactor can catch every encoding an endpoint may choose; these are the common ones.

Neutral: imports nothing of the suite (:mod:`logic_consistency.credentials` uses it).
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse

__all__ = ["MIN_PART", "MIN_SECRET_LENGTH", "PLACEHOLDERS", "Echoes", "is_placeholder", "is_switch", "literal_forms"]

#: A value shorter than this (stripped) is not a secret: too short to redact without garbling.
MIN_SECRET_LENGTH = 8
#: Any part of a secret this long or longer is redacted too (an echo cut at either end).
MIN_PART = 16
#: Values local servers document as "no key" (compared stripped, in lower case): never secrets.
PLACEHOLDERS = frozenset(
    {"", "-", "none", "null", "empty", "nokey", "no-key", "no_key", "dummy", "placeholder", "unused",
     "not-needed", "not-used", "sk-no-key-required", "x", "xxx", "changeme", "test", "local"}
)  # fmt: skip
#: What may split an echoed key: whitespace, zero-width characters, the soft hyphen.
_SPLIT = "[\\s\u200b\u200c\u200d\u2060\ufeff\u00ad]{0,4}"


def is_placeholder(value: str) -> bool:
    """Whether ``value`` is not a secret: a placeholder or shorter than :data:`MIN_SECRET_LENGTH`."""
    stripped = value.strip()
    return stripped.lower() in PLACEHOLDERS or len(stripped) < MIN_SECRET_LENGTH


#: Values of a named variable that are switches or counts, never keys (``OMP_NUM_THREADS: 1``).
_SWITCH = re.compile(r"^\s*(?:[-+]?[0-9]+(?:\.[0-9]+)?|true|false|yes|no|on|off|none)\s*$", re.IGNORECASE)


def is_switch(value: str) -> bool:
    """Whether ``value`` is a number or a yes/no word: a model list's ``env`` value never redacted."""
    return bool(_SWITCH.match(value))


def _base64_cores(raw: bytes) -> set[str]:
    """The characters of ``raw``'s base64 and base64url encodings that depend on ``raw`` only, at each
    of the three byte offsets it may have inside a longer encoded text."""
    cores = set()
    for offset in range(3):
        first = -(-8 * offset // 6)  # the first character whose 6 bits are all raw's
        last = (8 * (offset + len(raw)) - 6) // 6  # the last such character
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            cores.add(encode(b"\0" * offset + raw).decode("ascii")[first : last + 1])
    return cores


def literal_forms(value: str) -> set[str]:
    """Every literal form of ``value`` that :class:`~logic_consistency.credentials.Redactor` replaces."""
    raw = value.encode("utf-8")
    forms = {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value, safe=""),
        "".join(f"%{byte:02x}" for byte in raw),
        "".join(f"%{byte:02X}" for byte in raw),
        "".join(f"\\u{ord(char):04x}" for char in value),
        "".join(f"\\u{ord(char):04X}" for char in value),
        raw.hex(),
        raw.hex().upper(),
        *_base64_cores(raw),
    }
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


class Echoes:
    """The non-literal echoes of one secret: split by whitespace or zero-width characters, or cut to
    any part of :data:`MIN_PART` or more characters (:meth:`sub`, linear in the text's length)."""

    def __init__(self, value: str) -> None:
        value = value.strip()
        self.split = re.compile(_SPLIT.join(re.escape(char) for char in value))
        self.parts = sorted({value[start : start + MIN_PART] for start in range(len(value) - MIN_PART + 1)})

    def sub(self, text: str, label: str) -> tuple[str, int]:
        """``text`` with every echo replaced by ``label``, and how many were."""
        text, count = self.split.subn(label, text)
        spans: list[tuple[int, int]] = []
        for part in (part for part in self.parts if part in text):
            start = text.find(part)
            while start >= 0:
                spans.append((start, start + len(part)))
                start = text.find(part, start + 1)
        if not spans:
            return text, count
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        pieces, position = [], 0
        for start, end in merged:
            pieces += [text[position:start], label]
            position = end
        return "".join([*pieces, text[position:]]), count + len(merged)
