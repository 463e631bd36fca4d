"""replay: the SemanticQA published format matched by content, and idiombench tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gen_project import write_project
from idiombench.benchmarks.registry import backend_hooks
from idiombench.core.errors import DataError
from idiombench.core.generation_types import ItemContext, Message, Request, Sampling
from idiombench.generation.backends import make_backend
from idiombench.generation.backends.replay import NO_PREDICTION
from idiombench.generation.cache import request_key
from idiombench.generation.config import ReplayModel
from idiombench.generation.table import read_generations
from idiombench.pipeline.config import load_params
from idiombench.stages.generate import run_generate

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "replay" / "idiom_detection_0-shot_handmade.json"


def released_records() -> list[dict]:
    records = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_id = {}
    for record in records:
        record.pop("prediction")
        by_id.setdefault(record["id"], record)
    del by_id["099"]
    extra = dict(by_id["001"], id="004", context="Another context entirely.\nA: x\tB: y\tC: Proper Noun\tD: Meta Usage")
    return [*by_id.values(), extra]


def items(setting: str = "0-shot") -> list[ItemContext]:
    out = []
    for record in released_records():
        # the build keeps the released record in `fields` and may add derived fields
        fields = {**record, "example": "(derived by the build)"}
        out.append(
            ItemContext(
                "semanticqa",
                "idiom_detection",
                setting,
                record["id"],
                record["context"],
                record["target"],
                (),
                tuple(record[k] for k in "ABCD"),
                fields,
            )
        )
    return out


def requests(contexts: list[ItemContext], identity: dict) -> list[Request]:
    out = []
    for item in contexts:
        messages = (Message("user", item.input),)
        key = request_key(identity, messages, Sampling(), 0, 0)
        out.append(
            Request(key, f"semanticqa/idiom_detection/{item.setting}/{item.item_id}", messages, Sampling(), 0, 0, item)
        )
    return out


def replay(path: Path = FIXTURE, **source) -> object:
    config = ReplayModel(
        backend="replay",
        sources=[
            {
                "benchmark": "semanticqa",
                "task": "idiom_detection",
                "setting": "0-shot",
                "path": str(path),
                "format": "semanticqa",
                **source,
            }
        ],
    )
    return make_backend("published", config, benchmarks=backend_hooks())


def test_semanticqa_lines_are_matched_by_content_and_the_rest_reported():
    backend = replay()
    reqs = requests(items(), backend.identity())
    backend.prepare(reqs)
    out = {r.item.item_id: c for r, c in zip(reqs, backend.generate(reqs), strict=False)}
    # two lines with 001's content and different predictions: neither is used (never resolved by order)
    assert out["001"].failed and out["001"].error == NO_PREDICTION
    assert out["002"].text == "The answer is B"  # raw text kept: parsing is the scorer's business
    assert json.loads(out["003"].text) == {"step_1": "D", "step_2": "meta"}
    assert out["004"].failed and out["004"].error == NO_PREDICTION and out["004"].text == ""
    summary = backend.summary()
    source = summary["sources"][0]
    assert (source["lines"], source["matched_lines"], source["unmatched_lines"]) == (5, 2, 1)
    assert source["unmatched_examples"] == [5]
    assert (source["conflicting_lines"], source["conflicting_examples"]) == (2, [1, 6])
    assert source["items_with_conflicting_lines"] == 1 and source["non_string_predictions"] == 1
    assert summary["requests_matched"] == 2 and summary["requests_without_prediction"] == 2
    report = "\n".join(backend.report())
    assert "5 lines, 2 matched, 1 unmatched (lines 5)" in report
    assert "2 giving 1 items different predictions (lines 1, 6; those items have no prediction)" in report
    assert "2 without a prediction (e.g. semanticqa/idiom_detection/0-shot/001" in report


def source_file(tmp_path: Path, *records: dict) -> Path:
    path = tmp_path / "source.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_line_that_fits_several_items_answers_none(tmp_path: Path):
    """Principle 3 (issue 30): `{"prediction": "A"}` identifies nothing; `{"D": "Meta Usage", ...}`
    fits every item; neither answers any item. A whole record answers its one item."""
    first = released_records()[0]
    path = source_file(
        tmp_path, {"prediction": "A"}, {"D": "Meta Usage", "prediction": "B"}, {**first, "prediction": "C"}
    )
    backend = replay(path)
    reqs = requests(items(), backend.identity())
    backend.prepare(reqs)
    out = {r.item.item_id: c for r, c in zip(reqs, backend.generate(reqs), strict=False)}
    assert out[first["id"]].text == "C"
    assert sum(not c.failed for c in out.values()) == 1
    source = backend.summary()["sources"][0]
    assert (source["matched_lines"], source["unmatched_lines"]) == (1, 0)
    assert (source["unidentified_lines"], source["unidentified_examples"]) == (1, [1])
    assert (source["ambiguous_lines"], source["ambiguous_examples"]) == (1, [{"line": 2, "items": len(items())}])
    report = "\n".join(backend.report())
    assert f"1 ambiguous (each names several items: line 2 names {len(items())}; not used)" in report
    assert "1 without an identifying field (lines 1; not used)" in report


def test_identical_duplicate_lines_answer_their_item(tmp_path: Path):
    first = released_records()[0]
    backend = replay(source_file(tmp_path, {**first, "prediction": "B"}, {**first, "prediction": "B"}))
    reqs = requests(items(), backend.identity())
    backend.prepare(reqs)
    out = {r.item.item_id: c for r, c in zip(reqs, backend.generate(reqs), strict=False)}
    assert out[first["id"]].text == "B"
    assert backend.summary()["sources"][0]["matched_lines"] == 2


def test_a_source_that_matches_no_item_is_refused(tmp_path: Path):
    """An empty file, or one whose lines identify nothing: all-failed rows would score as a result."""
    for records in ((), ({"prediction": "A"},), ({"id": "nope", "prediction": "A"},)):
        backend = replay(source_file(tmp_path, *records))
        with pytest.raises(
            DataError,
            match=r"source.jsonl: no line of this replay source matches an item of "
            r"semanticqa/idiom_detection/0-shot",
        ):
            backend.prepare(requests(items(), backend.identity()))


def test_foreign_text_is_made_storable(tmp_path: Path):
    """A JSON escape of a lone surrogate is read (and later stored as U+FFFD by the generate stage);
    NaN is not JSON; a line over the limit is refused before it is read whole."""
    first = released_records()[0]
    path = tmp_path / "source.jsonl"
    path.write_text(json.dumps({**first, "prediction": "x"})[:-1] + ', "prediction": "B\\ud800"}\n', encoding="utf-8")
    backend = replay(path)
    reqs = requests(items(), backend.identity())
    backend.prepare(reqs)
    assert {c.text for c in backend.generate(reqs) if not c.failed} == {"B\ufffd"}
    path.write_text(json.dumps({**first, "prediction": "x"})[:-1].replace('"x"', "NaN") + "}\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"row 1: not JSON \(NaN is not a JSON value\)"):
        replay(path)


def test_size_limits_are_clear_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from idiombench.core import foreign

    first = released_records()[0]
    path = source_file(tmp_path, {**first, "prediction": "B" * 2000})
    monkeypatch.setattr(foreign, "MAX_LINE_BYTES", 1024)
    with pytest.raises(DataError, match=r"source.jsonl, row 1: a line longer than 1 KiB"):
        replay(path)
    monkeypatch.setattr(foreign, "MAX_FILE_BYTES", 1000)
    with pytest.raises(DataError, match=r"source.jsonl: predictions file of 2\.\d+ KiB is larger than the 1000 bytes"):
        replay(path)


def test_a_changed_field_does_not_match():
    backend = replay()
    changed, *others = items()[1:]
    changed = ItemContext(**{**changed.__dict__, "fields": {**changed.fields, "target": "A"}})
    reqs = requests([changed, *others], backend.identity())
    completions = backend.generate(reqs)
    assert completions[0].error == NO_PREDICTION and not completions[1].failed


def test_jobs_without_a_source_and_extra_passes_are_unsupported():
    backend = replay()
    assert backend.unsupported("semanticqa", "idiom_detection", "0-shot", "main") is None
    assert "no source for semanticqa/idiom_detection/3-shot" in backend.unsupported(
        "semanticqa", "idiom_detection", "3-shot", "main"
    )
    assert "cannot be replayed" in backend.unsupported("semanticqa", "idiom_detection", "0-shot", "consistency")


def test_identity_holds_the_source_hash(tmp_path: Path):
    copy = tmp_path / FIXTURE.name
    copy.write_bytes(FIXTURE.read_bytes())
    a = replay(copy).identity()
    copy.write_bytes(FIXTURE.read_bytes().replace(b'"prediction": "A"', b'"prediction": "C"'))
    assert replay(copy).identity() != a


def test_bad_source_lines_are_clear_errors(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": "1", "prediction": "A"}\n{"id": "2", "context": "x"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.json, row 2: no `prediction` key"):
        replay(bad)
    bad.write_text('{"id": "1", "prediction": "A"}\nnot json\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.json, row 2: not JSON"):
        replay(bad)
    with pytest.raises(DataError, match=r"missing.json: replay source of model 'published' not found"):
        replay(tmp_path / "missing.json")


def test_idiombench_tables_replay_by_prompt_id(tmp_path: Path, monkeypatch):
    """Outputs of one model re-imported as another: same texts, unmatched rows reported."""
    monkeypatch.chdir(tmp_path)
    models = {"oracle": {"backend": "oracle"}}
    write_project(tmp_path, models, consistency_n=1)
    run_generate(load_params(tmp_path / "params.yaml"), "oracle", echo=lambda _: None)
    source = tmp_path / "results/generations/oracle/orderprobe/cot.parquet"
    models["again"] = {
        "backend": "replay",
        "sources": [{"benchmark": "orderprobe", "setting": "cot", "path": str(source), "format": "idiombench"}],
    }
    write_project(tmp_path, models, consistency_n=1)
    lines: list[str] = []
    result = run_generate(load_params(tmp_path / "params.yaml"), "again", echo=lines.append)
    replayed = read_generations(tmp_path / "results/generations/again/orderprobe/cot.parquet")
    original = {(r["prompt_id"], r["pass"]): r["text"] for r in read_generations(source)}
    assert len(replayed) == 24 and all(r["pass"] == "main" for r in replayed)
    assert all(r["text"] == original[(r["prompt_id"], "main")] and r["error"] is None for r in replayed)
    # the consistency rows of the source have no request in the replay job: reported as unmatched
    assert "24 lines" not in "\n".join(lines) and "48 lines, 24 matched, 24 unmatched" in "\n".join(lines)
    skipped = {s["job"] for s in result.summary["skipped"]}
    assert skipped == {
        "orderprobe/restore/zero_shot/main",
        "orderprobe/restore/zero_shot/consistency",
        "orderprobe/restore/cot/consistency",
    }
    assert not (tmp_path / "results/generations/again/orderprobe/zero_shot.parquet").exists()
