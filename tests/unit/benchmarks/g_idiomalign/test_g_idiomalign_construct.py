"""G-IdiomAlign construction pipeline: modal-bin cutoff, neighbour search and MNN by hand,
and a small end-to-end rebuild with a hand-made embedder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from g_idiomalign_fixtures import ANGLES, ROOT, HandEmbedder, items, params_for
from idiombench.benchmarks.g_idiomalign.construct import (
    modal_bin_cutoff,
    mutual_nearest,
    run_construction,
    top_k_neighbours,
)
from idiombench.core.errors import IdiombenchError

# --------------------------------------------------------------------------- modal-bin cutoff


def test_modal_bin_by_hand():
    # range [0, 10]: edges 0, 1, ..., 10 (exact in binary); a score on an edge opens the bin above it
    scores = [0, 1, 1.5, 5, 5.5, 5.8, 9, 10]
    binning = modal_bin_cutoff(scores, 10)
    assert binning.edges.tolist() == [float(e) for e in range(11)]
    assert binning.bin_of.tolist() == [0, 1, 1, 5, 5, 5, 9, 9]  # the maximum falls into the last bin
    assert binning.counts.tolist() == [1, 2, 0, 0, 0, 3, 0, 0, 0, 2]
    assert (binning.modal_bin, binning.cutoff) == (5, 5.0)
    assert binning.keep.tolist() == [False, False, False, True, True, True, True, True]


def test_modal_bin_ties_take_the_first_maximiser():
    binning = modal_bin_cutoff([0, 1, 1.5, 5, 5.5, 10], 10)
    assert binning.counts.tolist() == [1, 2, 0, 0, 0, 2, 0, 0, 0, 1]
    assert (binning.modal_bin, binning.cutoff) == (1, 1.0)
    assert binning.keep.tolist() == [False, True, True, True, True, True]


def test_modal_bin_all_scores_equal_keeps_everything():
    binning = modal_bin_cutoff([0.7, 0.7, 0.7], 10)
    assert binning.counts.tolist() == [3] + [0] * 9
    assert (binning.modal_bin, binning.cutoff) == (0, 0.7)
    assert binning.keep.tolist() == [True, True, True]
    single = modal_bin_cutoff([0.42], 10)
    assert (single.modal_bin, single.cutoff, single.keep.tolist()) == (0, 0.42, [True])


def test_modal_bin_empty_and_bad_input():
    empty = modal_bin_cutoff([], 10)
    assert (empty.modal_bin, empty.cutoff, empty.keep.tolist()) == (None, None, [])
    with pytest.raises(ValueError, match="must be finite"):
        modal_bin_cutoff([0.5, float("nan")], 10)
    with pytest.raises(ValueError, match="bins must be >= 1"):
        modal_bin_cutoff([0.5], 0)


def test_modal_bin_counts_agree_with_numpy_histogram():
    scores = np.random.default_rng(0).uniform(0.3, 1.0, 500)
    counts, _ = np.histogram(scores, bins=10, range=(scores.min(), scores.max()))
    assert modal_bin_cutoff(scores, 10).counts.tolist() == counts.tolist()


# --------------------------------------------------------------------------- neighbours and MNN

# S[i, j] = similarity of A's entry i and B's entry j. With a = identity, S = a @ b.T = b.T.
S = np.array(
    [
        [0.90, 0.80, 0.10],
        [0.85, 0.20, 0.30],
        [0.10, 0.70, 0.60],
    ]
)


@pytest.mark.parametrize("batch_size", [1, 2, 3, 100])
def test_top_k_both_ways_on_a_tiny_matrix(batch_size: int):
    found = top_k_neighbours(np.eye(3), S.T.copy(), k=2, batch_size=batch_size)
    assert found.ab_index.tolist() == [[0, 1], [0, 2], [1, 2]]
    assert found.ab_score.tolist() == [[0.90, 0.80], [0.85, 0.30], [0.70, 0.60]]
    assert found.ba_index.tolist() == [[0, 1], [0, 2], [2, 1]]
    assert found.ba_score.tolist() == [[0.90, 0.85], [0.80, 0.70], [0.60, 0.30]]
    i, j, score = mutual_nearest(found)
    # A0 <-> B0 is mutual; A1's best is B0 (whose best is A0); A2's best is B1 (whose best is A0)
    assert (i.tolist(), j.tolist(), score.tolist()) == ([0], [0], [0.90])


def test_ties_prefer_the_lower_index_in_every_batch_layout():
    tied = np.array([[0.5, 0.5], [0.5, 0.5], [0.2, 0.9]])
    for batch_size in (1, 2, 3):
        found = top_k_neighbours(np.eye(3), tied.T.copy(), k=3, batch_size=batch_size)
        assert found.ab_index[:2].tolist() == [[0, 1], [0, 1]]
        assert found.ba_index.tolist() == [[0, 1, 2], [2, 0, 1]]
        assert mutual_nearest(found)[0].tolist() == [0, 2]


def test_neighbour_search_matches_brute_force():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(37, 8)), rng.normal(size=(23, 8))
    found = top_k_neighbours(a, b, k=5, batch_size=10)
    full = a @ b.T
    assert found.ab_index.tolist() == np.argsort(-full, axis=1, kind="stable")[:, :5].tolist()
    assert found.ba_index.tolist() == np.argsort(-full.T, axis=1, kind="stable")[:, :5].tolist()
    i, j, _ = mutual_nearest(found)
    expected = [(x, int(full[x].argmax())) for x in range(37) if int(full[:, full[x].argmax()].argmax()) == x]
    assert list(zip(i.tolist(), j.tolist(), strict=False)) == expected


def test_k_larger_than_the_pool():
    found = top_k_neighbours(np.eye(2), np.eye(2), k=10)
    assert found.ab_index.shape == (2, 2) and found.ba_index.shape == (2, 2)


# --------------------------------------------------------------------------- end to end


def test_rebuild_by_hand(tmp_path: Path):
    embedder = HandEmbedder(ANGLES)
    body = run_construction(params_for(["English_French"], tmp_path, k=2), items(), tmp_path / "out", scorers=embedder)
    assert embedder.calls == 1
    (summary,) = body["pairs"]
    # pools: 4 entries a side with a gloss (row 4 has none); MNN: rows 0-2 and (hit the sack, avoir un chat),
    # since sleep (150 deg) and chat (170 deg) are each other's best remaining match
    assert (summary["pool_source"], summary["pool_target"]) == (4, 4)
    assert summary["left_out_empty_gloss"] == {"source": 1, "target": 1}
    assert (summary["released_rows"], summary["released_pairs"], summary["mnn"]) == (5, 5, 4)
    scores = sorted(np.cos(np.deg2rad([1, 1, 1, 20])))
    # bins over [cos 20, cos 1]: three scores in the top bin, one in the lowest: the modal bin is the last
    assert summary["binning"]["counts"] == [1] + [0] * 8 + [3]
    assert summary["modal_bin"] == 9 and summary["cutoff"] == pytest.approx(scores[0] + 0.9 * (scores[-1] - scores[0]))
    assert (summary["rebuilt"], summary["overlap"]) == (3, 3)
    assert summary["precision"] == 1.0 and summary["recall"] == pytest.approx(3 / 5)
    assert summary["mnn_recall"] == pytest.approx(4 / 5)
    out = tmp_path / "out"
    rebuilt = pq.read_table(out / "alignments.parquet").to_pylist()
    assert [r["source_idiom"] for r in rebuilt] == ["over the moon", "raining cats", "see red"]
    assert all(r["released"] and r["kept"] for r in rebuilt)
    status = pq.read_table(out / "released_status.parquet").to_pylist()
    assert [s["rank_target_among_source_top_k"] for s in status] == [1, 1, 1, 1, None]
    assert [s["rebuilt"] for s in status] == [True, True, True, False, False]
    assert json.loads((out / "construction.json").read_text(encoding="utf-8"))["totals"]["recall"] == pytest.approx(
        3 / 5
    )
    assert "only the aligned pairs" in body["note"]


def test_rebuild_is_byte_identical_on_rerun(tmp_path: Path):
    for name in ("one", "two"):
        run_construction(params_for(None, tmp_path), items(), tmp_path / name, scorers=HandEmbedder(ANGLES))
    for file in ("alignments.parquet", "mnn_candidates.parquet", "released_status.parquet", "construction.json"):
        assert (tmp_path / "one" / file).read_bytes() == (tmp_path / "two" / file).read_bytes()
    # to 12 places: a different CPU's BLAS, off in the 17th digit, writes the same bytes
    scores = pq.read_table(tmp_path / "one" / "mnn_candidates.parquet").column("score").to_pylist()
    assert scores and all(score == round(score, 12) for score in scores)
    assert any(score != round(score, 11) for score in scores)  # nothing coarser than that


def test_all_equal_pair_keeps_its_single_mnn_pair(tmp_path: Path):
    body = run_construction(
        params_for(["English_German"], tmp_path), items(), tmp_path / "out", scorers=HandEmbedder(ANGLES)
    )
    (summary,) = body["pairs"]
    assert (summary["mnn"], summary["modal_bin"], summary["cutoff"], summary["rebuilt"]) == (
        1,
        0,
        pytest.approx(1.0),
        1,
    )


def test_language_pool_takes_entries_from_every_pair_file(tmp_path: Path):
    body = run_construction(
        params_for(["English_French"], tmp_path, pool="language"),
        items(),
        tmp_path / "out",
        scorers=HandEmbedder(ANGLES),
    )
    (summary,) = body["pairs"]
    assert (summary["pool_source"], summary["pool_target"]) == (5, 4)  # + Adam's ale from English_German
    assert body["pool"] == "language"


def test_construction_errors_are_clear(tmp_path: Path):
    with pytest.raises(
        IdiombenchError,
        match=r"construct.pairs: unknown pair\(s\) Klingon_English \(built pairs: English_French, English_German\)",
    ):
        run_construction(
            params_for(["Klingon_English"], tmp_path), items(), tmp_path / "out", scorers=HandEmbedder(ANGLES)
        )
    with pytest.raises(IdiombenchError, match="has no model in this profile"):
        run_construction(
            params_for(None, tmp_path), items(), tmp_path / "out", scorers=HandEmbedder(ANGLES, computed=False)
        )
    with pytest.raises(IdiombenchError, match="must be an embedder role"):
        run_construction(
            params_for(None, tmp_path), items(), tmp_path / "out", scorers=HandEmbedder(ANGLES, kind="nli")
        )
    (tmp_path / "nowhere").mkdir()
    with pytest.raises(
        IdiombenchError, match=r"nowhere/aligned_pairs.parquet is missing: run `idiombench build g-idiomalign` first"
    ):
        run_construction(
            params_for(None, tmp_path), tmp_path / "nowhere", tmp_path / "out", scorers=HandEmbedder(ANGLES)
        )
    assert not (tmp_path / "out").exists()  # nothing partial


# --------------------------------------------------------------------------- the stage's command


def test_construct_command_refuses_a_benchmark_without_a_construction_pipeline(tmp_path: Path):
    from typer.testing import CliRunner

    from idiombench.cli import app

    result = CliRunner().invoke(app, ["construct", "orderprobe", "--params", str(ROOT / "params.yaml")])
    assert result.exit_code == 2
    assert "benchmark orderprobe has no construction pipeline (benchmarks with one: g-idiomalign)" in " ".join(
        result.output.split()
    )


def test_construct_command_records_a_disabled_benchmark_as_skipped(tmp_path: Path):
    import yaml
    from typer.testing import CliRunner

    from idiombench.cli import app

    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["benchmarks"]["g-idiomalign"]["enabled"] = False
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "construction"
    result = CliRunner().invoke(app, ["construct", "g-idiomalign", "--params", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "construction.json").read_text(encoding="utf-8")) == {
        "benchmark": "g-idiomalign",
        "status": "skipped",
        "reason": "benchmarks.g-idiomalign.enabled is false",
    }
