"""The datasets context's pure rules (SPEC C14, C15, C17, C20, C24, C25): given events or
rows, when a decision is asked for, then these events, this task set or this refusal."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contracts.errors import Conflict, NotFound, NotPermitted
from contracts.neighbours import RunCompleted
from projections.dataset_tasks import Check, Correction, Curated, Run, compose, expected_outcome
from services.datasets.domain import Dataset, HarvestedRun
from services.datasets.ids import shared_dataset_id
from services.datasets.tasks import anonymised, artifact_refs_of, canonical, snapshot_document

AT = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
A = "artifact:sha256:" + "a" * 64
B = "artifact:sha256:" + "b" * 64
C = "artifact:sha256:" + "c" * 64


def run(run_id: str, output: str | None = B, input_ref: str = A) -> Run:
    return Run(f"run:{run_id}", run_id, "coach", None, input_ref, output, "match-expected", AT)


def correction(run_id: str, ref: str, minutes: int = 0, feedback: str = "f") -> Correction:
    return Correction(run_id, feedback, ref, AT + timedelta(minutes=minutes))


def test_a_correction_supplies_the_expected_outcome_over_the_runs_own_output() -> None:
    assert expected_outcome(run("r"), []) == (B, "run-output")
    assert expected_outcome(run("r"), [correction("r", C)]) == (C, "correction")
    assert expected_outcome(run("r"), [correction("other", C)]) == (B, "run-output")


def test_the_latest_correction_wins_whatever_the_order_they_arrive_in() -> None:
    early, late = correction("r", B, 1, "f1"), correction("r", C, 5, "f2")
    assert expected_outcome(run("r"), [early, late]) == (C, "correction")
    assert expected_outcome(run("r"), [late, early]) == (C, "correction")


def test_a_candidate_without_an_expected_outcome_is_not_a_task() -> None:
    assert compose([run("failed", output=None)], [], [], [], []) == []
    [task] = compose([run("failed", output=None)], [correction("failed", C)], [], [], [])
    assert task["expectedRef"] == C


def test_tasks_are_sorted_curated_replace_harvested_and_removed_ones_go() -> None:
    curated = Curated("run:r2", C, A, "exact", "alice")
    tasks = compose([run("r2"), run("r1"), run("r3")], [], [], [curated], ["run:r3"])
    assert [t["taskId"] for t in tasks] == ["run:r1", "run:r2"]
    assert tasks[1]["provenance"] == {"source": "curated", "curatedBy": "alice"}
    assert tasks[0]["provenance"]["runId"] == "r1"


def test_validations_enrich_the_tasks_naming_their_run_or_artifacts() -> None:
    """SPEC C25."""
    checks = [
        Check(B, None, "lint", "passed", 0, AT),  # the expected outcome's artifact
        Check(C, "r1", "safety", "failed", 2, AT),  # names the run
        Check(C, None, "other", "warning", 1, AT),  # names nothing of r1's
    ]
    [task] = compose([run("r1")], [], checks, [], [])
    assert [(v["validator"], v["outcome"]) for v in task["validations"]] == [
        ("lint", "passed"),
        ("safety", "failed"),
    ]


@given(st.permutations(range(4)), st.permutations(range(3)))
def test_the_task_set_does_not_depend_on_the_order_rows_are_read(
    runs_order: list[int], corrections_order: list[int]
) -> None:
    runs = [run(f"r{i}") for i in range(4)]
    corrections = [correction("r1", C, 1, "a"), correction("r1", A, 2, "b"), correction("r2", C)]
    expected = compose(runs, corrections, [], [], [])
    shuffled = compose(
        [runs[i] for i in runs_order], [corrections[i] for i in corrections_order], [], [], []
    )
    assert canonical({"t": shuffled}) == canonical({"t": expected})


def test_a_snapshot_is_spelt_one_way() -> None:
    assert canonical({"b": 1, "a": [1, "é"]}) == '{"a":[1,"é"],"b":1}'.encode()
    tasks = compose([run("r1")], [], [], [], [])
    assert snapshot_document("agent:coach", "coach", tasks) == snapshot_document(
        "agent:coach", "coach", json.loads(json.dumps(tasks))
    )


def test_an_anonymised_copy_names_no_run_agent_person_or_foreign_reference() -> None:
    """SPEC C17, as we decide anonymising."""
    tasks = compose(
        [run("secret-run"), run("foreign", input_ref="https://elsewhere/x")],
        [],
        [Check(B, "secret-run", "lint", "passed", 0, AT)],
        [Curated("c-1", C, B, "exact", "alice")],
        [],
    )
    content = snapshot_document("agent:coach", "coach", tasks)
    copy, refs, count = anonymised(content, "shared:1")
    text = copy.decode()
    for secret in ("secret-run", "foreign", "elsewhere", "coach", "alice", "provenance"):
        assert secret not in text
    assert count == 2
    assert refs == sorted({A, B, C})
    # The validation of B names both tasks' expected outcome; it keeps no reference or time.
    assert [v for t in json.loads(text)["tasks"] for v in t["validations"]] == [
        {"validator": "lint", "outcome": "passed", "findings": 0}
    ] * 2
    assert anonymised(content, "shared:1") == (copy, refs, count)  # deterministic


def test_a_shared_copys_id_names_neither_tenant_nor_dataset() -> None:
    copy_id = shared_dataset_id("acme", "agent:coach")
    assert "acme" not in copy_id
    assert "coach" not in copy_id
    assert copy_id == shared_dataset_id("acme", "agent:coach")
    assert copy_id != shared_dataset_id("globex", "agent:coach")


def test_a_harvested_run_goes_to_its_agents_dataset() -> None:
    """SPEC C24: only a succeeded run's output is an expected outcome."""
    data = {"runId": "r", "agentId": "coach", "inputRef": A, "outputRef": B,
            "completedAt": "2026-11-30T09:00:00Z"}  # fmt: skip
    ok = HarvestedRun.harvest(
        RunCompleted.model_validate({**data, "outcome": "succeeded"}), tenant_id="t", at=AT
    )
    failed = HarvestedRun.harvest(
        RunCompleted.model_validate({**data, "outcome": "failed"}), tenant_id="t", at=AT
    )
    assert (ok.dataset_id, ok.expected_ref, ok.task_id) == ("agent:coach", B, "run:r")
    assert failed.expected_ref is None


