"""docs/METRICS.md is the metric reference the code, the report, params.yaml, the README and
the docs pages cite: every cited anchor (`docs/METRICS.md#12-recovery`, or from a page beside
it `[...](METRICS.md#12-recovery)`) and section (`docs/METRICS.md §1.2`) exists, nothing cites
a METRICS.md outside the repository, and no file of the project points at a path outside it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "METRICS.md"
CITING = [
    "src",
    "workflow",
    "overlays",
    "profiles",
    "docs",
    "tests",
    "README.md",
    "params.yaml",
    "Snakefile",
    "dvc.yaml",
]
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".json", ".smk", ".txt", ""}
ANCHOR = re.compile(r"docs/METRICS\.md#([\w-]+)")
SECTION = re.compile(r"docs/METRICS\.md §(\d+(?:\.\d+)?)")
# a Markdown link from a page in docs/ to its neighbour: the same file
NEIGHBOUR = re.compile(r"\]\(METRICS\.md(?:#([\w-]+))?\)")
BARE = re.compile(r"(?<!docs/)METRICS\.md")
HEADING = re.compile(r"^#{2,4} (.+)$", re.MULTILINE)
# the development machines' and CI's mirror beside the checkout, which users do not have
OUTSIDE = re.compile(r"\.\./shared\b|\bshared/(?:benchmarks|reference-code|papers|docs)\b")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation other than - and _ removed, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def citing_files() -> list[Path]:
    files: list[Path] = []
    for name in CITING:
        path = ROOT / name
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files += [
                p
                for p in sorted(path.rglob("*"))
                if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts
            ]
    return files


def test_the_slug_is_githubs() -> None:
    assert slug("1.2 Recovery") == "12-recovery"
    assert slug("3.4 The authors' released scorer") == "34-the-authors-released-scorer"
    assert slug("2. G-IdiomAlign") == "2-g-idiomalign"


def test_every_cited_anchor_and_section_exists() -> None:
    headings = HEADING.findall(DOC.read_text(encoding="utf-8"))
    anchors = {slug(h) for h in headings}
    sections = {m.group(1).rstrip(".") for h in headings if (m := re.match(r"(\d+(?:\.\d+)?)\.? ", h))}
    missing, cited = [], 0
    for path in citing_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            where = f"{path.relative_to(ROOT)}:{number}"
            for anchor in ANCHOR.findall(line):
                cited += 1
                if anchor not in anchors:
                    missing.append(f"{where}: #{anchor} is not a heading of docs/METRICS.md")
            for section in SECTION.findall(line):
                cited += 1
                if section not in sections:
                    missing.append(f"{where}: §{section} is not a section of docs/METRICS.md")
            if path.parent == DOC.parent and path.suffix == ".md":
                for anchor in NEIGHBOUR.findall(line):
                    cited += 1
                    if anchor and anchor not in anchors:
                        missing.append(f"{where}: #{anchor} is not a heading of docs/METRICS.md")
                line = NEIGHBOUR.sub("", line)
            if path != DOC and BARE.search(line) and "test_metrics_doc.py" not in path.name:
                missing.append(f"{where}: cites METRICS.md without docs/ (not a file of this repository)")
    assert not missing, "\n".join(missing)
    assert cited >= 25  # the code, the report, params.yaml, profiles and the docs pages cite it


def test_nothing_points_outside_the_repository() -> None:
    """No file of the project (code, params, dvc.lock, README, docs, bench scripts, tests) names
    the mirror beside the development checkout: tests get it from IDIOMBENCH_MIRROR, which
    only CI's entry point (.ci/run) sets."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    found = []
    for name in sorted(filter(None, listed.decode("utf-8").split("\0"))):
        path = ROOT / name
        if name.startswith(".ci/") or name == "tests/unit/test_metrics_doc.py" or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
            if OUTSIDE.search(line):
                found.append(f"{name}:{number}: {line.strip()[:160]}")
    assert not found, "\n".join(found)
