"""Issue 30, principle 1: ownership is proven by content. Every stage that takes --out meets
look-alike records (a file with the record's name, a record of another stage, a record that does
not list a file, a record whose file changed, ...) and refuses them in one line, exit 2, leaving
every file as it was; genuine outputs and outputs of the previous version (recognised by the
completion records they had, which name their files) are replaced."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from idiombench.core import ownership, paths
from idiombench.core.errors import IdiombenchError
from idiombench.core.io import aside_path, check_output_file, check_output_folder, recover_directory, staged_directory
from idiombench.core.ownership import RECORD, STAMP, Output

ROOT = Path(__file__).resolve().parents[3]
PARAMS = str(ROOT / "params.yaml")
NOT_OURS = "exists and was not written by idiombench"
USER_FILE = "thesis.tex"


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def record_of(stage: str, kind: str, files: dict[str, bytes]) -> dict:
    return {
        "format": 1,
        "tool": "idiombench",
        "stage": stage,
        "kind": kind,
        "files": {name: {"sha256": sha256(data), "size": len(data)} for name, data in files.items()},
    }


# ---- the look-alike classes, for any folder output --------------------------------------------


def folder_look_alikes(output: Output) -> dict[str, Callable[[Path], None]]:
    """Each class prepares a user's folder (holding USER_FILE) with a look-alike record."""
    legacy = output.legacy_record or "summary.json"
    mine = b"\\section{my thesis}\n"

    def user(folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / USER_FILE).write_bytes(mine)

    def put(name: str, body: object) -> Callable[[Path], None]:
        def setup(folder: Path) -> None:
            user(folder)
            (folder / name).write_text(body if isinstance(body, str) else json.dumps(body), encoding="utf-8")

        return setup

    plausible = {
        "benchmark": "orderprobe",
        "model": "oracle",
        "status": "scored",
        "settings": {},
        "tasks": {},
        "tables": {},
        "files": [],
        "written_by": f"idiombench {output.stage}",
    }

    def edited(folder: Path) -> None:  # a genuine record, then the user edits a file it lists
        user(folder)
        (folder / RECORD).write_text(json.dumps(record_of(output.stage, output.kind, {USER_FILE: mine})))
        (folder / USER_FILE).write_bytes(mine + b"edited\n")

    return {
        f"an empty {legacy}": put(legacy, {}),
        f"a {legacy} with the keys a stage writes": put(legacy, plausible),
        f"an empty {RECORD}": put(RECORD, {}),
        f"a {RECORD} that is not JSON": put(RECORD, "{not json"),
        f"a {RECORD} of another stage listing the file": put(
            RECORD, record_of("render" if output.stage != "render" else "build", "prompts", {USER_FILE: mine})
        ),
        f"a {RECORD} of this stage of another format": put(
            RECORD, {**record_of(output.stage, output.kind, {USER_FILE: mine}), "format": 2}
        ),
        f"a {RECORD} of this stage not listing the file": put(RECORD, record_of(output.stage, output.kind, {})),
        f"a {RECORD} of this stage with another hash": put(
            RECORD, record_of(output.stage, output.kind, {USER_FILE: b"other content"})
        ),
        f"a {RECORD} of this stage listing names only": put(
            RECORD, {**record_of(output.stage, output.kind, {}), "files": [USER_FILE]}
        ),
        "a genuine record whose file was edited": edited,
    }


FOLDER_STAGES = [  # (command --out <folder>, the output)
    (["acquire", "orderprobe"], paths.ACQUIRE_OUTPUT),
    (["build", "orderprobe", "--raw", "nowhere"], paths.BUILD_OUTPUT),
    (["render", "orderprobe"], paths.RENDER_OUTPUT),
    (["generate", "-m", "oracle"], paths.GENERATE_OUTPUT),
    (["score", "orderprobe", "-m", "oracle"], paths.SCORE_OUTPUT),
    (["construct", "g-idiomalign"], paths.CONSTRUCT_OUTPUT),
    (["attention", "g-idiomalign", "-m", "oracle"], paths.ATTENTION_OUTPUT),
]
FOLDER_CASES = [
    (command, output, name, setup)
    for command, output in FOLDER_STAGES
    for name, setup in folder_look_alikes(output).items()
]


