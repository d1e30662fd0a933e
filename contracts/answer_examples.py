"""One worked story, as the HTTP API answers it, for the examples in ``/openapi.json``.

Every answer in the document comes with examples. Each example here is an answer the service
gave (recorded from a run of it, then spread over a morning): ids are the UUIDs it made,
times RFC 3339 as the read models write them, positions opaque tokens sealed for the tenant
(``services/edge/positions.py``: 36 bytes, base64url). They tell one story, so ids line up across
answers: Alice (tenant ``acme``) rates a run and corrects it, reports that the Office coach
did not find her hourly rate, Bruno triages the report, Alice lifts it into an eval case,
confirms it and runs two conversations. The night of 2026-11-28 re-runs her confirmed case
(SPEC §3.8) and the digest of 2026-W48, built the Monday after, counts her report under the
coach (SPEC §3.9). ``contracts/answers.py`` attaches them to the answer
models; ``tests/unit/test_openapi_examples.py`` validates each against its model and the
document.
"""

import json

from pydantic.config import JsonDict, JsonValue

TENANT, REPORTER, REVIEWER = "acme", "alice", "bruno"
AGENT, MODEL = "Office/Agent/Coach", "claude-sonnet-4-5"
ARTIFACT = "artifact:sha256:cb907e59099930286a7e0c8c576e58b338d243da2d73cfe98125518c9acfd13b"
RATING_ID = "ed7e5c5b-ebad-550a-a761-7ef8eec3ab87"
CORRECTION_ID = "0b469701-85fc-54bb-a941-d969daa3bc51"
IDEA_ID = "9c343bcc-732e-596b-9374-fca7e7fa3487"
REPORT_ID = "f82b30d5-acb9-5722-846f-20f5b62b92b9"
CASE_ID = "70846df4-b406-5f99-a4e7-31ea3b0235dd"
RUN_ID = "142d06fb-1f12-4981-9833-c29514201284"
CASE_REF = f"_Evals/Office_Agent_Coach/{CASE_ID}"
THREAD = "alice/_Thread/2026-11-27-0915"
NODE = "acme/Office/CompanyProfile"

# What the wrong-answer report composed from its facts (SPEC W05–W13), kept verbatim.
LABELLED_BLOCK = "\n".join(
    [
        "Kind: not-found",
        f"Thread: {THREAD}",
        f"Message: {THREAD}/m4",
        f"Agent: {AGENT}",
        f"Model: {MODEL} (requested: same; harness: native)",
        "Tools called: 1 — Get(acme/Office/Welcome) → ok",
        "Answer (excerpt): \"I'm afraid I don't know which hourly rate you charge.\"",
        'Expected: "CHF 150 per hour"',
        f"Evidence: get {NODE} → readable; no Search in toolCalls",
        f"Addressee: agent owner ({AGENT})",
    ]
)

ARTIFACT_STORED: JsonDict = {"ref": ARTIFACT, "bytes": 43}

FEEDBACK_WRITTEN: JsonDict = {
    "feedbackId": RATING_ID,
    "position": "sPA7sYQEWu00Q6Luu7AWkjEJYSe9-SLMDwy3p_q_4OCYXwFf",
}


def _feedback(feedback_id: str, given_at: str, position: str, **what: JsonValue) -> JsonDict:
    item: JsonDict = {
        "feedbackId": feedback_id,
        "tenantId": TENANT,
        "projectId": "demo",
        "subjectKind": "run",
        "subjectRef": "run-1",
        "kind": "rating",
        "rating": None,
        "commentRef": None,
        "correctedArtifactRef": None,
        "givenBy": REPORTER,
        "givenAt": given_at,
        "traceId": None,
        "spanId": None,
        "genAi": None,
        "position": position,
    }
    item.update(what)
    return item


# Newest first; ``next`` continues with older feedback on the subject.
FEEDBACK_PAGE: JsonDict = {
    "items": [
        _feedback(
            CORRECTION_ID,
            "2026-11-27T08:14:05.532917+00:00",
            "EBnv4-0Iqjz7-wHeLYh0_HJ0cWRFp4F8d73YQTSkHolT3RkV",
            kind="correction",
            correctedArtifactRef=ARTIFACT,
        ),
        _feedback(
            RATING_ID,
            "2026-11-27T08:12:40.118204+00:00",
            "o967jsR3QEH3qT9TNREQYVx0FP5hDRCwvtKltpqr500WUc87",
            rating=5,
            traceId="4bf92f3577b34da6a3ce929d0e0e4736",
            spanId="00f067aa0ba902b7",
            genAi={"gen_ai.request.model": "gpt-4o", "gen_ai.response.id": "chatcmpl-9x"},
        ),
    ],
    "next": "0t1IeOiUUcdHj9ZDCQgOh3qCcSi7Vk6HpQhoEmsoTm0fmaSn",
}

