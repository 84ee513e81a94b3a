"""The MCP tool server for AI assistants: the hosted Knowledge Graph's tools, by name.

Lesson-planning assistants find the server by its tool names, so the names and
arguments follow the hosted server. Every tool calls the same service functions
as the REST routes, returns at most a documented number of records (with a note
when more exist), and answers bad arguments with a tool error that says what to
fix. Served over streamable HTTP at /mcp (stateless: any worker or node answers
any request) with the same API keys as REST, and over stdio for desktop apps.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

import orjson
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Field, ValidationError

from edukg import __version__
from edukg.adapters import assistant, assistant_alignment
from edukg.adapters.assistant import MAX_LESSONS, MAX_LINKED, MAX_STANDARDS
from edukg.adapters.params import (
    GradeLevels,
    JurisdictionFilter,
    declared,
    instance,
    parse_body,
)
from edukg.adapters.rest import text_alignment
from edukg.adapters.rest.base import Operation
from edukg.model.alignment import Confidence
from edukg.model.errors import ApiError
from edukg.model.framework_rows import CoverageCounts
from edukg.model.vocabulary import UUID_EXAMPLE
from edukg.services.alignment import bands_text
from edukg.store.base import Store

INSTRUCTIONS = (
    "edukg serves K-12 academic standards (with CASE UUIDs), their hierarchy, learning "
    "components, learning progressions and curriculum lessons from the Learning Commons "
    "Knowledge Graph. Find a standard first (find_standard_statement), then use its "
    "caseIdentifierUUID with the other tools."
)

# The store of the release an HTTP request pinned (set by the app around the request;
# the SDK runs a request's tool calls in tasks and threads that inherit it).
REQUEST_STORE: ContextVar[Store | None] = ContextVar("edukg_mcp_store", default=None)

Uuid = Annotated[
    str,
    Field(
        description=f"CASE UUID of a standard, e.g. {UUID_EXAMPLE}", min_length=36, max_length=36
    ),
]


def _call(fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """Run a service function; its API errors become tool errors an assistant can act on."""
    try:
        return fn(*args)
    except ApiError as exc:
        raise ToolError(exc.message) from None


def plain_argument_errors(error: ValidationError) -> str:
    """A tool's argument errors in plain words, as the REST API words its own."""
    problems = []
    for item in error.errors():
        name = ".".join(str(part) for part in item["loc"] if not isinstance(part, int)) or "input"
        problems.append(_plain_problem(f"`{name}`", item["type"], item.get("ctx") or {}))
    return "; ".join(dict.fromkeys(problems)) + "."


def _argument_errors(tool: str, arguments: dict[str, Any], error: ValidationError) -> str:
    """Why a tool's arguments are refused: where the tool is a REST operation's, in that
    operation's words (read from its declaration), else in plain words."""
    if tool in TOOL_OPERATIONS:
        try:
            _as_rest(tool, arguments)
        except ToolError as refused:
            return str(refused)
    return plain_argument_errors(error)


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
    if kind in ("int_type", "int_parsing"):
        return f"{name} must be an integer"
    if kind == "extra_forbidden":
        return f"{name} is not an argument of this tool"
    return f"{name} is not valid here"


class _Server(MCPServer):
    """The SDK's server, with argument errors that an assistant (or a person) can act on."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        unknown = sorted(set(arguments or {}) - _arguments_of(name))
        if name in _DESCRIPTIONS and unknown:  # the SDK would drop them silently
            takes = ", ".join(f"`{a}`" for a in sorted(_arguments_of(name))) or "none"
            raise ToolError(
                f"{name}: `{unknown[0]}` is not an argument of this tool (it takes {takes})."
            )
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise  # a crash: the SDK's words, which hide it
        except ToolError as exc:
            # The SDK puts "Error executing tool NAME: " before what was refused; the
            # reason is said here instead, after the tool's name, once.
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                reason = _argument_errors(name, arguments or {}, cause)
                raise ToolError(f"{name}: {reason}") from cause
            if isinstance(cause, ToolError):
                raise ToolError(f"{name}: {cause}") from cause
            raise


# Each tool's description, as an assistant reads it when choosing a tool.
def _field_names(shape: type) -> list[str]:
    """A row type's fields, as its answers name them (model.framework_rows)."""
    return [field.name for field in dataclasses.fields(shape)]


