"""`nearrpc conform URL`: check a NEAR JSON-RPC endpoint against the interface description.

Exit status: 0 when every check passed, 1 on any violation, 2 when the URL or a setting is
refused, the endpoint does not answer at all or answers no JSON-RPC, or the request budget ran
out before every check ran and none of those that ran found a violation (too few requests to
judge the endpoint: the report is printed, and one line says so), 130 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nearrpc.cli.flags import add_setting, given
from nearrpc.cli.settings import ConformSettings, load_settings
from nearrpc.nearcore.account_id import account_id_problem
from nearrpc.urls import public_url, scrub_urls

_FLAGS = ("max_requests", "rate", "timeout", "retries")


def _shown(url: str) -> str:
    """The URL as a refusal shows it: without what may be a credential (a user, a query)."""
    return public_url(url) if "@" in url or "?" in url else url


def _run(args: argparse.Namespace) -> int:
    import httpx

    from nearrpc.conform import AccountRefused, Limits, Options, Unreachable, render, run_conformance

    settings = load_settings(ConformSettings, given(args, *_FLAGS))
    try:
        url = httpx.URL(args.url)
    except httpx.InvalidURL as exc:
        print(f"nearrpc conform: {_shown(args.url)!r}: {scrub_urls(str(exc))}", file=sys.stderr)
        return 2
    if url.scheme not in ("http", "https") or not url.host:
        print(f"nearrpc conform: {_shown(args.url)!r}: expected an http:// or https:// URL", file=sys.stderr)
        return 2
    problem = None if args.account is None else account_id_problem(args.account)
    if problem is not None:
        print(f"nearrpc conform: --account {args.account!r} is not a NEAR account id: {problem}", file=sys.stderr)
        return 2
    contract = None
    if args.contract is not None:
        account, _, method = args.contract.partition(":")
        problem = account_id_problem(account) or ("" if method else "no method after the colon")
        if problem:
            print(f"nearrpc conform: --contract {args.contract!r}: expected ACCOUNT:METHOD: {problem}", file=sys.stderr)
            return 2
        contract = (account, method)
    spec = None
    if args.spec is not None:
        from nearrpc.conform.spec_source import SpecFileError, read_interface

        try:
            spec = read_interface(args.spec)
        except SpecFileError as exc:
            print(f"nearrpc conform: --spec: {exc}", file=sys.stderr)
            return 2
    limits = Limits(settings.max_requests, settings.rate, settings.timeout, settings.retries)
    try:
        report = run_conformance(Options(args.url, limits, args.account, spec, contract))
    except (Unreachable, AccountRefused) as exc:
        print(f"nearrpc conform: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("nearrpc conform: interrupted", file=sys.stderr)
        return 130
    if args.json:
        json.dump(report.as_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        render(report, sys.stdout)
    if report.stopped and report.violation_count == 0:
        # "0 violations" with exit 1 read as a failure of the endpoint; it is the budget's
        run = sum(check.outcome != "not run" for check in report.checks)
        print(f"nearrpc conform: too few requests to check the endpoint: --max-requests {settings.max_requests} "
              f"ran {run} of {len(report.checks)} checks (none found a violation); raise it, the default is "
              f"{ConformSettings.model_fields['max_requests'].default}", file=sys.stderr)
        return 2
    return 0 if report.passed else 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser(
        "conform",
        help="check a NEAR JSON-RPC endpoint against the interface description",
        description="Send every request form of the five methods (and the main forms of the methods "
        "beyond them) and a fixed set of bad requests to URL, "
        "and check every answer against spec/openapi.json and nearcore's error rules. "
        "Exits 1 on any violation, 2 when the endpoint cannot be checked (no answer, no JSON-RPC, or a "
        "--max-requests too small to run every check). Options fall back to NEARRPC_CONFORM_* variables.",
    )
    run.add_argument("url", metavar="URL", help="the endpoint, e.g. http://127.0.0.1:3030")
    run.add_argument(
        "--account",
        help="an existing account the endpoint holds, to view (default: the final block's author, else a genesis "
        "validator the endpoint holds; the report names the one viewed)",
    )
    run.add_argument(
        "--contract", metavar="ACCOUNT:METHOD",
        help="a contract the endpoint holds and a view method of it taking no arguments, called in every form and "
        "held to answering a result (on the sample chain: counter.localnet:get_num, token.localnet:ft_total_supply, "
        "token.localnet:ft_metadata)",
    )  # fmt: skip
    run.add_argument("--json", action="store_true", help="print the report as JSON (for CI)")
    run.add_argument(
        "--spec", type=Path, metavar="FILE",
        help="hold answers to this interface description instead: an OpenAPI document like spec/openapi.json, "
        "or an OpenRPC one (nearcore's openrpc.json, spec/openrpc.json)",
    )  # fmt: skip
    add_setting(run, ConformSettings, "max_requests")
    add_setting(run, ConformSettings, "rate")
    add_setting(run, ConformSettings, "timeout")
    add_setting(run, ConformSettings, "retries")
    run.set_defaults(func=_run)
