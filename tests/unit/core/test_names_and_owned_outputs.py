"""Issue 23 at the unit level: a configured name is an identifier (schema.Name / schema.Key), and a
stage replaces only what it made (io.check_output_folder / check_output_file), outputs of earlier
versions included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idiombench.core.errors import IdiombenchError
from idiombench.core.io import check_output_file, check_output_folder, write_index
from idiombench.core.ownership import Output, files_named_by
from idiombench.core.schema import KEY_PATTERN, NAME_PATTERN, name_problem

VALID = ["oracle", "smollm2", "qwen3-8b", "llama-3-8b-instruct", "_x", "0", "a" * 64, "zero_shot", "0-shot"]
INVALID = [
    "",
    "a b",
    "a;b",
    "a/b",
    "..",
    ".hidden",
    "-rf",
    "a" * 65,
    "$(x)",
    "a'b",
    'a"b',
    "a\nb",
    "a\\b",
    "é",
    "a:b",
    "a*b",
    "{a}",
]


@pytest.mark.parametrize("name", VALID)
def test_names_the_pipeline_uses_are_valid(name: str) -> None:
    assert name_problem(name) is None and name_problem(name, key=True) is None


@pytest.mark.parametrize("name", INVALID)
def test_a_name_that_could_be_a_path_or_a_shell_word_is_not(name: str) -> None:
    assert name_problem(name) and name_problem(name, key=True)
    assert repr(name) in name_problem(name)


def test_a_key_has_no_dot_a_name_may() -> None:
    """DVC reads `models.<key>` with '.' as nesting: model keys and benchmark names have none."""
    assert name_problem("qwen2.5-7b") is None
    assert "not a valid name" in name_problem("qwen2.5-7b", key=True)
    assert NAME_PATTERN.fullmatch("a.b") and not KEY_PATTERN.fullmatch("a.b")


def test_every_registered_benchmark_and_the_default_models_are_keys(default_params) -> None:
    from idiombench.benchmarks.registry import NAMES

    assert all(name_problem(name, key=True) is None for name in [*NAMES, *default_params.models])


def test_the_paper_overlay_model_keys_are_keys() -> None:
    from idiombench.pipeline.config import load_params

    root = Path(__file__).resolve().parents[3]
    assert all(name_problem(name, key=True) is None for name in load_params(root / "overlays/paper.yaml").models)


# ---- owned outputs ---------------------------------------------------------------------------


def test_an_output_folder_is_replaced_only_when_absent_empty_or_ours(tmp_path: Path) -> None:
    output = Output(
        "stage", "things", legacy_record="record.json", legacy=files_named_by("record.json", lambda b: b["files"])
    )
    target = tmp_path / "out"
    assert check_output_folder(target, output) == target  # absent
    target.mkdir()
    assert check_output_folder(target, output) == target  # empty: nothing to lose
    (target / "thesis.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(IdiombenchError) as error:
        check_output_folder(target, output)
    assert str(error.value) == (
        f"{target} exists and was not written by idiombench (no idiombench-output.json and no "
        "record.json); it would be replaced whole: move it away (or delete it) if it is no "
        "longer needed, or write elsewhere (--out)"
    )
    (target / "record.json").write_text("{}", encoding="utf-8")  # a record by its name only
    with pytest.raises(IdiombenchError, match="its record.json is not a record of `idiombench stage`"):
        check_output_folder(target, output)
    (target / "record.json").write_text('{"files": ["thesis.txt"]}', encoding="utf-8")  # an earlier version's
    assert check_output_folder(target, output) == target


def test_an_output_folder_that_is_a_file_or_under_one_is_refused(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    with pytest.raises(IdiombenchError, match="afile is a file, not an output folder"):
        check_output_folder(tmp_path / "afile", Output("stage", "things"))
    with pytest.raises(IdiombenchError, match="afile is a file \\(expected a folder\\)"):
        check_output_folder(tmp_path / "afile" / "out", Output("stage", "things"))


def test_an_output_file_is_replaced_only_when_recognised(tmp_path: Path) -> None:
    def ours(path: Path) -> bool:
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            return False
        return isinstance(body, dict) and {"benchmark", "model", "status"} <= set(body)

    path = tmp_path / "m.json"
    assert check_output_file(path, ours, "a metrics file") == path
    path.write_text('{"benchmark": "b", "model": "m", "status": "scored"}', encoding="utf-8")
    assert check_output_file(path, ours, "a metrics file") == path
    for text in ('{"benchmark": "b"}', "[1]", "not json", ""):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(IdiombenchError, match="m.json exists and is not a metrics file"):
            check_output_file(path, ours, "a metrics file")
    with pytest.raises(IdiombenchError, match="is a folder \\(expected a metrics file\\)"):
        check_output_file(tmp_path, ours, "a metrics file")


def test_write_index_lists_what_the_stage_wrote(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.csv").write_text("", encoding="utf-8")
    (tmp_path / "sub" / "a.json").write_text("", encoding="utf-8")
    write_index(tmp_path / "index.json", "report")
    assert (tmp_path / "index.json").read_text(encoding="utf-8") == (
        '{\n  "files": [\n    "b.csv",\n    "sub/a.json"\n  ],\n  "written_by": "idiombench report"\n}\n'
    )


def test_an_earlier_versions_report_is_recognised_by_its_layout(tmp_path: Path) -> None:
    """tables/ and figures/ before index.json: beside a PDF this project wrote, holding only what
    report writes there. A user's file among them, or no PDF of ours, and they are refused."""
    from idiombench.report.pdf import TitlePage, write_pdf
    from idiombench.stages.report import check_report_outputs

    pdf = tmp_path / "all_tables.pdf"
    tables, figures = tmp_path / "tables", tmp_path / "figures"
    tables.mkdir()
    figures.mkdir()
    for suffix in ("csv", "md", "tex"):
        (tables / f"orderprobe_table3.{suffix}").write_text("", encoding="utf-8")
    (figures / "orderprobe_figure4.png").write_bytes(b"\x89PNG")
    with pytest.raises(IdiombenchError, match="tables exists and was not written by idiombench"):
        check_report_outputs(pdf)  # no PDF of ours beside them
    write_pdf(pdf, TitlePage("idiombench: results", "test", "2024-01-01", "none", [], []), [])
    assert check_report_outputs(pdf) == pdf
    (tables / "thesis.tex").write_text("", encoding="utf-8")
    with pytest.raises(IdiombenchError, match="tables exists and was not written by idiombench"):
        check_report_outputs(pdf)
    (tables / "thesis.tex").unlink()
    (figures / "photo.jpg").write_bytes(b"")
    with pytest.raises(IdiombenchError, match="figures exists and was not written by idiombench"):
        check_report_outputs(pdf)