# A batch (``POST /factory/feedback:batch``): Alice's chat client sends her rating again with
# the key it first used (200, the same feedback), a new rating (201), and a rating out of range.
FEEDBACK_BATCH_WRITTEN: JsonDict = {
    "items": [
        {"status": 200, "feedbackId": RATING_ID},
        {"status": 201, "feedbackId": "5c0f3a87-26a4-5d7e-b2d4-8f0c1e9a3b61"},
        {
            "status": 422,
            "error": "refused",
            "message": "rating: Input should be less than or equal to 5",
            "field": "rating",
            "problems": [{"field": "rating", "message": "Input should be less than or equal to 5"}],
            "feedbackId": None,
        },
    ],
    "position": "Kq2m0c8xTg4bW1vJ5nR7yZp3LhA6dE9fUsG0iO2kCwN8tYxB",
}

IDEA_DRAFTED: JsonDict = {
    "reportId": IDEA_ID,
    "status": "Draft",
    "category": "idea",
    "position": "RWnhoupwcXzn1SXBWYWXiSWxozmQBD0gwMZKBiLThB4qfSKi",
}

REPORT_TRIAGED: JsonDict = {
    "reportId": REPORT_ID,
    "status": "Triaged",
    "category": "answer",
    "position": "VP8zh5SlgXI4IuWXIlhJVQYq3NqeYcTkikGkx2xYvwE-MLr9",
}

WRONG_ANSWER_DRAFTED: JsonDict = {
    "reportId": REPORT_ID,
    "status": "Draft",
    "category": "answer",
    "position": "0eq1YcIZKncG2yQ-8yxQRMgUuqdgytwZ-Q9IkYtDmagLBCk9",
    "kind": "not-found",
    "extraContext": LABELLED_BLOCK,
}

# An answer kind stays in the Inbox; only a retrieval bug is handed over (SPEC W19–W26).
REPORT_SUBMITTED: JsonDict = {
    "reportId": REPORT_ID,
    "status": "New",
    "category": "answer",
    "position": "Shfv5tMOQeQpptnpddRL2ydilP2Z1dnANJgdak9a-gtdruHz",
    "handedOver": False,
}


def _report_view(position: str) -> JsonDict:
    return {
        "reportId": REPORT_ID,
        "tenantId": TENANT,
        "reporter": REPORTER,
        "category": "answer",
        "status": "Triaged",
        "message": "The coach does not know my hourly rate, but it is in the company profile.",
        "sidePanel": {"thread": THREAD, "message": f"{THREAD}/m4"},
        "extraContext": LABELLED_BLOCK,
        "parsed": {
            "kind": "not-found",
            "agent": AGENT,
            "model": MODEL,
            "addressee": f"agent owner ({AGENT})",
        },
        "handOver": {"handedOver": False, "attempts": 0, "failed": False, "lastError": None},
        "draftedAt": "2026-11-27T09:15:12.402311+00:00",
        "submittedAt": "2026-11-27T09:16:03.877140+00:00",
        "review": {
            "reviewedBy": REVIEWER,
            "reviewedAt": "2026-11-27T09:41:27.090455+00:00",
            "change": None,
            "link": None,
            "reason": None,
        },
        "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
        "spanId": "00f067aa0ba902b7",
        "genAi": {"gen_ai.request.model": MODEL},
        "position": position,
    }


INBOX_ITEM = _report_view("PTO1QbbWlRKNHID6GASnvF_FtkQ9p1ZhWvJnEjHmg3MeAj1T")
REPORT_VIEW: JsonDict = {
    **_report_view("YrjknI9EzSgt4-m4r5ezZlxkAODxUAGUrb88KPQ0-9yrAT3J"),
    "lifecycle": [
        {
            "at": "2026-11-27T09:15:12.402311+00:00",
            "actor": REPORTER,
            "step": "drafted",
            "detail": None,
        },
        {
            "at": "2026-11-27T09:16:03.877140+00:00",
            "actor": REPORTER,
            "step": "submitted",
            "detail": None,
        },
        {
            "at": "2026-11-27T09:41:27.090455+00:00",
            "actor": REVIEWER,
            "step": "triaged",
            "detail": None,
        },
    ],
    "annotations": {
        "correction": {
            "kind": "fabricated",
            "addressee": "agent owner",
            "correctedBy": REVIEWER,
            "correctedAt": "2026-11-27T09:42:10.118204+00:00",
        },
        "tags": ["wrong-node"],
        "notes": [
            {
                "at": "2026-11-27T09:43:02.551871+00:00",
                "notedBy": REVIEWER,
                "words": "Same node as last week's report.",
            }
        ],
    },
}
INBOX_PAGE: JsonDict = {
    "items": [INBOX_ITEM],
    "next": None,
}

