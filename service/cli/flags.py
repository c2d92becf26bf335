"""Command-line flags declared from the settings fields, so defaults and help live in one place."""

from __future__ import annotations

import argparse
from typing import Any

from pydantic_settings import BaseSettings

from nearrpc.cli.settings import env_name


def add_setting(
    parser: argparse._ActionsContainer, cls: type[BaseSettings], field: str, *, help_text: str | None = None,
    flag: str | None = None, **options: Any,
) -> None:
    """`--field-name VALUE`, falling back to the field's environment variable and default.

    The value stays text (or a flag's True): the settings class validates it, so a bad value
    gets the same one-line message from a flag as from the environment.
    """
    info = cls.model_fields[field]
    text = help_text or info.description or field
    options.setdefault("default", None)
    name = flag or "--" + field.replace("_", "-")
    parser.add_argument(name, dest=field, help=f"{text} ({env_name(cls, field)}, {_default(info.default)})", **options)


def _default(value: object) -> str:
    """The default as an operator writes it: on/off, a list, or unset (not Python's None, True)."""
    if value is None:
        return "unset by default"
    if isinstance(value, bool):
        return f"default {'on' if value else 'off'}"
    if isinstance(value, tuple):
        listed = ",".join(value) or '""'
        return f"default {listed}"
    return f"default {value}"


def given(args: argparse.Namespace, *fields: str) -> dict[str, Any]:
    """The values of these settings flags, None where the flag was not given."""
    return {field: getattr(args, field) for field in fields}
