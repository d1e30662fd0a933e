"""What the stand-in agent answers the demo's eval cases: some conversations right and
grounded, some not, so the runs, the night and the digest show passes and failures."""

from typing import Any

from services.processes.demo.cast import AGENTS

COACH, BILLING, ONBOARDING = AGENTS


def looked(node: str, result: str) -> dict[str, str]:
    return {"name": "Get", "arguments": node, "result": result}


RATE = "Concept work is billed at CHF 150 per hour (company profile)."
LIMIT = "Team leads approve expense claims up to CHF 300; above that the CFO signs."
LAPTOP = "New staff receive their laptop on the first morning, from IT at reception."

SCRIPT: dict[str, Any] = {
    "modelName": "standin-1",
    "rules": [
        # The coach mostly finds the rate now; one conversation in three still does not look.
        {"when": "hourly rate", "replies": [
            {"text": RATE, "toolCalls": [looked(COACH.node, "Concept: CHF 150/h")]},
            {"text": "I don't know your rate; please ask your team lead."},
            {"text": f"According to the profile: {RATE}",
             "toolCalls": [looked(COACH.node, "Concept: CHF 150/h")]},
        ]},
        # Billing still invents a limit: the case fails, which is what the proposals are about.
        {"when": "expense claim", "replies": [
            {"text": "Any team lead can approve up to CHF 3000.",
             "toolCalls": [looked(BILLING.node, "Expense limits: team lead CHF 300")]},
        ]},
        {"when": "laptop", "text": LAPTOP,
         "toolCalls": [looked(ONBOARDING.node, "Laptop: first morning, IT at reception")]},
        {"when": "vacation days", "text": "You have 20 vacation days."},
    ],
    "default": {"text": "I don't know."},
}  # fmt: skip
