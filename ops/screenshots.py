#!/usr/bin/env python3
"""Screenshots of the console with the demo's data (``make screenshots``).

A fresh store is filled by ``feedbackloop demo`` — the embedded default in a temporary data
directory, or, with ``--database-url``, a fresh database on that server (dropped afterwards) —
and served by ``feedbackloop serve``. Headless Chromium (Debian's ``chromium``, driven by
Playwright as the browser tests drive it; never Playwright's own download) signs in as the
first demo person each page of the navigation is for, and saves the page and the first item it
lists under ``--out``; the Inbox is also saved at a fixed size as the README's picture
(``docs/img/inbox.png``). Each page's count of listed rows is printed, so an empty page shows.
Decisions D99.

    python ops/screenshots.py [--out var/screenshots] [--readme docs/img/inbox.png]
"""

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
from playwright.async_api import Browser, Page, ViewportSize, async_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "ops")]

import local_processes  # noqa: E402
from bench_console import Person, detail_link, load_demo, reader_of  # noqa: E402

from services.console.pages import PAGES  # noqa: E402

README_SIZE: ViewportSize = {"width": 1200, "height": 760}


def serve(env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = local_processes.free_port()
    env = env | {"FEEDBACKLOOP_PORT": str(port), "FEEDBACKLOOP_HOST": "127.0.0.1"}
    env |= {"FEEDBACKLOOP_METRICS_PORT": "0", "FEEDBACKLOOP_LOG_LEVEL": "WARNING"}
    command = [str(Path(sys.executable).parent / "feedbackloop"), "serve"]
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 180
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return process, base
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    process.terminate()
    raise RuntimeError(f"feedbackloop serve did not come up; see {log}")


async def signed_in(browser: Browser, base: str, person: Person) -> Page:
    context = await browser.new_context(base_url=base, viewport=README_SIZE)
    page = await context.new_page()
    await page.goto("/sign-in")
    await page.get_by_label("API key", exact=True).fill(person.key)
    await page.get_by_role("button", name="Sign in", exact=True).click()
    await page.wait_for_load_state("networkidle")
    return page


async def shoot(base: str, people: list[Person], out: Path, readme: Path | None) -> None:
    async with async_playwright() as playwright:
        chromium = shutil.which("chromium")
        if chromium is None:
            raise SystemExit("chromium is not installed: run `make system-deps`")
        browser = await playwright.chromium.launch(executable_path=chromium, headless=True)
        try:
            for entry in PAGES:
                person = reader_of(entry.roles, people)
                page = await signed_in(browser, base, person)
                await page.goto(entry.path)
                await page.wait_for_load_state("networkidle")
                rows = await page.locator("main tbody tr, main li").count()
                print(f"{entry.path:<24} as {person.subject:<16} {rows:>3} rows")
                await page.screenshot(path=out / f"{entry.name}.png", full_page=True)
                if entry.name == "inbox" and readme is not None:
                    readme.parent.mkdir(parents=True, exist_ok=True)
                    await page.screenshot(path=readme)
                link = detail_link(await page.content(), entry.path)
                if link is not None:
                    await page.goto(link)
                    await page.wait_for_load_state("networkidle")
                    await page.screenshot(path=out / f"{entry.name}-item.png", full_page=True)
                    print(f"{link:<24} as {person.subject}")
                await page.context.close()
        finally:
            await browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "var" / "screenshots")
    parser.add_argument("--readme", type=Path, default=ROOT / "docs" / "img" / "inbox.png")
    parser.add_argument(
        "--database-url", help="a PostgreSQL server to make a fresh database on [embedded]"
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    data = Path(tempfile.mkdtemp(prefix="fl-screenshots-"))
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["FEEDBACKLOOP_DATA_DIR"] = str(data)
    database = None
    if args.database_url:
        database = f"screenshots_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(args.database_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {database}")
        env["DATABASE_URL"] = urlunsplit(urlsplit(args.database_url)._replace(path=f"/{database}"))
    process = None
    try:
        people = load_demo(env.get("DATABASE_URL", ""), data, args.out / "demo.log", env)
        env["FEEDBACKLOOP_API_KEYS_FILE"] = str(data / "demo-api-keys.json")
        process, base = serve(env, args.out / "serve.log")
        asyncio.run(shoot(base, people, args.out, args.readme))
    finally:
        if process is not None:
            process.terminate()
            process.wait(60)
        if database is not None:
            with psycopg.connect(args.database_url, autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        shutil.rmtree(data, ignore_errors=True)
    print(f"screenshots in {args.out}; the README's picture: {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