_BANDS = get_args(get_args(Confidence)[0])  # the confidence bands, as answers name them
_DESCRIPTIONS: dict[str, str] = {
    "find_standard_statement": (
        "Find academic standards by code or by keywords. `code` is a case-insensitive "
        "prefix on the statement code: '2.OA' returns 2.OA and every 2.OA.*, '3.NF.A.1' "
        "just that standard; short forms name the standard they mean (6.RP.3c is "
        "6.RP.A.3.c, A-REI.11 is HSA-REI.D.11). `keywords` matches standards whose "
        "statement contains ANY of the words. Give one of code or keywords. Optional filters: academicSubject "
        "(e.g. Mathematics) and jurisdiction (e.g. California, Multi-State for Common "
        f"Core); no jurisdiction filter unless given. At most {MAX_STANDARDS} standards, "
        "ordered by code, each with its direct sub-standards; a note says when more "
        "matched."
    ),
    "find_standards_progression_from_standard": (
        "The learning progression around a standard: direction 'backward' gives the "
        "standards that build towards it (prerequisites), 'forward' the standards it builds "
        f"towards. Each with code and statement; at most {MAX_LINKED}."
    ),
    "find_learning_components_from_standard": (
        "The learning components (fine-grained skills) that support a standard, with "
        f"their descriptions; at most {MAX_LINKED}."
    ),
    "find_misconceptions_for_standard": (
        "Common student misconceptions for a standard, where the data has them. The "
        "public Knowledge Graph export holds none, so this returns an empty list with "
        "a note."
    ),
    "list_standards_for_mathematical_practice": (
        "The Standards for Mathematical Practice (MP1 to MP8) in the data, with their "
        "statements, for every jurisdiction that has them."
    ),
    "find_curriculum_lessons": (
        "Find curriculum lessons by one of: caseIdentifierUUID (lessons aligned to that "
        "standard), ordinalName ('Grade 6, Unit 2, Lesson 3'), or lessonName (words of "
        "the lesson's name). Optional author (e.g. Illustrative Mathematics). Returns "
        f"candidate lessons with fullOrdinalName, lessonName and lessonIdentifier; at most "
        f"{MAX_LESSONS}."
    ),
    "find_materials_for_lesson": (
        "What the data holds for a lesson and its parts: materialSource lists which, of "
        "'lesson' (the lesson's record), 'activity' (its activities in order) and "
        "'assessment' (its assessments). The text of student and teacher materials is "
        "not in the public export; the result says so."
    ),
    "find_counterpart_standards": (
        "The standards of another jurisdiction that say the same as a standard, by the "
        "evidence of learning components: published crosswalks as published, others "
        "derived from the learning components the two share (Jaccard 0 to 1, 1 = the same "
        "skills). Give the standard's caseIdentifierUUID and the jurisdiction to look in "
        f"(e.g. Texas); optional minJaccard. Strongest first; at most {MAX_LINKED}."
    ),
    "report_curriculum_coverage": (
        "How much of a standards framework a curriculum covers: counts of standards "
        "covered directly (lessons, activities or assessments aligned to them), through a "
        "crosswalk (aligned to a counterpart standard), and not at all, per grade and per "
        f"domain ({', '.join(_field_names(CoverageCounts))}), with the codes of the "
        "uncovered standards. The framework is a CASE UUID "
        "or JURISDICTION:SUBJECT (e.g. 'New York:Mathematics'); optional gradeLevel list "
        f"and minJaccard. Code lists at most {MAX_STANDARDS}."
    ),
    "check_text_against_standard": (
        "Check one text (an item, a lesson, an activity; up to 20,000 characters) against one"
        " standard, learning component by learning component: whether the text is aligned,"
        f" its calibrated score and confidence ({' | '.join(_BANDS)}), each of the standard's"
        " learning components addressed or not with the passages that address it, and where"
        " the standard ranks for the text among its jurisdiction's standards (with the codes"
        " that fit better). Name the standard by caseIdentifierUUID, or by statementCode"
        " with jurisdiction (default Multi-State)."
    ),
    "align_text_to_standards": (
        "Which standards a text (a lesson, an item, an activity; up to 20,000 characters) "
        "addresses, by meaning and words, with the evidence: each standard's code, "
        f"statement, calibrated score and confidence band ({' | '.join(_BANDS)}; of first"
        " results on real "
        f"problems: {bands_text()}), the passages of the text that "
        "support it and the learning components they matched. Say where to look: "
        "jurisdiction (e.g. California, Multi-State for Common Core) or framework (a CASE "
        "UUID or JURISDICTION:SUBJECT); optional gradeLevel list and limit (1-50, "
        "default 10)."
    ),
}


