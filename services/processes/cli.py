"""``feedbackloop``: run the service, or any one of its processes, and operate it.

This module only wires the command line; each command lives in a ``commands_*`` module, and
every command that opens a runtime follows one template (``services.processes.lifetime``)."""

import typer

from services.processes import (
    commands_access,
    commands_agents,
    commands_appraisal,
    commands_backup,
    commands_demo,
    commands_exports,
    commands_intake,
    commands_parked,
    commands_queues,
)
from services.processes.collector import settle_collector
from services.processes.commands_contracts import contracts
from services.processes.commands_gate import gate
from services.processes.commands_http import api, serve
from services.processes.commands_keys import HELP as KEYS_HELP
from services.processes.commands_keys import keys_new
from services.processes.commands_privacy import erase, export, rewrap
from services.processes.commands_readers import handover, inbound, projector, relay
from services.processes.commands_rebuild import rebuild
from services.processes.commands_scheduler import scheduler
from services.processes.commands_status import status
from services.processes.commands_tokens import HELP as TOKENS_HELP
from services.processes.commands_tokens import tokens_check, tokens_issuers

app = typer.Typer(
    help="Feedback Loop: records feedback on AI agents' answers as events, keeps read models, "
    "and publishes to Kafka.\n\n"
    "Without DATABASE_URL it runs on the embedded default (a PostgreSQL under ./var, no "
    "Kafka). With DATABASE_URL and KAFKA_BOOTSTRAP_SERVERS set, each process can run apart: "
    "api, projector, relay, inbound, scheduler.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",  # --help reflows paragraphs instead of keeping line breaks
)
keys_app = typer.Typer(help=KEYS_HELP)
parked_app = typer.Typer(help=commands_parked.HELP, no_args_is_help=True)
agents_app = typer.Typer(help=commands_agents.HELP, no_args_is_help=True)
restore_app = typer.Typer(help=commands_backup.HELP, no_args_is_help=True)
agents_app = typer.Typer(help=commands_agents.HELP, no_args_is_help=True)
intake_app = typer.Typer(help=commands_intake.HELP, no_args_is_help=True)

tokens_app = typer.Typer(help=TOKENS_HELP, no_args_is_help=True)

roles_app = typer.Typer(help=commands_access.ROLES_HELP, no_args_is_help=True)
audit_app = typer.Typer(help=commands_access.AUDIT_HELP, no_args_is_help=True)
sessions_app = typer.Typer(help=commands_access.SESSIONS_HELP, no_args_is_help=True)
exports_app = typer.Typer(help=commands_exports.HELP, no_args_is_help=True)


@app.callback()
def started() -> None:
    # Every command runs after the imports: what they made is kept out of the collector.
    settle_collector()


app.add_typer(keys_app, name="keys")
for command in (serve, api, projector, relay, handover, inbound, scheduler, rebuild, status):
    app.command()(command)
app.command()(gate)  # the CI gate (docs/ci-gate.md)
app.add_typer(parked_app, name="parked")
parked_app.command("list")(commands_parked.parked_list)
parked_app.command("show")(commands_parked.parked_show)
parked_app.command("retry")(commands_parked.parked_retry)
parked_app.command("skip")(commands_parked.parked_skip)
keys_app.command("new")(keys_new)
keys_app.command("revoke")(commands_access.keys_revoke)
keys_app.command("list")(commands_access.keys_list)
app.add_typer(roles_app, name="roles")
roles_app.command("grant")(commands_access.roles_grant)
roles_app.command("revoke")(commands_access.roles_revoke)
roles_app.command("list")(commands_access.roles_list)
app.add_typer(sessions_app, name="sessions")
sessions_app.command("end")(commands_access.sessions_end)
app.add_typer(audit_app, name="audit")
audit_app.command("export")(commands_access.audit_export)
app.add_typer(exports_app, name="exports")
exports_app.command("feedback")(commands_exports.exports_feedback)
exports_app.command("reports")(commands_exports.exports_reports)
exports_app.command("runs")(commands_exports.exports_runs)

app.add_typer(agents_app, name="agents")
agents_app.command("register")(commands_agents.agents_register)
agents_app.command("show")(commands_agents.agents_show)
agents_app.command("list")(commands_agents.agents_list)
agents_app.command("mine")(commands_agents.agents_mine)
queues_app = typer.Typer(help=commands_queues.HELP, no_args_is_help=True)
app.add_typer(queues_app, name="queues")
queues_app.command("progress")(commands_queues.queues_progress)
app.add_typer(intake_app, name="intake")
intake_app.command("show")(commands_intake.intake_show)
app.command()(contracts)
app.command()(erase)
app.command()(export)
app.command()(rewrap)
app.command(help=commands_demo.HELP)(commands_demo.demo)
app.command()(commands_backup.backup)
app.add_typer(restore_app, name="restore")
restore_app.command("prepare")(commands_backup.restore_prepare)
restore_app.command("check")(commands_backup.restore_check)
restore_app.command("acknowledge")(commands_backup.restore_acknowledge)

app.add_typer(tokens_app, name="tokens")
tokens_app.command("issuers")(tokens_issuers)
tokens_app.command("check")(tokens_check)
commands_appraisal.register(app)


if __name__ == "__main__":
    app()
