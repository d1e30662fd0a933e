"""The story's eval answers: the case Alice lifted from her report and confirmed, her run of
two conversations, its threads and summary, and the case as it is read and listed
(``contracts/example_story.py``).
"""

from pydantic.config import JsonDict, JsonValue

from contracts.example_story import (
    AGENT,
    CASE_ID,
    CASE_REF,
    MODEL,
    NODE,
    REPORT_ID,
    REPORTER,
    RUN_ID,
)

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
