"""Role status, table marks and footnotes, derived from a role's configuration and the
paper's provenance in code (never hand-written)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

from ..metrics.body import RoleRecord
from .config import RoleBase, RoleStatus, ScoringConfig
from .provenance import PaperRole, RoleKind

# Marks a table cell carries when it depends on the role.
MARKS: dict[str, str] = {
    "paper": "",
    "paper_assumed": "*",
    "substitute": "†",
    "not_computed": "‡",
}

KIND_WORDS: dict[str, str] = {
    "cross_encoder": "a cross-encoder",
    "embedder": "a bi-encoder cosine",
    "nli": "an NLI classifier",
    "bertscore": "BERTScore",
}


def derive_status(role: RoleBase, paper: PaperRole) -> RoleStatus:
    if role.model is None:
        return "not_computed"
    return "paper" if role.model == paper.paper_model else "substitute"


@dataclass(frozen=True)
class RoleInfo:
    """What a table needs to know about the scorer behind a cell."""

    role: str
    kind: RoleKind
    model: str | None
    paper_model: str
    paper_model_stated: bool
    status: RoleStatus
    mark: str
    footnote: str | None

    @property
    def computed(self) -> bool:
        return self.status != "not_computed"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)  # every field, in declaration order


def role_info(name: str, role: RoleBase, paper: PaperRole) -> RoleInfo:
    status = derive_status(role, paper)
    kind: RoleKind = role.kind  # type: ignore[attr-defined]
    paper_kind = paper.kind
    if paper.paper_model_stated:
        paper_ref = f"the paper's {paper.paper_model}"
    else:
        paper_ref = f"{paper.paper_model} (the project's reading: the paper does not name the model"
        paper_ref += f"; {paper.paper_note})" if paper.paper_note else ")"
    parts: list[str] = []
    if status == "not_computed":
        stated = paper_ref if paper.paper_model_stated else "paper: " + paper_ref
        parts.append(
            f"{name}: not computed (no model configured; {stated}); the terms that need it are reported as not computed"
        )
    elif status == "substitute":
        text = f"{name}: {role.model} stands in for {paper_ref}"
        if kind != paper_kind:
            text += f"; {KIND_WORDS[kind]} stands in for {KIND_WORDS[paper_kind]}"
        parts.append(text + "; values are not comparable with the paper's")
    elif not paper.paper_model_stated:
        parts.append(f"{name}: {paper_ref}")
    if paper.paper_note and paper.paper_model_stated and status != "paper":
        parts.append(paper.paper_note[:1].upper() + paper.paper_note[1:])
    if role.note:
        parts.append(role.note)
    footnote = ". ".join(part.rstrip(".") for part in parts) + "." if parts else None
    if status == "paper" and not paper.paper_model_stated:
        mark = MARKS["paper_assumed"]
    else:
        mark = MARKS[status]
    return RoleInfo(
        role=name,
        kind=kind,
        model=role.model,
        paper_model=paper.paper_model,
        paper_model_stated=paper.paper_model_stated,
        status=status,
        mark=mark,
        footnote=footnote if (status != "paper" or not paper.paper_model_stated) else None,
    )


def all_role_infos(config: ScoringConfig) -> dict[str, RoleInfo]:
    return {
        name: role_info(name, config.role(name), config.paper_role(name)) for name in type(config.roles).model_fields
    }


RECORDED = "score stage (scoring_meta.json)"
DERIVED = "params at aggregation time (the score stage recorded none)"


def role_records(
    scoring_meta: Mapping[str, object], scoring: ScoringConfig | None, roles: Iterable[str]
) -> tuple[dict[str, RoleRecord], str]:
    """The records (metrics.body.RoleRecord) of the scorer roles behind a benchmark's numbers, and
    where they come from: as the score stage recorded them in scoring_meta.json when it recorded
    every one of `roles` (its extra keys, e.g. where the weights were loaded from, stay there), else
    as `scoring` (the params) derives them; a role neither knows is left out. The one builder of
    provenance.roles."""
    wanted = list(roles)
    recorded = scoring_meta.get("roles")
    fields = RoleRecord.model_fields
    if isinstance(recorded, Mapping) and all(
        isinstance(recorded.get(role), Mapping) and all(key in recorded[role] for key in fields) for role in wanted
    ):
        return {
            role: RoleRecord.model_validate({key: recorded[role][key] for key in fields}) for role in wanted
        }, RECORDED
    infos = all_role_infos(scoring) if scoring is not None else {}
    return {role: RoleRecord.model_validate(infos[role].as_dict()) for role in wanted if role in infos}, DERIVED
