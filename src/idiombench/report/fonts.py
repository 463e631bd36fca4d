"""A CJK-capable font for the PDF.

Noto Sans CJK (SIL Open Font License) comes from the PyPI package
`rinoh-typeface-notosanscjk` (installed with --no-deps; its only dependency,
rinohtype, is not needed). The fonts are OpenType/CFF, which reportlab cannot
embed, so for each report we subset them to the characters the report uses and
convert the outlines to TrueType with fontTools (fast: a subset, not the 16 MB font).
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

from fontTools import subset
from fontTools.pens.cu2quPen import Cu2QuPen
from fontTools.pens.ttGlyphPen import TTGlyphPen
from fontTools.ttLib import TTFont, newTable

from ..core.errors import IdiombenchError

FONT_PACKAGE = "rinoh_typeface_notosanscjk"
FONT_FILES = {"regular": "notosanscjkjp-regular.otf", "bold": "notosanscjkjp-bold.otf"}


def font_source(weight: str) -> Path:
    spec = importlib.util.find_spec(FONT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise IdiombenchError(
            "the report needs the Noto Sans CJK font: pip install --no-deps rinoh-typeface-notosanscjk==0.0.1 "
            "(make setup does this)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / FONT_FILES[weight]
    if not path.is_file():
        raise IdiombenchError(f"font file {path} is missing from the {FONT_PACKAGE} package")
    return path


def subset_to_truetype(source: Path, text: str, dest: Path, suffix: str = "") -> Path:
    """Keep the glyphs `text` needs and convert cubic CFF outlines to quadratic TrueType;
    `suffix` is appended to the PostScript name (name ID 6), which identifies the face."""
    options = subset.Options()
    options.name_IDs = ["*"]
    options.notdef_outline = True
    options.glyph_names = True
    options.layout_features = []
    font = TTFont(source, recalcTimestamp=False)  # keep head.modified: the same text gives the same bytes
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=text + " ")
    subsetter.subset(font)

    order = font.getGlyphOrder()
    glyph_set = font.getGlyphSet()
    glyphs = {}
    for name in order:
        pen = TTGlyphPen(glyph_set)
        glyph_set[name].draw(Cu2QuPen(pen, max_err=1.0, reverse_direction=True))
        glyphs[name] = pen.glyph()
    glyf = newTable("glyf")
    glyf.glyphOrder = order
    glyf.glyphs = glyphs
    font["glyf"] = glyf
    font["loca"] = newTable("loca")
    for table in ("CFF ", "VORG"):
        if table in font:
            del font[table]
    maxp = newTable("maxp")
    maxp.tableVersion = 0x00010000
    for attribute in ("maxZones",):
        setattr(maxp, attribute, 1)
    for attribute in (
        "maxPoints",
        "maxContours",
        "maxCompositePoints",
        "maxCompositeContours",
        "maxTwilightPoints",
        "maxStorage",
        "maxFunctionDefs",
        "maxInstructionDefs",
        "maxStackElements",
        "maxSizeOfInstructions",
        "maxComponentElements",
        "maxComponentDepth",
    ):
        setattr(maxp, attribute, 0)
    font["maxp"] = maxp
    font["head"].indexToLocFormat = 0
    font["head"].glyphDataFormat = 0
    post = font["post"]
    post.formatType = 2.0
    post.extraNames = []
    post.mapping = {}
    post.glyphOrder = order
    font.sfntVersion = "\x00\x01\x00\x00"
    if suffix:
        ps_name = f"{font['name'].getDebugName(6)}-{suffix}"
        for record in list(font["name"].names):
            if record.nameID == 6:
                font["name"].setName(ps_name, 6, record.platformID, record.platEncID, record.langID)
    dest.parent.mkdir(parents=True, exist_ok=True)
    font.save(dest)
    return dest


def register_cjk_fonts(text: str, workdir: Path) -> tuple[str, str]:
    """Register regular and bold subsets with reportlab; returns their font names."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont as ReportlabTTFont

    names = []
    # reportlab's registry is process-wide and maps a font to the first one registered with the
    # same PostScript face name: each subset gets its own names, so a second report in the same
    # process (tests, a notebook) is drawn with its own glyphs, not the first report's subset
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    for weight in ("regular", "bold"):
        path = subset_to_truetype(font_source(weight), text, workdir / f"NotoSansCJK-{weight}.ttf", digest)
        name = f"NotoSansCJK-{weight}-{digest}"
        pdfmetrics.registerFont(ReportlabTTFont(name, str(path)))
        names.append(name)
    return names[0], names[1]
