"""Standard codes as people write them: 6.RP.3c, 6.rp.a.3.c, CCSS.MATH.CONTENT.6.RP.A.3.C,
A-REI.11 for HSA-REI.D.11.

A written code is read into its parts (runs of letters and of digits: 6.RP.3c is 6, RP,
3, C), its decorations taken off (the CCSS.MATH.CONTENT prefix) or put back (the HS of a
high-school code: A-REI is HSA-REI), and written again in the ways the data writes codes
(dots, and the dash after a high-school category, HSA-REI.D.11; California also writes
HSF.LE.A.4.1). All those forms are looked up in one query, as the statement code or its
alternate (Multi-State's 6.RP.3.c for 6.RP.A.3.c). A form the parts spell matches as it
is; a code written without its cluster letter (6.RP.3c for 6.RP.A.3.c, where the place
publishes no alternate code) matches only when exactly one code of the place fits, so a
short code never silently means one of two standards.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import orjson

from edukg.model.errors import NotFoundError
from edukg.model.vocabulary import STANDARD
from edukg.store.base import Matching, Row, Store

MAX_WRITTEN = 50  # characters: a statement code parameter's own bound
_PARTS = re.compile(r"[A-Za-z]+|[0-9]+")
# Words that name the standards' set before a code (CCSS.MATH.CONTENT.6.RP.A.3.C,
# CCSS.Math.Practice.MP1, CCSS.ELA-Literacy.RL.4.3), not a part of it.
_DECORATION = frozenset(["CCSS", "MATH", "CONTENT", "PRACTICE", "ELA", "LITERACY"])
# The conceptual categories of the high-school standards (HSN, HSA, HSF, HSG, HSS),
# which people write without the HS: A-REI.D.11, F.IF.4.
_CATEGORIES = frozenset("NAFGS")
# Cluster letters tried where a code leaves its cluster out (Common Core's run A to D).
_CLUSTERS = "ABCDEFGH"
# Rows read to decide which codes fit: a code repeats across a framework's courses and
# across jurisdictions, never hundreds of times.
_ROWS = 500
_LITERAL, _SPELT, _CLUSTERLESS = 0, 1, 2  # how closely a form follows what was written


@dataclass(frozen=True)
class Resolved:
    """What a written code names: the real codes found (as the data spells them; usually
    one) and the records bearing them, by identifier; or, when the code left its cluster out and
    several codes fit, those codes in `several` and no record."""

    codes: tuple[str, ...] = ()
    rows: tuple[Row, ...] = ()
    several: tuple[str, ...] = ()


def parts_of(written: str) -> list[str] | None:
    """The parts of a written code, upper-cased, decorations off and the HS of a
    high-school category on; None for what cannot be a code (no digit, or too long)."""
    if len(written) > MAX_WRITTEN or not any(c.isdigit() for c in written):
        return None
    parts = [p.upper() for p in _PARTS.findall(written)]
    while parts and parts[0] in _DECORATION:
        parts.pop(0)
    if len(parts) > 2 and parts[0] == "HS" and parts[1] in _CATEGORIES and parts[2].isalpha():
        parts[:2] = ["HS" + parts[1]]  # HS.A-REI.11
    elif len(parts) > 1 and parts[0] in _CATEGORIES and parts[1].isalpha():
        parts[0] = "HS" + parts[0]  # A-REI.11, F.IF.4
    merged: list[str] = []
    for part in parts:  # MP3, 6.MP3: the practice's number is part of its name
        if part.isdigit() and merged and merged[-1] == "MP":
            merged[-1] += part
        else:
            merged.append(part)
    return merged if 1 <= len(merged) <= 8 else None


def looks_like_code(written: str) -> bool:
    """Whether a search's words may be a code typed as the query (3.nf.a.1, rl 4 3)."""
    return parts_of(written) is not None and len(written.split()) <= 6