def opened() -> Dataset:
    return Dataset.open(tenant_id="t", dataset_id="agent:coach", classification="c", at=AT)


def test_versions_are_numbered_and_a_request_publishes_once() -> None:
    """SPEC C18, C20."""
    dataset = opened()
    first, created = dataset.publish(snapshot_ref=A, task_count=1, version=None,
                                     request_key="k", by="alice", at=AT)  # fmt: skip
    assert (first.version, created) == (1, True)
    again, created = dataset.publish(snapshot_ref=B, task_count=2, version=None,
                                     request_key="k", by="alice", at=AT)  # fmt: skip
    assert (again, created) == (first, False)
    second, created = dataset.publish(snapshot_ref=B, task_count=2, version=2,
                                      request_key=None, by="alice", at=AT)  # fmt: skip
    assert (second.version, created) == (2, True)
    same, created = dataset.publish(snapshot_ref=B, task_count=2, version=2,
                                    request_key=None, by="alice", at=AT)  # fmt: skip
    assert (same, created) == (second, False)
    events = dataset.collect_events()
    assert [type(e).__name__ for e in events] == ["Opened", "VersionPublished", "VersionPublished"]


def test_a_published_version_never_changes() -> None:
    """SPEC C15: the same number with other content is refused, machine-readably."""
    dataset = opened()
    dataset.publish(snapshot_ref=A, task_count=1, version=None, request_key=None, by="a", at=AT)
    with pytest.raises(Conflict) as refused:
        dataset.publish(snapshot_ref=B, task_count=1, version=1, request_key=None, by="a", at=AT)
    assert refused.value.details["reason"] == "version-immutable"
    with pytest.raises(Conflict) as skipped:
        dataset.publish(snapshot_ref=B, task_count=1, version=5, request_key=None, by="a", at=AT)
    assert skipped.value.details["reason"] == "not-next-version"
    assert dataset.versions[1].snapshot_ref == A


def test_sharing_needs_a_consent_for_that_tenant() -> None:
    """SPEC C17."""
    dataset = opened()
    dataset.publish(snapshot_ref=A, task_count=1, version=None, request_key=None, by="a", at=AT)
    with pytest.raises(NotPermitted) as refused:
        dataset.share(1, "globex", "shared:x", by="a", at=AT)
    assert refused.value.details["reason"] == "consent-required"
    with pytest.raises(NotPermitted):
        dataset.consent("t", by="a", at=AT)  # its own tenant
    assert dataset.consent("globex", by="a", at=AT) is True
    assert dataset.consent("globex", by="a", at=AT) is False  # recorded once
    assert dataset.share(1, "globex", "shared:x", by="a", at=AT) is True
    assert dataset.share(1, "globex", "shared:x", by="a", at=AT) is False
    with pytest.raises(Conflict):
        dataset.share(2, "globex", "shared:x", by="a", at=AT)  # no such version


def test_only_a_task_the_dataset_holds_is_removed() -> None:
    """SPEC C14: a curated task, or a run harvested into the dataset, once; any other is not
    found and records nothing."""
    dataset = opened()
    for task_id, harvested in (("nope", False), ("run:r", False)):
        with pytest.raises(NotFound) as missing:
            dataset.remove(task_id, harvested=harvested, by="a", at=AT)
        assert missing.value.details == {"datasetId": "agent:coach", "taskId": task_id}
    dataset.curate("c-1", A, B, "exact", by="a", at=AT)
    dataset.remove("c-1", harvested=False, by="a", at=AT)
    dataset.remove("run:r", harvested=True, by="a", at=AT)
    for task_id, harvested in (("c-1", False), ("run:r", True)):  # already taken out
        with pytest.raises(NotFound):
            dataset.remove(task_id, harvested=harvested, by="a", at=AT)
    dataset.curate("run:r", A, B, "exact", by="a", at=AT)  # curated again: held again
    dataset.remove("run:r", harvested=True, by="a", at=AT)
    names = [type(e).__name__ for e in dataset.collect_events()]
    assert names == ["Opened", "TaskCurated", "TaskRemoved", "TaskRemoved", "TaskCurated",
                     "TaskRemoved"]  # fmt: skip


def test_an_idempotency_key_names_one_request() -> None:
    dataset = opened()
    dataset.publish(snapshot_ref=A, task_count=1, version=None, request_key="k", by="a", at=AT)
    with pytest.raises(Conflict) as refused:
        dataset.publish(snapshot_ref=A, task_count=1, version=2, request_key="k", by="a", at=AT)
    assert refused.value.details["field"] == "Idempotency-Key"


def test_an_anonymised_copy_leaves_out_tasks_whose_artifacts_are_not_there() -> None:
    tasks = compose([run("r1"), run("r2", output=C)], [], [], [], [])
    content = snapshot_document("agent:coach", "coach", tasks)
    assert artifact_refs_of(content) == {A, B, C}
    _copy, refs, count = anonymised(content, "shared:1", present={A, B})
    assert (refs, count) == ([A, B], 1)
