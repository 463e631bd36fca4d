"""Keep, of a freshly compiled lock, only the entries another lock does not pin.

    python requirements/only_new.py requirements/main.lock COMPILED OUT HEADER

An optional lock compiled with `-c main.lock` (requirements/slurm.in) pins what it shares
with main.lock exactly as main.lock does; those entries are dropped, so the optional lock
lists only what it adds (installed with --no-deps after main.lock). A shared entry pinned
differently from the base lock is an error: the optional install would change .venv.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ENTRY = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    return {normalize(m.group(1)): m.group(2)
            for line in path.read_text(encoding="utf-8").splitlines() if (m := ENTRY.match(line))}


def only_new(base: Path, compiled: Path, out: Path, header: str) -> list[str]:
    base_pins = pins(base)
    kept: list[str] = []
    added: list[str] = []
    keep = False
    for line in compiled.read_text(encoding="utf-8").splitlines():
        match = ENTRY.match(line)
        if match:
            name, version = normalize(match.group(1)), match.group(2)
            if name in base_pins and base_pins[name] != version:
                raise SystemExit(f"{compiled}: {name}=={version} but {base} pins {base_pins[name]}")
            keep = name not in base_pins
            if keep:
                added.append(f"{name}=={version}")
        elif not line.startswith(" "):
            keep = False  # the compiler's header comments
        if keep and not line.lstrip().startswith("#"):
            kept.append(line)
    if not added:
        raise SystemExit(f"{compiled}: nothing beyond {base}")
    out.write_text(header.rstrip("\n") + "\n\n" + "\n".join(kept) + "\n", encoding="utf-8")
    return added


if __name__ == "__main__":
    print("\n".join(only_new(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])))
