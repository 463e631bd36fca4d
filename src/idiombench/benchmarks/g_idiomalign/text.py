"""Text repairs applied to release strings; each is reported by the caller in build_stats.json.

Every French idiom in the release is mojibake: its UTF-8 bytes were decoded as Latin-1
before the JSON was written (`Ã©` for `é`, `Ã\\xa0` for `à`, `Å\\x93` for `œ`). The repair
re-decodes each such byte sequence strictly; a sequence that is not valid UTF-8 is kept.
"""

from __future__ import annotations

import re

# A Latin-1 rendering of one UTF-8 multi-byte character: a lead byte then its continuation bytes.
_MOJIBAKE = re.compile("[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def _redecode(match: re.Match[str]) -> str:
    try:
        return match.group().encode("latin-1").decode("utf-8")
    except UnicodeDecodeError:  # e.g. an overlong form: not UTF-8, so leave it as released
        return match.group()


def repair_mojibake(text: str) -> str:
    """`vendre son Ã¢me au diable` -> `vendre son âme au diable`; other text is unchanged."""
    return _MOJIBAKE.sub(_redecode, text)


def has_mojibake(text: str) -> bool:
    return repair_mojibake(text) != text
