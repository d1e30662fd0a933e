"""Hypothesis strategies for what a tenant can send through a door: every neighbour event type
and the charter, with values across the full range of their types and past it — extreme
instants and offsets, huge and non-finite numbers (also written as strings), every spelling
of NUL, digits of other scripts, blanks with zero-width characters. Shared by the HTTP and the
Kafka property tests, so both doors meet the same values."""

import json
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from contracts.scalars import MAX_MAGNITUDE

# Numbers JSON can spell but a double cannot hold: written into the body as they are.
RAW_NUMBERS = ("1e400", "-1e400", "9" * 400, "1" + "0" * 400 + ".5")
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\u200e")
BLANKS = ("", " ", "\t\n ", *ZERO_WIDTH, " \u200b ", "\u2060\ufeff", "\u3000")
OTHER_DIGITS = ("١٢", "²", "٣d", "𝟙", "१०", "٠.٥", "Ⅻ")


class Raw(str):
    """A number spelt in the body as it is (``1e400``), not as a JSON string."""


texts = st.one_of(
    st.text(max_size=30),
    st.sampled_from(BLANKS),
    st.sampled_from(OTHER_DIGITS),
    st.text(max_size=8).map(lambda t: f"{t}\x00{t}"),  # JSON "\u0000", or raw (see ``body``)
    st.just("x" * 600),
    st.uuids().map(str),
)
offsets = st.integers(-1439, 1439).map(lambda minutes: timezone(timedelta(minutes=minutes)))
instants = st.one_of(
    st.datetimes(datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59), timezones=offsets).map(
        datetime.isoformat
    ),
    st.datetimes(datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59)).map(datetime.isoformat),
    st.sampled_from(
        [
            "0001-01-01T00:00:00+23:59",
            "0001-01-01T00:00:00-23:59",
            "9999-12-31T23:59:59-23:59",
            "9999-12-31T23:59:59+23:59",
            "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999999Z",
            "2026-11-30",
            "2026-11-30T10:00:00+24:00",
            "٢٠٢٦-11-30T10:00:00Z",
            "NaN",
        ]
    ),
    st.integers(),
    st.floats(),
    texts,
)
numbers = st.one_of(
    st.floats(),
    st.integers(),
    st.integers(-(10**400), 10**400),
    st.floats(-MAX_MAGNITUDE, MAX_MAGNITUDE),
    st.sampled_from(
        [1.7e308, -1.7e308, MAX_MAGNITUDE, -MAX_MAGNITUDE, MAX_MAGNITUDE * 1.5, 0, 0.5, -0.0]
    ),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "nan", "0.5", "1_0"]),
    st.sampled_from(RAW_NUMBERS).map(Raw),
    st.sampled_from(OTHER_DIGITS),
    st.booleans(),
)
artifact_refs = st.one_of(
    st.just("artifact:sha256:" + "a" * 64),
    st.just("ARTIFACT:SHA256:" + "B" * 64),
    st.sampled_from(["artifact:nope", "artifact:sha256:" + "z" * 64, "artifact:sha256:12"]),
    st.text(alphabet="0123456789abcdef", max_size=70).map(lambda h: f"artifact:sha256:{h}"),
    texts,
)
anything = st.one_of(texts, numbers, instants, st.none(), st.lists(texts, max_size=3))


def _serves() -> st.SearchStrategy[Any]:
    return st.lists(st.one_of(texts, st.just("charter:a"), st.just("task:t-1")), max_size=4)


def _gate() -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {"name": texts, "passed": st.booleans()},
        optional={"metric": texts, "value": numbers, "threshold": numbers},
    )


def _regression() -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries({"metric": texts, "from": numbers, "to": numbers})


def _counters() -> st.SearchStrategy[Any]:
    names = ["loopStops", "emptyOutputs", "stepCompletions", "stepMeasured", "stepNulls",
             "goalPlanWrites", "goalDriftWrites", "goalUnnamedWrites"]  # fmt: skip
    return st.dictionaries(st.sampled_from(names), numbers, max_size=4)


