"""`idiombench new-benchmark NAME FILE.jsonl`: a working declaration written from a JSON-lines file
of records, the starting point a researcher then edits (the template above all).

What it reads from the records (a field present in every record; `--input`, `--gold`, `--options`,
`--shape` name them instead):
- options: a field of lists of texts (`options`, `choices` or `candidates` first); none: the
  label shape;
- gold: `answer`, `gold`, `label`, `target`, `correct`, `references`, `reference`, `gloss` or
  `meaning`;
- id: `id`, `item_id`, `qid` or `uid`, when its values are unique; split: `split`;
- input: `question`, `input`, `idiom`, `passage`, `content`, `text`, `sentence`, `context` or
  `prompt`, else the text field with the longest values;
- shape: `cloze` when the options field is `candidates` or lists more options than letters,
  `multiple_choice` with any other options field; without one, `label` where the gold values
  repeat as labels do (at most MAX_LABELS of them), else `generation` (free texts, or lists of
  reference texts, scored by ROUGE-L, exact match and BERTScore);
- language: from the input texts' script (Han: zh, kana: ja, Hangul: ko; else en).

It copies the file to data/<name>/, writes benchmarks/<name>.yaml (the file's sha256 in it) and
then proves the pair works: the declaration is read as every stage reads it and every record is
built. Anything refused leaves nothing behind; an existing declaration is never replaced.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import ConfigError, DataError
from ...core.io import write_text
from ...core.items import OPTION_LETTERS
from ...core.schema import name_problem
from ...data.readers import read_jsonl
from .schema import DATA, DECLARATIONS, RESERVED, SUFFIX, Shape

OPTION_FIELDS = ("options", "choices", "candidates")
GOLD_FIELDS = ("answer", "gold", "label", "target", "correct", "references", "reference", "gloss", "meaning")
ID_FIELDS = ("id", "item_id", "qid", "uid")
INPUT_FIELDS = ("question", "input", "idiom", "passage", "content", "text", "sentence", "context", "prompt")
SPLIT_FIELD = "split"
MAX_LABELS = 20
FEW_SHOT = ("three_shot", 3)  # the k-shot setting written where a `train` split holds exemplars
PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")  # a YAML scalar written without quotes
YAML_WORDS = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"})
SCRIPTS = (
    ("ja", re.compile(r"[\u3040-\u30ff]")),
    ("ko", re.compile(r"[\uac00-\ud7af]")),
    ("zh", re.compile(r"[\u4e00-\u9fff]")),
)

TEMPLATES: dict[str, dict[str, str]] = {
    "multiple_choice": {
        "en": "{input}\n{options}\nAnswer with the letter of the correct option only.",
        "zh": "{input}\n{options}\n只回答正确选项的字母。",
    },
    "label": {
        "en": "{input}\nWhich of these is it: {labels}? Answer with the label in angle brackets, e.g. <{first}>.",
        "zh": "{input}\n从以下标签中选择：{labels}。用尖括号写出标签，例如 <{first}>。",
    },
    "generation": {
        "en": 'What does "{input}" mean? Answer in one sentence.',
        "zh": "“{input}”是什么意思？请用一句话回答。",
    },
    "cloze": {
        "en": "{input}\nCandidates: {options}\nWhich one fills the blank? Answer as <answer><candidate></answer>.",
        "zh": "{input}\n候选成语：{options}\n哪个成语填入空白处最合适？请按 <answer><成语></answer> 的格式回答。",
    },
}
METRICS: dict[str, list[str]] = {
    "generation": ["rouge_l", "exact_match", "bertscore", "format_ok", "parse_failure_rate"],
    "multiple_choice": ["accuracy", "macro_f1", "format_ok", "parse_failure_rate"],
    "label": ["accuracy", "macro_f1", "format_ok", "parse_failure_rate"],
    "cloze": ["accuracy", "format_ok", "parse_failure_rate"],
}


@dataclass
class Guess:
    """What the records say the declaration is; `notes`: what the researcher should know of it
    (a field passed over, and why). The build checks every record (the number of candidates too)."""

    shape: Shape
    fields: dict[str, str]
    labels: list[str] | None
    language: str
    splits: dict[str, int]  # split -> records (one `test` split when no field names it)
    notes: list[str] = field(default_factory=list)


def _common_fields(records: list[tuple[int, dict[str, object]]]) -> list[str]:
    """The fields every record has (non-null), in the first record's order."""
    first = records[0][1]
    return [key for key in first if all(record.get(key) is not None for _, record in records)]