CASE_LIFTED: JsonDict = {
    "caseId": CASE_ID,
    "ref": CASE_REF,
    "agent": AGENT,
    "confirmedBy": None,
    "position": "B-DPDlR0sMubqhMvUh7ibmdAEVyVXj0_UWYVX6qhhIp6_EXJ",
}
CASE_CONFIRMED: JsonDict = {
    **CASE_LIFTED,
    "confirmedBy": REPORTER,
    "position": "yJvwdkGTAT8rJn7qLy8hWxq0deN4VC5EuZt8M6PxMUgV4KcE",
}


def _thread(index: int, text: str, at: str) -> JsonDict:
    return {
        "index": index,
        "threadRef": f"{CASE_REF}/_Thread/{RUN_ID}/{index}",
        "link": f"/factory/evals/cases/{CASE_ID}/runs/{RUN_ID}/threads/{index}",
        "score": {
            "looked": True,
            "invented": False,
            "correct": True,
            "non_answer": False,
            "reason": None,
        },
        "modelName": MODEL,
        "text": text,
        "toolCalls": [
            {"name": "Get", "arguments": NODE, "result": "Concept work: CHF 150 per hour"}
        ],
        "at": at,
        "traceId": None,
        "spanId": None,
        "genAi": None,
    }


THREAD_1 = _thread(
    1,
    "Your company profile says: concept work CHF 150 per hour.",
    "2026-11-27T10:05:41.297517+00:00",
)
THREAD_2 = _thread(
    2,
    "According to your company profile you charge CHF 150 per hour for concept work.",
    "2026-11-27T10:05:49.941251+00:00",
)
THREADS: list[JsonValue] = [THREAD_1, THREAD_2]
# Both conversations looked the profile up, invented nothing and said the expected value.
SUMMARY: JsonDict = {
    "runs": 2,
    "scored": 2,
    "non_answers": 0,
    "looked": 2,
    "not_invented": 2,
    "correct": 2,
    "looked_rate": 1.0,
    "correct_rate": 1.0,
    "passed": True,
    "reasons": [],
}
RUN: JsonDict = {
    "runId": RUN_ID,
    "ranBy": REPORTER,
    "runner": "manual",
    "night": None,
    "model": None,
    "effort": "medium",
    "summary": SUMMARY,
    "threads": list(THREADS),
    "recordedAt": "2026-11-27T10:05:50.012081+00:00",
}

RUNS_UNDER_WAY: JsonDict = {
    "items": [
        {
            "runId": RUN_ID,
            "ranBy": REPORTER,
            "conversations": 5,
            "done": 2,
            "startedAt": "2026-11-27T10:05:41.300000+00:00",
        }
    ]
}

RUN_RECORDED: JsonDict = {
    "caseId": CASE_ID,
    "runId": RUN_ID,
    "model": None,
    "effort": "medium",
    "threads": list(THREADS),
    "summary": SUMMARY,
    "ranBy": REPORTER,
    "runner": "manual",
    "position": "ooRcckuQsS-ZsCMnwJCPCwkxEKKeXIJeHITGr885yqj9yzId",
}

THREAD_RECORD: JsonDict = {
    **THREAD_1,
    "ranBy": REPORTER,
    "runner": "manual",
    "model": None,
    "effort": "medium",
}


def _case(position: str, last_run_position: str) -> JsonDict:
    last_run = {**RUN, "position": last_run_position, "night": None}
    return {
        "caseId": CASE_ID,
        "ref": CASE_REF,
        "source": REPORT_ID,
        "agent": AGENT,
        "prompt": "Which hourly rate do I charge for concept work?",
        "context": ["acme/Office"],
        "mustGround": [NODE],
        "mustNotAssert": [],
        "mustAssert": "CHF 150 per hour",
        "model": None,
        "confirmedBy": REPORTER,
        # Run on demand, not by a night (SPEC W102): ``night`` is null.
        "lastRun": last_run,
        "lastRuns": [last_run],  # one runner so far: the reporter, on demand (SPEC W58)
        "passed": True,
        "liftedAt": "2026-11-27T10:02:18.664020+00:00",
        "position": position,
    }