# The tools that price a call as a REST operation does (the same work costs the same
# tokens on every entrance): the operation whose cost rules apply.
def _operation(operation_id: str) -> Operation[Any]:
    return next(op for op in text_alignment.OPERATIONS if op.operation_id == operation_id)


TOOL_OPERATIONS: dict[str, Operation[Any]] = {
    "align_text_to_standards": _operation("alignTextToStandards"),
    "check_text_against_standard": _operation("checkTextAgainstStandard"),
}


def _as_rest(tool: str, arguments: dict[str, Any]) -> Any:
    """A tool's arguments read as its REST operation reads a body (the same names, types,
    limits and enumerations, and the same words for what is wrong), as that operation's
    typed parameters; the arguments the operation does not take are not read."""
    op = TOOL_OPERATIONS[tool]
    params = declared(op.params)
    names = {p.name for p in params}
    given = {k: v for k, v in arguments.items() if v is not None and k in names}
    try:
        values = parse_body(params, orjson.dumps(given))
    except ApiError as exc:
        raise ToolError(exc.message) from None
    return instance(op.params, values)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Filters:
    """The filters tools share with REST's lists, read by REST's rules."""

    jurisdiction: JurisdictionFilter = None
    gradeLevel: GradeLevels = ()


def _filters(jurisdiction: str | None = None, grades: list[str] | str | None = None) -> _Filters:
    """A tool's jurisdiction and grades, refused in REST's words where REST refuses them."""
    given = {"jurisdiction": jurisdiction, "gradeLevel": grades}
    try:
        values = parse_body(declared(_Filters), orjson.dumps({k: v for k, v in given.items()
                                                               if v is not None}))  # fmt: skip
    except ApiError as exc:
        raise ToolError(exc.message) from None
    return instance(_Filters, values)


