"""The relay in shares: ``feedbackloop relay --share I/N`` publishes the events of one share
of the aggregates, so that N processes publish side by side (decisions D270–D272).

An aggregate's share is its Kafka key's murmur2 — the hash the relay places its events in
partitions by — modulo N: ``(murmur2(key) & 0x7fffffff) % N == I - 1``. It depends on the
aggregate alone, never on a topic's partition count, so every process of a layout agrees on
every event whatever the broker says, and one aggregate's events all go out from one process,
in order. With N dividing the topics' partitions (six by default: N = 2, 3 or 6) it is the
partition modulo N as well, so each partition has exactly one producer.

Each share is a reader of its own (``relay-IofN``; ``relay`` for 1/1, the reader of a
deployment that never heard of shares): its own position, leadership lock, heartbeat, parked
events and metrics. ``services.kafka.layout`` keeps two layouts from publishing at once and
carries one layout's positions over to the next.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from eventsourcing.persistence import Notification

from services.kafka.murmur2 import murmur2_each
from services.kafka.publication import key_of

NAME = "relay"  # the reader of the whole log (1/1)
SHARE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Share:
    """Share ``index`` of ``count`` (both from 1): the aggregates this relay publishes."""

    index: int = 1
    count: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise ValueError(f"a share is I/N with 1 <= I <= N, not {self.index}/{self.count}")

    @classmethod
    def parse(cls, text: str) -> "Share":
        """``"2/3"`` → share 2 of 3; anything else is refused, naming the form."""
        found = SHARE.match(text)
        if found is None:
            raise ValueError(f"a share is written I/N, e.g. 1/2, not {text!r}")
        return cls(int(found[1]), int(found[2]))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def whole(self) -> bool:
        return self.count == 1

    @property
    def name(self) -> str:
        """Its reader's name: ``relay`` for the whole log, as it always was (D271)."""
        return NAME if self.whole else reader_name(self.index, self.count)

    def names(self) -> list[str]:
        """The readers of every share of this layout."""
        return [Share(i, self.count).name for i in range(1, self.count + 1)]

    def of_hash(self, hashed: int) -> int:
        """The share (from 1) a key of this murmur2 falls in, in this layout."""
        return (hashed & 0x7FFFFFFF) % self.count + 1

    def select(self, notifications: Sequence[Notification]) -> list[Notification]:
        """This share's notifications of a page, before any is decoded: another share's
        events cost one hash each here and nothing after (D272)."""
        keys = [key_of(n.originator_id) for n in notifications]
        return [
            n
            for n, hashed in zip(notifications, murmur2_each(keys), strict=True)
            if self.of_hash(hashed) == self.index
        ]


WHOLE = Share()


def reader_name(index: int, count: int) -> str:
    return f"{NAME}-{index}of{count}"
