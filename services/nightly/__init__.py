"""The nightly eval runner: confirmed cases re-run every night, bounded, ordered, resumable,
each as the person who confirmed it (SPEC W78–W103, decisions of §3.8)."""
