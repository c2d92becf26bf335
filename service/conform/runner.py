"""One conformance run: learn from the endpoint, probe every form and bad request, report.

Order matters: `genesis_config` first (chain id, genesis height, validators), then `block` at
`final` (a height, a hash, an author), then a short walk back from the final block for a
height without a block (for the 422 rule), then everything else; before the reads of chunks,
transactions and receipts, a walk back from the final block for a chunk and a transaction.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from nearrpc.conform.answers import Answer, not_held
from nearrpc.conform.bad_requests import bad_request_probes
from nearrpc.conform.chain_reads import chain_read_probes
from nearrpc.conform.chain_walk import learn_chain_reads
from nearrpc.conform.endpoint import BudgetExhausted, Endpoint, Limits, Unreachable
from nearrpc.conform.extension import extension_probes
from nearrpc.conform.facts import EndpointFacts
from nearrpc.conform.forms import final_block_probe, parameterless_probes, reference_probes
from nearrpc.conform.probes import Probe, RequestIds, request_body
from nearrpc.conform.report import CheckResult, Report
from nearrpc.conform.spec_map import interface_version, method_schemas, undescribed_methods, use_interface
from nearrpc.conform.spec_source import Interface
from nearrpc.conform.violations import Kind
from nearrpc.urls import public_url

# how many blocks the walk back from the final block may fetch looking for a skipped height
ABSENT_HEIGHT_SEARCH = 20
_ACCOUNT_TRIES = 5  # accounts asked at most when looking for one the endpoint holds
_BLOCK_METHODS = ("block", "EXPERIMENTAL_protocol_config", "EXPERIMENTAL_view_account")


@dataclass(frozen=True, slots=True)
class Options:
    url: str
    limits: Limits
    account: str | None = None  # an account to view; default: the final block's author
    spec: Interface | None = None  # the interface to hold answers to; default: the packaged spec
    contract: tuple[str, str] | None = None  # (account, view method without arguments) to call


# what a path ending in one of these serves, where it is no JSON-RPC endpoint for every method:
# the ops routes of a nearrpc server (and nearcore's GET /status and /health)
_PAGES = {"docs": "the documentation page", "metrics": "the metrics page", "openapi.json": "the OpenAPI document",
          "openrpc.json": "the OpenRPC document"}  # fmt: skip


def path_problem(url: str) -> str | None:
    """Why the URL's path is no JSON-RPC endpoint (one line), or None: a path ending in a
    method's name (`POST /<method>` answers that method alone: /health, /block, /status) or in a
    page of the server (/docs, /metrics). Any other path may well be one (a provider's
    `/v3/<key>`), and is asked. Only the known name is shown: the rest of a path may be a key."""
    parts = urlsplit(url)
    segments = [segment for segment in parts.path.split("/") if segment]
    if not segments:
        return None
    last = segments[-1]
    shown = ("/" if len(segments) == 1 else "/…/") + last
    root = f"{public_url(urlunsplit((parts.scheme, parts.netloc, '', '', '')))}/"
    if last in method_schemas():
        what = f"POST {shown} answers the method {last} alone"
    elif last in _PAGES:
        what = f"{shown} is {_PAGES[last]}"
    else:
        return None
    instead = f"conform the endpoint at {root}" if len(segments) == 1 else f"conform the URL without {shown[2:]}"
    return f"the URL's path {shown} is not a JSON-RPC endpoint: {what}; {instead}"


class AccountRefused(Exception):
    """The account named with --account cannot be viewed at the endpoint (one line): the
    run stops before probing, as its account checks would only repeat that."""


class _Run:
    """Runs probes into the report, until the request budget is spent."""

    def __init__(self, endpoint: Endpoint, report: Report) -> None:
        self.endpoint = endpoint
        self.report = report
        self.has_path = urlsplit(endpoint.url).path not in ("", "/")
        self.answered = False  # some HTTP answer came: the endpoint is there

    def stop(self, why: str) -> None:
        self.report.stopped = self.report.stopped or why

    def probe(self, probe: Probe, why_not: str = "") -> Any:
        """Run a probe (or record why it does not run); the result it was answered, or None."""
        if self.report.stopped or why_not:
            self.report.checks.append(probe.not_run(why_not or "the request budget was spent"))
            return None
        try:
            row, answer = probe.run(self.endpoint)
            if not self.answered and answer is None:
                self._refuse_a_stranger(row)
        except BudgetExhausted as exc:
            self.stop(str(exc))
            self.report.checks.append(probe.not_run(str(exc)))
            return None
        except Unreachable as exc:
            if not self.answered:
                raise
            self.report.checks.append(probe.unanswered(str(exc)))
            return None
        self.answered = True
        self.report.checks.append(row)
        return answer.result if answer is not None and answer.error is None else None

    def _refuse_a_stranger(self, first: CheckResult) -> None:
        """The first answer decides whether the endpoint speaks JSON-RPC at all: a web server
        that is no NEAR node is one line at once, not a table of failures after minutes of
        retries (137 s against a plain HTTP server)."""
        strange = [v for v in first.violations if v.kind is Kind.NOT_JSON_RPC]
        if strange:
            # the path is shown as "/…" (it may hold a key): say that it is the path that answers so
            path = "; it is the URL's path that answers so (a node serves JSON-RPC at /)" if self.has_path else ""
            raise Unreachable(
                f"{self.report.url} is not a NEAR JSON-RPC endpoint: {first.method} ({first.request}) was answered "
                f"with {' '.join(strange[0].message.removeprefix('not a JSON-RPC answer: ').split())}{path}"
            )

    def holds(self, account: str, ids: RequestIds) -> bool:
        """Whether the endpoint answers about `account` at `final` other than "not held"."""
        error = self._view_account_error(account, ids)
        return not not_held(Answer(None, error)) if isinstance(error, dict) else error is None

    def named_account_problem(self, account: str, ids: RequestIds) -> str | None:
        """Why the account named with --account cannot be viewed (it does not exist at `final`,
        or the endpoint does not hold it), or None: every account check would fail for a reason
        that is the command line's, not the endpoint's."""
        error = self._view_account_error(account, ids)
        if not isinstance(error, dict):
            return None
        if not_held(Answer(None, error)):
            return f"the endpoint does not hold account {account} (--account); name one it holds"
        cause = error.get("cause")
        if isinstance(cause, dict) and cause.get("name") == "UNKNOWN_ACCOUNT":
            return f"account {account} (--account) does not exist at the final block; name an existing account"
        return None

    def _view_account_error(self, account: str, ids: RequestIds) -> dict[str, Any] | bool | None:
        """The JSON-RPC error of `EXPERIMENTAL_view_account` of `account` at `final`: None when
        answered with a result, False when no answer could be had (budget, no HTTP answer)."""
        body = request_body("EXPERIMENTAL_view_account", {"account_id": account, "finality": "final"}, ids.take())
        try:
            is_json, answer = self.endpoint.post(body).json()
        except BudgetExhausted as exc:
            self.stop(str(exc))
            return False
        except Unreachable:
            return False
        error = answer.get("error") if is_json and isinstance(answer, dict) else None
        return error if isinstance(error, dict) else None

    def ask(self, ids: RequestIds) -> Callable[[str, object], Any]:
        """A request's result for what the checker learns (not a check): None for an error, no
        answer or the budget spent (which stops the run)."""

        def result(method: str, params: object) -> Any:
            if self.report.stopped:
                return None
            try:
                is_json, answer = self.endpoint.post(request_body(method, params, ids.take())).json()
            except BudgetExhausted as exc:
                self.stop(str(exc))
                return None
            except Unreachable:
                return None
            return answer.get("result") if is_json and isinstance(answer, dict) else None

        return result

    def absent_height(self, facts: EndpointFacts, ids: RequestIds) -> int | None:
        """A height below the final block that has no block: below genesis if genesis is above
        0, else a skipped height found by walking back from the final block."""
        if facts.genesis_height:
            return facts.genesis_height - 1
        header = facts.final_header
        try:
            for _ in range(ABSENT_HEIGHT_SEARCH):
                height = header.get("height") if header else None
                if header is None or not isinstance(height, int) or height <= 0:
                    return None
                prev_height = header.get("prev_height")
                if isinstance(prev_height, int) and prev_height < height - 1:
                    return height - 1
                body = request_body("block", {"block_id": header.get("prev_hash")}, ids.take())
                is_json, answer = self.endpoint.post(body).json()
                result = answer.get("result") if is_json and isinstance(answer, dict) else None
                previous = result.get("header") if isinstance(result, dict) else None
                header = previous if isinstance(previous, dict) else None
                if header is not None and isinstance(header.get("height"), int) and header["height"] < height - 1:
                    return height - 1
        except BudgetExhausted as exc:
            self.stop(str(exc))
        except Unreachable:
            pass
        return None


def _account(run: _Run, options: Options, facts: EndpointFacts, ids: RequestIds) -> tuple[str | None, str]:
    """The account to view, and a line saying which and why. Named with --account: that one.
    Otherwise the final block's author, or else a genesis validator, the first the endpoint
    holds: an endpoint holding chosen accounts only (a recording) may hold none of them."""
    if options.account:
        problem = run.named_account_problem(options.account, ids)
        if problem is not None:
            raise AccountRefused(problem)
        return options.account, f"viewing account {options.account} (--account)"
    candidates = [a for a in dict.fromkeys((facts.final_author, *facts.genesis_accounts)) if a]
    for account in candidates[:_ACCOUNT_TRIES]:
        if run.report.stopped or not run.holds(account, ids):
            continue
        why = "the final block's author" if account == facts.final_author else "a genesis validator"
        return account, f"viewing account {account} ({why}; name another with --account)"
    if not candidates:
        return None, "no account to view: the endpoint names none (name one with --account)"
    return None, (f"no account to view: the endpoint holds none of {', '.join(candidates[:_ACCOUNT_TRIES])} "
                  "(the final block's author and genesis validators); name one it holds with --account")


def run_conformance(options: Options) -> Report:
    """Raises Unreachable when the endpoint gives no HTTP answer to the first request."""
    if options.spec is not None:
        use_interface(options.spec)
    problem = path_problem(options.url)
    if problem is not None:
        raise Unreachable(problem)
    report = Report(public_url(options.url), interface_version())  # the report is shown and shared: no credentials
    if options.spec is not None:
        report.spec, report.spec_notes = options.spec.name, list(options.spec.notes)
    facts, ids = EndpointFacts(contract=options.contract), RequestIds()
    started = time.monotonic()
    with Endpoint(options.url, options.limits) as endpoint:
        run = _Run(endpoint, report)
        for probe in parameterless_probes("genesis_config", facts, ids):
            run.probe(probe)
        facts.learn_genesis(facts.first_results.get("genesis_config"))
        facts.learn_final_block(run.probe(final_block_probe(facts, ids)))
        facts.account, report.account_note = _account(run, options, facts, ids)
        if options.contract is None and facts.account:
            report.call_note = (f"view calls ask get_num of {facts.account}, which may fail in its contract (name a "
                                "contract's view method with --contract ACCOUNT:METHOD)")  # fmt: skip
        elif options.contract is not None:
            report.call_note = f"view calls ask {options.contract[1]} of {options.contract[0]} (--contract)"
        if not report.stopped:
            facts.absent_height = run.absent_height(facts, ids)
        for method in _BLOCK_METHODS:
            no_account = method == "EXPERIMENTAL_view_account" and not facts.account
            for probe in reference_probes(method, facts, ids):
                run.probe(probe, "no account known (name one with --account)" if no_account else "")
        for probe in parameterless_probes("client_config", facts, ids):
            run.probe(probe)
        for probe, why_not in bad_request_probes(facts, ids):
            run.probe(probe, why_not)
        for probe, why_not in extension_probes(facts, ids):  # beyond interface 1.2.14
            run.probe(probe, why_not)
        learn_chain_reads(facts, run.ask(ids))
        for probe, why_not in chain_read_probes(facts, ids):
            run.probe(probe, why_not)
        report.requests, report.retries = endpoint.requests, endpoint.retries
    if options.spec is not None and undescribed_methods():
        report.spec_notes.append(f"{options.spec.name} does not describe {', '.join(undescribed_methods())}: "
                                 "answers held to nearcore's error rules only")  # fmt: skip
    report.seconds = time.monotonic() - started
    return report