def _is_texts(value: object) -> bool:
    return isinstance(value, list) and len(value) >= 2 and all(isinstance(v, str) and v.strip() for v in value)


def _is_text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _lacking(records: list[tuple[int, dict[str, object]]], name: str) -> int:
    """The line of the first record without field `name` (or with null there)."""
    return next(line for line, record in records if record.get(name) is None)


def _pick(
    path: Path,
    records: list[tuple[int, dict[str, object]]],
    key: str,
    given: str | None,
    common: list[str],
    preferred: tuple[str, ...],
) -> str | None:
    """The field named on the command line (refused, naming a record, unless every record has
    it), else the first preferred name every record has."""
    if given is not None:
        if given not in common:
            raise DataError(path, f"no field {given!r} (named by --{key})", row=_lacking(records, given))
        return given
    return next((name for name in preferred if name in common), None)


def guess(
    path: Path,
    records: list[tuple[int, dict[str, object]]],
    *,
    shape: Shape | None = None,
    input_field: str | None = None,
    gold: str | None = None,
    options: str | None = None,
) -> Guess:
    """The shape, fields, labels, language and splits of `records` (read from `path`); a
    DataError naming the file where they do not make a declaration."""
    common = _common_fields(records)
    values = {key: [record[key] for _, record in records] for key in common}
    notes: list[str] = []
    # a field of lists that some records lack is a data error, not a sign of another shape
    for key in dict.fromkeys(k for _, record in records for k in record):
        present = [record[key] for _, record in records if record.get(key) is not None]
        if key not in common and present and all(_is_texts(v) for v in present):
            raise DataError(
                path, f"no field {key!r}", row=_lacking(records, key), expected="the options every other record lists"
            )
    gold_field = _pick(path, records, "gold", gold, common, GOLD_FIELDS)
    if gold_field is None:
        raise DataError(
            path, "no gold field", expected=f"a field named one of {', '.join(GOLD_FIELDS)} (or --gold NAME)"
        )
    option_field = _pick(path, records, "options", options, common, ())
    if option_field is None and shape not in ("label", "generation"):
        listed = [key for key in common if key != gold_field and all(_is_texts(v) for v in values[key])]
        option_field = next((key for key in OPTION_FIELDS if key in listed), listed[0] if listed else None)
    if option_field is not None and not all(_is_texts(v) for v in values[option_field]):
        raise DataError(path, f"field {option_field!r} is not a list of two or more texts in every record")
    chosen: Shape
    if shape is not None:
        chosen = shape
    elif option_field is None:
        chosen = "generation" if _free_texts(values[gold_field], len(records)) else "label"
    else:
        most = max(len(v) for v in values[option_field] if isinstance(v, list))
        chosen = "cloze" if option_field == "candidates" or most > len(OPTION_LETTERS) else "multiple_choice"
    if chosen not in ("label", "generation") and option_field is None:
        raise DataError(
            path, f"no field lists the {chosen} options", expected="a field of lists of texts (or --options NAME)"
        )
    if chosen == "generation":
        option_field = None
    labels = None
    if chosen == "label":
        option_field = None
        distinct = sorted({str(v).strip() for v in values[gold_field]})
        # labels repeat: at most MAX_LABELS, and from 10 records on, each used twice on average
        if _free_texts(values[gold_field], len(records)) or not all(
            isinstance(v, (str, int)) for v in values[gold_field]
        ):
            raise DataError(
                path,
                f"gold field {gold_field!r} holds {len(distinct)} distinct values, no options field",
                expected=f"labels (at most {MAX_LABELS}), an options field, or --shape generation (free texts)",
            )
        labels = distinct
    taken = {gold_field, option_field, SPLIT_FIELD}
    id_field = _pick(path, records, "id", None, common, ID_FIELDS)
    if id_field is not None and len({json.dumps(v) for v in values[id_field]}) < len(records):
        notes.append(f"ids: field {id_field!r} repeats a value, so the line number is each record's id")
        id_field = None
    if id_field is None and not any(note.startswith("ids:") for note in notes):
        notes.append("ids: no id field, so the line number is each record's id")
    taken.add(id_field)
    input_name = _pick(path, records, "input", input_field, common, INPUT_FIELDS)
    if input_name is None:
        texts = [key for key in common if key not in taken and all(_is_text(v) for v in values[key])]
        if not texts:
            raise DataError(path, "no text field to ask about", expected="a field of texts (or --input NAME)")
        input_name = max(texts, key=lambda key: sum(len(str(v)) for v in values[key]))
    fields = {"input": input_name, "gold": gold_field}
    if id_field is not None:
        fields = {"id": id_field} | fields
    if option_field is not None:
        fields["options"] = option_field
    splits: dict[str, int] = {"test": len(records)}
    if SPLIT_FIELD in common and all(isinstance(v, str) and not name_problem(v) for v in values[SPLIT_FIELD]):
        fields["split"] = SPLIT_FIELD
        splits = dict(sorted(Counter(str(v) for v in values[SPLIT_FIELD]).items()))
    sample = " ".join(str(v) for v in values[input_name][:50])
    language = next((code for code, script in SCRIPTS if script.search(sample)), "en")
    return Guess(chosen, fields, labels, language, splits, notes)


