"""The CI gate's table of a comparison (decisions D183, D184): the same side-by-side the API
answers, as rows for a terminal and as Markdown for a pull request's comment. Pure."""

from typing import Any

HEADERS = ("case", "baseline", "candidate", "change", "checks changed", "conversations differing")


def percent(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:.0%}"


def shown_verdict(side: dict[str, Any]) -> str:
    return side["verdict"] if side["reason"] is None else f"{side['verdict']} ({side['reason']})"


def rows(view: dict[str, Any]) -> list[tuple[str, ...]]:
    return [
        (
            line["ref"] or line["caseId"],
            shown_verdict(line["baseline"]),
            shown_verdict(line["candidate"]),
            line["change"],
            ", ".join(line["checksChanged"]) or "-",
            str(line["conversationsDiffering"]),
        )
        for line in view["cases"]
    ]


def headline(view: dict[str, Any]) -> str:
    baseline = view["baseline"] or "each case's model"
    return (
        f"{view['agent']}: {baseline} → {view['candidate']}: "
        f"pass rate {percent(view['baselinePassRate'])} → {percent(view['candidatePassRate'])}; "
        f"{view['regressed']} regressed, {view['fixed']} fixed, {view['unchanged']} unchanged, "
        f"{view['notCompared']} not compared"
    )


def markdown(view: dict[str, Any], link: str | None = None) -> str:
    """The pull request's comment: the verdict, the headline and the table."""
    verdict = "❌ regression" if view["regressed"] else "✅ no regression"
    lines = [f"**Feedback Loop gate: {verdict}**", "", headline(view), ""]
    lines.append("| " + " | ".join(HEADERS) + " |")
    lines.append("|" + "---|" * len(HEADERS))
    for row in rows(view):
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    if link:
        lines += ["", f"Comparison: `{link}`"]
    return "\n".join(lines)
