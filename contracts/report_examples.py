"""The story's report answers: Alice's wrong-answer report and her idea drafted, submitted
and triaged by Bruno, as the report and the Inbox show it (``contracts/example_story.py``).
"""

from pydantic.config import JsonDict

from contracts.example_story import (
    AGENT,
    IDEA_ID,
    MODEL,
    NODE,
    REPORT_ID,
    REPORTER,
    REVIEWER,
    TENANT,
    THREAD,
)

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
