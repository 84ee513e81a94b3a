"""The alignment engine: a text to the standards it addresses (`align`), a text against
one standard (`check`), a standard to its counterparts elsewhere (`similar`).

One module per stage, in the order a request meets them:

    text ─► passages     the text cut into sentences, each one's vector
         ─► candidates   the filter's standards (view, vector_index, bm25), the grades
                         and the subject gate (gate) admit some of them
         ─► channels     each candidate against the text: the meaning of its statement
                         and of its learning components, its words, its domain's
                         heading, the twins' notes
         ─► fusion       the channels on one scale, weighed, with the grade prior
         ─► rerank       the learned ranking stage (texts written for every standard)
         ─► calibrate    shares of the evidence, calibrated scores, confidence bands
         ─► choose       one result per standard, best first, over the floor, `limit`
         ─► evidence     for each chosen standard, the passages that address it
            placements   its rows as served, with every place it stands

The stages hand on one typed result (scored.py: `Candidates`, `Channels`, `Scored`) that
keeps every channel to the end. The weights, calibrations, floors and the ranking's
version are one profile per task, read once from data (profile.py); learned artifacts
load through one loader that checks them (artifacts.py). The entrances (aligning.py,
checking.py, similarity.py) say which stages they run.
"""

from edukg.services.alignment.aligning import (
    MAX_TEXT,
    Alignment,
    AlignQuery,
    align,
    health,
    ranked,
    version,
)
from edukg.services.alignment.calibrate import bands_text
from edukg.services.alignment.checking import CheckQuery, check
from edukg.services.alignment.similarity import Similar, SimilarQuery, similar

__all__ = [
    "MAX_TEXT",
    "AlignQuery",
    "Alignment",
    "CheckQuery",
    "Similar",
    "SimilarQuery",
    "align",
    "bands_text",
    "check",
    "health",
    "ranked",
    "similar",
    "version",
]