# Each neighbour event type: a valid payload (``{n}`` made unique per draw) and, per field, the
# values it is drawn from when a draw overrides it.
TYPES: dict[str, tuple[str, dict[str, Any], dict[str, st.SearchStrategy[Any]]]] = {
    "factory.runs.v1.RunCompleted": (
        "factory.runs.v1.run-completed",
        {"runId": "run-{n}", "agentId": "coach", "outcome": "succeeded",
         "inputRef": "urn:input:{n}", "completedAt": "2026-11-30T05:00:00Z"},
        {"runId": texts, "projectId": texts, "agentId": texts, "agentVersion": texts,
         "outcome": st.sampled_from(["succeeded", "failed", "x"]), "inputRef": artifact_refs,
         "outputRef": artifact_refs, "scoringRule": texts, "serves": _serves(),
         "development": anything, "counters": _counters(), "completedAt": instants},
    ),
    "factory.artifacts.v1.ArtifactValidated": (
        "factory.artifacts.v1.artifact-validated",
        {"artifactRef": "urn:artifact:{n}", "validator": "lint", "outcome": "failed",
         "validatedAt": "2026-11-30T05:00:00Z"},
        {"artifactRef": artifact_refs, "runId": texts, "validator": texts, "findings": numbers,
         "outcome": st.sampled_from(["passed", "failed", "warning", ""]),
         "validatedAt": instants},
    ),
    "factory.quality.v1.EvaluationCompleted": (
        "factory.quality.v1.evaluation-completed",
        {"evaluationId": "ev-{n}", "targetAssetId": "agent-a", "passed": False,
         "gates": [{"name": "grounded", "passed": False, "metric": "groundedness",
                    "value": 0.5, "threshold": 0.8}],
         "completedAt": "2026-11-30T05:00:00Z"},
        {"evaluationId": texts, "targetAssetId": texts, "targetVersion": texts,
         "datasetId": texts, "datasetVersion": numbers, "passed": anything,
         "gates": st.lists(_gate(), max_size=3), "regressions": st.lists(_regression(), max_size=3),
         "serves": _serves(), "completedAt": instants},
    ),
    "factory.quality.v1.DriftDetected": (
        "factory.quality.v1.drift-detected",
        {"driftId": "drift-{n}", "targetAssetId": "agent-a", "metric": "groundedness",
         "baseline": 0.8, "observed": 0.5, "detectedAt": "2026-11-30T05:00:00Z"},
        {"driftId": texts, "targetAssetId": texts, "targetVersion": texts, "metric": texts,
         "baseline": numbers, "observed": numbers, "serves": _serves(), "detectedAt": instants},
    ),
    "factory.memory.v1.SkillCandidateProposed": (
        "factory.memory.v1.skill-candidate-proposed",
        {"candidateId": "cand-{n}", "skillId": "skill-a", "reinforcements": 3,
         "proposedAt": "2026-11-30T05:00:00Z"},
        {"candidateId": texts, "skillId": texts, "targetVersion": texts,
         "summaryRef": artifact_refs, "reinforcements": numbers, "serves": _serves(),
         "proposedAt": instants},
    ),
    "factory.registry.v1.AgentChanged": (
        "factory.registry.v1.agent-changed",
        {"agent": "agent-a", "what": "model", "to": "model-{n}", "at": "2026-11-30T05:00:00Z"},
        {"agent": texts, "what": st.sampled_from(["model", "instructions", "release"]),
         "from": texts, "to": texts, "at": instants},
    ),
    "factory.registry.v1.DraftReleaseOpened": (
        "factory.registry.v1.draft-release-opened",
        {"proposalId": "{uuid}", "releaseId": "rel-{n}"},
        {"proposalId": st.one_of(st.uuids().map(str), texts), "releaseId": texts},
    ),
}  # fmt: skip
ATTRIBUTES = {"id": texts, "time": instants, "subject": texts, "source": texts, "ext": texts,
              "traceparent": texts, "partitionkey": texts}  # fmt: skip


def filled(template: Any, n: str) -> Any:
    if isinstance(template, str):
        return template.format(n=n, uuid=uuid.uuid4())
    if isinstance(template, dict):
        return {key: filled(value, n) for key, value in template.items()}
    if isinstance(template, list):
        return [filled(value, n) for value in template]
    return template


