"""One voice for every command's refusals (service/cli/refusals.py and the README's exit codes).

Each row runs the installed command as a user does, with a bad input, and holds what it says to
the shape: exactly one line on stderr, `nearrpc <command>: <what>`, nothing on stdout, no trace
of Python (a traceback, an exception class, None, nan), and the exit code of the table: 2 when
the command line or its surroundings must change, 1 when the work was tried and failed.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from nearrpc.sample import build_sample_store
from tests.support.cli import nearrpc
from tests.support.http_stub import plain_web_server
from tests.support.live_server import free_port

pytestmark = pytest.mark.live

USAGE, FAILED = 2, 1
LOG_RECORD: Final = re.compile(r"^\d{4}-\d\d-\d\dT[\d:.]+Z (DEBUG|INFO|WARNING) nearrpc\.")
QUOTED: Final = re.compile(r"'[^']*'")  # the user's own value, as typed (it may well be nan)
PYTHON_TRACES: Final = re.compile(
    r"Traceback|\bNone\b|NoneType|\w+(Error|Exception)\b(?!:)|ProgrammingError|OperationalError|\bnan\b|\binf\b"
    # a library's own voice: pydantic's, an errno, a resolver's number, a bytes repr, Python's type names
    r"|Input should|Value error|String should|\[Errno|Unknown error|\bb'|\bgot (int|str|list|dict|float|bool)\b"
    r"|Error:|\bnull:"
)

# (command line, environment, exit code, what the line must say); {tmp}, {sample}, {text},
# {empty} and {port} are filled in per test: a folder, a sample store, a text file, an empty
# file, and a loopback port nobody listens on.
ROWS: Final[list[tuple[tuple[str, ...], dict[str, str], int, str]]] = [
    (("--bogus",), {}, USAGE, r"required: COMMAND"),
    (("serve", "--port", "99999"), {}, USAGE, r"--port='99999'"),
    (("serve", "--store-timeout", "nan"), {}, USAGE, r"--store-timeout='nan': expected a finite number$"),
    (("serve",), {"NEARRPC_WORKERS": "two"}, USAGE, r"NEARRPC_WORKERS='two'"),
    (("serve", "--store", "{tmp}/missing.sqlite"), {}, USAGE, r"no store at "),
    (("serve", "--store", "{text}"), {}, USAGE, r"is not a nearrpc store"),
    (("serve", "--store", "{empty}"), {}, USAGE, r"is not a nearrpc store"),
    (("serve", "--store", "postgresql://u@127.0.0.1:{port}/db"), {}, USAGE, r"connection failed"),
    (("serve", "--store", "postgresql://u@[bad"), {}, USAGE, r"not a usable PostgreSQL URL"),
    (("serve", "--store", "{tmp}/typo/x.sqlite", "--sample"), {}, USAGE, r"there is no folder "),
    # one slash: a malformed PostgreSQL URL, never a file path to build the sample chain at (issue 43)
    (("serve", "--store", "postgresql:/127.0.0.1/db"), {}, USAGE,
     r"^postgresql:/127.0.0.1/db is a malformed PostgreSQL URL: write postgresql://user@host:port/database"),
    (("serve", "--store", "postgresql:/u:SECRETPW@127.0.0.1/db", "--sample"), {}, USAGE,
     r"^postgresql:…@127.0.0.1/db is a malformed PostgreSQL URL"),
    (("sample", "postgres:/127.0.0.1/db"), {}, USAGE, r"^postgres:/127.0.0.1/db is a malformed PostgreSQL URL"),
    (("store", "check", "--store", "postgresql:/127.0.0.1/db"), {}, USAGE, r"is a malformed PostgreSQL URL"),
    (("serve", "--upstream", "ftp://node.example/"), {}, USAGE, r"--upstream='ftp://node.example/': .*http:// or https://"),
    (("serve", "--upstream", "http://:80/"), {}, USAGE, r"--upstream=.*http:// or https:// URL"),
    (("serve",), {"NEARRPC_FORK_HEIGHT": "-1"}, USAGE, r"NEARRPC_FORK_HEIGHT='-1'"),
    (("serve", "--store", "{sample}", "--fork-height", "5"), {}, USAGE,
     r"--fork-height pins a fork's head: it needs --upstream"),
    (("serve", "--store", "{tmp}/new.sqlite", "--upstream", "http://127.0.0.1:{port}/", "--upstream-retries", "0"), {},
     USAGE,
     r"no store at .*new.sqlite, and the upstream cannot fill it: cannot reach http://127.0.0.1:\d+/ "
     r"\(genesis_config\)"),
    (("serve", "--record-mode", "all"), {}, USAGE, r"invalid choice: 'all'"),
    # refused as --fork-height and --verify-calls are without --upstream, not accepted silently (issue 43)
    (("serve", "--store", "{sample}", "--record-mode", "none"), {}, USAGE,
     r"^--record-mode none says what a fork records: it needs --upstream"),
    (("serve", "--store", "{sample}"), {"NEARRPC_RECORD_MODE": "none"}, USAGE, r"^--record-mode none .*--upstream"),
    (("sample", ""), {}, USAGE, r"STORE is empty"),
    (("sample", "{sample}"), {}, USAGE, r"exists \(use --force to replace it\)"),
    (("sample", "{tmp}/typo/x.sqlite"), {}, USAGE, r"there is no folder .*/typo$"),
    (("store",), {}, USAGE, r"required: ACTION"),
    (("store", "init", "postgresql://u@127.0.0.1:{port}/db"), {}, USAGE, r"connection failed"),
    (("store", "copy", "{tmp}/missing.sqlite", "{tmp}/copy.sqlite"), {}, USAGE, r"no store at "),
    (("store", "copy", "{sample}", "{tmp}/typo/copy.sqlite"), {}, USAGE, r"there is no folder "),
    (("store", "copy", "{sample}", "postgresql://u@127.0.0.1:{port}/db"), {}, USAGE, r"connection failed"),
    (("store", "copy", "{sample}", "{sample}"), {}, FAILED, r"is the source itself"),
    (("store", "check", "--store", "{tmp}/missing.sqlite"), {}, USAGE, r"no store at "),
    (("store", "upgrade", "--store", "{tmp}/missing.sqlite"), {}, USAGE, r"no store at "),
    (("store", "upgrade", "--store", "{text}"), {}, USAGE, r"is not a nearrpc store"),
    (("store", "upgrade", "--store", "postgresql://u@127.0.0.1:{port}/db"), {}, USAGE, r"connection failed"),
    (("store", "check", "--store", "{text}"), {}, USAGE, r"is not a nearrpc store"),
    (("store", "check", "--store", "postgresql://u@127.0.0.1:{port}/db"), {}, USAGE, r"connection failed"),
    (("store", "check", "--store", "{sample}"), {"NEARRPC_STORE_TIMEOUT": "inf"}, USAGE, r"a finite number"),
    (("import", "genesis", "{tmp}/missing.json", "--store", "{tmp}/n.sqlite"), {}, USAGE, r"no such file$"),
    (("import", "genesis", "{text}", "--store", "{tmp}/n.sqlite"), {}, FAILED, r"invalid JSON"),
    (("import", "blocks", "{tmp}/missing", "--store", "{tmp}/n.sqlite"), {}, USAGE, r"no such file or folder"),
    (("import", "blocks", "{text}", "--store", "postgresql://u@127.0.0.1:{port}/db"), {}, USAGE,
     r"connection failed"),
    (("import", "rpc", "--url", "http://127.0.0.1:{port}", "--from-height", "3", "--to-height", "2",
      "--store", "{tmp}/n.sqlite"), {}, USAGE, r"--from-height 3 is above --to-height 2"),
    (("import", "rpc", "--url", "htp://x", "--from-height", "1", "--to-height", "2"), {}, USAGE, r"--url"),
    (("import", "rpc", "--url", "http://127.0.0.1:{port}", "--from-height", "-5", "--to-height", "2"), {}, USAGE,
     r"is negative"),
    # a folder where a store should be: the same line and code from every command (issue 33)
    (("serve", "--store", "{folder}"), {}, USAGE, r"is a folder; a store is a file: name a file path$"),
    (("serve", "--store", "{folder}", "--sample"), {}, USAGE, r"is a folder; a store is a file"),
    (("serve", "--store", "{folder}", "--upstream", "http://127.0.0.1:{port}/"), {}, USAGE, r"is a folder"),
    (("sample", "{folder}"), {}, USAGE, r"is a folder; a store is a file"),
    (("sample", "{folder}", "--force"), {}, USAGE, r"is a folder; a store is a file"),
    (("store", "init", "{folder}"), {}, USAGE, r"is a folder; a store is a file"),
    (("store", "check", "--store", "{folder}"), {}, USAGE, r"is a folder; a store is a file"),
    (("store", "upgrade", "--store", "{folder}"), {}, USAGE, r"is a folder; a store is a file"),
    (("store", "copy", "{folder}", "{tmp}/copy.sqlite"), {}, USAGE, r"is a folder; a store is a file"),
    (("store", "copy", "{sample}", "{folder}"), {}, USAGE, r"is a folder; a store is a file"),
    (("import", "genesis", "{text}", "--store", "{folder}"), {}, USAGE, r"is a folder; a store is a file"),
    (("import", "blocks", "{numbers}", "--store", "{folder}"), {}, USAGE, r"is a folder; a store is a file"),
    (("import", "rpc", "--url", "http://127.0.0.1:{port}", "--from-height", "1", "--to-height", "2", "--store",
      "{folder}", "--retries", "0"), {}, USAGE, r"is a folder|cannot reach"),
    # a node that cannot be reached: the same words and code from every command that asks one
    (("import", "rpc", "--url", "http://127.0.0.1:{port}", "--from-height", "1", "--to-height", "2",
      "--store", "{tmp}/n.sqlite", "--retries", "0"), {}, USAGE,
     r"^cannot reach http://127.0.0.1:\d+ \(genesis_config\): cannot connect to 127.0.0.1:\d+: connection refused$"),
    (("import", "rpc", "--url", "http://nothing.invalid", "--from-height", "1", "--to-height", "2",
      "--store", "{tmp}/n.sqlite", "--retries", "0"), {}, USAGE,
     r"^cannot reach http://nothing.invalid .*: cannot connect"),
    (("serve", "--store", "{tmp}/new.sqlite", "--upstream", "http://nothing.invalid/", "--upstream-retries", "0"), {},
     USAGE, r"the upstream cannot fill it: cannot reach http://nothing.invalid/ \(genesis_config\): cannot connect"),
    (("conform", "http://127.0.0.1:{port}", "--retries", "0"), {}, USAGE,
     r"^cannot reach http://127.0.0.1:\d+: cannot connect: connection refused$"),
    (("conform", "http://nothing.invalid", "--retries", "0"), {}, USAGE,
     r"^cannot reach http://nothing.invalid: cannot"),
    (("conform", "{web}", "--retries", "0"), {}, USAGE, r"is not a NEAR JSON-RPC endpoint: genesis_config"),
    # the same endpoint, the same code from every command that asks it (serve --upstream's is above)
    (("import", "rpc", "--url", "{web}", "--from-height", "1", "--to-height", "2", "--store", "{tmp}/n.sqlite",
      "--retries", "0"), {}, USAGE, r"genesis_config: HTTP 501 without a JSON-RPC response$"),
    (("serve", "--store", "{tmp}/new.sqlite", "--upstream", "{web}", "--upstream-retries", "0"), {}, USAGE,
     r"the upstream cannot fill it: .*genesis_config: HTTP 501 without a JSON-RPC response$"),
    # inputs that are not what they should be, said without a library's words
    (("import", "genesis", "{badbytes}", "--store", "{tmp}/n.sqlite"), {}, FAILED,
     r"invalid JSON \(near byte \d+\): lexical error: invalid bytes in UTF8 string\."),
    (("import", "blocks", "{numbers}", "--store", "{tmp}/n.sqlite"), {}, FAILED,
     r"\[0\]: expected a JSON object, got a number$"),
    (("serve", "--port", "abc"), {}, USAGE, r"^--port='abc': expected a whole number$"),
    (("serve", "--upstream", "ftp://x"), {}, USAGE, r"^--upstream='ftp://x': expected an http:// or https:// URL"),
    (("serve",), {"NEARRPC_METRICS": "perhaps"}, USAGE, r"^NEARRPC_METRICS='perhaps': expected on or off"),
    (("import", "rpc", "--url", "http://127.0.0.1:{port}", "--from-height", "1", "--to-height", "2",
      "--concurrency", "0"), {}, USAGE, r"^--concurrency='0': must be 1 or more$"),
    (("store", "init", "{tmp}/x.sqlite", "--store-timeout", "soon"), {}, USAGE,
     r"^--store-timeout='soon': expected a number$"),
    (("conform", "http://127.0.0.1:{port}", "--max-requests", "x"), {}, USAGE,
     r"^--max-requests='x': expected a whole"),
    (("conform", "http://127.0.0.1:{port}", "--rate", "nan"), {}, USAGE, r"a finite number"),
    (("conform", "notaurl"), {}, USAGE, r"expected an http:// or https:// URL"),
    (("conform", "http://127.0.0.1:{port}", "--account", "BAD!"), {}, USAGE, r"BAD!"),
    # a flag no command knows is refused by the command it was given to, not by `nearrpc`
    (("serve", "--bogus"), {}, USAGE, r"^unrecognized arguments: --bogus \(see nearrpc serve --help\)$"),
    (("conform", "http://127.0.0.1:{port}", "--bogus"), {}, USAGE,
     r"^unrecognized arguments: --bogus \(see nearrpc conform"),
    # what was typed is echoed without the credentials a URL in it holds
    (("store", "check", "postgresql://u:SECRETPW@127.0.0.1/db"), {}, USAGE,
     r"^unrecognized arguments: postgresql://127.0.0.1/… \(see nearrpc store check --help\)$"),
    (("serve", "--upstream", "ftp://u:SECRETPW@x/?apikey=SECRETPW"), {}, USAGE, r"^--upstream='ftp://x/…': expected"),
    (("serve",), {"NEARRPC_UPSTREAM": "ftp://u:SECRETPW@x/"}, USAGE, r"^NEARRPC_UPSTREAM='ftp://x/…': expected"),
    (("serve", "--record-mode", "postgresql://u:SECRETPW@h/db"), {}, USAGE, r"invalid choice: 'postgresql://h/…'"),
    (("import", "rpc", "--url", "htp://u:SECRETPW@x/?apikey=SECRETPW", "--from-height", "1", "--to-height", "2"), {},
     USAGE, r"^argument --url: 'htp://x/…': expected"),
    # a CORS origin no browser sends (a path, no scheme) would silently allow nothing
    (("serve",), {"NEARRPC_CORS_ORIGINS": "https://app.example/"}, USAGE,
     r"^NEARRPC_CORS_ORIGINS=.*: 'https://app.example/' is not an origin: write scheme://host"),
    (("serve", "--cors-origins", "https://a.example,app.example"), {}, USAGE, r"'app.example' is not an origin"),
]  # fmt: skip


def _command_path(argv: tuple[str, ...]) -> str:
    """`serve`, `store copy`, `import rpc`: what the line must start with after `nearrpc `."""
    words = [word for word in argv if not word.startswith("-")]
    if not words:
        return ""
    if words[0] in ("store", "import") and len(words) > 1:
        return f"{words[0]} {words[1]}"
    return words[0]


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("refusals")
    build_sample_store(folder / "sample.sqlite")
    (folder / "text.sqlite").write_text("hello\n")
    (folder / "empty.sqlite").write_bytes(b"")
    (folder / "a-folder").mkdir()
    (folder / "numbers.json").write_text("[1, 2]")
    (folder / "badbytes.json").write_bytes(b'{"chain_id": "\xff\xfe"}')
    return {"tmp": str(folder), "sample": str(folder / "sample.sqlite"), "text": str(folder / "text.sqlite"),
            "empty": str(folder / "empty.sqlite"), "port": str(free_port()), "folder": str(folder / "a-folder"),
            "numbers": str(folder / "numbers.json"), "badbytes": str(folder / "badbytes.json")}  # fmt: skip


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A web server that is no NEAR node (Python's file server: POSTs answer a 501 page)."""
    with plain_web_server(tmp_path_factory.mktemp("site")) as url:
        yield url


