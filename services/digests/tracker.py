"""The issue tracker the triage intake files and comments in: GitHub's REST API (issues and
issue comments) through githubkit, at a base URL and with a token of the tenant's.

Every call is keyed (decisions D65): the body carries a marker naming the weekly item, and
before creating, the tracker looks for what it already made under that marker (the
repository's issues labelled ``wrong-answer-digest``, or the issue's comments). A retry after
the tracker answered but before the ledger was written (a crash, ``kill -9``) thus finds the
issue or comment it made instead of making a second one.
"""

import re
from collections.abc import Sequence
from typing import Any

from githubkit import GitHub
from githubkit.exception import RequestError, RequestFailed, RequestTimeout

MARKER = "<!-- feedbackloop-item: {key} -->"
LOOKUP_LABEL = "wrong-answer-digest"  # W133: every issue the intake files carries it
PAGE = 100
ISSUE_URL = re.compile(r"/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)/?(?:[#?].*)?$")


class TrackerRefused(Exception):
    """The tracker refused the call for good (a 4xx other than 408/429): retrying will not
    help, and the follower parks the item with this reason."""


def transient(error: BaseException) -> bool:
    """What may pass on a later try: the network, a timeout, 5xx, 408, 429 (rate limits)."""
    if isinstance(error, RequestFailed):
        status = error.response.status_code
        return status >= 500 or status in (408, 429)
    return isinstance(error, (RequestError, RequestTimeout))


def marked(body: str, key: str) -> str:
    return f"{body}\n\n{MARKER.format(key=key)}\n"


def issue_coordinates(issue_url: str) -> tuple[str, str, int]:
    """Owner, repository and number of an issue from its URL (``…/owner/repo/issues/7``)."""
    found = ISSUE_URL.search(issue_url)
    if found is None:
        raise TrackerRefused(f"not an issue URL: {issue_url!r}")
    return found["owner"], found["repo"], int(found["number"])


class GitHubTracker:
    """GitHub (or GitHub Enterprise) at ``base_url``, as the holder of ``token``. The token
    goes into the Authorization header only; it is never logged or shown."""

    def __init__(self, base_url: str, token: str, *, timeout_seconds: float = 30.0) -> None:
        # githubkit's own retries and cache are off: the intake retries with backoff itself,
        # saying so in its status, and a lookup must see what was created a moment ago.
        self.github: GitHub[Any] = GitHub(
            token, base_url=base_url, timeout=timeout_seconds, auto_retry=False,
            http_cache=False,
        )  # fmt: skip

    async def file_issue(
        self, repository: str, title: str, labels: Sequence[str], body: str, key: str
    ) -> str:
        """The URL of the issue filed under ``key``: the one already there, or a new one."""
        owner, repo = split_repository(repository)
        marker = MARKER.format(key=key)
        page = 1
        while True:
            listed = await self._call(
                self.github.rest.issues.async_list_for_repo(
                    owner,
                    repo,
                    labels=LOOKUP_LABEL,
                    state="all",
                    sort="created",
                    direction="desc",
                    per_page=PAGE,
                    page=page,
                )
            )
            issues: list[dict[str, Any]] = listed.json()
            for issue in issues:
                if marker in (issue.get("body") or ""):
                    return str(issue["html_url"])
            if len(issues) < PAGE:
                break
            page += 1
        created = await self._call(
            self.github.rest.issues.async_create(
                owner, repo, title=title, body=marked(body, key), labels=list(labels)
            )
        )
        return str(created.json()["html_url"])

    async def comment(self, issue_url: str, body: str, key: str) -> str:
        """The URL of the comment made under ``key`` on the issue: the one already there, or
        a new one."""
        owner, repo, number = issue_coordinates(issue_url)
        marker = MARKER.format(key=key)
        page = 1
        while True:
            listed = await self._call(
                self.github.rest.issues.async_list_comments(
                    owner, repo, number, per_page=PAGE, page=page
                )
            )
            comments: list[dict[str, Any]] = listed.json()
            for made in comments:
                if marker in (made.get("body") or ""):
                    return str(made["html_url"])
            if len(comments) < PAGE:
                break
            page += 1
        created = await self._call(
            self.github.rest.issues.async_create_comment(
                owner, repo, number, body=marked(body, key)
            )
        )
        return str(created.json()["html_url"])

    async def _call(self, call: Any) -> Any:
        try:
            return await call
        except RequestFailed as error:
            if transient(error):
                raise
            status = error.response.status_code
            raise TrackerRefused(f"the tracker answered HTTP {status}") from error


def split_repository(repository: str) -> tuple[str, str]:
    owner, _, repo = repository.partition("/")
    if not owner or not repo or "/" in repo:
        raise TrackerRefused(f"the register's repository {repository!r} is not owner/name")
    return owner, repo
