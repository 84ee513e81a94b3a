"""The shapes edukg serves: record fields, enums and their JSON schemas.

One table of fields per record kind drives both the encoder that writes each
record's JSON once at load time and the schemas of edukg's own OpenAPI document,
so that the two cannot drift apart.
"""

from __future__ import annotations

JURISDICTIONS: tuple[str, ...] = (
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut",
    "Delaware", "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa",
    "Kansas", "Kentucky", "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan",
    "Minnesota", "Mississippi", "Missouri", "Montana", "Nebraska", "Nevada", "New Hampshire",
    "New Jersey", "New Mexico", "New York", "North Carolina", "North Dakota", "Ohio",
    "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island", "South Carolina", "South Dakota",
    "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "Washington", "Washington, D.C.",
    "West Virginia", "Wisconsin", "Wyoming", "Multi-State",
)  # fmt: skip
ACADEMIC_SUBJECTS = ("English Language Arts", "Mathematics", "Science", "Social Studies", "Other")
GRADE_LEVELS = ("PK", "K", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12")
ADOPTION_STATUSES = ("Draft", "Proposed", "Adopted", "Implemented", "Retired")
NORMALIZED_STATEMENT_TYPES = ("Standard", "Standard Grouping", "Other")
LANGUAGES = ("en-US", "es-US")

# Field kinds: how a value is typed in the API (the export stores most as strings).
STR, LIST, BOOL, NUM, INT = "string", "list", "boolean", "number", "integer"

# (field, kind, enum name or None). Order is the order of keys in the served JSON.
STANDARD_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("caseIdentifierURI", STR, None),
    ("caseIdentifierUUID", STR, None),
    ("name", STR, None),
    ("statementCode", STR, None),
    ("description", STR, None),
    ("statementType", STR, None),
    ("normalizedStatementType", STR, "NormalizedStatementType"),
    ("jurisdiction", STR, "Jurisdiction"),
    ("academicSubject", STR, "AcademicSubject"),
    ("gradeLevel", LIST, "GradeLevel"),
    ("inLanguage", STR, "Language"),
    ("dateCreated", STR, None),
    ("dateModified", STR, None),
    ("notes", STR, None),
    ("author", STR, None),
    ("provider", STR, None),
    ("license", STR, None),
    ("attributionStatement", STR, None),
    # hasChildren is always the last key: the loader relies on it (see ingest.builder).
    ("hasChildren", BOOL, None),
)

FRAMEWORK_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("caseIdentifierURI", STR, None),
    ("caseIdentifierUUID", STR, None),
    ("name", STR, None),
    ("description", STR, None),
    ("jurisdiction", STR, "Jurisdiction"),
    ("academicSubject", STR, "AcademicSubject"),
    ("inLanguage", STR, "Language"),
    ("adoptionStatus", STR, "AdoptionStatus"),
    ("dateCreated", STR, None),
    ("dateModified", STR, None),
    ("notes", STR, None),
    ("author", STR, None),
    ("provider", STR, None),
    ("license", STR, None),
    ("attributionStatement", STR, None),
    ("isCurrent", BOOL, None),
)

COMPONENT_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("description", STR, None),
    ("academicSubject", STR, "AcademicSubject"),
    ("inLanguage", STR, "Language"),
    ("dateCreated", STR, None),
    ("dateModified", STR, None),
    ("examples", LIST, None),
    ("author", STR, None),
    ("provider", STR, None),
    ("license", STR, None),
    ("attributionStatement", STR, None),
)

_CURRICULUM_COMMON: tuple[tuple[str, str, str | None], ...] = (
    ("academicSubject", STR, None),
    ("gradeLevel", LIST, None),
    ("author", STR, None),
    ("provider", STR, None),
    ("inLanguage", STR, None),
    ("educationalUse", STR, None),
    ("audience", LIST, None),
    ("license", STR, None),
    ("curriculumLabel", STR, None),
    ("lmsLoadingGuidance", STR, None),
)

COURSE_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("name", STR, None),
    ("description", STR, None),
    ("courseCode", STR, None),
    ("publisherIdentifier", STR, None),
    *_CURRICULUM_COMMON,
    ("timeRequired", STR, None),
    ("dateCreated", STR, None),
    ("attributionStatement", STR, None),
)

LESSON_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("name", STR, None),
    ("ordinalName", STR, None),
    ("position", INT, None),
    *_CURRICULUM_COMMON,
    ("isOptional", BOOL, None),
    ("courseCode", STR, None),
    ("publisherIdentifier", STR, None),
    ("timeRequired", STR, None),
    ("dateCreated", STR, None),
    ("attributionStatement", STR, None),
)

GROUPING_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    *LESSON_FIELDS[:3],
    ("groupName", STR, None),
    ("groupLevel", INT, None),
    *LESSON_FIELDS[3:],
)

ACTIVITY_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    *LESSON_FIELDS[:4],
    *_CURRICULUM_COMMON,
    ("isOptional", BOOL, None),
    ("courseCode", STR, None),
    ("timeRequired", STR, None),
    ("studentGroupingType", STR, None),
    ("dateCreated", STR, None),
    ("attributionStatement", STR, None),
)

ASSESSMENT_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("name", STR, None),
    *_CURRICULUM_COMMON,
    ("isOptional", BOOL, None),
    ("courseCode", STR, None),
    ("publisherIdentifier", STR, None),
    ("studentGroupingType", STR, None),
    ("timeRequired", STR, None),
    ("dateCreated", STR, None),
    ("attributionStatement", STR, None),
)

SKILLS_FRAMEWORK_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("name", STR, None),
    ("description", STR, None),
    ("jurisdiction", STR, "Jurisdiction"),
    ("inLanguage", STR, "Language"),
    ("isCurrent", BOOL, None),
    ("dateCreated", STR, None),
    ("dateModified", STR, None),
    ("author", STR, None),
    ("provider", STR, None),
    ("license", STR, None),
    ("attributionStatement", STR, None),
)

SKILL_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("statementCode", STR, None),
    ("name", STR, None),
    ("description", STR, None),
    ("statementType", STR, None),
    ("normalizedStatementType", STR, "NormalizedStatementType"),
    ("gradeLevel", LIST, "GradeLevel"),
    ("jurisdiction", STR, "Jurisdiction"),
    ("inLanguage", STR, "Language"),
    ("dateCreated", STR, None),
    ("dateModified", STR, None),
    ("notes", STR, None),
    ("author", STR, None),
    ("provider", STR, None),
    ("license", STR, None),
    ("attributionStatement", STR, None),
    # Last, as for standards: the loader flips it in place.
    ("hasChildren", BOOL, None),
)

CROSSWALK_EXTRA_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("jaccard", NUM, None),
    ("stateLCCount", INT, None),
    ("ccssLCCount", INT, None),
    ("sharedLCCount", INT, None),
)

ENUMS: dict[str, tuple[str, ...]] = {
    "Jurisdiction": JURISDICTIONS,
    "AcademicSubject": ACADEMIC_SUBJECTS,
    "GradeLevel": GRADE_LEVELS,
    "AdoptionStatus": ADOPTION_STATUSES,
    "NormalizedStatementType": NORMALIZED_STATEMENT_TYPES,
    "Language": LANGUAGES,
    "ScopeView": ("summary", "full"),
}

# Fields the API requires to be present with a value; all others may be null.