CASE_WITH_RUNS: JsonDict = {
    **_case(
        "57_h9j6dbSEahQzbrYFU8aaS2tcvPOBDj5w-FgPLUVUIbvbr",
        "Oy5wcAsJOutubxjoJg356I9njX4Og9V34DZSPVfpUm0cBGvd",
    ),
    "runs": [RUN],
    "history": [
        {
            "runner": "manual",
            "ranBy": REPORTER,
            "runs": 1,
            "passed": 1,
            "passRate": 1.0,
            "points": [
                {
                    "runId": RUN_ID,
                    "recordedAt": RUN["recordedAt"],
                    "passed": True,
                    "correctRate": 1.0,
                }
            ],
        }
    ],
}
CASE_LIST: JsonDict = {
    "items": [
        _case(
            "LPLAi4pWdi86Hy7IPsvLKa-ssXlBkXUBrEw1aJWFtxGBPURr",
            "pqEDB5VS7F6BSEQNnEI1V_-RHBnkC0P_Gbo3nMaDXPjmdeSs",
        )
    ],
    "next": None,
}


# The night of 2026-11-28 (SPEC §3.8, W87–W90): switched on with the declared model, which the
# catalogue marks EU; Alice's confirmed case is the tenant's only one, so it is selected, runs
# three conversations as Alice (W101) and passes. Its run id derives from the night (W91).
NIGHT_DATE = "2026-11-28"
NIGHT_RUN_ID = "3827e485-30cf-5447-8d80-b99f22cea8e3"
NIGHT_INPUTS: JsonDict = {
    "enabled": True,
    "maxCases": 15,
    "conversationsPerCase": 3,
    "startHourUtc": 1,
    "model": MODEL,
    "effort": "medium",
    "catalogue": "/etc/feedbackloop/models.toml",
    "unparsed": [],
}
NIGHT_LINE: JsonDict = {
    "case": CASE_ID,
    "outcome": "ran",
    "reason": None,
    "model": MODEL,
    "effort": "medium",
    "score": {
        "passed": True,
        "scored": 3,
        "nonAnswers": 0,
        "lookedRate": 1.0,
        "correctRate": 1.0,
    },
    "threads": [
        f"/factory/evals/cases/{CASE_ID}/runs/{NIGHT_RUN_ID}/threads/{index}" for index in (1, 2, 3)
    ],
    "runId": NIGHT_RUN_ID,
    "rerun": None,
    "at": "2026-11-28T01:00:31.540228+00:00",
}


def _night(position: str) -> JsonDict:
    return {
        "date": NIGHT_DATE,
        "status": "Succeeded",
        "counts": {"selected": 1, "ran": 1, "skipped": 0, "overCap": 0, "failed": 0},
        "plannedAt": "2026-11-28T01:00:02.913457+00:00",
        "finishedAt": "2026-11-28T01:00:31.602915+00:00",
        "position": position,
    }


NIGHT_LIST: JsonDict = {
    "items": [_night("JgT31rtx7gaGYb75y0JGo9tcoebqoTL2f6b7zfRZqpzyph08")],
    "next": None,
}
NIGHT_VIEW: JsonDict = {
    **_night("Jm10uxXVpOB-nDtmt3Cl2sOZs49_STVQ3uCxf1smV2t0slmp"),
    "ref": f"_EvalNights/{NIGHT_DATE}",
    "inputs": NIGHT_INPUTS,
    "selected": [
        {
            "case": CASE_ID,
            "ref": CASE_REF,
            "confirmer": REPORTER,
            "model": MODEL,
            "effort": "medium",
            "rerun": None,
        }
    ],
    "note": "",
    "lines": [NIGHT_LINE],
    "conversations": 3,
}

