"""Normalisation (SPEC §3.6, amended): when a reply states a value, by digits or by text.

A value is a *number* (digits with phone or amount punctuation and an optional currency) or
*text*. Numbers compare by key, the last nine digits, against every number span of the reply
(W61, W62); text is a substring after folding (W63). Pure: no I/O.

Matching is linear in the length of the reply and of the value. A value (``Expected:`` holds up
to 8,000 characters) is checked against every reply of a night, so nothing here may back-track:
``is_number`` and ``number_key`` are plain passes over the characters, and ``number_spans`` walks
the reply once, left to right, with regular expressions that are one character class (or the
literal ``(0)``) under a greedy ``+`` with nothing after it: a match can only grow, never give
characters back and try again.

Decisions of ours where SPEC leaves room (pinned in tests/unit/test_scoring.py):
- digits are the ASCII 0-9 after NFKC, so full-width digits count and other scripts' do not;
- a blank value is never found;
- Fr., SFr. and Franken are currencies ("150 Franken" carries 150);
- a decimal part of one or two zeros is dropped, not three (``1.000`` is a thousand in German);
- a date has a real month and day, and with a digit or another group of its separator right
  beside it, it is part of a longer number (a phone number written with dots or dashes).
"""

import re
import unicodedata
from collections.abc import Iterator

