"""Score tables before and after a change of the scoring code, compared byte for byte.

    python bench/score_identity.py --before-ref main            # score with main's code and this checkout's
    python bench/score_identity.py --before-ref main --keep out/  # keep both sides' outputs in out/
    python bench/score_identity.py --before out/before           # reuse a stored "before"
    python bench/score_identity.py --compare out/before out/after  # compare two kept folders only

Builds a realistic OrderProbe project (bench/orderprobe_corpus.py: the release built from the
mirror, IDIOMBENCH_MIRROR; --expressions per language x 24 inputs x (1 main + --samples
consistency samples) outputs of ~700 characters made of the release's glosses: 18 x 4 x 24 x 6 =
10,368 rows by default), then for each scoring mode below runs `idiombench score orderprobe` and
`idiombench aggregate orderprobe` with the code of --before-ref (its src/ from `git archive`) and
with this checkout's, and compares every file they write (results/scores/<model>/orderprobe/*,
the metrics JSON) byte for byte. Prints one line per file and a summary; exits 1 on any
difference. The neural roles are off: the lexical terms, Recovery and the aggregates are
compared (the neural terms do not go through the code this compares).

Modes: paper (the default params), paper-options (polarity halving, BLEU's brevity penalty, mean
over references) and released (`compatibility: released`).
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import orderprobe_corpus as corpus  # noqa: E402

from idiombench.core.yamlfile import load_yaml_file  # noqa: E402

ROOT = corpus.ROOT
MODES = {
    "paper": {},
    "paper-options": {
        "s_acc": {"polarity_halving": True, "reference_aggregation": "mean"},
        "s_info": {"bp_mode": "bleu", "reference_aggregation": "mean"},
    },
    "released": {"compatibility": "released"},
}


def export_source(ref: str, into: Path) -> Path:
    """src/ of a git ref, written under `into` (no checkout, no worktree)."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def run_side(project: Path, src: Path, mode: str, dest: Path) -> float:
    """score + aggregate with the code in `src`; their outputs copied to `dest`; the seconds."""
    raw = load_yaml_file(project / "params.yaml")
    raw["benchmarks"]["orderprobe"]["score"] = load_yaml_file(project / "score.base.yaml")
    corpus.merge(raw["benchmarks"]["orderprobe"]["score"], MODES[mode])
    (project / "params.yaml").write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    shutil.rmtree(project / "results" / "scores", ignore_errors=True)
    shutil.rmtree(project / "results" / "metrics", ignore_errors=True)
    started = time.perf_counter()
    for command in ("score", "aggregate"):
        done = subprocess.run(
            [sys.executable, "-m", "idiombench.cli", command, "orderprobe", "--model", corpus.MODEL],
            cwd=project,
            env=corpus.cli_env(src),
            capture_output=True,
            text=True,
        )
        if done.returncode:
            raise SystemExit(f"{command} ({src}, {mode}) failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")
    seconds = time.perf_counter() - started
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(project / "results" / "scores" / corpus.MODEL / "orderprobe", dest / "scores")
    shutil.copy2(project / "results" / "metrics" / "orderprobe" / f"{corpus.MODEL}.json", dest / "metrics.json")
    return seconds


def compare(before: Path, after: Path) -> list[str]:
    """The differing (or missing) files of two output folders, each file named on stdout."""
    names = sorted(
        {p.relative_to(before).as_posix() for p in before.rglob("*") if p.is_file()}
        | {p.relative_to(after).as_posix() for p in after.rglob("*") if p.is_file()}
    )
    differing = []
    for name in names:
        a, b = before / name, after / name
        same = a.is_file() and b.is_file() and filecmp.cmp(a, b, shallow=False)
        print(f"  {'identical' if same else 'DIFFERENT'}  {name} ({b.stat().st_size if b.is_file() else 0:,} bytes)")
        if not same:
            differing.append(name)
    return differing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    side = parser.add_mutually_exclusive_group(required=True)
    side.add_argument("--before-ref", help="git ref whose src/ scores the 'before' side (e.g. main)")
    side.add_argument("--before", type=Path, help="a stored 'before' (a --keep folder's before/)")
    side.add_argument(
        "--compare",
        type=Path,
        nargs=2,
        metavar=("BEFORE", "AFTER"),
        help="only compare two kept folders (<mode>/ in each)",
    )
    parser.add_argument("--after-ref", help="git ref whose src/ scores the 'after' side (default: this checkout)")
    parser.add_argument("--only-before", action="store_true", help="score the 'before' side only (with --keep)")
    parser.add_argument("--keep", type=Path, help="write both sides' outputs here (before/<mode>, after/<mode>)")
    parser.add_argument("--expressions", type=int, default=18, help="expressions per language")
    parser.add_argument("--samples", type=int, default=5, help="consistency samples per input")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    args = parser.parse_args()
    if args.compare:
        failed = [
            f"{mode}/{name}" for mode in args.modes for name in compare(args.compare[0] / mode, args.compare[1] / mode)
        ]
        print(
            f"summary: {len(args.modes)} modes: "
            f"{'every file byte-identical' if not failed else 'DIFFERENT: ' + ', '.join(failed)}"
        )
        sys.exit(1 if failed else 0)
    with tempfile.TemporaryDirectory(prefix="idiombench-score-identity-") as scratch:
        work = Path(scratch)
        out = args.keep or work / "out"
        project = work / "project"
        rows = corpus.write_project(project, args.expressions, args.samples, ["zero_shot"], 700)
        base = load_yaml_file(project / "params.yaml")["benchmarks"]["orderprobe"]["score"]
        (project / "score.base.yaml").write_text(yaml.safe_dump(base, sort_keys=False), encoding="utf-8")
        print(
            f"bench/score_identity.py: {rows:,} generation rows ({args.expressions} expressions per language, "
            f"{args.samples} consistency samples)",
            flush=True,
        )
        before_src = export_source(args.before_ref, work / "before-src") if args.before_ref else None
        after_src = export_source(args.after_ref, work / "after-src") if args.after_ref else ROOT / "src"
        failed = []
        for mode in args.modes:
            before = args.before / mode if args.before else out / "before" / mode
            if before_src is not None:
                seconds = run_side(project, before_src, mode, before)
                print(f"{mode}: before ({args.before_ref}) scored in {seconds:.1f} s", flush=True)
            if args.only_before:
                continue
            seconds = run_side(project, after_src, mode, out / "after" / mode)
            print(f"{mode}: after ({args.after_ref or 'this checkout'}) scored in {seconds:.1f} s", flush=True)
            differing = compare(before, out / "after" / mode)
            print(f"{mode}: {'byte-identical' if not differing else f'{len(differing)} file(s) differ'}", flush=True)
            failed += [f"{mode}/{name}" for name in differing]
        if args.only_before:
            print(f"summary: {rows:,} rows x {len(args.modes)} modes scored (before side only), in {out / 'before'}")
            return
        print(
            f"summary: {rows:,} rows x {len(args.modes)} modes: "
            f"{'every file byte-identical' if not failed else 'DIFFERENT: ' + ', '.join(failed)}"
        )
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