# The digest of 2026-W48 (Monday 2026-11-23 to Monday 2026-11-30, SPEC §3.9), built when due
# (Monday 06:00 UTC, W106) and posted once to the topic (W123, W124): Alice's report is the
# week's one, under the coach, and the case lifted from it passed its last (nightly) run.
WEEK = "2026-W48"
DIGEST_ID = "4945ab94-f75f-526a-8f70-a7fdcb8c219f"
AGENT_ID = "Office_Agent_Coach"
INSTANCE = "urn:feedbackloop"
FEEDBACK_PATH = f"_Digests/{WEEK}/{AGENT_ID}"
AGENT_TABLE: JsonDict = {
    "agent": AGENT,
    "agentId": AGENT_ID,
    "total": 1,
    "counts": {"not-found": 1},
    "informational": {},
    "models": [MODEL],
    "trend": {"previous": 0, "change": 1},
    "casesLifted": [CASE_REF],
    "health": {
        "withRun": 1,
        "passed": 1,
        "runners": [{"runner": "night", "ranBy": None, "withRun": 1, "passed": 1}],
    },
}
DIGEST_TABLES: JsonDict = {
    "week": WEEK,
    "reports": 1,
    "truncated": False,
    "bound": 200,
    "agents": [AGENT_TABLE],
    "models": [{"model": MODEL, "total": 1, "counts": {"not-found": 1}}],
}
DIGEST_BUILT_AT = "2026-11-30T06:00:04.127735+00:00"
DIGEST_POSTED_AT = "2026-11-30T06:00:04.390516+00:00"
DIGEST_LIST: JsonDict = {
    "items": [
        {
            "week": WEEK,
            "reports": 1,
            "agents": 1,
            "truncated": False,
            "builtAt": DIGEST_BUILT_AT,
            "postedAt": DIGEST_POSTED_AT,
        }
    ],
    "next": None,
}
DIGEST_VIEW: JsonDict = {
    "digestId": DIGEST_ID,
    "week": WEEK,
    "builtAt": DIGEST_BUILT_AT,
    "tables": DIGEST_TABLES,
    "posted": {
        "postedAt": DIGEST_POSTED_AT,
        "routes": ["kafka:evaluation.feedback.v2.digest-posted"],
        "identities": [FEEDBACK_PATH],
        "note": None,
        "deliveries": {},
    },
}
# The coach's post of that week on the topic (not an HTTP answer; its schema is pinned apart):
# the item the triage consumer keeps, with the twelve weeks before spelled out (W129, W130).
PREVIOUS_WEEKS = [f"2026-W{number:02d}" for number in range(47, 35, -1)]
DIGEST_POSTED: JsonDict = {
    "digestId": DIGEST_ID,
    "tenantId": TENANT,
    "event": "digest",
    "week": WEEK,
    "agent": AGENT,
    "agentId": AGENT_ID,
    "feedbackPath": FEEDBACK_PATH,
    "itemId": f"{INSTANCE}/{FEEDBACK_PATH}",
    "message": "\n".join(
        [
            f"Wrong answers — {AGENT}, week {WEEK}: 1 report(s)",
            "- not-found: 1",
            "Trend: +1 against 0 the week before",
            f"Models: {MODEL}",
            f"Eval cases lifted this week: {CASE_REF}",
            "Health (cases passed of those with a last run): the night: 1 of 1",
            "Appraisal (from reports only): distress, \u22121.0",
        ]
    ),
    "extraContext": json.dumps(AGENT_TABLE, ensure_ascii=False, separators=(",", ":")),
    "url": f"/factory/feedback/digests/{WEEK}",
    "health": AGENT_TABLE["health"],
    "previousItems": [f"{INSTANCE}/_Digests/{week}/{AGENT_ID}" for week in PREVIOUS_WEEKS],
    "standingIssueTitle": f"Wrong answers — {AGENT}",
    "standingIssueLabels": ["feedback", "wrong-answer-digest"],
}

# Alice's erasure, asked by the platform admin (decisions D43), and what an export of her
# answered just before it (decisions D46), shortened to her report's draft.
PERSON_ERASURE: JsonDict = {
    "erasureId": "3d1f0e5a-8c2b-5f4e-9a7d-6b0c1e2f3a4b",
    "keysDestroyed": 2,
    "events": 7,
    "artifactsDeleted": 1,
    "position": "06Yz6Q4VysuFFhK3w70xQpX7u8TIKuAGbEx7xitXJWN07IKw",
}
PERSON_EXPORT: JsonDict = {
    "tenantId": TENANT,
    "person": REPORTER,
    "exportedAt": "2026-12-01T09:00:00+00:00",
    "events": [
        {
            "topic": "services.reports.domain:Report.Drafted",
            "aggregateId": REPORT_ID,
            "version": 1,
            "at": "2026-11-27T09:21:04.118000+00:00",
            "fields": {"reporter": REPORTER, "message": "The coach did not find my hourly rate."},
        }
    ],
    "artifacts": [{"ref": ARTIFACT, "mediaType": "text/plain", "text": "Too long.", "bytes": 9}],
}
