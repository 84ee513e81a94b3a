"""Curriculum: courses, scope and sequence, groupings, lessons, activities, assessments,
alignments to standards, and the dependency map."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from edukg.adapters.params import Cursor, Limit, Param, StandardPage, declared
from edukg.adapters.rest.base import Call, Operation, ref
from edukg.adapters.schemas import page_schema
from edukg.model.shapes import ScopeView
from edukg.model.vocabulary import ACTIVITY, ASSESSMENT, LESSON
from edukg.services import graph as service

TAGS = ("Curriculum",)
_ID_LENGTH = 256


def _path_id(description: str) -> Param:
    return Param(description, location="path", max_length=_ID_LENGTH)


_CourseId = Annotated[str, _path_id("Identifier of the course")]
_LessonId = Annotated[str, _path_id("Identifier of the lesson")]


@dataclass(frozen=True, slots=True, kw_only=True)
class ListCourses:
    """Parameters of listCourses."""

    curriculumId: Annotated[
        str,
        Param(
            "A curriculum in the data: the prefix of its courses' courseCode (e.g. im360, demo)",
            max_length=64,
            example="im360",
        ),
    ]
    limit: Limit = 100
    cursor: Cursor = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ScopeAndSequence:
    """Parameters of getCourseScopeAndSequence."""

    courseId: _CourseId
    view: Annotated[ScopeView, Param("summary (default) or full")] = "summary"


@dataclass(frozen=True, slots=True, kw_only=True)
class Grouping:
    """Parameters of getLessonGroupingById."""

    groupingId: Annotated[str, _path_id("Identifier of the lesson grouping")]


@dataclass(frozen=True, slots=True, kw_only=True)
class Lesson:
    """Parameters of getLessonById."""

    lessonId: _LessonId


@dataclass(frozen=True, slots=True, kw_only=True)
class LessonPage:
    """Parameters of getLessonActivities and getLessonStandards."""

    lessonId: _LessonId
    limit: Limit = 100
    cursor: Cursor = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ActivityPage:
    """Parameters of getActivityStandards."""

    activityId: Annotated[str, _path_id("Identifier of the activity")]
    limit: Limit = 100
    cursor: Cursor = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AssessmentPage:
    """Parameters of getAssessmentStandards."""

    assessmentId: Annotated[str, _path_id("Identifier of the assessment")]
    limit: Limit = 100
    cursor: Cursor = None


def _query_id(description: str) -> Param:
    return Param(description, max_length=_ID_LENGTH)


@dataclass(frozen=True, slots=True, kw_only=True)
class ListAssessments:
    """Parameters of listAssessments."""

    courseId: Annotated[str, _query_id("Identifier of the course")]
    lessonId: Annotated[str | None, _query_id("Only assessments of this lesson")] = None
    lessonGroupingId: Annotated[
        str | None, _query_id("Only assessments of this lesson grouping")
    ] = None
    limit: Limit = 100
    cursor: Cursor = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DependencyMap:
    """Parameters of getCurriculumDependencyMap."""

    curriculumId: Annotated[str, Param("A curriculum in the data", location="path", max_length=64)]
    limit: Limit = 100
    cursor: Cursor = None


def _courses(call: Call[ListCourses]) -> bytes:
    p = call.params
    return call.page(service.courses(call.store, p.curriculumId, call.after(), p.limit))


def _scope(call: Call[ScopeAndSequence]) -> bytes:
    return service.scope_and_sequence(call.store, call.params.courseId, call.params.view)


def _grouping(call: Call[Grouping]) -> bytes:
    return service.lesson_grouping(call.store, call.params.groupingId)


def _lesson(call: Call[Lesson]) -> bytes:
    return service.curriculum_record(call.store, LESSON, call.params.lessonId).doc


def _activities(call: Call[LessonPage]) -> bytes:
    p = call.params
    page = service.lesson_activities(call.store, p.lessonId, call.after(), p.limit)
    return call.page(page)


def _assessments(call: Call[ListAssessments]) -> bytes:
    p = call.params
    page = service.assessments(
        call.store, p.courseId, p.lessonId, p.lessonGroupingId, call.after(), p.limit
    )
    return call.page(page)


def _aligned(call: Call[LessonPage | ActivityPage | AssessmentPage]) -> bytes:
    p = call.params
    if isinstance(p, LessonPage):
        kind, identifier = LESSON, p.lessonId
    elif isinstance(p, ActivityPage):
        kind, identifier = ACTIVITY, p.activityId
    else:
        kind, identifier = ASSESSMENT, p.assessmentId
    page = service.aligned_standards(call.store, kind, identifier, call.after(), p.limit)
    return call.page(page)


def _aligned_to(kind: str) -> Callable[[Call[StandardPage]], bytes]:
    def handler(call: Call[StandardPage]) -> bytes:
        p = call.params
        page = service.aligned_to_standard(
            call.store, p.caseIdentifierUUID, kind, call.after(), p.limit
        )
        return call.page(page)

    return handler


def _dependency_map(call: Call[DependencyMap]) -> bytes:
    p = call.params
    page = service.dependency_map(call.store, p.curriculumId, call.after(), p.limit)
    return call.page(page, key=b"dependencies")


def _standards_of(
    kind: str, segment: str, params: type[LessonPage | ActivityPage | AssessmentPage]
) -> Operation[LessonPage | ActivityPage | AssessmentPage]:
    (param,) = (f.name for f in declared(params) if f.location == "path")
    return Operation(
        path=f"/{segment}/{{{param}}}/standards",
        operation_id=f"get{kind.capitalize()}Standards",
        summary=f"Standards aligned to {'an' if kind[0] in 'aeiou' else 'a'} {kind}",
        description="Full academic standard records, each with `curriculumAlignmentType` "
        "(addressing, building_toward, building_on, practicing) from the alignment.",
        handler=_aligned,
        response_schema=page_schema("AlignedStandard"),
        params=params,
        tags=(*TAGS, "Academic standards"),
        not_found=True,
    )


def _of_standard(kind: str, suffix: str, schema: str, operation_id: str) -> Operation[StandardPage]:
    return Operation(
        path=f"/academic-standards/{{caseIdentifierUUID}}/{suffix}",
        operation_id=operation_id,
        summary=f"{suffix.capitalize()} aligned to a standard",
        description=f"Full {kind} records aligned to the standard, each with "
        "`curriculumAlignmentType`.",
        handler=_aligned_to(kind),
        response_schema=page_schema(schema),
        params=StandardPage,
        tags=(*TAGS, "Academic standards"),
        not_found=True,
    )


OPERATIONS = (
    Operation(
        path="/courses",
        operation_id="listCourses",
        summary="Courses of a curriculum",
        description="`curriculumId` is required; an unknown one is a 400.",
        handler=_courses,
        response_schema=page_schema("Course"),
        params=ListCourses,
        tags=TAGS,
    ),
    Operation(
        path="/courses/{courseId}/scope-and-sequence",
        operation_id="getCourseScopeAndSequence",
        summary="Scope and sequence of a course",
        description="The nested lesson groupings of a course with their lessons, in "
        "`position` order. `view=full` adds every grouping's and lesson's full record. Empty "
        "`children` and `lessons` are empty arrays.",
        handler=_scope,
        response_schema=ref("ScopeAndSequence"),
        params=ScopeAndSequence,
        tags=TAGS,
        not_found=True,
    ),
    Operation(
        path="/lesson-groupings/{groupingId}",
        operation_id="getLessonGroupingById",
        summary="Lesson grouping by ID",
        description="A unit, section or module, with its lessons in `position` order.",
        handler=_grouping,
        response_schema=ref("LessonGroupingWithLessons"),
        params=Grouping,
        tags=TAGS,
        not_found=True,
    ),
    Operation(
        path="/lessons/{lessonId}",
        operation_id="getLessonById",
        summary="Lesson by ID",
        handler=_lesson,
        response_schema=ref("Lesson"),
        params=Lesson,
        tags=TAGS,
        not_found=True,
    ),
    Operation(
        path="/lessons/{lessonId}/activities",
        operation_id="getLessonActivities",
        summary="Activities of a lesson",
        description="Paged in `position` order; the cursor carries position and identifier.",
        handler=_activities,
        response_schema=page_schema("Activity"),
        params=LessonPage,
        tags=TAGS,
        not_found=True,
    ),
    Operation(
        path="/assessments",
        operation_id="listAssessments",
        summary="Assessments of a course",
        description="Every assessment in the course; with `lessonGroupingId`, those of that "
        "grouping and anything inside it; with `lessonId`, those of that lesson. Not both.",
        handler=_assessments,
        response_schema=page_schema("Assessment"),
        params=ListAssessments,
        tags=TAGS,
        not_found=True,
    ),
    _standards_of(LESSON, "lessons", LessonPage),
    _standards_of(ACTIVITY, "activities", ActivityPage),
    _standards_of(ASSESSMENT, "assessments", AssessmentPage),
    _of_standard(LESSON, "lessons", "AlignedLesson", "getStandardLessons"),
    _of_standard(ACTIVITY, "activities", "AlignedActivity", "getStandardActivities"),
    _of_standard(ASSESSMENT, "assessments", "AlignedAssessment", "getStandardAssessments"),
    Operation(
        path="/curriculums/{curriculumId}/dependency-map",
        operation_id="getCurriculumDependencyMap",
        summary="Dependency map of a curriculum",
        description="Lesson groupings with the groupings they depend on (`hasDependency`: the "
        "target is the prerequisite, taught first). Envelope: `dependencies` + `pagination`.",
        handler=_dependency_map,
        response_schema=ref("DependencyMapResponse"),
        params=DependencyMap,
        tags=TAGS,
    ),
)
