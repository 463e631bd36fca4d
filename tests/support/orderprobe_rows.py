"""Hand-made OrderProbe score rows of five expressions (zh-CN, zh-TW, ja, ko), shared by the
aggregation and report tests."""

from __future__ import annotations

import pandas as pd

from idiombench.benchmarks.orderprobe.aggregate import aggregate_scores
from idiombench.benchmarks.orderprobe.config import OrderProbeScore
from idiombench.benchmarks.orderprobe.results import OrderProbeBody
from idiombench.benchmarks.orderprobe.score import COLUMN_TYPES, COLUMNS
from idiombench.metrics.body import RoleRecord
from idiombench.scoring.roles import all_role_infos
from orderprobe_fixtures import index, items_for, scoring_config

X1 = items_for("zh-CN", 1, "不耻下问", ["谦虚好学"], "Verb-Object")
X2 = items_for("zh-CN", 2, "一鸣惊人", ["比喻平时没有表现"], "Subject-Predicate")  # the only member of its category
X3 = items_for("ko", 3, "작심삼일", ["결심이 사흘을 가지 못함"], "Parallel (Coordinate)")
X4 = items_for("ja", 4, "一刻一刻", [], "Modifier-Head")  # no references; CDAB is an identity input
X5 = items_for("zh-TW", 5, "畫蛇添足", ["多此一舉"], "Verb-Object")  # its canonical input scores 0
ITEMS = index(X1, X2, X3, X4, X5)


def pick(items, pattern):
    return next(i for i in items if i.meta["pattern"] == pattern)


def score_row(
    item,
    s_acc: float,
    *,
    setting="zero_shot",
    pass_name="main",
    sample=0,
    recovered=False,
    strict=False,
    format_ok=True,
    s_logic=0.5,
) -> dict:
    meta = item.meta
    return {
        "prompt_id": f"orderprobe/restore/{setting}/{item.item_id}",
        "task": "restore",
        "setting": setting,
        "item_id": item.item_id,
        "pass": pass_name,
        "sample_index": sample,
        "language": item.language,
        "expression_id": meta["expression_id"],
        "expression": meta["expression"],
        "input": item.input,
        "pattern": meta["pattern"],
        "category": meta["category"],
        "is_canonical": meta["is_canonical"],
        "is_identity": meta["is_identity"],
        "n_references": len(item.references),
        "prompt_hash": "0" * 16,
        "template_id": f"orderprobe/{setting}/{item.language}",
        "template_hash": "ab" * 32,
        "finish_reason": "stop",
        "generation_error": None,
        "explanation": "x",
        "format_ok": format_ok,
        "parse_flags": "",
        "recovered": recovered,
        "recovered_strict": strict,
        "ce": s_acc,
        "bert": None,
        "sts": s_acc,
        "lex": s_acc,
        "f_beta": s_acc,
        "f_beta_halved": False,
        "s_acc": s_acc,
        "s_logic": s_logic if pass_name == "main" else None,
        "s_info": s_acc / 2,
        "score_flags": "" if item.references else "no_references",
    }


def table(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS).astype(COLUMN_TYPES)


def zero_shot_rows() -> list[dict]:
    rows = [
        # X1: S_orig 0.8; perturbed 0.4, 0.8 -> MDR 0.25, MDA 0.5, S_seq 0.625; mean 0.6
        score_row(pick(X1, "ABCD"), 0.8, recovered=True, strict=True),
        score_row(pick(X1, "ABDC"), 0.4, recovered=True),
        score_row(pick(X1, "ACBD"), 0.8, format_ok=False),
        # X2: S_orig 0.5; perturbed 0.5, 0.75 -> MDR -0.25, MDA 0, S_seq 1.125 (clipped to 1); mean 0.625
        score_row(pick(X2, "ABCD"), 0.5, recovered=True),
        score_row(pick(X2, "ABDC"), 0.5),
        score_row(pick(X2, "ACBD"), 0.75),
        # X3: S_orig 1.0; perturbed 1.0, 0.5 -> MDR 0.25, MDA 0.5, S_seq 0.625; mean 0.75
        score_row(pick(X3, "ABCD"), 1.0, recovered=True),
        score_row(pick(X3, "ABDC"), 1.0, recovered=True, strict=True),
        score_row(pick(X3, "ACBD"), 0.5, recovered=True),
        # X4 (ja, no references): CDAB equals the canonical form and is echoed back
        score_row(pick(X4, "ABCD"), 0.0, recovered=True),
        score_row(pick(X4, "ABDC"), 0.0),
        score_row(pick(X4, "CDAB"), 0.0, recovered=True),
        # X5: S_orig = 0 -> excluded from S_seq (counted); perturbed 0.3, 0.1; mean 0.2
        score_row(pick(X5, "ABCD"), 0.0, recovered=True),
        score_row(pick(X5, "ABDC"), 0.3),
        score_row(pick(X5, "ACBD"), 0.1),
    ]
    samples = [
        # X1: ABDC gap 0.6 - 0.4 = 0.2; ACBD gap 0 -> E 0.1, R 0.2, S_Cons 0.9*0.8 = 0.72
        (pick(X1, "ABDC"), [0.2, 0.6]),
        (pick(X1, "ACBD"), [0.5, 0.5, 0.5]),
        # X2: ABDC gap 0.9 - 0.6 = 0.3 -> S_Cons 0.7*0.7 = 0.49
        (pick(X2, "ABDC"), [0.3, 0.9, 0.6]),
        # X4 has no reference: left out of S_Cons
        (pick(X4, "ABDC"), [0.0, 0.0]),
        # the canonical input's samples: only in table 11 (gap 0.2 -> 0.8*0.8)
        (pick(X1, "ABCD"), [0.4, 0.8]),
    ]
    for item, values in samples:
        rows += [score_row(item, v, pass_name="consistency", sample=i) for i, v in enumerate(values)]
    return rows


def cot_rows() -> list[dict]:
    """A setting whose generations have no consistency pass."""
    return [score_row(pick(X1, "ABCD"), 0.8, setting="cot"), score_row(pick(X1, "ABDC"), 0.4, setting="cot")]


def roles(config=None) -> dict:
    return {
        name: RoleRecord.model_validate(info.as_dict())
        for name, info in all_role_infos(config or scoring_config()).items()
    }


def aggregate(cfg: OrderProbeScore | None = None, config=None, scores=None) -> dict:
    scores = scores or {"zero_shot": table(zero_shot_rows()), "cot": table(cot_rows())}
    return aggregate_scores(scores, ITEMS, cfg or OrderProbeScore(), roles(config), "test")


def stored(model: str = "oracle", cfg: OrderProbeScore | None = None, config=None, scores=None) -> dict:
    """The body as the aggregate stage writes it: the hook's part completed with benchmark, model
    and status, through the typed body (OrderProbeBody)."""
    body = {"benchmark": "orderprobe", "model": model, "status": "scored", **aggregate(cfg, config, scores)}
    return OrderProbeBody.model_validate(body).dump()