def _spellings(parts: list[str]) -> list[str]:
    """The ways the data writes a code of these parts: dots, or a dash after a
    high-school category (HSA-REI.D.11)."""
    dotted = ".".join(parts)
    if len(parts) > 1 and parts[0].startswith("HS") and len(parts[0]) == 3:
        return [f"{parts[0]}-{'.'.join(parts[1:])}", dotted]
    return [dotted]


def _has_cluster_place(parts: list[str]) -> bool:
    """Whether the parts are a grade (or category), a domain and then a number, where a
    Common Core code has its cluster letter (6.RP.3 of 6.RP.A.3)."""
    level = parts[0].isdigit() or parts[0] == "K" or (
        len(parts[0]) == 3 and parts[0].startswith("HS") and parts[0][2] in _CATEGORIES
    )  # fmt: skip
    return len(parts) >= 3 and level and parts[1].isalpha() and parts[2].isdigit()


def forms_of(written: str) -> dict[str, int]:
    """Each code `written` may mean, upper-cased, with how closely it follows what was
    written (_LITERAL, _SPELT or _CLUSTERLESS); empty for what cannot be a code."""
    literal = " ".join(written.split()).upper()
    parts = parts_of(written)
    if not literal or parts is None:
        return {literal: _LITERAL} if literal else {}
    forms = {literal: _LITERAL}
    for form in _spellings(parts):
        forms.setdefault(form, _SPELT)
    if _has_cluster_place(parts):
        for letter in _CLUSTERS:
            for form in _spellings([*parts[:2], letter, *parts[2:]]):
                forms.setdefault(form, _CLUSTERLESS)
    return forms


def resolve(store: Store, written: str, within: Matching) -> Resolved:
    """The records a written code names among those `within` admits (its kind and
    filters; its own codes are ignored)."""
    forms = forms_of(written)
    if not forms:
        return Resolved()
    query = dataclasses.replace(within, code=None, codes=tuple(forms), code_prefix=None,
                                words=())  # fmt: skip
    rows = store.page(query, None, _ROWS)
    closest: dict[str, int] = {}  # each real code found (upper-cased), its closest form
    spelt: dict[str, str] = {}  # and as the data spells it
    real_of: list[str] = []
    for _, doc in rows:
        record = orjson.loads(doc)
        real = str(record.get("statementCode") or "")
        key = real.upper()
        named = (key, str(record.get("alternateStatementCode") or "").upper())
        tier = min(forms.get(code, _CLUSTERLESS) for code in named)
        closest[key] = min(tier, closest.get(key, tier))
        spelt.setdefault(key, real)
        real_of.append(key)
    exact = sorted(key for key, tier in closest.items() if tier < _CLUSTERLESS)
    loose = sorted(key for key, tier in closest.items() if tier == _CLUSTERLESS)
    chosen = exact or (loose if len(loose) == 1 else [])
    if not chosen:
        return Resolved(several=tuple(spelt[key] for key in loose))
    kept = tuple(row for row, key in zip(rows, real_of, strict=True) if key in chosen)
    return Resolved(codes=tuple(spelt[key] for key in chosen), rows=kept)


def find_standard_by_code(store: Store, code: str, jurisdiction: str) -> Row | None:
    """The standard a person's code names in a jurisdiction (6.RP.3c, A-REI.11: see the
    module's note), as (identifier, pre-encoded record); a code the jurisdiction's
    framework repeats (California's courses) is one standard, its first identifier.

    None when no standard fits; NotFoundError, naming them, when the code leaves out its
    cluster letter and several standards fit.
    """
    found = resolve(store, code, Matching(STANDARD, jurisdiction=jurisdiction))
    if found.several:
        raise NotFoundError(
            f"The code {code.strip()} fits several standards in {jurisdiction}:"
            f" {', '.join(found.several)}. Give the whole code.",
            {"parameter": "statementCode", "fits": list(found.several)},
        )
    return min(found.rows) if found.rows else None
