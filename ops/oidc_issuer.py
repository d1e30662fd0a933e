#!/usr/bin/env python3
"""A real OpenID Connect issuer on this machine, for the tests of the service's bearer tokens.

Why: the service trusts JWTs of configured issuers (services/edge/tokens.py); its tests need
tokens a real issuer signs and a JWKS it serves, including a key rotation. The issuer is
node-oidc-provider (ops/oidc/issuer.mjs), installed from the npm registry by ``npm ci`` with
the checked-in lock file, as Kafka's jars come from Maven (``make system-deps``). It publishes
every key it is given and signs with the first, so restarting it with a new key in front is a
rotation.

Library (tests)::

    issuer = start_issuer(tmp, audience="urn:feedbackloop", clients=[Client(...)])
    token = issuer.token("svc", "secret")     # a real client-credentials access token
    issuer.rotate()                            # new kid signs; the old one stays published
    issuer.stop()

CLI: ``python ops/oidc_issuer.py install`` (what ``make system-deps`` runs).

Standard library only, except the key generation (cryptography, a dependency of the service).
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import hashlib
import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OIDC_DIR = Path(__file__).resolve().parent / "oidc"
MARKER = ".complete"  # holds the lock file's sha256: a changed lock installs afresh


def _log(msg: str) -> None:
    print(f"[oidc-issuer] {msg}", file=sys.stderr, flush=True)


def ensure_issuer_modules(directory: Path = OIDC_DIR) -> Path:
    """Install the issuer's node modules (``npm ci``) unless the lock file's are there."""
    lock_file = directory / "package-lock.json"
    want = hashlib.sha256(lock_file.read_bytes()).hexdigest()
    marker = directory / "node_modules" / MARKER
    with open(directory / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers: one installs
        if marker.is_file() and marker.read_text().strip() == want:
            return directory
        npm = shutil.which("npm")
        if not npm:
            raise RuntimeError("npm is not on PATH; it is needed once to install the issuer")
        _log(f"installing the test issuer's modules in {directory}")
        cmd = [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"]
        subprocess.run(cmd, cwd=directory, check=True, stdout=sys.stderr)
        marker.write_text(want + "\n")
    return directory


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def new_signing_key(kid: str) -> dict[str, Any]:
    """A fresh RSA private key as a JWK named ``kid``."""
    from cryptography.hazmat.primitives.asymmetric import rsa

    numbers = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_numbers()
    public = numbers.public_numbers

    def b64(value: int) -> str:
        raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    return {
        "kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
        "n": b64(public.n), "e": b64(public.e), "d": b64(numbers.d),
        "p": b64(numbers.p), "q": b64(numbers.q),
        "dp": b64(numbers.dmp1), "dq": b64(numbers.dmq1), "qi": b64(numbers.iqmp),
    }  # fmt: skip


@dataclass(frozen=True)
class Client:
    """A client of the issuer: its credentials, the scopes it may ask for and the claims
    (tenant, roles) its tokens carry."""

    client_id: str
    client_secret: str
    scope: str
    claims: dict[str, Any] = field(default_factory=dict)
    # Set: a client that signs people in (authorization code with PKCE, no secret), as the
    # console does; their tokens carry the claims of the issuer's ``accounts``.
    redirect_uris: list[str] = field(default_factory=list)


@dataclass
class Issuer:
    url: str
    port: int
    directory: Path
    audience: str
    clients: list[Client]
    keys: list[dict[str, Any]]
    ttl_seconds: int
    accounts: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> token claims
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0

    @property
    def config_path(self) -> Path:
        return self.directory / "issuer.json"

    @property
    def log_path(self) -> Path:
        return self.directory / "issuer.log"

    @property
    def kid(self) -> str:
        """The kid that signs new tokens."""
        return str(self.keys[0]["kid"])

    def start(self) -> None:
        config = {
            "issuer": self.url,
            "port": self.port,
            "audience": self.audience,
            "accessTokenTTL": self.ttl_seconds,
            "keys": self.keys,
            "clients": [vars(client) for client in self.clients],
            "accounts": self.accounts,
        }
        self.config_path.write_text(json.dumps(config))
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                ["node", str(OIDC_DIR / "issuer.mjs"), str(self.config_path)],
                cwd=OIDC_DIR,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the issuer exited: {self.log_path.read_text()[-2000:]}")
            try:
                self.discovery()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the issuer did not start: {self.log_path.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def rotate(self) -> str:
        """A key rotation: a new key signs from now on, the old ones stay in the JWKS (so the
        tokens already issued verify until they expire). Answers the new kid."""
        self.restarts += 1
        self.keys = [new_signing_key(f"key-{self.restarts + 1}"), *self.keys]
        self.stop()
        self.start()
        return self.kid

    def discovery(self) -> dict[str, Any]:
        url = f"{self.url}/.well-known/openid-configuration"
        with urllib.request.urlopen(url, timeout=5) as answer:
            document: dict[str, Any] = json.load(answer)
            return document

    def token(self, client_id: str, client_secret: str, scope: str | None = None) -> str:
        """A real client-credentials access token from the token endpoint."""
        form: dict[str, str] = {"grant_type": "client_credentials"}
        if scope is not None:
            form["scope"] = scope
        request = urllib.request.Request(
            self.discovery()["token_endpoint"],
            data=urllib.parse.urlencode(form).encode(),
            headers={
                "Authorization": "Basic "
                + base64.b64encode(f"{client_id}:{client_secret}".encode()).decode(),
                "Content-Type": "application/x-www-form-urlencoded",
            },
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return str(json.load(answer)["access_token"])


def start_issuer(
    directory: Path,
    *,
    audience: str,
    clients: list[Client],
    ttl_seconds: int = 300,
    accounts: dict[str, dict[str, Any]] | None = None,
) -> Issuer:
    """Start an issuer on a free loopback port."""
    ensure_issuer_modules()
    directory.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    issuer = Issuer(
        url=f"http://127.0.0.1:{port}",
        port=port,
        directory=directory,
        audience=audience,
        clients=clients,
        keys=[new_signing_key("key-1")],
        ttl_seconds=ttl_seconds,
        accounts=accounts or {},
    )
    issuer.start()
    return issuer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="The test OpenID Connect issuer (node-oidc-provider, ops/oidc/).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("install", help="install its node modules with npm ci (make system-deps)")
    args = parser.parse_args(argv)
    if args.command == "install":
        print(ensure_issuer_modules())
    return 0


if __name__ == "__main__":
    sys.exit(main())
