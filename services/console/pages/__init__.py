"""The console's pages, in the order of its navigation: one module and one template each."""

from services.console.page import Page
from services.console.pages.datasets import DATASETS
from services.console.pages.inbox import INBOX
from services.console.pages.my_reports import MY_REPORTS

PAGES: tuple[Page, ...] = (INBOX, MY_REPORTS, DATASETS)
