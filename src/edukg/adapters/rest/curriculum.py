"""Curriculum: courses, scope and sequence, groupings, lessons, activities, assessments,
alignments to standards, and the dependency map."""

from __future__ import annotations

from collections.abc import Callable

from edukg.adapters.params import CASE_UUID_PATH, CURSOR, LIMIT, Param
from edukg.adapters.rest.base import Call, Operation, ref
from edukg.adapters.schemas import page_schema
from edukg.model.vocabulary import ACTIVITY, ASSESSMENT, LESSON
from edukg.services import graph as service

TAGS = ("Curriculum",)
_ID_LENGTH = 256


def _id_param(name: str, description: str, location: str = "path") -> Param:
    return Param(name, "string", description, location=location, max_length=_ID_LENGTH)


CURRICULUM_ID = Param(
    "curriculumId",
    "string",
    "A curriculum in the data: the prefix of its courses' courseCode (e.g. im360, demo)",
    required=True,
    max_length=64,
    example="im360",
)


def _courses(call: Call) -> bytes:
    v = call.values
    return call.page(service.courses(call.store, v["curriculumId"], call.after(), v["limit"]))


def _scope(call: Call) -> bytes:
    v = call.values
    return service.scope_and_sequence(call.store, v["courseId"], v["view"])


def _grouping(call: Call) -> bytes:
    return service.lesson_grouping(call.store, call.values["groupingId"])


def _lesson(call: Call) -> bytes:
    return service.curriculum_record(call.store, LESSON, call.values["lessonId"]).doc


def _activities(call: Call) -> bytes:
    v = call.values
    page = service.lesson_activities(call.store, v["lessonId"], call.after(), v["limit"])
    return call.page(page)


def _assessments(call: Call) -> bytes:
    v = call.values
    page = service.assessments(
        call.store,
        v["courseId"],
        v["lessonId"],
        v["lessonGroupingId"],
        call.after(),
        v["limit"],
    )
    return call.page(page)


def _aligned_standards(kind: str, param: str) -> Callable[[Call], bytes]:
    def handler(call: Call) -> bytes:
        v = call.values
        page = service.aligned_standards(call.store, kind, v[param], call.after(), v["limit"])
        return call.page(page)

    return handler


def _aligned_to(kind: str) -> Callable[[Call], bytes]:
    def handler(call: Call) -> bytes:
        v = call.values
        page = service.aligned_to_standard(
            call.store, v["caseIdentifierUUID"], kind, call.after(), v["limit"]
        )
        return call.page(page)

    return handler


def _dependency_map(call: Call) -> bytes:
    v = call.values
    page = service.dependency_map(call.store, v["curriculumId"], call.after(), v["limit"])
    return call.page(page, key=b"dependencies")


def _standards_of(kind: str, segment: str, param: str, operation_id: str) -> Operation:
    return Operation(
        path=f"/{segment}/{{{param}}}/standards",
        operation_id=operation_id,
        summary=f"Standards aligned to {'an' if kind[0] in 'aeiou' else 'a'} {kind}",
        description="Full academic standard records, each with `curriculumAlignmentType` "
        "(addressing, building_toward, building_on, practicing) from the alignment.",
        handler=_aligned_standards(kind, param),
        response_schema=page_schema("AlignedStandard"),
        params=(_id_param(param, f"Identifier of the {kind}"), LIMIT, CURSOR),
        tags=(*TAGS, "Academic standards"),
        not_found=True,
    )


def _of_standard(kind: str, suffix: str, schema: str, operation_id: str) -> Operation:
    return Operation(
        path=f"/academic-standards/{{caseIdentifierUUID}}/{suffix}",
        operation_id=operation_id,
        summary=f"{suffix.capitalize()} aligned to a standard",
        description=f"Full {kind} records aligned to the standard, each with "
        "`curriculumAlignmentType`.",
        handler=_aligned_to(kind),
        response_schema=page_schema(schema),
        params=(CASE_UUID_PATH, LIMIT, CURSOR),
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
        params=(CURRICULUM_ID, LIMIT, CURSOR),
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
        params=(
            _id_param("courseId", "Identifier of the course"),
            Param("view", "enum", "summary (default) or full", enum="ScopeView", default="summary"),
        ),
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
        params=(_id_param("groupingId", "Identifier of the lesson grouping"),),
        tags=TAGS,
        not_found=True,
    ),
    Operation(
        path="/lessons/{lessonId}",
        operation_id="getLessonById",
        summary="Lesson by ID",
        handler=_lesson,
        response_schema=ref("Lesson"),
        params=(_id_param("lessonId", "Identifier of the lesson"),),
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
        params=(_id_param("lessonId", "Identifier of the lesson"), LIMIT, CURSOR),
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
        params=(
            Param(
                "courseId",
                "string",
                "Identifier of the course",
                required=True,
                max_length=_ID_LENGTH,
            ),
            _id_param("lessonId", "Only assessments of this lesson", "query"),
            _id_param("lessonGroupingId", "Only assessments of this lesson grouping", "query"),
            LIMIT,
            CURSOR,
        ),
        tags=TAGS,
        not_found=True,
    ),
    _standards_of(LESSON, "lessons", "lessonId", "getLessonStandards"),
    _standards_of(ACTIVITY, "activities", "activityId", "getActivityStandards"),
    _standards_of(ASSESSMENT, "assessments", "assessmentId", "getAssessmentStandards"),
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
        params=(
            Param(
                "curriculumId",
                "string",
                "A curriculum in the data",
                location="path",
                max_length=64,
            ),
            LIMIT,
            CURSOR,
        ),
        tags=TAGS,
    ),
)
