"""The story's night: the nightly run of 2026-11-28 as it is listed and read
(``contracts/example_story.py``).
"""

from pydantic.config import JsonDict

from contracts.example_story import CASE_ID, CASE_REF, MODEL, REPORTER

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
