"""Import failures: one line that names the input and the position in it."""

from __future__ import annotations


class IngestError(Exception):
    """An import failed and stored nothing of its current batch. The message is one line
    naming the input (file, record index or line, height) and what is wrong there."""


class ImportRequestError(IngestError):
    """What the import was asked for cannot be: an input that does not exist, contradictory
    flags. The command line must change, not the data (the CLI exits 2 for these)."""


class NotAnRpcEndpointError(IngestError):
    """The URL answers, but not as a JSON-RPC node: no JSON-RPC response, or a redirect elsewhere.
    The URL must change (exit 2, as `conform` and `serve --upstream` say for the same endpoint)."""


class NodeUnreachableError(IngestError):
    """No answer at all from the node, still after the retries (a connection refused, a name
    that does not resolve, no answer in time): the URL or the network must change (exit 2)."""


def one_line(text: str) -> str:
    """The first line of `text`, trimmed (validation messages can span lines)."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first.strip()


def located(where: str, problem: BaseException | str) -> IngestError:
    """An IngestError for `problem` found at `where` (e.g. "genesis.json: records[12]")."""
    text = problem if isinstance(problem, str) else one_line(str(problem)) or type(problem).__name__
    return IngestError(f"{where}: {text}")