KEY_DIGITS = 9
_DIGITS = frozenset("0123456789")  # ASCII only, after NFKC: other scripts' digits are text
_NUMBER_MARKS = frozenset("+()-–./'’,")  # §3.6's class, besides the digits and whitespace
# "such as CHF, EUR or $", so ours: Fr., SFr., Franken, Euro and GBP too. §3.6 (amended) says
# "150 Franken" carries 150 as "CHF 150.00" does, so a word for francs is a currency.
_CURRENCIES = ("chf", "sfr.", "fr.", "franken", "eur", "euro", "usd", "gbp", "$", "€", "£")
_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # the line ends of str.splitlines
_DIGIT_RUN = re.compile(r"[0-9]+")
_NOT_DIGITS = re.compile(r"[^0-9]+")
# What joins two digit groups of one span: whitespace other than a line break, ``) . - / ' ’``
# and the trunk prefix ``(0)``; any other ``(`` ends the span (§3.6, amended). The alternatives
# begin with different characters, so each step of the ``+`` has one way to go at most.
_JOINER_RUN = re.compile(rf"(?:[^\S{_LINE_BREAKS}]|[)./'’-]|\(0\))+")
# A date's pattern, its separator and where the separator first stands (a cheap first test).
_DATES = (
    (re.compile(r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"), "-", 4),  # YYYY-MM-DD
    (re.compile(r"(?:0[1-9]|[12][0-9]|3[01])\.(?:0[1-9]|1[0-2])\.[0-9]{4}"), ".", 2),  # DD.MM.YYYY
)


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def fold(text: str) -> str:
    """NFKC, case folding and whitespace runs collapsed to one space (§3.6, NFKC proposed)."""
    folded = _nfkc(_nfkc(text).casefold())  # case folding can undo NFKC (e.g. "ǰ"), so again
    return " ".join(folded.split())


def _bare_number(text: str) -> bool:
    """A digit, and nothing but digits, §3.6's marks and whitespace."""
    return any(c in _DIGITS for c in text) and all(
        c in _DIGITS or c in _NUMBER_MARKS or c.isspace() for c in text
    )


def _without_currency(text: str) -> Iterator[str]:
    """The text without the currency it begins or ends with, for each currency it does."""
    for currency in _CURRENCIES:
        size = len(currency)
        if len(text) >= size and text[:size].casefold() == currency:
            yield text[size:]
        if len(text) >= size and text[-size:].casefold() == currency:
            yield text[:-size]


def is_number(value: str) -> bool:
    """A value is a number iff it holds a digit and only phone and amount punctuation, with an
    optional currency before or after it, not both (§3.6): ``+41 (0)44 123 45 67``,
    ``CHF 1'200.50``, ``CHF 150.–``, ``150 Franken``. A few passes over the value, no regex."""
    body = _nfkc(value).strip()
    return _bare_number(body) or any(_bare_number(rest) for rest in _without_currency(body))


def _is_digit_at(text: str, index: int) -> bool:
    return 0 <= index < len(text) and text[index] in _DIGITS


def _without_zero_decimals(number: str) -> str:
    """SPEC §3.6 (amended): a trailing decimal part of zeros (``.00``, ``,00``, ``.0``) is
    dropped before taking digits, so ``150.00`` carries 150; a dash (``.–``) holds no digit to
    drop. Proposed: one or two zeros only, as ``1.000`` is a thousand in German text."""
    end = len(number)
    while end and number[end - 1] not in _DIGITS:
        end -= 1  # back over a currency or a dash after the last digit
    if number[end - 1 : end] != "0":
        return number[:end]
    for zeros in (2, 1):
        point = end - zeros - 1
        if (
            number[point + 1 : end] == "0" * zeros
            and number[point : point + 1] in (".", ",")
            and _is_digit_at(number, point - 1)
        ):
            return number[:point]
    return number[:end]


def number_key(value: str) -> str:
    """The last nine digits of a number, or all of them if fewer (W61): the subscriber part,
    whichever of +41, 0041, +41 (0) or 0 it is written with (W62). A trailing decimal part of
    zeros is no part of it (§3.6, amended): ``CHF 150.00`` and ``CHF 150.–`` have key 150."""
    return _key(_nfkc(value))


def _key(normalized: str) -> str:
    return _NOT_DIGITS.sub("", _without_zero_decimals(normalized))[-KEY_DIGITS:]


def _date_end(text: str, start: int) -> int | None:
    """Where a date (``YYYY-MM-DD`` or ``DD.MM.YYYY``) that starts at ``start`` ends, if one
    does. A date stands alone: with a digit, or another group of its separator, next to it, it
    is a piece of something longer (a phone number written with dots or dashes)."""
    for pattern, separator, offset in _DATES:
        if text[start + offset : start + offset + 1] != separator:
            continue  # the cheap test: no separator where this shape needs one
        date = pattern.match(text, start)
        if date is None:
            continue
        end = date.end()
        glued = (
            _is_digit_at(text, start - 1)
            or (text[start - 1 : start] == separator and _is_digit_at(text, start - 2))
            or _is_digit_at(text, end)
            or (text[end : end + 1] == separator and _is_digit_at(text, end + 1))
        )
        if not glued:
            return end
    return None


def number_spans(text: str) -> list[str]:
    """The maximal runs of digit groups in the text (§3.6, amended), left to right, after NFKC.
    A span begins with ``+``, ``(`` or a digit and ends on a digit: "CHF 120.–" holds "120". It
    never crosses a line break, nor a ``(`` other than the trunk prefix ``(0)``, and a date is a
    span of its own: "+41 44 123 45 67 (2026-03-01)" holds the phone number and the date.

    Linear: every digit run and every joiner run is matched once (a joiner run that leads to no
    digit is passed over once more by the next search), and a date is tried, in constant time,
    only where a digit group begins."""
    text = _nfkc(text)
    spans: list[str] = []
    group = _DIGIT_RUN.search(text)
    while group is not None:
        first = group.start()
        date_end = _date_end(text, first)
        if date_end is not None:
            spans.append(text[first:date_end])
            group = _DIGIT_RUN.search(text, date_end)
            continue
        start = first - 1 if text[first - 1 : first] == "(" else first
        start = start - 1 if text[start - 1 : start] == "+" else start
        end = group.end()
        while (
            (joiner := _JOINER_RUN.match(text, end)) is not None
            and (following := _DIGIT_RUN.match(text, joiner.end())) is not None
            and _date_end(text, following.start()) is None
        ):
            end = following.end()
        spans.append(text[start:end])
        group = _DIGIT_RUN.search(text, end)
    return spans


def contains_value(reply: str, value: str) -> bool:
    """Does the reply state the value? Numbers compare by key against every number span of the
    reply (W61, W62), so ``044 123 45 67`` is found in "+41 44 123 45 67" but ``123 45 67`` is
    not found in "45 67": keys are equal only with as many digits. Text is a substring after
    folding (W63)."""
    if is_number(value):
        key = number_key(value)
        return any(_key(span) == key for span in number_spans(reply))  # spans are NFKC already
    folded = fold(value)
    return bool(folded) and folded in fold(reply)
