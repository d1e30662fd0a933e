"""The console's pages, in the order of its navigation: one module and one template each."""

from services.console.page import Page
from services.console.pages.appraisal import APPRAISAL
from services.console.pages.audit import AUDIT
from services.console.pages.datasets import DATASETS
from services.console.pages.digests import DIGESTS
from services.console.pages.eval_cases import EVAL_CASES
from services.console.pages.inbox import INBOX
from services.console.pages.my_agents import MY_AGENTS
from services.console.pages.my_reports import MY_REPORTS
from services.console.pages.nights import NIGHTS
from services.console.pages.operations import OPERATIONS
from services.console.pages.proposals import PROPOSALS
from services.console.pages.queues import QUEUES

PAGES: tuple[Page, ...] = (
    INBOX,
    QUEUES,
    MY_REPORTS,
    MY_AGENTS,
    EVAL_CASES,
    NIGHTS,
    DIGESTS,
    PROPOSALS,
    DATASETS,
    APPRAISAL,
    OPERATIONS,
    AUDIT,
)
