"""Rebuild nearcore 2.14's runtime parameter folder from the files we have, for tools.convert_params.

    python -m tools.runtime_configs_2_14 REFERENCE_DIR OUT_DIR
    python -m tools.convert_params OUT_DIR

No stored nearcore commit of release 2.14 (stable protocol 87) could be read whole: the
reference folder holds `runtime_configs/` as nearcore had it at 8699f4bb (stable protocol 86)
and `upstream/87.yaml` as 2.14 has it (0d8e7e07). 87.yaml names parameters whose base values
live in a newer `parameters.yaml`. This tool writes the folder 2.14 would have, as far as it
shapes the views of protocol versions 53 and up:

1. `runtime_configs/` is copied (YAML files only);
2. `86.yaml` is left out: its only change, `fix_contract_loading_error`, moved to 87.yaml, and
   2.14's list of diffs has no 86 entry (a protocol-86 block gets the 85 config, which shows
   the same view);
3. `upstream/87.yaml` is added;
4. both base tables gain the parameters that 87.yaml changes and the 8699f4bb base lacks, at
   the values 87.yaml gives as `old` (the converter then checks each `old` value anyway).

Left as 8699f4bb has them: diffs 46 to 52, which 2.14 folds into its base table, so they
shape only the configs of protocol versions below 53, and the nightly diffs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Final

RUNTIME_CONFIGS: Final = "runtime_configs"
UPSTREAM_DIFF: Final = Path("upstream") / "87.yaml"
BASE_TABLES: Final = ("parameters.yaml", "parameters_testnet.yaml")
DIFFS_2_14_DROPS: Final = frozenset({"86.yaml"})

# Base values of the parameters 87.yaml changes but the 8699f4bb base table does not hold.
# Written in nearcore's YAML notation; u32::MAX means "no limit" for the two limits.
BASE_ADDITIONS: Final[dict[str, str]] = {
    "max_receipt_total_input_size": "4_294_967_295",
    "max_state_init_entries": "4_294_967_295",
    "ml_dsa_verify_host_fn": "false",
    "sha3_host_fns": "false",
    "fix_ml_dsa_cost_charging": "false",
    "universal_accounts": "false",
}


class AssemblyError(Exception):
    """The inputs are missing or the output folder is not empty; the message says which."""


def assemble(reference: Path, out: Path) -> Path:
    """Write the 2.14 folder into `out` (created, must be empty); return `out`."""
    source = reference / RUNTIME_CONFIGS
    diff_87 = reference / UPSTREAM_DIFF
    for needed in (*(source / name for name in BASE_TABLES), diff_87):
        if not needed.is_file():
            raise AssemblyError(f"{needed} not found")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise AssemblyError(f"{out} exists and is not an empty folder")
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("*.yaml")):
        if path.name not in DIFFS_2_14_DROPS:
            shutil.copyfile(path, out / path.name)
    shutil.copyfile(diff_87, out / diff_87.name)
    lines = "".join(f"{name}: {value}\n" for name, value in BASE_ADDITIONS.items())
    for name in BASE_TABLES:
        table = out / name
        text = table.read_text(encoding="utf-8")
        separator = "" if text.endswith("\n") else "\n"
        table.write_text(f"{text}{separator}\n# Added for 2.14 (tools.runtime_configs_2_14)\n{lines}", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.runtime_configs_2_14",
        description="Write nearcore 2.14's runtime parameter folder from the reference files.",
    )
    parser.add_argument("reference", type=Path, help="folder with runtime_configs/ and upstream/87.yaml")
    parser.add_argument("out", type=Path, help="empty or new output folder")
    args = parser.parse_args(argv)
    try:
        assemble(args.reference, args.out)
    except (AssemblyError, OSError) as err:
        print(f"python -m tools.runtime_configs_2_14: {err}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}; now run: python -m tools.convert_params {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
