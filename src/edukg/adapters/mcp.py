"""The MCP tool server for AI assistants: the hosted Knowledge Graph's tools, by name.

Lesson-planning assistants find the server by its tool names, so the names and
arguments follow the hosted server. Every tool calls the same service functions
as the REST routes, returns at most a documented number of records (with a note
when more exist), and answers bad arguments with a tool error that says what to
fix. Served over streamable HTTP at /mcp (stateless: any worker or node answers
any request) with the same API keys as REST, and over stdio for desktop apps.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import orjson
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Field, ValidationError

from edukg import __version__
from edukg.adapters.params import UUID_EXAMPLE
from edukg.model.errors import ApiError
from edukg.model.vocabulary import LESSON, STANDARD
from edukg.services import graph as service
from edukg.store.base import BUILDS_TOWARDS, COMPONENTS, PREREQUISITES, Matching, Store

MAX_STANDARDS = 50
MAX_LESSONS = 50
MAX_LINKED = 100
MAX_SUBSTANDARDS = 30
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_ORDINAL = re.compile(
    r"^\s*(?:grade\s+)?([^,]+?)\s*(?:,\s*unit\s+(\w+))?\s*,\s*lesson\s+(\w+)\s*$", re.I
)
_PRACTICE = re.compile(r"^MP[1-8]$")

INSTRUCTIONS = (
    "edukg serves K-12 academic standards (with CASE UUIDs), their hierarchy, learning "
    "components, learning progressions and curriculum lessons from the Learning Commons "
    "Knowledge Graph. Find a standard first (find_standard_statement), then use its "
    "caseIdentifierUUID with the other tools."
)

Uuid = Annotated[
    str,
    Field(
        description=f"CASE UUID of a standard, e.g. {UUID_EXAMPLE}", min_length=36, max_length=36
    ),
]


def _decode(doc: bytes) -> dict[str, Any]:
    decoded: dict[str, Any] = orjson.loads(doc)
    return decoded


def _natural(code: str | None) -> tuple[Any, ...]:
    """Sort 2.OA.A.2 before 2.OA.A.10."""
    parts = re.split(r"(\d+)", code or "")
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


def _uuid(value: str) -> str:
    if not _UUID.match(value or ""):
        raise ToolError(
            f'caseIdentifierUUID must be a UUID such as "{UUID_EXAMPLE}"; got {value!r}.'
        )
    return value.lower()


def _call(fn: Any, *args: Any) -> Any:
    """Run a service function; its API errors become tool errors an assistant can act on."""
    try:
        return fn(*args)
    except ApiError as exc:
        raise ToolError(exc.message) from None


def _standard_summary(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "code": record.get("statementCode"),
        "caseIdentifierUUID": record.get("caseIdentifierUUID"),
        "statement": record.get("description"),
        "gradeLevel": record.get("gradeLevel"),
        "jurisdiction": record.get("jurisdiction"),
        "academicSubject": record.get("academicSubject"),
    }


def plain_argument_errors(tool: str, error: ValidationError) -> str:
    """A tool's argument errors in plain words, as the REST API words its own."""
    problems = []
    for item in error.errors():
        name = ".".join(str(part) for part in item["loc"] if not isinstance(part, int)) or "input"
        problems.append(_plain_problem(f"`{name}`", item["type"], item.get("ctx") or {}))
    return f"{tool}: " + "; ".join(dict.fromkeys(problems)) + "."


def _plain_problem(name: str, kind: str, ctx: dict[str, Any]) -> str:
    if kind == "missing":
        return f"{name} is required"
    if kind == "list_type":
        return f'{name} must be a list, e.g. ["fractions"]'
    if kind in ("string_type", "string_unicode"):
        return f"{name} must be text"
    if kind in ("string_too_long", "too_long"):
        unit = "characters" if kind.startswith("string") else "items"
        return f"{name} takes at most {ctx.get('max_length')} {unit}"
    if kind in ("string_too_short", "too_short"):
        unit = "characters" if kind.startswith("string") else "items"
        return f"{name} takes at least {ctx.get('min_length')} {unit}"
    if kind == "literal_error":
        return f"{name} must be one of {ctx.get('expected')}"
    if kind == "extra_forbidden":
        return f"{name} is not an argument of this tool"
    return f"{name} is not valid here"


