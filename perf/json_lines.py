"""The JSON lines of a results file (the benchmarks' and gpu-session's format): every line that
starts with "{" parsed, other lines skipped; a line that is not JSON ends the program with a
message naming the file and the line."""
import json
import sys


def json_lines(path, program):
    """(line number, dict) for each JSON line of `path`; `program` names the caller in errors."""
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as error:
                sys.exit(f"{program}: {path}:{number}: not JSON: {error}")