@st.composite
def events(draw: st.DrawFn, types: list[str] | None = None) -> tuple[str, dict[str, Any], bool]:
    """A CloudEvent of a neighbour type (its topic, the event, whether raw NUL replaces
    JSON's escape in the body): a valid event with some of its fields and attributes drawn."""
    kind = draw(st.sampled_from(types or sorted(TYPES)))
    topic, template, fields = TYPES[kind]
    n = uuid.uuid4().hex[:12]
    data = filled(template, n)
    for name in draw(st.lists(st.sampled_from(sorted(fields)), max_size=3, unique=True)):
        data[name] = draw(fields[name])
    event: dict[str, Any] = {"specversion": "1.0", "id": f"ce-{n}", "source": "urn:neighbour",
                             "type": kind, "data": data}  # fmt: skip
    for name in draw(st.lists(st.sampled_from(sorted(ATTRIBUTES)), max_size=2, unique=True)):
        event[name] = draw(ATTRIBUTES[name])
    return topic, event, draw(st.booleans())


def body(event: Any, raw_nul: bool = False) -> bytes:
    """The event as JSON text: ``Raw`` numbers spelt as they are, and NUL, when asked, raw in
    the text rather than escaped."""
    raws: dict[str, str] = {}

    def marked(value: Any) -> Any:
        if isinstance(value, Raw):
            mark = f"@raw{len(raws)}@"
            raws[mark] = str(value)
            return mark
        if isinstance(value, dict):
            return {key: marked(item) for key, item in value.items()}
        if isinstance(value, list):
            return [marked(item) for item in value]
        return value

    text = json.dumps(marked(event))
    for mark, raw in raws.items():
        text = text.replace(f'"{mark}"', raw)
    if raw_nul:
        text = text.replace("\\u0000", "\x00")
    return text.encode("utf-8", "surrogatepass")


# ---- The charter -----------------------------------------------------------------------------

SENSOR_KINDS = [
    "outbox_waiting",
    "request_closure",
    "question_latency",
    "intervention_rate",
    "priority",
]
setpoints = st.one_of(
    st.integers(-(10**400), 10**400).map(str),
    st.integers(0, 10**12).map(str),
    st.sampled_from(["nan", "inf", "-inf", "1e400", "0.2", "1.5", "true", "2026-11-30"]),
    st.sampled_from(["²", "٣", "٣d", "20%", "٢٠%", "1d12h", "NaN", "Infinity", "1e400",
                     "9" * 400, "9" * 400 + "s", "9" * 400 + "%", "0", "24h", "0.2", "\x00"])
    .map(lambda text: toml_string(text, "\\u0000")),
    texts.map(lambda text: toml_string(text, "\\U00000000")),
)  # fmt: skip


def toml_string(text: str, nul: str) -> str:
    """A TOML basic string of ``text``, NUL spelt as ``nul`` (``\\u0000`` or ``\\U00000000``)."""
    spelt = []
    for char in text:
        if char == "\x00":
            spelt.append(nul)
        elif char in '"\\':
            spelt.append("\\" + char)
        elif ord(char) < 0x20 or char == "\x7f":
            spelt.append(f"\\u{ord(char):04x}")
        else:
            spelt.append(char)
    return '"' + "".join(spelt) + '"'


@st.composite
def charters(draw: st.DrawFn) -> str:
    """A TOML charter whose ids, texts and setpoints are drawn (NUL in both TOML spellings)."""
    lines = []
    for place in range(draw(st.integers(0, 3))):
        nul = draw(st.sampled_from(["\\u0000", "\\U00000000"]))
        ident = draw(st.one_of(st.just(f"line-{place}"), texts))
        text = draw(st.one_of(st.just("Answers rest on sources."), texts))
        line = f"[[line]]\nid = {toml_string(ident, nul)}\ntext = {toml_string(text, nul)}\n"
        if draw(st.booleans()):
            kind = draw(st.sampled_from(SENSOR_KINDS))
            line += f'sensor = {{ kind = "{kind}", setpoint = {draw(setpoints)} }}\n'
        lines.append(line)
    return "\n".join(lines)
