"""The worked story every answer example in ``/openapi.json`` tells, and the names it shares.

Every answer in the document comes with examples. Each example is an answer the service
gave (recorded from a run of it, then spread over a morning): ids are the UUIDs it made,
times RFC 3339 as the read models write them, positions opaque tokens sealed for the tenant
(``services/edge/positions.py``: 36 bytes, base64url). They tell one story, so ids line up across
answers: Alice (tenant ``acme``) rates a run and corrects it, reports that the Office coach
did not find her hourly rate, Bruno triages the report, Alice lifts it into an eval case,
confirms it and runs two conversations. The night of 2026-11-28 re-runs her confirmed case
(SPEC §3.8) and the digest of 2026-W48, built the Monday after, counts her report under the
coach (SPEC §3.9). This module names the story's people, agent, model and ids; each context's
answers are in a module of their own (``feedback_examples``, ``report_examples``,
``eval_examples``, ``night_examples``, ``digest_examples``, ``privacy_examples``).
The answer models show them (``model_config = shown_as(...)``, ``contracts/answers.py`` and each
context's answers); ``tests/unit/test_openapi_examples.py`` validates each against its model and
the document.
"""

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
