"""The option-order pass's pieces (docs/METRICS.md#7-option-order-robustness): option rotations,
the rotated item a prompt shows, the pass's configuration and its metrics against hand counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from idiombench import statistics as st
from idiombench.core.generation_types import item_context
from idiombench.core.items import Item, released_position, rotate, rotated_answer, shown_position
from idiombench.generation.config import GenerateConfig
from idiombench.metrics import Scope, evaluate
from idiombench.scoring import option_order


def summarise(frame: pd.DataFrame) -> tuple[dict[str, float | None], dict[str, object]]:
    """The pass's metrics (its specs' values) and counts over its rows."""
    values = {
        spec.key.removeprefix(option_order.PREFIX): evaluate.value_of(spec, frame) for spec in option_order.specs()
    }
    return values, option_order.counts(frame)


def estimands(frame: pd.DataFrame, scope: str) -> dict[str, st.Estimand]:
    """The pass's cells of one scope -> their estimands (the specs' statistics, resampled)."""
    found = evaluate.estimands({"m": [Scope(scope, scope, frame, (), specs=option_order.specs())]})["m"]
    return {name: estimand for name, (_, estimand) in found.items() if estimand is not None}


def test_rotation_r_shows_at_position_i_the_option_released_at_i_plus_r() -> None:
    options = ("w", "x", "y", "z")
    assert rotate(options, 0) == options and rotate(options, 1) == ("x", "y", "z", "w")
    for r in range(4):
        shown = rotate(options, r)
        for i in range(4):
            assert shown[i] == options[released_position(i, r, 4)]
            assert shown[shown_position(released_position(i, r, 4), r, 4)] == shown[i]
    # a gold letter moves with its option; a gold text (ChID) or a label does not
    assert [rotated_answer("B", 4, r) for r in range(4)] == ["B", "A", "D", "C"]
    assert (
        rotated_answer("x", 4, 1) == "x" and rotated_answer("AB", 4, 1) == "AB" and rotated_answer(None, 4, 1) is None
    )


def test_the_rotated_item_is_what_the_prompt_shows() -> None:
    item = Item("q", "g-idiomalign", "mcq", "en", "src", choices=("w", "x", "y", "z"), answer="B")
    shown = item_context(item, "mcq", 3)
    assert shown.choices == ("z", "w", "x", "y") and shown.answer == "C" and shown.rotation == 3
    assert shown.choices["ABCD".index(shown.answer)] == "x"  # the gold option, where rotation 3 shows it


def test_one_option_order_pass_never_the_main_one() -> None:
    config = GenerateConfig.model_validate(
        {"extra": {"order": {"rotate_options": True, "settings": ["mcq"]}, "samples": {"n": 3}}}
    )
    assert config.option_order_pass() == "order" and config.rotates("mcq") and not config.rotates("no_gloss")
    assert not GenerateConfig().rotates("mcq")
    with pytest.raises(ValidationError, match="main pass shows the options as released"):
        GenerateConfig.model_validate({"main": {"rotate_options": True}})
    with pytest.raises(ValidationError, match="one option-order pass is enough"):
        GenerateConfig.model_validate({"extra": {"a": {"rotate_options": True}, "b": {"rotate_options": True}}})


def rows(picks: dict[str, list[int | None]], gold: dict[str, int], n: int = 4) -> pd.DataFrame:
    """The pass's rows from the RELEASED option each item's answer named under rotations 0..n-1."""
    out = []
    for item, chosen in picks.items():
        for rotation, released in enumerate(chosen):
            out.append(
                {
                    "item_id": item,
                    "pass": "order",
                    "rotation": rotation,
                    "n_options": n,
                    "position": None if released is None else shown_position(released, rotation, n),
                    "correct": float(released == gold[item]),
                }
            )
    return pd.DataFrame(out)


def test_metrics_by_hand() -> None:
    # a: right under every rotation; b: right twice; c: always the first shown position; d: one answer unread
    frame = rows(
        {"a": [1, 1, 1, 1], "b": [2, 2, 0, 0], "c": [0, 1, 2, 3], "d": [3, None, 3, 3]},
        {"a": 1, "b": 2, "c": 0, "d": 3},
    )
    metrics, counts = summarise(frame)
    assert metrics["accuracy_as_released"] == 100.0  # every item right on rotation 0
    assert metrics["rotation_accuracy"] == pytest.approx(100 * (4 + 2 + 1 + 3) / 16)
    assert metrics["circular_accuracy"] == 25.0  # only a
    picks = counts["picks_by_position"]
    assert sum(picks.values()) == 15 and counts["rows_without_an_option"] == 1
    assert metrics["position_bias"] == pytest.approx(max(picks.values()) / 15) and picks["A"] >= 4
    assert counts["items_right_under_every_rotation"] == 1 and counts["items_missing_a_rotation"] == 0
    missing = summarise(frame[~((frame["item_id"] == "a") & (frame["rotation"] == 3))])
    assert missing[0]["circular_accuracy"] == 0.0 and missing[1]["items_missing_a_rotation"] == 1


def test_a_fixed_position_picker_and_the_estimands() -> None:
    # always the first shown position: under rotation r that is the option released at r
    fixed = rows(
        {f"i{k}": [released_position(0, r, 4) for r in range(4)] for k in range(12)},
        {f"i{k}": k % 4 for k in range(12)},
    )
    metrics, counts = summarise(fixed)
    assert metrics["position_bias"] == 1.0 and metrics["circular_accuracy"] == 0.0
    assert metrics["rotation_accuracy"] == 25.0 and counts["most_picked_position"] == "A"
    found = estimands(fixed, "mcq")
    assert set(found) == {f"mcq/option_order.{m}" for m in option_order.METRICS}
    for name, estimand in found.items():
        value = metrics[name.split("option_order.")[1]]
        assert estimand.unit == "item" and estimand.n == 12
        assert estimand.value() * (1 if name.endswith("position_bias") else 100) == pytest.approx(value), name
    bias = found["mcq/option_order.position_bias"]
    assert not bias.higher_is_better
    assert np.allclose(st.replicates([bias], 50, 0), 1.0)  # every resample of a fixed picker: 1.0


def test_no_option_order_rows() -> None:
    frame = pd.DataFrame({"item_id": ["a"], "pass": ["main"], "rotation": [0]})
    assert option_order.pass_rows(frame) is None
    both = pd.DataFrame({"item_id": ["a"] * 3, "pass": ["main", "order", "order"], "rotation": [0, 0, 1]})
    assert list(option_order.pass_rows(both)["pass"]) == ["order", "order"]
