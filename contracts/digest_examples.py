"""The story's digest: the week 2026-W48 as it is listed and read, and the coach's post of
it on the topic (``contracts/example_story.py``).
"""

import json

from pydantic.config import JsonDict

from contracts.example_story import AGENT, CASE_REF, MODEL, TENANT

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
