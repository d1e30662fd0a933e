"""What the people of the demo wrote: wrong-answer reports of every kind, plain reports of every
category, and the words behind feedback. Written as a small consultancy's staff would, so a
newcomer reads the console as it will look in use."""

from dataclasses import dataclass, field

from services.processes.demo.cast import AGENTS, REPORTERS, Agent, Person


@dataclass(frozen=True)
class WrongAnswer:
    """One reported reply; ``looked`` is what the agent's tool call on the node returned
    (None: it did not look), which with ``readable`` decides the kind (W14, W15)."""

    key: str
    day: int
    reporter: Person
    agent: Agent
    prompt: str
    reply: str
    account: str
    expected: str
    readable: bool = True
    looked: str | None = None
    kind: str | None = None  # only where the check cannot tell (fabricated, outdated, other)
    lift: bool = False  # made an eval case by the agent's maintainer


COACH, BILLING, ONBOARDING = AGENTS
MARA, JONAS, LEA = REPORTERS

WRONG_ANSWERS = (
    WrongAnswer("hourly-rate", 1, MARA, COACH,
                "Which hourly rate do I bill for concept work?",
                "I'm sorry, I don't know which hourly rate you bill.",
                "The coach does not know our rate for concept work, but it is in the company "
                "profile.", "Concept work is billed at CHF 150 per hour (company profile).",
                lift=True),
    WrongAnswer("expense-limit", 2, JONAS, BILLING,
                "Up to which amount may I approve an expense claim myself?",
                "There is no limit; any team lead can approve any claim.",
                "That is wrong and risky: the rates page says team leads approve up to CHF 300.",
                "Team leads approve expense claims up to CHF 300; above that the CFO signs.",
                looked="Expense limits: team lead CHF 300, CFO above", kind="fabricated",
                lift=True),
    WrongAnswer("laptop-day-one", 3, LEA, ONBOARDING,
                "When do I get my laptop?",
                "Laptops are handed out at the end of the first month.",
                "I got mine on my first morning; the first-week page says so too.",
                "New staff receive their laptop on the first morning, from IT at reception.",
                lift=True),
    WrongAnswer("travel-policy", 4, MARA, COACH,
                "May I book first class for a trip to Geneva?",
                "I could not open the travel policy.",
                "The coach tried to read the policy and got an error page.",
                "Second class by rail; first class only above three hours of travel.",
                looked="500 internal error while reading the node"),
    WrongAnswer("payroll-dates", 6, JONAS, BILLING,
                "When is the December salary paid?",
                "Salaries are paid on the 25th of each month.",
                "For December the rates page moved it to the 20th; the agent used last "
                "year's page.", "The December 2026 salary is paid on 20 December.",
                looked="Payroll 2025: paid on the 25th", kind="outdated"),
    WrongAnswer("board-minutes", 8, LEA, ONBOARDING,
                "Where are the minutes of the last board meeting?",
                "I cannot find any board minutes.",
                "I think I am simply not allowed to read them, so the agent could not either.",
                "The minutes are in the board space, readable by board members only.",
                readable=False),
    WrongAnswer("invoice-tone", 10, MARA, BILLING,
                "Draft a friendly reminder for an overdue invoice.",
                "PAY NOW OR WE WILL TAKE LEGAL ACTION.",
                "Far too harsh for a first reminder to a long-standing client.",
                "A first reminder is polite and offers help; legal steps come after the third.",
                looked="Reminder templates: first, second, third", kind="other"),
    WrongAnswer("vacation-days", 12, JONAS, COACH,
                "How many vacation days do I have in 2027?",
                "You have 20 vacation days.",
                "Everyone here has 25 days; the coach did not even look it up.",
                "Staff have 25 vacation days a year, 30 from age 50.", lift=True),
)  # fmt: skip


@dataclass(frozen=True)
class PlainReport:
    key: str
    day: int
    reporter: Person
    category: str  # bug | idea | praise | question
    message: str


PLAIN_REPORTS = (
    PlainReport("export-button", 2, MARA, "bug",
                "The 'Export to PDF' button in the coach's side panel does nothing in Firefox."),
    PlainReport("weekly-summary", 5, JONAS, "idea",
                "Could the billing agent send me a summary of open invoices every Monday?"),
    PlainReport("onboarding-thanks", 7, LEA, "praise",
                "The onboarding guide walked me through my first week without a single gap. "
                "Thank you!"),
    PlainReport("which-agent", 9, LEA, "question",
                "Which agent should I ask about travel bookings: the coach or billing?"),
    PlainReport("slow-replies", 11, MARA, "bug",
                "Since Tuesday the coach takes over a minute to answer simple questions."),
)  # fmt: skip


@dataclass(frozen=True)
class Review:
    """What the reviewer did with a report: Triaged, then perhaps Resolved or WontFix."""

    key: str
    day: int
    steps: tuple[dict[str, str], ...] = field(default_factory=tuple)


REVIEWS = (
    Review("invoice-tone", 11, ({"status": "Triaged"}, {
        "status": "Resolved", "change": "The reminder templates now open with the friendly "
        "first reminder; the agent's prompt names it.",
        "link": "https://tracker.example.org/agentic-office/billing/issues/42"})),
    Review("board-minutes", 9, ({"status": "Triaged"}, {
        "status": "WontFix", "reason": "Board minutes are restricted on purpose; the agent "
        "answered as it should for someone without access."})),
    Review("onboarding-thanks", 8, ({"status": "Triaged"}, {
        "status": "Resolved", "change": "Shared with the onboarding team."})),
    Review("which-agent", 10, ({"status": "Triaged"},)),
    Review("payroll-dates", 7, ({"status": "Triaged"},)),
)  # fmt: skip

# Feedback on runs: (day, giver, agent, kind, rating, words). Comments and corrections carry
# their text as an artifact (SPEC C06).
FEEDBACK = (
    (0, MARA, COACH, "rating", 5, None),
    (0, JONAS, BILLING, "rating", 4, None),
    (1, LEA, ONBOARDING, "rating", 5, None),
    (1, MARA, COACH, "comment", None, "Good summary of the project plan, exactly what I needed."),
    (2, JONAS, BILLING, "rating", 2, None),
    (3, JONAS, BILLING, "correction", None, "Team leads approve up to CHF 300, not without limit."),
    (4, LEA, ONBOARDING, "rating", 4, None),
    (5, MARA, COACH, "rating", 3, None),
    (6, JONAS, BILLING, "escalation", None, "The agent told a client a wrong payment date."),
    (7, LEA, ONBOARDING, "comment", None, "The checklist for day two was very helpful."),
    (8, MARA, COACH, "rating", 1, None),
    (9, JONAS, BILLING, "rating", 5, None),
    (10, LEA, ONBOARDING, "rating", 5, None),
    (11, MARA, COACH, "rating", 4, None),
    (12, JONAS, COACH, "rating", 2, None),
    (13, LEA, ONBOARDING, "rating", 4, None),
)

CHARTER = """
[[line]]
id = "grounded"
text = "Answers rest on sources the asker can read."

[[line]]
id = "reports-closed"
text = "Nobody's report stays open longer than two days."
sensor = { kind = "request_closure", setpoint = "2d" }

[[line]]
id = "questions-answered"
text = "A question an agent parks gets an answer within a day."
sensor = { kind = "question_latency", setpoint = "1d" }

[[line]]
id = "few-interventions"
text = "At most one run in five needs a person to step in."
sensor = { kind = "intervention_rate", setpoint = "20%" }
"""