class _Server(MCPServer):
    """The SDK's server, with argument errors that an assistant (or a person) can act on."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(plain_argument_errors(name, cause)) from cause
            raise


def build_server(store: Store) -> MCPServer:
    """The MCP server over `store`, with the hosted server's tools."""
    # log_level: the SDK configures root logging when none is set up; keep it to warnings.
    server = _Server("edukg", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    def substandards(case_uuid: str) -> list[dict[str, Any]]:
        page = service.linked(store, case_uuid, "child", None, MAX_SUBSTANDARDS)
        rows = [_decode(doc) for _, doc in page.rows[:MAX_SUBSTANDARDS]]
        rows.sort(key=lambda r: _natural(r.get("statementCode")))
        return [
            {
                "code": r.get("statementCode"),
                "caseIdentifierUUID": r.get("caseIdentifierUUID"),
                "statement": r.get("description"),
            }
            for r in rows
        ]

    @server.tool(
        name="find_standard_statement",
        description=(
            "Find academic standards by code or by keywords. `code` is a case-insensitive "
            "prefix on the statement code: '2.OA' returns 2.OA and every 2.OA.*, '3.NF.A.1' "
            "just that standard. `keywords` matches standards whose statement contains ANY of "
            "the words. Give one of code or keywords. Optional filters: academicSubject "
            "(e.g. Mathematics) and jurisdiction (e.g. California, Multi-State for Common "
            f"Core); no jurisdiction filter unless given. At most {MAX_STANDARDS} standards, "
            "ordered by code, each with its direct sub-standards; a note says when more "
            "matched."
        ),
    )
    def find_standard_statement(
        code: Annotated[
            str | None, Field(description="statement code or code prefix", max_length=50)
        ] = None,
        keywords: Annotated[
            list[Annotated[str, Field(max_length=100)]] | None,
            Field(
                description="words; a standard matches when ANY appears in its statement",
                max_length=20,
            ),
        ] = None,
        academicSubject: Annotated[
            str | None, Field(description="e.g. Mathematics", max_length=100)
        ] = None,
        jurisdiction: Annotated[
            str | None, Field(description="e.g. California, Multi-State", max_length=100)
        ] = None,
    ) -> dict[str, Any]:
        words = tuple(w.strip().lower() for w in keywords or () if w and w.strip())
        if bool(code and code.strip()) == bool(words):
            raise ToolError(
                "Give exactly one of `code` (e.g. '3.NF.A.1') or `keywords` (a list of words)."
            )
        wanted = code.strip().upper() if code else None
        query = Matching(
            STANDARD,
            code=wanted,
            code_prefix=f"{wanted}." if wanted else None,  # 2.OA: itself and 2.OA.*
            words=words,
            subject=academicSubject,
            jurisdiction=jurisdiction,
        )
        rows = service.matching(store, query, 2000)
        records = sorted(
            (_decode(doc) for _, doc in rows),
            key=lambda r: (_natural(r.get("statementCode")), r["identifier"]),
        )
        standards = []
        for record in records[:MAX_STANDARDS]:
            summary = _standard_summary(record)
            summary["subStandards"] = (
                substandards(record["caseIdentifierUUID"]) if record.get("hasChildren") else []
            )
            standards.append(summary)
        result: dict[str, Any] = {"standards": standards}
        if len(records) > MAX_STANDARDS:
            result["note"] = (
                f"{len(records)}{'+' if len(rows) >= 2000 else ''} standards matched; the first "
                f"{MAX_STANDARDS} by code are shown. Narrow the code, keywords or filters."
            )
        elif not standards:
            result["note"] = "No standard matched. Try a shorter code prefix or other keywords."
        return result

    @server.tool(
        name="find_standards_progression_from_standard",
        description=(
            "The learning progression around a standard: direction 'backward' gives the "
            "standards that build towards it (prerequisites), 'forward' the standards it builds "
            f"towards. Each with code and statement; at most {MAX_LINKED}."
        ),
    )
    def find_standards_progression_from_standard(
        caseIdentifierUUID: Uuid,
        direction: Annotated[
            Literal["backward", "forward"], Field(description="backward or forward")
        ],
    ) -> dict[str, Any]:
        relation = PREREQUISITES if direction == "backward" else BUILDS_TOWARDS
        page = _call(service.linked, store, _uuid(caseIdentifierUUID), relation, None, MAX_LINKED)
        linked = [_standard_summary(_decode(doc)) for _, doc in page.rows[:MAX_LINKED]]
        linked.sort(key=lambda r: _natural(r["code"]))
        result: dict[str, Any] = {"direction": direction, "standards": linked}
        if len(page.rows) > MAX_LINKED:
            result["note"] = f"More than {MAX_LINKED} standards are linked; the first are shown."
        return result

    @server.tool(
        name="find_learning_components_from_standard",
        description=(
            "The learning components (fine-grained skills) that support a standard, with "
            f"their descriptions; at most {MAX_LINKED}."
        ),
    )
    def find_learning_components_from_standard(caseIdentifierUUID: Uuid) -> dict[str, Any]:
        page = _call(service.linked, store, _uuid(caseIdentifierUUID), COMPONENTS, None, MAX_LINKED)
        components = [
            {"identifier": r["identifier"], "description": r.get("description")}
            for r in (_decode(doc) for _, doc in page.rows[:MAX_LINKED])
        ]
        result: dict[str, Any] = {"learningComponents": components}
        if not components:
            result["note"] = "The data links no learning components to this standard."
        return result

    @server.tool(
        name="find_misconceptions_for_standard",
        description=(
            "Common student misconceptions for a standard, where the data has them. The "
            "public Knowledge Graph export holds none, so this returns an empty list with "
            "a note."
        ),
    )
    def find_misconceptions_for_standard(
        caseIdentifierUUID: Uuid,
        subject: Annotated[
            str | None, Field(description="e.g. Mathematics", max_length=100)
        ] = None,
    ) -> dict[str, Any]:
        _call(service.standard, store, _uuid(caseIdentifierUUID))
        return {
            "misconceptions": [],
            "note": "The loaded Knowledge Graph export contains no misconception data.",
        }

    @server.tool(
        name="list_standards_for_mathematical_practice",
        description=(
            "The Standards for Mathematical Practice (MP1 to MP8) in the data, with their "
            "statements, for every jurisdiction that has them."
        ),
    )
    def list_standards_for_mathematical_practice() -> dict[str, Any]:
        found = []
        for n in range(1, 9):
            for _, doc in service.matching(store, Matching(STANDARD, code=f"MP{n}"), 100):
                found.append(_standard_summary(_decode(doc)))
        found.sort(key=lambda r: (r["jurisdiction"] or "", _natural(r["code"])))
        result: dict[str, Any] = {"practices": found}
        if not found:
            result["note"] = "The loaded data holds no Standards for Mathematical Practice."
        return result

    @server.tool(
        name="find_curriculum_lessons",
        description=(
            "Find curriculum lessons by one of: caseIdentifierUUID (lessons aligned to that "
            "standard), ordinalName ('Grade 6, Unit 2, Lesson 3'), or lessonName (words of "
            "the lesson's name). Optional author (e.g. Illustrative Mathematics). Returns "
            f"candidate lessons with fullOrdinalName, lessonName and lessonIdentifier; at most "
            f"{MAX_LESSONS}."
        ),
    )
    def find_curriculum_lessons(
        caseIdentifierUUID: Annotated[
            str | None, Field(description="CASE UUID of a standard", max_length=36)
        ] = None,
        ordinalName: Annotated[
            str | None, Field(description="'Grade 6, Unit 2, Lesson 3'", max_length=100)
        ] = None,
        lessonName: Annotated[
            str | None, Field(description="words of the lesson's name", max_length=200)
        ] = None,
        author: Annotated[
            str | None, Field(description="e.g. Illustrative Mathematics", max_length=200)
        ] = None,
    ) -> dict[str, Any]:
        given = [x for x in (caseIdentifierUUID, ordinalName, lessonName) if x and x.strip()]
        if len(given) != 1:
            raise ToolError("Give exactly one of caseIdentifierUUID, ordinalName or lessonName.")
        if caseIdentifierUUID:
            page = _call(
                service.aligned_to_standard, store, _uuid(caseIdentifierUUID), LESSON, None, 1000
            )
            rows = page.rows
        elif lessonName:
            rows = service.matching(
                store, Matching(LESSON, words=(lessonName.strip().lower(),)), 1000
            )
        else:
            rows = _lessons_by_ordinal(store, ordinalName or "")
        lessons = []
        for _, doc in rows:
            record = _decode(doc)
            if author and (record.get("author") or "").lower() != author.strip().lower():
                continue
            lessons.append(
                {
                    "fullOrdinalName": service.lesson_full_ordinal_name(
                        store, record["identifier"]
                    ),
                    "lessonName": record.get("name"),
                    "lessonIdentifier": record["identifier"],
                    "courseCode": record.get("courseCode"),
                    "author": record.get("author"),
                }
            )
        lessons.sort(key=lambda r: _natural(r["fullOrdinalName"]))
        result: dict[str, Any] = {"lessons": lessons[:MAX_LESSONS]}
        if len(lessons) > MAX_LESSONS:
            result["note"] = f"{len(lessons)} lessons matched; the first {MAX_LESSONS} are shown."
        elif not lessons:
            result["note"] = "No lesson matched."
        return result

    @server.tool(
        name="find_materials_for_lesson",
        description=(
            "What the data holds for a lesson and its parts: materialSource lists which, of "
            "'lesson' (the lesson's record), 'activity' (its activities in order) and "
            "'assessment' (its assessments). The text of student and teacher materials is "
            "not in the public export; the result says so."
        ),
    )
    def find_materials_for_lesson(
        lessonIdentifier: Annotated[
            str,
            Field(
                description="a lesson identifier, e.g. from find_curriculum_lessons", max_length=256
            ),
        ],
        materialSource: Annotated[
            list[Literal["lesson", "activity", "assessment"]],
            Field(description="any of lesson, activity, assessment", min_length=1),
        ],
    ) -> dict[str, Any]:
        lesson = _call(service.curriculum_record, store, LESSON, lessonIdentifier)
        result: dict[str, Any] = {
            "lessonIdentifier": lessonIdentifier,
            "fullOrdinalName": service.lesson_full_ordinal_name(store, lessonIdentifier),
        }
        if "lesson" in materialSource:
            result["lesson"] = _decode(lesson.doc)
        if "activity" in materialSource:
            page = service.lesson_activities(store, lessonIdentifier, None, 200)
            result["activities"] = [_decode(doc) for _, doc in page.rows[:200]]
        if "assessment" in materialSource:
            page = service.lesson_assessments(store, lessonIdentifier, None, 200)
            result["assessments"] = [_decode(doc) for _, doc in page.rows[:200]]
        result["note"] = (
            "Materials text (student pages, teacher guides) is not part of the public "
            "Knowledge Graph export; these are the records it holds for the lesson."
        )
        return result

    return server


def _lessons_by_ordinal(store: Store, ordinal: str) -> list[tuple[str, bytes]]:
    """Lessons for "Grade 6, Unit 2, Lesson 3": exact first, else same grade and lesson number."""
    match = _ORDINAL.match(ordinal)
    if not match:
        raise ToolError(
            "ordinalName looks like 'Grade 6, Unit 2, Lesson 3' (the unit is optional)."
        )
    grade, unit, lesson = match.groups()
    grade_part = (
        f"GRADE {grade.upper()}" if not grade.lower().startswith("grade") else grade.upper()
    )
    if unit:
        exact = f"{grade_part}, UNIT {unit.upper()}, LESSON {lesson.upper()}"
        rows = service.matching(store, Matching(LESSON, code=exact), MAX_LESSONS + 1)
        if rows:
            return rows
    candidates = service.matching(store, Matching(LESSON, code_prefix=f"{grade_part},"), 5000)
    suffix = f"LESSON {lesson.upper()}"
    out = []
    for row in candidates:
        full = service.lesson_full_ordinal_name(store, row[0]) or ""
        if full.upper().endswith(", " + suffix):
            out.append(row)
    return out


def streamable_http_app(server: MCPServer) -> Any:
    """The MCP endpoint as an ASGI app: stateless, JSON responses, at /mcp.

    DNS-rebinding protection is off because every request must carry an API key.
    """
    return server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
