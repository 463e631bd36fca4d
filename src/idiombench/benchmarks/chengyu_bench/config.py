"""params.yaml section `benchmarks.chengyu-bench`.

The official Chengyu-Bench release (github sofyc/ChengyuBench) is not reachable from
the development machines and its file layout is unknown. The defaults below are an
ASSUMED layout, not a documented one: three JSON files under `data/`, one per task,
whose field names follow the placeholders of the paper's prompts (appendix A):

    <release_dir>/data/connotation.json      [{"idiom": "雪中送炭", "label": "positive"}, ...]
    <release_dir>/data/appropriateness.json  [{"sentence": "...##浩如烟海##...", "label": "wrong"}, ...]
    <release_dir>/data/open_cloze.json       [{"paragraph": "...##idiom##...", "answer": "好景不长"}, ...]

When the real release differs, change the mapping here (file, format, field names,
label spellings, placeholder) rather than the code. Every mismatch is reported as a
DataError naming the file, the record and the expected field.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...core.schema import StrictModel
from ...params.sections import BenchmarkSection, RenderSection, sample_field, settings_field

FileFormat = Literal["json", "jsonl", "csv"]
ChidSplit = Literal["test_public", "train_few_all", "dev_few_all"]


def _test_split_only() -> list[ChidSplit]:
    return ["test_public"]


class ChidBuild(StrictModel):
    splits: list[ChidSplit] = Field(
        default_factory=_test_split_only,
        description="FewCLUE ChID files built into items: test_public -> task `chid` (the paper's ChID "
        "column), train_few_all -> `chid_train_few`, dev_few_all -> `chid_dev_few`. Files not listed are "
        "still read and checked, and their counts reported.",
    )


class ReleaseFile(StrictModel):
    file: str = Field(description="Path relative to release_dir (ASSUMED layout).")
    format: FileFormat = Field(
        "json",
        description="json: one JSON array of objects; jsonl: one JSON object per line; "
        "csv: comma-separated with a header row.",
    )
    id_field: str | None = Field(
        None, description="Field holding the release's own item id (kept in meta); null: none."
    )


class ConnotationLabels(StrictModel):
    """Released label spellings for each class, compared case-insensitively after stripping.
    Numbers and booleans in the file are compared as their JSON text (1, 0, true, false)."""

    positive: list[str] = Field(default_factory=lambda: ["positive", "褒义", "1"])
    negative: list[str] = Field(default_factory=lambda: ["negative", "贬义", "0"])


class AppropriatenessLabels(StrictModel):
    """Released label spellings for each class (same matching rule as ConnotationLabels)."""

    correct: list[str] = Field(default_factory=lambda: ["correct", "1", "true"])
    wrong: list[str] = Field(default_factory=lambda: ["wrong", "incorrect", "0", "false"])


class ConnotationRelease(ReleaseFile):
    """Evaluative Connotation: one idiom and its polarity per record (ASSUMED: data/connotation.json,
    fields `idiom` and `label`)."""

    file: str = "data/connotation.json"
    idiom_field: str = "idiom"
    label_field: str = "label"
    labels: ConnotationLabels = ConnotationLabels()


class AppropriatenessRelease(ReleaseFile):
    """Appropriateness: a passage with the judged idiom marked ##…## and a correct/wrong label per record
    (ASSUMED: data/appropriateness.json, fields `sentence` and `label`)."""

    file: str = "data/appropriateness.json"
    passage_field: str = Field(
        "sentence", description="Passage with the judged idiom marked ##like this## (paper, appendix A)."
    )
    idiom_field: str | None = Field(
        None,
        description="Field naming the judged idiom. null: taken from the ##…## mark. When set and the "
        "passage carries no mark, the mark is added around the idiom's only occurrence (flagged).",
    )
    label_field: str = "label"
    labels: AppropriatenessLabels = AppropriatenessLabels()


class OpenClozeRelease(ReleaseFile):
    """Open Cloze: a passage with a placeholder and the gold idiom per record (ASSUMED:
    data/open_cloze.json, fields `paragraph` and `answer`, placeholder ##idiom## as in the paper's table 3)."""

    file: str = "data/open_cloze.json"
    passage_field: str = "paragraph"
    answer_field: str = Field(
        "answer", description="Gold idiom: a string, or a list of acceptable idioms (the first is the answer)."
    )
    placeholder: str = Field("##idiom##", description="The blank's marker inside the passage (paper, table 3).")


class ReleaseMapping(StrictModel):
    """Where each task lives in the release checkout; null skips that task. The defaults are the
    ASSUMED layout of the module docstring, not a documented one."""

    connotation: ConnotationRelease | None = ConnotationRelease()
    appropriateness: AppropriatenessRelease | None = AppropriatenessRelease()
    open_cloze: OpenClozeRelease | None = OpenClozeRelease()


class ChengyuBenchBuild(StrictModel):
    release_dir: str | None = Field(
        None,
        description="Local checkout of the official Chengyu-Bench release (github sofyc/ChengyuBench); "
        "not reachable from the development machines. null (or a directory that does not exist): the "
        "build makes ChID and the project's sample tasks only and says so (a NOT AVAILABLE note). "
        "A relative path is resolved against the working directory (the project root in the pipeline).",
    )
    release: ReleaseMapping = ReleaseMapping()
    chid: ChidBuild = ChidBuild()
    samples: bool = Field(
        True,
        description="Build connotation_sample and appropriateness_sample from the small sample written by "
        "this project (package data; not the official data, labelled `sample` everywhere).",
    )


RenderSetting = Literal["connotation", "appropriateness", "open_cloze", "chid_open_cloze", "chid_candidates"]
RENDER_SETTINGS: list[RenderSetting] = [
    "connotation",
    "appropriateness",
    "open_cloze",
    "chid_open_cloze",
    "chid_candidates",
]


class ChengyuBenchSample(StrictModel):
    """Which items are rendered: a seeded draw per task (the same ChID passages in both ChID settings)."""

    seed: int = Field(0, description="Seed of the draw (sha256-derived per task).")
    items_per_task: int | None = Field(None, ge=1, description="Items per task; null: all.")


class ChengyuBenchRender(RenderSection):
    """`idiombench render chengyu-bench`: the paper's appendix A prompts and a ChID prompt.

    connotation / appropriateness: the release task when built, else the project's sample task
    (connotation_sample, appropriateness_sample). open_cloze: the release task only (none without
    the release; said so in render_stats.json). chid_open_cloze: ChID passages as an open-cloze set
    (candidates hidden, the paper's Open Cloze prompt). chid_candidates: ChID with its 7 candidates."""

    settings: list[RenderSetting] = settings_field(RENDER_SETTINGS)
    sample: ChengyuBenchSample | None = sample_field()


class ValidIdiomConfig(StrictModel):
    """The dictionary behind Open Cloze's Valid Idiom rate (a stand-in for the paper's Xinhua
    Dictionary list; see idioms.py): the idiom list of the PyPI package china-idiom-without-tone."""

    four_character_only: bool = Field(
        True,
        description="Keep only the list's four-character words (29,502 in version 0.1.0). false: every "
        "word of the list (30,884 distinct), longer sayings such as 醉翁之意不在酒 included.",
    )


class ChengyuBenchScore(StrictModel):
    """`idiombench score chengyu-bench`: see metrics.py for every definition."""

    accept_unformatted: bool = Field(
        True,
        description="Count answers read without the requested format (a bare 褒义 or `positive` without its "
        "tag, a ChID candidate named outside <answer>…</answer>, an unclosed answer block). They are "
        "flagged and counted either way (metric format_ok); false: they score as wrong.",
    )
    valid_idiom: ValidIdiomConfig = ValidIdiomConfig()


class ChengyuBenchConfig(BenchmarkSection):
    render: ChengyuBenchRender = ChengyuBenchRender()
    build: ChengyuBenchBuild = ChengyuBenchBuild()
    score: ChengyuBenchScore = ChengyuBenchScore()