@pytest.mark.parametrize(("argv", "env", "code", "says"), ROWS, ids=[" ".join(row[0]) or "-" for row in ROWS])
def test_every_refusal_is_one_line_in_one_voice(
    places: dict[str, str], web: str, argv: tuple[str, ...], env: dict[str, str], code: int, says: str
) -> None:
    filled = tuple(word.format(**places, web=web) for word in argv)
    if argv[0] == "serve" and "--port" not in argv:
        # serve refuses a busy port first: a server someone runs on the default 3030 must not
        # decide what these rows see
        env = {"NEARRPC_PORT": "0", **env}
    before = sorted(path.name for path in Path(places["tmp"]).iterdir())
    done = nearrpc(*filled, env=env, timeout=60, cwd=Path(places["tmp"]))
    lines = done.stderr.splitlines()
    if argv[0] == "serve":  # serve logs what it tries (e.g. building the sample chain) before it says why not
        lines = [line for line in lines if not LOG_RECORD.match(line)]
    assert len(lines) == 1 and done.stdout == "", done
    assert "SECRETPW" not in done.stderr, lines  # the rows' credentials, never shown
    command = _command_path(argv) if argv[0] != "--bogus" else ""
    prefix = f"nearrpc {command}: " if command else "nearrpc: "
    assert lines[0].startswith(prefix), (prefix, lines[0])
    assert re.search(says, lines[0].removeprefix(prefix)), lines[0]
    assert not PYTHON_TRACES.search(QUOTED.sub("", lines[0].removeprefix(prefix))), lines[0]
    assert done.returncode == code, (done.returncode, lines[0])
    # a refusal creates nothing (no store, no folder, no lock or staging file)
    assert sorted(path.name for path in Path(places["tmp"]).iterdir()) == before


@pytest.mark.parametrize("command", ["serve", "sample", "conform", "import genesis", "import blocks", "import rpc",
                                     "store init", "store copy", "store check", "store upgrade"])
def test_help_shows_defaults_as_an_operator_writes_them(command: str) -> None:
    text = " ".join(nearrpc(*command.split(), "--help", timeout=60).stdout.split())
    assert text.startswith(f"usage: nearrpc {command}")
    assert not re.search(r"default (None|True|False|\(\))", text), text


def test_the_table_covers_every_command() -> None:
    from nearrpc.cli.main import build_parser

    parser = build_parser()
    commands = {"serve", "sample", "store init", "store copy", "store check", "store upgrade", "import genesis",
                "import blocks", "import rpc", "conform"}  # fmt: skip
    def sub_commands(of: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        (action,) = [action for action in of._actions if isinstance(action, argparse._SubParsersAction)]
        return dict(action.choices)

    groups = sub_commands(parser)
    found = {name for name in groups if name not in ("store", "import")}
    found |= {f"{group} {sub}" for group in ("store", "import") for sub in sub_commands(groups[group])}
    assert found == commands
    assert {_command_path(argv) for argv, *_ in ROWS} >= commands