class _Tools:
    """The tools' signatures (argument names, types and limits, as the hosted server's),
    each a thin call of the services for one store."""

    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def store(self) -> Store:
        """The store of the release the request pinned, else the server's own."""
        return REQUEST_STORE.get() or self._store

    def find_standard_statement(
        self,
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
        place = _filters(jurisdiction).jurisdiction
        return _call(assistant.find_standards, self.store, code, keywords, academicSubject, place)

    def find_standards_progression_from_standard(
        self,
        caseIdentifierUUID: Uuid,
        direction: Annotated[
            Literal["backward", "forward"], Field(description="backward or forward")
        ],
    ) -> dict[str, Any]:
        return _call(assistant.progression, self.store, caseIdentifierUUID, direction)

    def find_learning_components_from_standard(self, caseIdentifierUUID: Uuid) -> dict[str, Any]:
        return _call(assistant.learning_components, self.store, caseIdentifierUUID)

    def find_misconceptions_for_standard(
        self,
        caseIdentifierUUID: Uuid,
        subject: Annotated[
            str | None, Field(description="e.g. Mathematics", max_length=100)
        ] = None,
    ) -> dict[str, Any]:
        return _call(assistant.misconceptions, self.store, caseIdentifierUUID)

    def list_standards_for_mathematical_practice(self) -> dict[str, Any]:
        return _call(assistant.mathematical_practices, self.store)

    def find_curriculum_lessons(
        self,
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
        return _call(
            assistant.find_lessons, self.store, caseIdentifierUUID, ordinalName, lessonName, author
        )

    def find_materials_for_lesson(
        self,
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
        return _call(assistant.lesson_materials, self.store, lessonIdentifier, list(materialSource))

    def find_counterpart_standards(
        self,
        caseIdentifierUUID: Uuid,
        jurisdiction: Annotated[str, Field(description="e.g. Texas, Multi-State", max_length=100)],
        minJaccard: Annotated[float | None, Field(description="0 to 1", ge=0.0, le=1.0)] = None,
    ) -> dict[str, Any]:
        place = _filters(jurisdiction).jurisdiction
        return _call(
            assistant_alignment.find_counterparts,
            self.store,
            caseIdentifierUUID.lower(),
            place,
            minJaccard,
        )

    def report_curriculum_coverage(
        self,
        curriculumId: Annotated[str, Field(description="e.g. im360", max_length=64)],
        framework: Annotated[
            str,
            Field(description="CASE UUID or JURISDICTION:SUBJECT", min_length=1, max_length=150),
        ],
        gradeLevel: Annotated[
            list[str] | str | None, Field(description='one grade or a list, e.g. ["4"]')
        ] = None,
        minJaccard: Annotated[float | None, Field(description="0 to 1", ge=0.0, le=1.0)] = None,
    ) -> dict[str, Any]:
        grades = _filters(grades=gradeLevel).gradeLevel
        return _call(
            assistant_alignment.curriculum_coverage,
            self.store,
            curriculumId,
            framework,
            list(grades),
            minJaccard,
        )

    def check_text_against_standard(
        self,
        text: Annotated[
            str, Field(description="the text to check", min_length=1, max_length=20_000)
        ],
        caseIdentifierUUID: Annotated[
            str | None, Field(description="the standard's CASE UUID; or give statementCode")
        ] = None,
        statementCode: Annotated[
            str | None, Field(description="the standard's code, e.g. 3.MD.C.7.d")
        ] = None,
        jurisdiction: Annotated[
            str | None, Field(description="where statementCode is, default Multi-State")
        ] = None,
    ) -> dict[str, Any]:
        body = _as_rest("check_text_against_standard", {
            "text": text, "caseIdentifierUUID": caseIdentifierUUID,
            "statementCode": statementCode, "jurisdiction": jurisdiction,
        })  # fmt: skip
        return _call(_checked_text, self.store, body)

    def align_text_to_standards(
        self,
        text: Annotated[
            str, Field(description="the text to align", min_length=1, max_length=20_000)
        ],
        jurisdiction: Annotated[
            str | None, Field(description="e.g. California, Multi-State", max_length=100)
        ] = None,
        framework: Annotated[
            str | None,
            Field(description="CASE UUID or JURISDICTION:SUBJECT", min_length=1, max_length=150),
        ] = None,
        gradeLevel: Annotated[
            list[str] | str | None, Field(description='one grade or a list, e.g. ["4"]')
        ] = None,
        limit: Annotated[int, Field(description="1 to 50", strict=True)] = 10,
    ) -> dict[str, Any]:
        if framework is not None and jurisdiction is not None:
            raise ToolError("Give `jurisdiction` or `framework`, not both.")
        body = _as_rest("align_text_to_standards", {
            "text": text, "jurisdiction": jurisdiction, "gradeLevel": gradeLevel, "limit": limit,
        })  # fmt: skip
        return _call(
            assistant_alignment.align_text,
            self.store,
            text,
            body.jurisdiction,
            framework,
            list(body.gradeLevel),
            body.limit,
        )


def _checked_text(store: Store, body: Any) -> dict[str, Any]:
    text_alignment.check_choice(body)
    return assistant_alignment.check_text(store, body.text, body.caseIdentifierUUID,
                                          body.statementCode, body.jurisdiction)  # fmt: skip


def _arguments_of(tool: str) -> set[str]:
    """The argument names a tool takes (its method's parameters)."""
    method = getattr(_Tools, tool, None)
    if method is None:
        return set()
    return set(inspect.signature(method).parameters) - {"self"}


def build_server(store: Store) -> MCPServer:
    """The MCP server over `store`, with the hosted server's tools."""
    # log_level: the SDK configures root logging when none is set up; keep it to warnings.
    server = _Server("edukg", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    tools = _Tools(store)
    for name, description in _DESCRIPTIONS.items():
        server.tool(name=name, description=description)(getattr(tools, name))
    return server


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
