"""Queues context: the tenant's review queues over the Inbox and the claims on its reports."""
