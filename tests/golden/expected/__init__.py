"""Generated from spec/openapi.json by `python -m tools.regenerate`. Do not edit."""
