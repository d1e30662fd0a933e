"""One worked story, as the HTTP API answers it, for the examples in ``/openapi.json``.

Issue 8 asks for every answer "with examples". Each example here is an answer the service
gave (recorded from a run of it, then spread over a morning): ids are the UUIDs it made,
times RFC 3339 as the read models write them, positions opaque tokens sealed for the tenant
(``services/positions.py``: 36 bytes, base64url). They tell one story, so ids line up across
answers: Alice (tenant ``acme``) rates a run and corrects it, reports that the Office coach
did not find her hourly rate, Bruno triages the report, Alice lifts it into an eval case,
confirms it and runs two conversations. ``contracts/answers.py`` attaches them to the answer
models; ``tests/unit/test_openapi_examples.py`` validates each against its model and the
document.
"""

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
        "position": position,
    }
    item.update(what)
    return item


# Newest first; ``next`` continues with older feedback on the subject.
FEEDBACK_PAGE: JsonDict = {
    "items": [
        _feedback(
            CORRECTION_ID,
            "2026-11-30T08:14:05.532917+00:00",
            "EBnv4-0Iqjz7-wHeLYh0_HJ0cWRFp4F8d73YQTSkHolT3RkV",
            kind="correction",
            correctedArtifactRef=ARTIFACT,
        ),
        _feedback(
            RATING_ID,
            "2026-11-30T08:12:40.118204+00:00",
            "o967jsR3QEH3qT9TNREQYVx0FP5hDRCwvtKltpqr500WUc87",
            rating=5,
        ),
    ],
    "next": "0t1IeOiUUcdHj9ZDCQgOh3qCcSi7Vk6HpQhoEmsoTm0fmaSn",
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
        "draftedAt": "2026-11-30T09:15:12.402311+00:00",
        "submittedAt": "2026-11-30T09:16:03.877140+00:00",
        "review": {
            "reviewedBy": REVIEWER,
            "reviewedAt": "2026-11-30T09:41:27.090455+00:00",
            "change": None,
            "link": None,
            "reason": None,
        },
        "position": position,
    }


REPORT_VIEW = _report_view("YrjknI9EzSgt4-m4r5ezZlxkAODxUAGUrb88KPQ0-9yrAT3J")
INBOX_PAGE: JsonDict = {
    "items": [_report_view("PTO1QbbWlRKNHID6GASnvF_FtkQ9p1ZhWvJnEjHmg3MeAj1T")],
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
    }


THREAD_1 = _thread(
    1,
    "Your company profile says: concept work CHF 150 per hour.",
    "2026-11-30T10:05:41.297517+00:00",
)
THREAD_2 = _thread(
    2,
    "According to your company profile you charge CHF 150 per hour for concept work.",
    "2026-11-30T10:05:49.941251+00:00",
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
    "model": None,
    "effort": "medium",
    "summary": SUMMARY,
    "threads": list(THREADS),
    "recordedAt": "2026-11-30T10:05:50.012081+00:00",
}

RUN_RECORDED: JsonDict = {
    "caseId": CASE_ID,
    "runId": RUN_ID,
    "model": None,
    "effort": "medium",
    "threads": list(THREADS),
    "summary": SUMMARY,
    "ranBy": REPORTER,
    "position": "ooRcckuQsS-ZsCMnwJCPCwkxEKKeXIJeHITGr885yqj9yzId",
}

THREAD_RECORD: JsonDict = {**THREAD_1, "ranBy": REPORTER, "model": None, "effort": "medium"}


def _case(position: str, last_run_position: str) -> JsonDict:
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
        "lastRun": {**RUN, "position": last_run_position},
        "passed": True,
        "liftedAt": "2026-11-30T10:02:18.664020+00:00",
        "position": position,
    }


CASE_WITH_RUNS: JsonDict = {
    **_case(
        "57_h9j6dbSEahQzbrYFU8aaS2tcvPOBDj5w-FgPLUVUIbvbr",
        "Oy5wcAsJOutubxjoJg356I9njX4Og9V34DZSPVfpUm0cBGvd",
    ),
    "runs": [RUN],
}
CASE_LIST: JsonDict = {
    "items": [
        _case(
            "LPLAi4pWdi86Hy7IPsvLKa-ssXlBkXUBrEw1aJWFtxGBPURr",
            "pqEDB5VS7F6BSEQNnEI1V_-RHBnkC0P_Gbo3nMaDXPjmdeSs",
        )
    ]
}
