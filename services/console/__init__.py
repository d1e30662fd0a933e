"""The console: the service's pages for the people who act on feedback, served by the API's
process at ``/`` (docs/console.md)."""
