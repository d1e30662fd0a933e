"""What an HTTP process prints at start on the embedded default: its development API key and
two curl lines to try it with."""

from services.processes.bootstrap import Runtime


def show_dev_key(runtime: Runtime, host: str, port: int) -> None:
    if runtime.dev_key:
        print(  # plain print: a curl line must not be wrapped
            f"Development API key (tenant 'dev', every scope and role): {runtime.dev_key}\n"
            "Try:\n"
            f"  curl -s -X POST http://{host}:{port}/factory/feedback "
            f"-H 'Authorization: Bearer {runtime.dev_key}' -H 'Content-Type: application/json' "
            '-d \'{"projectId":"demo","subjectKind":"run","subjectRef":"run-1",'
            '"kind":"rating","rating":5}\'\n'
            f"  curl -s 'http://{host}:{port}/factory/feedback?subjectRef=run-1' "
            f"-H 'Authorization: Bearer {runtime.dev_key}'",
            flush=True,
        )