def test_a_pdf_is_ours_by_its_author_and_its_seal(tmp_path: Path) -> None:
    from idiombench.report.pdf import TitlePage, is_report_pdf, write_pdf

    pdf = tmp_path / "report.pdf"
    write_pdf(pdf, TitlePage("idiombench: results", "test", "2024-01-01", "none", [], []), [])
    assert is_report_pdf(pdf)
    data = pdf.read_bytes()
    assert b"/Producer (ReportLab" in data
    pdf.write_bytes(data.replace(b"/Producer (ReportLab", b"/Producer (ReportLaB"))  # one byte changed: the seal breaks
    assert not is_report_pdf(pdf)
    other = tmp_path / "paper.pdf"
    other.write_bytes(b"%PDF-1.4\n<< /Author (idiombench) /Keywords (idiombench-sha256:" + b"0" * 64 + b") >>")
    assert not is_report_pdf(other)  # a look-alike seal
    other.write_bytes(b"%PDF-1.4\n<< /Author (idiombench) >>")  # the Author alone (issue 23's mark)
    assert not is_report_pdf(other)
    # an earlier version's PDF: its Author, its title and no keywords
    other.write_bytes(b"%PDF-1.4\n<< /Author (idiombench) /Keywords () /Title (idiombench: results) >>")
    assert is_report_pdf(other)
    other.write_bytes(b"%PDF-1.4\n<< /Author (someone) >>")
    assert not is_report_pdf(other) and not is_report_pdf(tmp_path / "absent.pdf")