def _free_texts(golds: list[object], records: int) -> bool:
    """Golds that are not a label set: lists of references, or texts that seldom repeat (more than
    MAX_LABELS distinct ones, or from 10 records on, fewer than two uses each on average)."""
    if any(isinstance(v, list) for v in golds):
        return True
    distinct = {str(v).strip() for v in golds}
    return len(distinct) > MAX_LABELS or (records >= 10 and 2 * len(distinct) > records)


def asked_split(splits: dict[str, int]) -> str:
    """The split the settings ask: `test` where there is one, else the largest that is not `train`."""
    if "test" in splits:
        return "test"
    others = {name: n for name, n in splits.items() if name != "train"} or splits
    return max(sorted(others), key=lambda name: others[name])


def _yaml(value: object) -> str:
    """A YAML scalar or flow collection: a name as it is, any other text quoted as JSON (JSON's
    double-quoted strings are YAML's)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_yaml(k)}: {_yaml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_yaml(v) for v in value) + "]"
    if isinstance(value, str) and PLAIN.fullmatch(value) and value.lower() not in YAML_WORDS:
        return value
    return json.dumps(value, ensure_ascii=False)


def declaration_text(name: str, source: Path, file: str, sha256: str, found: Guess) -> str:
    """The declaration, commented for the researcher who edits it next."""
    template = TEMPLATES[found.shape]["zh" if found.language == "zh" else "en"]
    if found.labels:
        template = template.replace("{first}", found.labels[0])
    asked = asked_split(found.splits)
    settings: dict[str, dict[str, object]] = {"zero_shot": {} if asked == "test" else {"split": asked}}
    if "train" in found.splits and asked != "train":
        name_k, shots = FEW_SHOT
        settings[name_k] = {"shots": shots, "exemplars": "train"} | ({} if asked == "test" else {"split": asked})
    counts = ", ".join(f"{split}: {n}" for split, n in found.splits.items())
    lines = [
        f"# Written by `idiombench new-benchmark {name}` from {source.name} ({counts}). Check the",
        "# template and the fields, then `dvc add data/" + name + "` and `idiombench dvc-yaml`;",
        '# docs/ARCHITECTURE.md, "Add a benchmark", names every key.',
        f"shape: {found.shape}",
        f"language: {found.language}",
        "data:",
        f"  - file: {_yaml(file)}",
        f"    sha256: {sha256}",
        "fields:",
        *[f"  {key}: {_yaml(value)}" for key, value in found.fields.items()],
    ]
    if found.labels:
        lines.append(f"labels: {_yaml(found.labels)}")
    lines += ["template:", f"  - user: {_yaml(template)}", "settings:"]
    lines += [f"  {setting}: {_yaml(spec)}" for setting, spec in settings.items()]
    metrics = METRICS[found.shape]
    lines += [f"metrics: {_yaml(metrics)}", f"headline: {metrics[0]}", "resampling: item"]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Scaffold:
    declaration: Path
    data: Path
    guess: Guess
    items: dict[str, int]  # task (split) -> items built


def scaffold(
    name: str,
    source: Path,
    *,
    taken: frozenset[str] = frozenset(),
    shape: Shape | None = None,
    input_field: str | None = None,
    gold: str | None = None,
    options: str | None = None,
) -> Scaffold:
    """Write benchmarks/<name>.yaml and data/<name>/<file> (relative to the working directory, the
    project root) from the JSON-lines file `source`, and build it once. `taken`: the names of the
    benchmarks already registered."""
    from . import declared_benchmark
    from .library import SHAPES
    from .schema import read_declaration

    problem = name_problem(name, key=True)
    if problem:
        raise ConfigError(f"new-benchmark: the benchmark's name {problem}")
    declaration = DECLARATIONS / f"{name}{SUFFIX}"
    data = DATA / name / source.name
    if declaration.exists():
        raise ConfigError(f"{declaration}: already exists (edit it, or remove it to write a new one)")
    if name in RESERVED or name in taken:
        raise ConfigError(
            f"new-benchmark: {name!r} is taken (a registered benchmark or one of {', '.join(sorted(RESERVED))})"
        )
    if name_problem(source.name):
        raise DataError(
            source, "the file's name is not a plain name", expected="letters, digits, '.', '_', '-' (rename it)"
        )
    records = read_jsonl(source)
    found = guess(source, records, shape=shape, input_field=input_field, gold=gold, options=options)
    content = source.read_bytes()
    if data.exists() and data.read_bytes() != content:
        raise DataError(data, "exists with other content", expected=f"no file there, or the same bytes as {source}")
    # what this call makes, removed again if anything fails: nothing partial is left
    made = [path for path in (data, data.parent, DATA, declaration, DECLARATIONS) if not path.exists()]
    try:
        data.parent.mkdir(parents=True, exist_ok=True)
        if not data.exists():
            shutil.copyfile(source, data)
        text = declaration_text(name, source, source.name, hashlib.sha256(content).hexdigest(), found)
        declaration.parent.mkdir(exist_ok=True)
        write_text(declaration, text)
        bench = declared_benchmark(name, declaration, read_declaration(declaration, SHAPES))
        built = bench.build(data.parent, bench.config_model())
    except BaseException as exc:
        for path in made:
            if path.is_dir():
                path.rmdir()  # made by this call, and emptied above: files come first in `made`
            else:
                path.unlink(missing_ok=True)
        if isinstance(exc, DataError) and exc.path == str(data):  # the copy is gone: name the user's file
            where = f"{exc.path}, row {exc.row}: " if exc.row is not None else f"{exc.path}: "
            raise DataError(source, str(exc).removeprefix(where), row=exc.row) from None
        raise
    return Scaffold(declaration, data, found, {task: len(items) for task, items in built.tasks.items()})
