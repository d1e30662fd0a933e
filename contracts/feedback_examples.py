"""The story's feedback answers: Alice's rating and correction of a run, the artifact her
correction names, a page of her feedback and a batch (``contracts/example_story.py``).
"""

from pydantic.config import JsonDict, JsonValue

from contracts.example_story import ARTIFACT, CORRECTION_ID, RATING_ID, REPORTER, TENANT

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
