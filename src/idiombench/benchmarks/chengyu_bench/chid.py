"""ChID (FewCLUE split): multiple-choice idiom cloze, the last column of the paper's table 7.

Each line of the FewCLUE files (named .json, but one JSON object per line) holds
`id`, `candidates` (7 idioms), `content` (the passage, with `#idiom#` for the blank)
and `answer` (index of the gold candidate).

Malformed lines (not JSON, a missing field, a wrong type, an answer index outside
the candidates, no `#idiom#` blank, a repeated id) are DataErrors naming the file and
line. Anomalies that leave a usable item are kept and flagged in build_stats.json:

- several `#idiom#` blanks in one passage: FewCLUE gives one answer per line, so the
  only reading consistent with the data is that the one answer fills every blank;
  the item is kept with meta `blanks` > 1 and flagged `chid_several_blanks`.
  (The FewCLUE release has none; the check guards against other ChID exports.)
- not exactly 7 candidates, a candidate that is not four CJK characters, the same
  candidate listed twice (flagged `chid_gold_listed_twice` when it is the gold one).
- `#` characters elsewhere in the passage (web hashtags such as `#话题#`), which a
  model may confuse with the placeholder: flagged `chid_other_hash_marks`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.errors import DataError
from ...core.items import Item
from ...data.readers import read_jsonl, require_keys
from ..base import BuildStats
from .config import ChidBuild, ChidSplit
from .records import is_four_cjk

BENCHMARK = "chengyu-bench"
LANGUAGE = "zh-CN"
PLACEHOLDER = "#idiom#"
CANDIDATES = 7
FIELDS = ("id", "candidates", "content", "answer")
SPLIT_FILES: dict[ChidSplit, str] = {
    "test_public": "chid/test_public.json",
    "train_few_all": "chid/train_few_all.json",
    "dev_few_all": "chid/dev_few_all.json",
}
SPLIT_TASKS: dict[ChidSplit, str] = {
    "test_public": "chid",
    "train_few_all": "chid_train_few",
    "dev_few_all": "chid_dev_few",
}


@dataclass
class Passage:
    line: int
    passage_id: int
    candidates: list[str]
    content: str
    answer_index: int
    blanks: int
    anomalies: list[str] = field(default_factory=list)


def parse_line(path: Path, line: int, record: dict[str, object]) -> Passage:
    require_keys(path, line, record, FIELDS)
    passage_id, candidates, content, answer = (record[k] for k in FIELDS)
    if not isinstance(passage_id, int) or isinstance(passage_id, bool):
        raise DataError(path, f"id is {passage_id!r}", row=line, expected="an integer id")
    if not isinstance(candidates, list) or not candidates or not all(isinstance(c, str) for c in candidates):
        raise DataError(path, f"candidates is {candidates!r}", row=line, expected="a non-empty list of idiom strings")
    if not isinstance(content, str):
        raise DataError(path, f"content is {type(content).__name__}", row=line, expected="the passage text")
    if not isinstance(answer, int) or isinstance(answer, bool) or not 0 <= answer < len(candidates):
        raise DataError(
            path,
            f"answer index {answer!r} is not a position in the {len(candidates)} candidates",
            row=line,
            expected=f"an integer from 0 to {len(candidates) - 1}",
        )
    blanks = content.count(PLACEHOLDER)
    if blanks == 0:
        raise DataError(
            path,
            f"passage {passage_id} has no {PLACEHOLDER} blank",
            row=line,
            expected=f"the passage with {PLACEHOLDER} where the idiom goes",
        )
    anomalies = []
    if blanks > 1:
        anomalies.append("chid_several_blanks")
    if len(candidates) != CANDIDATES:
        anomalies.append("chid_not_seven_candidates")
    if not all(is_four_cjk(c) for c in candidates):
        anomalies.append("chid_candidate_not_four_cjk")
    if len(set(candidates)) != len(candidates):
        gold_twice = candidates.count(candidates[answer]) > 1
        anomalies.append("chid_gold_listed_twice" if gold_twice else "chid_duplicate_candidates")
    if "#" in content.replace(PLACEHOLDER, ""):
        anomalies.append("chid_other_hash_marks")
    return Passage(line, passage_id, candidates, content, answer, blanks, anomalies)


def read_split(path: Path) -> list[Passage]:
    passages: list[Passage] = []
    first_line: dict[int, int] = {}
    for line, record in read_jsonl(path):
        passage = parse_line(path, line, record)
        if passage.passage_id in first_line:
            raise DataError(
                path,
                f"id {passage.passage_id} repeats line {first_line[passage.passage_id]}",
                row=line,
                expected="unique passage ids",
            )
        first_line[passage.passage_id] = line
        passages.append(passage)
    return passages


def passage_item(passage: Passage, split: ChidSplit) -> Item:
    gold = passage.candidates[passage.answer_index]
    return Item(
        item_id=f"{passage.passage_id:05d}",
        benchmark=BENCHMARK,
        task=SPLIT_TASKS[split],
        language=LANGUAGE,
        input=passage.content,
        choices=tuple(passage.candidates),
        answer=gold,
        references=(gold,),
        # Named after the paper's prompt placeholders; `placeholder` lets a template hide
        # the candidates and use the passage as an open cloze.
        fields={"paragraph": passage.content, "candidates": passage.candidates, "placeholder": PLACEHOLDER},
        meta={
            "split": split,
            "passage_id": passage.passage_id,
            "answer_index": passage.answer_index,
            "blanks": passage.blanks,
            "source_line": passage.line,
            "anomalies": passage.anomalies,
        },
    )


def split_summary(passages: list[Passage], built: bool) -> dict[str, object]:
    return {
        "file": None,  # filled by the caller
        "rows": len(passages),
        "built": built,
        "answer_index_counts": {str(k): v for k, v in sorted(Counter(p.answer_index for p in passages).items())},
        "blanks_per_passage": {str(k): v for k, v in sorted(Counter(p.blanks for p in passages).items())},
        "candidates_per_passage": {str(k): v for k, v in sorted(Counter(len(p.candidates) for p in passages).items())},
        "anomalies": dict(sorted(Counter(a for p in passages for a in p.anomalies).items())),
    }


def build_chid(raw_dir: Path, cfg: ChidBuild, stats: BuildStats) -> dict[str, list[Item]]:
    """Items for the configured splits; the other declared splits are read, checked and reported."""
    tasks: dict[str, list[Item]] = {}
    summaries: dict[str, Any] = {}
    for split, relative in SPLIT_FILES.items():
        path = raw_dir / relative
        passages = read_split(path)
        built = split in cfg.splits
        summary = split_summary(passages, built)
        summary["file"] = relative
        summary["task"] = SPLIT_TASKS[split] if built else None
        summaries[split] = summary
        if not built:
            continue
        stats.read(relative, len(passages))
        for passage in passages:
            for anomaly in passage.anomalies:
                stats.flag(anomaly, {"file": relative, "line": passage.line, "id": passage.passage_id})
        tasks[SPLIT_TASKS[split]] = [passage_item(p, split) for p in passages]
        stats.kept(relative, len(passages))
    stats.details["chid"] = summaries
    unbuilt = [f"{s} ({summaries[s]['rows']} rows)" for s in SPLIT_FILES if s not in cfg.splits]
    if unbuilt:
        stats.notes.append(
            f"ChID files read and checked but not built into items (not in build.chid.splits): {', '.join(unbuilt)}; "
            "their counts are under details.chid."
        )
    return tasks
