"""The story's privacy answers: Alice's erasure and an export of her
(``contracts/example_story.py``).
"""

from pydantic.config import JsonDict

from contracts.example_story import ARTIFACT, REPORT_ID, REPORTER, TENANT

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
