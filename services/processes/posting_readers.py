"""The readers that post outside the service: the hand-over webhook (the weekly digest's posts
take its route), agents' webhooks, and the triage intake that files to each tenant's tracker."""

import logging

from services.bus.command_bus import CommandBus
from services.digests.intake import TriageIntake
from services.digests.tracker import GitHubTracker
from services.followers.reader import Reader
from services.owners.outbox import AgentWebhookOutbox
from services.owners.sender import NAME as SENDER
from services.owners.sender import AgentWebhookSender, SenderSettings
from services.processes.log_readers import LogReaders
from services.processes.settings import Settings
from services.processes.webhooks import webhook_readers

log = logging.getLogger("feedbackloop")


class PostingReaders(LogReaders):
    """The Runtime's part that posts outside (``services.processes.bootstrap``)."""

    settings: Settings
    bus: CommandBus

    def start_handover_webhook(self) -> Reader | None:
        """The hand-over webhook's readers (the weekly digest's posts take the same route,
        SPEC W123), when one is configured; answers the hand-overs' reader."""
        readers = webhook_readers(self.settings, self.store, self.bus)
        for reader in readers:
            self.follow(reader)
        return readers[0] if readers else None

    def start_agent_webhooks(self) -> AgentWebhookOutbox:
        """Agents' webhooks (decisions D194, D195): the outbox follows the log, the sender
        posts its due rows; both supervised, in every process that delivers webhooks."""
        outbox = AgentWebhookOutbox(self.pool, self.settings.cloudevents_source)
        self.follow(outbox)
        sender = AgentWebhookSender(
            self.pool,
            SenderSettings(
                max_attempts=self.settings.agent_webhook_max_attempts,
                backoff_seconds=self.settings.agent_webhook_backoff_seconds,
                max_backoff_seconds=self.settings.agent_webhook_max_backoff_seconds,
            ),
        )
        self.supervisor.start(SENDER, lambda: sender.run(self.stop))
        return outbox

    def triage_intake(self) -> TriageIntake:
        """The triage intake of the weekly digest, with each tenant's tracker (decisions D66)."""
        trackers = {
            tenant: GitHubTracker(tracker.url, tracker.token.get_secret_value())
            for tenant, tracker in self.settings.trackers.items()
        }
        return TriageIntake(
            self.store, self.bus, trackers,
            backoff_seconds=self.settings.tracker_backoff_seconds,
            max_backoff_seconds=self.settings.tracker_max_backoff_seconds,
        )  # fmt: skip

    def start_intake(self) -> Reader | None:
        """The triage intake, when a tracker is configured (none: the digest's posts go to
        Kafka and the webhook only, and the log says so)."""
        if not self.settings.trackers:
            log.info("triage intake: no tracker configured (FEEDBACKLOOP_TRACKERS)")
            return None
        intake = self.triage_intake()
        self.follow(intake)
        log.info("triage intake: trackers of %d tenant(s)", len(self.settings.trackers))
        return intake
