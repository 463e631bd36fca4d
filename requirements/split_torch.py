"""Move the torch entry of a freshly compiled lock into its own lock file.

    python requirements/split_torch.py requirements/main.lock requirements/torch-cpu.lock HEADER

main.lock keeps every other pin (torch's own dependencies included), so the same main lock
serves the CPU and the CUDA build of PyTorch; the torch lock holds the build.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ENTRY = re.compile(r"^[A-Za-z0-9]")


def split(main: Path, torch_lock: Path, header: str) -> None:
    kept: list[str] = []
    torch_entry: list[str] = []
    inside = False
    for line in main.read_text(encoding="utf-8").splitlines():
        if ENTRY.match(line):
            inside = line.startswith("torch==")
        (torch_entry if inside else kept).append(line)
    if not torch_entry:
        raise SystemExit(f"{main}: no torch== entry to move")
    entry = [line for line in torch_entry if not line.lstrip().startswith("#")]
    main.write_text("\n".join(kept) + "\n", encoding="utf-8")
    torch_lock.write_text(header.rstrip("\n") + "\n\n" + "\n".join(entry) + "\n", encoding="utf-8")


if __name__ == "__main__":
    split(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