def invoke(argv: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch):
    from idiombench.cli import app

    monkeypatch.chdir(cwd)
    monkeypatch.setenv("TQDM_DISABLE", "1")
    return CliRunner().invoke(app, argv)


def refused(result, *expected: str) -> None:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for text in expected:
        assert text in lines[0], lines[0]


@pytest.mark.parametrize(
    ("command", "output", "name", "setup"), FOLDER_CASES, ids=[f"{c[0]}: {n}" for c, _, n, _ in FOLDER_CASES]
)
def test_every_stage_refuses_a_look_alike_output_folder(
    command, output, name, setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim"
    setup(victim)
    before = tree(tmp_path)
    result = invoke([*command, "--params", PARAMS, "--out", str(victim)], tmp_path, monkeypatch)
    refused(result, str(victim), NOT_OURS, "it would be replaced whole")
    assert tree(tmp_path) == before


def test_the_issue_example_attention_over_a_look_alike_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`idiombench attention g-idiomalign -m oracle --out /tmp/w` with `{}` in summary.json and
    a thesis beside it: exit 0 and the thesis gone before; refused now, and a genuine output of
    the stage in an empty folder is written and replaced again."""
    victim = tmp_path / "w"
    victim.mkdir()
    (victim / "summary.json").write_text("{}\n", encoding="utf-8")
    (victim / "t.tex").write_text("thesis\n", encoding="utf-8")
    result = invoke(
        ["attention", "g-idiomalign", "-m", "oracle", "--params", PARAMS, "--out", str(victim)], tmp_path, monkeypatch
    )
    refused(
        result,
        f"{victim} exists and was not written by idiombench (no {RECORD}, and its summary.json is not "
        "a record of `idiombench attention` (attention diagnostics) that names every file in it)",
    )
    assert (victim / "t.tex").read_text(encoding="utf-8") == "thesis\n"
    mine = tmp_path / "mine"
    for _ in range(2):  # written, then replaced as the stage's own
        result = invoke(
            ["attention", "g-idiomalign", "-m", "oracle", "--params", PARAMS, "--out", str(mine)], tmp_path, monkeypatch
        )
        assert result.exit_code == 0, result.output
    assert sorted(p.name for p in mine.iterdir()) == [RECORD, "summary.json"]
    assert json.loads((mine / RECORD).read_text(encoding="utf-8")) == record_of(
        "attention", "attention diagnostics", {"summary.json": (mine / "summary.json").read_bytes()}
    )


# ---- output files -----------------------------------------------------------------------------


def stamped(body: dict, output: Output) -> str:
    return json.dumps(ownership.stamp(body, output))


METRICS = {"benchmark": "orderprobe", "model": "oracle", "status": "scored", "settings": {}}
TRACKED = {"benchmark": "orderprobe", "model": "oracle", "experiment": "orderprobe", "runs": {}}
FILE_CASES = {  # command: (the file's look-alikes by class)
    "aggregate": {
        "a JSON file with the keys of a metrics file and one of the user's": json.dumps({**METRICS, "notes": "mine"}),
        "an earlier version's metrics file of another model": json.dumps({**METRICS, "model": "echo"}),
        "a record with a forged digest": json.dumps(
            {**METRICS, STAMP: {"tool": "idiombench", "stage": "aggregate", "kind": "metrics", "sha256": "0" * 64}}
        ),
        "a record of another stage": stamped(METRICS, paths.TRACK_OUTPUT),
        "a genuine record, then edited": stamped(METRICS, paths.AGGREGATE_OUTPUT).replace('"scored"', '"mine"'),
    },
    "track": {
        "a JSON file with the keys of a tracking record and one of the user's": json.dumps({**TRACKED, "notes": "x"}),
        "a record of another stage": stamped(TRACKED, paths.AGGREGATE_OUTPUT),
        "a genuine record, then edited": stamped(TRACKED, paths.TRACK_OUTPUT).replace('"runs": {}', '"runs": []'),
    },
}
FILE_PARAMS = [(command, name, text) for command, cases in FILE_CASES.items() for name, text in cases.items()]


@pytest.mark.parametrize(("command", "name", "text"), FILE_PARAMS, ids=[f"{c}: {n}" for c, n, _ in FILE_PARAMS])
def test_json_output_files_refuse_look_alikes(
    command: str, name: str, text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "mine.json"
    victim.write_text(text, encoding="utf-8")
    result = invoke(
        [command, "orderprobe", "-m", "oracle", "--params", PARAMS, "--out", str(victim)], tmp_path, monkeypatch
    )
    refused(result, f"{victim} exists and is not a")
    assert victim.read_text(encoding="utf-8") == text


def test_a_json_output_is_ours_by_its_stamp_or_as_an_earlier_version_wrote_it(tmp_path: Path) -> None:
    from idiombench.stages.aggregate import is_metrics_file
    from idiombench.stages.track import is_tracking_record

    path = tmp_path / "m.json"
    path.write_text(stamped(METRICS, paths.AGGREGATE_OUTPUT), encoding="utf-8")
    assert is_metrics_file(path, "orderprobe", "oracle") and not is_tracking_record(path, "orderprobe", "oracle")
    assert is_metrics_file(path, "semanticqa", "echo")  # any metrics file of aggregate's (as --out anywhere)
    path.write_text(json.dumps({**METRICS, "breakdowns": {}, "provenance": {}, "model_info": {}}), encoding="utf-8")
    assert is_metrics_file(path, "orderprobe", "oracle")  # the previous version's, for this benchmark and model
    assert not is_metrics_file(path, "orderprobe", "echo")
    path.write_text(
        json.dumps({**TRACKED, "status": "scored", "counts": {}, "parent": {}, "ui": "x"}), encoding="utf-8"
    )
    assert is_tracking_record(path, "orderprobe", "oracle") and not is_metrics_file(path, "orderprobe", "oracle")
    body = ownership.stamp({"x": [1.5, None, "é"], "n": float("nan")}, paths.AGGREGATE_OUTPUT)
    path.write_text(json.dumps(body, indent=2, ensure_ascii=False), encoding="utf-8")  # any layout of the same JSON
    assert ownership.stamped_by(path, paths.AGGREGATE_OUTPUT)


def test_report_refuses_a_look_alike_pdf_and_look_alike_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pdf = tmp_path / "r.pdf"
    pdf.write_bytes(b"%PDF-1.4\n<< /Author (idiombench) /Keywords (idiombench-sha256:" + b"0" * 64 + b") >>\n%%EOF\n")
    before = tree(tmp_path)
    refused(
        invoke(["report", "--params", PARAMS, "--out", str(pdf)], tmp_path, monkeypatch),
        f"{pdf} exists and is not a report PDF of idiombench",
    )
    pdf.unlink()
    for name, setup in folder_look_alikes(Output("report", "report tables", legacy_record=paths.INDEX)).items():
        tables = tmp_path / "tables"
        setup(tables)
        before = tree(tmp_path)
        refused(
            invoke(["report", "--params", PARAMS, "--out", str(pdf)], tmp_path, monkeypatch), f"{tables} {NOT_OURS}"
        )
        assert tree(tmp_path) == before, name
        for path in sorted(tables.iterdir()):
            path.unlink()
        tables.rmdir()


def test_merge_params_replaces_a_params_file_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    overlay = tmp_path / "strict.yaml"
    overlay.write_text(f"overlay_of: {PARAMS}\nseed: 7\n", encoding="utf-8")
    thesis = tmp_path / "thesis.tex"
    thesis.write_text("mine\n", encoding="utf-8")
    refused(
        invoke(["merge-params", str(overlay), "--out", str(thesis)], tmp_path, monkeypatch),
        f"{thesis} exists and is not a params file",
    )
    assert thesis.read_text(encoding="utf-8") == "mine\n"
    merged = tmp_path / "params.yaml"
    merged.write_text(Path(PARAMS).read_text(encoding="utf-8"), encoding="utf-8")  # a valid params file
    for _ in range(2):  # a params file, then its own output
        assert invoke(["merge-params", str(overlay), "--out", str(merged)], tmp_path, monkeypatch).exit_code == 0


def test_merge_params_does_not_take_its_header_for_proof(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's file that starts with merge-params' header (typed, or an edited merge) is not
    replaced: what merge-params wrote is sealed (ownership.sealed), and an edit breaks the seal."""
    overlay = tmp_path / "strict.yaml"
    overlay.write_text(f"overlay_of: {PARAMS}\nseed: 7\n", encoding="utf-8")
    mine = tmp_path / "mine.yaml"
    mine.write_text("# GENERATED by `idiombench merge-params strict.yaml`\nnotes: mine\n", encoding="utf-8")
    refused(
        invoke(["merge-params", str(overlay), "--out", str(mine)], tmp_path, monkeypatch),
        f"{mine} exists and is not a params file",
    )
    assert mine.read_text(encoding="utf-8").endswith("notes: mine\n")
    merged = tmp_path / "merged.yaml"
    assert invoke(["merge-params", str(overlay), "--out", str(merged)], tmp_path, monkeypatch).exit_code == 0
    assert ownership.is_sealed(merged)
    merged.write_text(merged.read_text(encoding="utf-8").replace("seed: 7", "notes: mine"), encoding="utf-8")
    assert not ownership.is_sealed(merged)
    refused(
        invoke(["merge-params", str(overlay), "--out", str(merged)], tmp_path, monkeypatch),
        f"{merged} exists and is not a params file",
    )


def test_dvc_yaml_replaces_only_a_dvc_yaml_it_generated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sealed, or an earlier version's (its header, every stage an idiombench command): replaced;
    a user's file under the header, or with a stage of the user's: refused, left as it was."""
    from idiombench.pipeline.dag import GENERATED_HEADER, dvc_yaml

    current = dvc_yaml()
    body = current.rpartition(ownership.SEAL)[0]
    cases = {
        "user's file under the header": (f"{GENERATED_HEADER}\nstages: {{mine: {{cmd: make}}}}\n", False),
        "earlier version with a stage of the user's": (body + "  mine:\n    cmd: make paper\n", False),
        # the seal broken, but every stage still an idiombench command: the earlier versions' rule takes it
        "edited since it was sealed, idiombench stages only": (current.replace("--params", "-p", 1), True),
        "sealed": (current, True),
        "earlier version (header, no seal)": (body, True),
        "user's file": ("stages: {}\n", False),
    }
    for name, (text, ours) in cases.items():
        target = tmp_path / "dvc.yaml"
        target.write_text(text, encoding="utf-8")
        result = invoke(["dvc-yaml", "--out", str(target)], tmp_path, monkeypatch)
        if ours:
            assert result.exit_code == 0, (name, result.output)
            assert target.read_text(encoding="utf-8") == current, name
        else:
            refused(result, f"{target} exists and is not a dvc.yaml")
            assert target.read_text(encoding="utf-8") == text, name


# ---- the record itself --------------------------------------------------------------------------


def test_a_staged_folder_records_every_file_and_is_ours_after(tmp_path: Path) -> None:
    output = Output("stage", "things")
    target = tmp_path / "out"
    for _ in range(2):
        with staged_directory(target, output) as staging:
            (staging / "a.parquet").write_bytes(b"a")
            (staging / "sub").mkdir()
            (staging / "sub" / "b.json").write_bytes(b"{}")
    body = json.loads((target / RECORD).read_text(encoding="utf-8"))
    assert body == record_of("stage", "things", {"a.parquet": b"a", "sub/b.json": b"{}"})
    (target / ".snakemake_timestamp").write_bytes(b"")  # Snakemake's marker of a directory output
    (target / "a.parquet").unlink()  # a listed file that is gone holds nothing to lose
    assert check_output_folder(target, output) == target
    with pytest.raises(
        IdiombenchError,
        match=r"its idiombench-output.json is that of `idiombench stage` \(things\), "
        r"not of `idiombench other` \(things\)",
    ):
        check_output_folder(target, Output("other", "things"))


def test_the_folder_is_checked_again_before_the_swap(tmp_path: Path) -> None:
    """A user's file put into the folder while the stage worked is not swept away by the swap."""
    output = Output("stage", "things")
    target = tmp_path / "out"
    with staged_directory(target, output) as staging:
        (staging / "a").write_bytes(b"a")
    with pytest.raises(IdiombenchError, match="it holds mine.txt"), staged_directory(target, output) as staging:
        (staging / "a").write_bytes(b"b")
        (target / "mine.txt").write_bytes(b"mine")
    assert tree(target) == {"a": b"a", RECORD: (target / RECORD).read_bytes(), "mine.txt": b"mine"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# ---- earlier versions: the completion records they wrote name their files ----------------------


def write(folder: Path, files: dict[str, object]) -> None:
    for name, body in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body if isinstance(body, bytes) else json.dumps(body).encode())


EARLIER = {  # each stage's output as the previous version wrote it (the layouts of `make run`)
    "acquire": (
        paths.ACQUIRE_OUTPUT,
        {
            "ACQUIRED.json": {
                "benchmark": "orderprobe",
                "files": [{"file": "data/a.csv", "sha256": "x"}, {"file": "Sacc/b.py", "sha256": "y"}],
            },
            "data/a.csv": b"a",
            "Sacc/b.py": b"b",
        },
    ),
    "build": (
        paths.BUILD_OUTPUT,
        {
            "build_stats.json": {"benchmark": "orderprobe", "tasks": {"restore": 3}},
            "restore.parquet": b"p",
            "released_lexicon.json": {},
        },
    ),
    "render": (
        paths.RENDER_OUTPUT,
        {
            "render_stats.json": {
                "benchmark": "orderprobe",
                "settings": {
                    "cot": {"file": "cot.parquet", "prompts": 8},
                    "few": {"file": None, "prompts": 0, "skipped": "r"},
                },
            },
            "cot.parquet": b"p",
        },
    ),
    "generate": (
        paths.GENERATE_OUTPUT,
        {
            "generation_info.json": {"model": "oracle", "tables": {"orderprobe/cot": 8, "semanticqa/0-shot": 4}},
            "identity.json": {},
            "orderprobe/cot.parquet": b"p",
            "semanticqa/0-shot.parquet": b"q",
        },
    ),
    "score": (
        paths.SCORE_OUTPUT,
        {
            "scoring_meta.json": {
                "benchmark": "orderprobe",
                "model": "oracle",
                "status": "scored",
                "settings": {"cot": 8, "zero_shot": 24},
            },
            "cot.parquet": b"p",
            "zero_shot.parquet": b"q",
        },
    ),
    "construct": (
        paths.CONSTRUCT_OUTPUT,
        {
            "construction.json": {"benchmark": "g-idiomalign", "pairs": []},
            "alignments.parquet": b"a",
            "mnn_candidates.parquet": b"m",
            "released_status.parquet": b"r",
        },
    ),
    "attention": (
        paths.ATTENTION_OUTPUT,
        {
            "summary.json": {"benchmark": "g-idiomalign", "model": "smollm2", "status": "measured"},
            "items.parquet": b"i",
        },
    ),
    "plot-data": (
        None,
        {
            "index.json": {
                "files": ["orderprobe-recovery-by-pattern/oracle.json"],
                "written_by": "idiombench plot-data",
            },
            "orderprobe-recovery-by-pattern/oracle.json": [],
            "g-idiomalign-acc-at-t": None,
        },
    ),
}


@pytest.mark.parametrize("stage", sorted(EARLIER))
def test_an_earlier_versions_output_is_recognised_only_as_it_was_written(stage: str, tmp_path: Path) -> None:
    output, files = EARLIER[stage]
    if output is None:
        from idiombench.stages.plots import PLOTS_OUTPUT as output
    folder = tmp_path / "out"
    write(folder, {name: body for name, body in files.items() if body is not None})
    for name, body in files.items():
        if body is None:
            (folder / name).mkdir()  # an empty folder (a plot nobody has data for)
    (folder / ".snakemake_timestamp").write_bytes(b"")
    assert check_output_folder(folder, output) == folder
    (folder / USER_FILE).write_bytes(b"mine")
    with pytest.raises(IdiombenchError, match=f"{NOT_OURS} \\(no {RECORD}, and its "):
        check_output_folder(folder, output)


def test_the_earlier_report_folders_are_recognised_by_their_index(tmp_path: Path) -> None:
    from idiombench.stages.report import check_report_outputs

    pdf = tmp_path / "all_tables.pdf"
    write(tmp_path / "tables", {"index.json": {"written_by": "idiombench report", "files": ["t.csv"]}, "t.csv": b""})
    assert check_report_outputs(pdf) == pdf
    (tmp_path / "tables" / "t.md").write_bytes(b"")  # not in its index
    with pytest.raises(IdiombenchError, match=f"tables {NOT_OURS}"):
        check_report_outputs(pdf)


# ---- symbolic links -----------------------------------------------------------------------------


def test_a_symlinked_output_folder_is_refused_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the stage did its work, then failed to delete the renamed link ("Cannot call rmtree
    on a symbolic link") and every later run failed the same way on the link left aside."""
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    result = invoke(
        ["attention", "g-idiomalign", "-m", "oracle", "--params", PARAMS, "--out", str(link)], tmp_path, monkeypatch
    )
    refused(
        result,
        f"{link} is a symbolic link (to {real}); idiombench replaces an output folder whole and does "
        "not follow a link there",
    )
    assert link.is_symlink() and list(real.iterdir()) == []
    # an output folder below a linked folder is written through it (the usual way to use another disk)
    result = invoke(
        ["attention", "g-idiomalign", "-m", "oracle", "--params", PARAMS, "--out", str(link / "out")],
        tmp_path,
        monkeypatch,
    )
    assert result.exit_code == 0 and (real / "out" / RECORD).is_file(), result.output


def test_a_link_left_aside_by_an_earlier_version_is_dropped_not_followed(tmp_path: Path) -> None:
    target, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep", encoding="utf-8")
    target.mkdir()
    aside_path(target).symlink_to(elsewhere)
    recover_directory(target)
    assert not os.path.lexists(aside_path(target)) and (elsewhere / "keep.txt").is_file()


def test_an_output_file_that_is_a_link_is_replaced_never_written_through(tmp_path: Path) -> None:
    """DVC's symlink cache type: the metrics file is a link into the cache."""
    from idiombench.core.io import write_json

    cache = tmp_path / "cache"
    cache.write_text(stamped(METRICS, paths.AGGREGATE_OUTPUT), encoding="utf-8")
    link = tmp_path / "m.json"
    link.symlink_to(cache)
    before = cache.read_bytes()
    assert check_output_file(link, lambda p: ownership.stamped_by(p, paths.AGGREGATE_OUTPUT), "metrics") == link
    write_json(link, {"new": 1})
    assert not link.is_symlink() and cache.read_bytes() == before
