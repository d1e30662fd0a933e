"""A local stand-in of GitHub's REST API for the triage intake: issues and issue comments of
some repositories, each request VALIDATED against GitHub's published schema (the models
githubkit generates from GitHub's OpenAPI description: the request bodies; the documented
query parameters and their enums) before it is served. A request the schema refuses is
answered 422 and kept in ``violations``, which a test asserts is empty.

``down``: every request is answered 503 (a tracker that is down). ``hold_after_comment``: the
next comment is stored, and then the answer is held back until the test lets it go: a kill of
the caller meanwhile is a kill between the tracker's answer and the caller's record.
"""

import contextlib
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from githubkit_schemas.latest.models import (
    ReposOwnerRepoIssuesIssueNumberCommentsPostBody,
    ReposOwnerRepoIssuesPostBody,
)
from pydantic import BaseModel, ValidationError

ISSUES = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues$")
COMMENTS = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<n>\d+)/comments$")
# GET /repos/{owner}/{repo}/issues and …/issues/{issue_number}/comments: their parameters.
LIST_ISSUES = {
    "milestone": None, "state": {"open", "closed", "all"}, "assignee": None, "type": None,
    "creator": None, "mentioned": None, "labels": None,
    "sort": {"created", "updated", "comments"}, "direction": {"asc", "desc"}, "since": None,
    "per_page": "int", "page": "int",
}  # fmt: skip
LIST_COMMENTS = {"since": None, "per_page": "int", "page": "int"}


@dataclass
class Issue:
    number: int
    repository: str
    title: str
    body: str
    labels: list[str]
    comments: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class GitHubStandin:
    token: str
    repositories: set[str]
    url: str = ""
    issues: list[Issue] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    down: bool = False
    hold_after_comment: bool = False
    held: threading.Event = field(default_factory=threading.Event)  # a comment is held
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def issues_of(self, repository: str) -> list[Issue]:
        return [i for i in self.issues if i.repository == repository]

    def html(self, issue: Issue) -> str:
        return f"{self.url}/{issue.repository}/issues/{issue.number}"

    def shown(self, issue: Issue) -> dict[str, Any]:
        return {
            "id": issue.number, "number": issue.number, "title": issue.title,
            "body": issue.body, "state": "open", "html_url": self.html(issue),
            "labels": [{"name": name} for name in issue.labels],
        }  # fmt: skip

    def answer(self, method: str, path: str, query: str, body: bytes) -> tuple[int, Any]:
        if self.down:
            return 503, {"message": "Service Unavailable"}
        params = parse_qs(query)
        if found := ISSUES.match(path):
            repository = f"{found['owner']}/{found['repo']}"
            if repository not in self.repositories:
                return 404, {"message": "Not Found"}
            if method == "GET":
                self.check_query(params, LIST_ISSUES, path)
                labels = set(params.get("labels", [""])[0].split(",")) - {""}
                listed = [i for i in self.issues_of(repository) if labels <= set(i.labels)]
                return 200, self.page(params, [self.shown(i) for i in reversed(listed)])
            said = self.validated(body, ReposOwnerRepoIssuesPostBody, path)
            if said is None:
                return 422, {"message": "Validation Failed"}
            with self.lock:
                issue = Issue(len(self.issues) + 1, repository, said["title"], said["body"],
                              list(said.get("labels", [])))  # fmt: skip
                self.issues.append(issue)
            return 201, self.shown(issue)
        if found := COMMENTS.match(path):
            repository = f"{found['owner']}/{found['repo']}"
            number = int(found["n"])
            issue = next((i for i in self.issues_of(repository) if i.number == number), None)
            if issue is None:
                return 404, {"message": "Not Found"}
            if method == "GET":
                self.check_query(params, LIST_COMMENTS, path)
                return 200, self.page(params, list(issue.comments))
            said = self.validated(body, ReposOwnerRepoIssuesIssueNumberCommentsPostBody, path)
            if said is None:
                return 422, {"message": "Validation Failed"}
            with self.lock:
                made = {
                    "id": 1000 + sum(len(i.comments) for i in self.issues),
                    "body": said["body"],
                }
                made["html_url"] = f"{self.html(issue)}#issuecomment-{made['id']}"
                issue.comments.append(made)
            if self.hold_after_comment:
                self.hold_after_comment = False
                self.held.set()
                self.release.wait(120)
            return 201, made
        self.violations.append(f"{method} {path}: no such endpoint")
        return 404, {"message": "Not Found"}

    def page(self, params: dict[str, list[str]], rows: list[Any]) -> list[Any]:
        per_page = int(params.get("per_page", ["30"])[0])
        page = int(params.get("page", ["1"])[0])
        return rows[(page - 1) * per_page : page * per_page]

    def check_query(self, params: dict[str, list[str]], known: dict[str, Any], path: str) -> None:
        for name, values in params.items():
            allowed = known.get(name, "unknown")
            if name not in known:
                self.violations.append(f"GET {path}: unknown parameter {name}")
            elif allowed == "int" and not (values[0].isdigit() and 1 <= int(values[0]) <= 100):
                self.violations.append(f"GET {path}: {name}={values[0]}")
            elif isinstance(allowed, set) and values[0] not in allowed:
                self.violations.append(f"GET {path}: {name}={values[0]} not in {allowed}")

    def validated(self, body: bytes, model: type[BaseModel], path: str) -> dict[str, Any] | None:
        try:
            said = json.loads(body)
            model.model_validate(said)
            fields = {f.alias or name for name, f in model.model_fields.items()}
            if unknown := set(said) - fields:
                raise ValueError(f"unknown fields {sorted(unknown)}")
        except (ValueError, ValidationError) as error:
            self.violations.append(f"POST {path}: {error}")
            return None
        result: dict[str, Any] = said
        return result


@contextlib.contextmanager
def github_standin(token: str, repositories: set[str]) -> Iterator[GitHubStandin]:
    standin = GitHubStandin(token, repositories)

    class Handler(BaseHTTPRequestHandler):
        def handle_one(self, method: str) -> None:
            parts = urlsplit(self.path)
            if self.headers.get("Authorization") not in (f"Bearer {token}", f"token {token}"):
                status, answer = 401, {"message": "Bad credentials"}
            else:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                status, answer = standin.answer(method, parts.path, parts.query, body)
            content = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        def do_GET(self) -> None:
            self.handle_one("GET")

        def do_POST(self) -> None:
            self.handle_one("POST")

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    standin.url = f"http://127.0.0.1:{server.server_port}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield standin
    finally:
        standin.release.set()
        server.shutdown()
        server.server_close()
