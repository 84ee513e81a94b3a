"""The records edukg serves, declared once as types.

Each class is the contract of one record kind: its fields in the order the served JSON
has them, each field's type (`X | None` where the API may send null) and the enum it is
drawn from. The load encodes records from these declarations (`model.contract` derives
the field tables), the OpenAPI document's schemas are generated from them, and the tests
validate served records against them. The classes are never instantiated on the request
path: records are encoded once, at load.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal


@dataclass(frozen=True)
class EnumName:
    """Names an enum type: its schema is `#/components/schemas/{name}ENUM`."""

    name: str


Jurisdiction = Annotated[
    Literal[
        "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut",
        "Delaware", "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa",
        "Kansas", "Kentucky", "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan",
        "Minnesota", "Mississippi", "Missouri", "Montana", "Nebraska", "Nevada",
        "New Hampshire", "New Jersey", "New Mexico", "New York", "North Carolina",
        "North Dakota", "Ohio", "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island",
        "South Carolina", "South Dakota", "Tennessee", "Texas", "Utah", "Vermont", "Virginia",
        "Washington", "Washington, D.C.", "West Virginia", "Wisconsin", "Wyoming",
        "Multi-State",
    ],
    EnumName("Jurisdiction"),
]  # fmt: skip
AcademicSubject = Annotated[
    Literal["English Language Arts", "Mathematics", "Science", "Social Studies", "Other"],
    EnumName("AcademicSubject"),
]
GradeLevel = Annotated[
    Literal["PK", "K", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"],
    EnumName("GradeLevel"),
]
AdoptionStatus = Annotated[
    Literal["Draft", "Proposed", "Adopted", "Implemented", "Retired"],
    EnumName("AdoptionStatus"),
]
NormalizedStatementType = Annotated[
    Literal["Standard", "Standard Grouping", "Other"], EnumName("NormalizedStatementType")
]
Language = Annotated[Literal["en-US", "es-US"], EnumName("Language")]
ScopeView = Annotated[Literal["summary", "full"], EnumName("ScopeView")]
RecordType = Annotated[Literal["node", "relationship"], EnumName("RecordType")]
ChangeKind = Annotated[Literal["added", "removed", "modified"], EnumName("ChangeKind")]

ENUM_TYPES = (
    Jurisdiction,
    AcademicSubject,
    GradeLevel,
    AdoptionStatus,
    NormalizedStatementType,
    Language,
    ScopeView,
    RecordType,
    ChangeKind,
)


@dataclass(frozen=True, kw_only=True)
class StandardsFrameworkItem:
    """An academic standard or grouping within a standards framework. Every field is
    always present, null where the data has no value."""

    identifier: str
    caseIdentifierURI: str | None
    caseIdentifierUUID: str
    name: str | None
    statementCode: str | None
    description: str | None
    statementType: str | None
    normalizedStatementType: NormalizedStatementType | None
    jurisdiction: Jurisdiction | None
    academicSubject: AcademicSubject | None
    gradeLevel: list[GradeLevel] | None
    inLanguage: Language | None
    dateCreated: str | None
    dateModified: str | None
    notes: str | None
    author: str
    provider: str
    license: str
    attributionStatement: str
    # Always the last key: the loader flips it in place (see model.records.with_children).
    hasChildren: bool


@dataclass(frozen=True, kw_only=True)
class StandardCrosswalk(StandardsFrameworkItem):
    """The aligned standard (full record) with the crosswalk's overlap figures."""

    jaccard: float
    stateLCCount: int
    ccssLCCount: int
    sharedLCCount: int


@dataclass(frozen=True, kw_only=True)
class StandardsFramework:
    """A standards framework (a standards document)."""

    identifier: str
    caseIdentifierURI: str | None
    caseIdentifierUUID: str
    name: str | None
    description: str | None
    jurisdiction: Jurisdiction | None
    academicSubject: AcademicSubject | None
    inLanguage: Language | None
    adoptionStatus: AdoptionStatus | None
    dateCreated: str | None
    dateModified: str | None
    notes: str | None
    author: str
    provider: str
    license: str
    attributionStatement: str
    isCurrent: bool


@dataclass(frozen=True, kw_only=True)
class LearningComponent:
    """A fine-grained skill that supports standards."""

    identifier: str
    description: str | None
    academicSubject: AcademicSubject | None
    inLanguage: Language | None
    dateCreated: str | None
    dateModified: str | None
    examples: list[str] | None
    author: str
    provider: str
    license: str
    attributionStatement: str | None


@dataclass(frozen=True, kw_only=True)
class Course:
    """A course of a curriculum."""

    # A field the record has no value for is left out, as the published schemas expect,
    # except these, which they declare nullable (null where absent).
    KEEPS_NULL: ClassVar[frozenset[str]] = frozenset({"publisherIdentifier", "timeRequired"})

    identifier: str
    name: str | None
    description: str | None
    courseCode: str | None
    publisherIdentifier: str | None
    academicSubject: str | None
    gradeLevel: list[str] | None
    author: str | None
    provider: str | None
    inLanguage: str | None
    educationalUse: str | None
    audience: list[str] | None
    license: str | None
    curriculumLabel: str | None
    lmsLoadingGuidance: str | None
    timeRequired: str | None
    dateCreated: str | None
    attributionStatement: str | None


@dataclass(frozen=True, kw_only=True)
class LessonGrouping:
    """A unit, section or module of a course."""

    # A field the record has no value for is left out, as the published schemas expect,
    # except these, which they declare nullable (null where absent).
    KEEPS_NULL: ClassVar[frozenset[str]] = frozenset({"publisherIdentifier", "timeRequired"})

    identifier: str
    name: str | None
    ordinalName: str | None
    groupName: str | None
    groupLevel: int | None
    position: int | None
    academicSubject: str | None
    gradeLevel: list[str] | None
    author: str | None
    provider: str | None
    inLanguage: str | None
    educationalUse: str | None
    audience: list[str] | None
    license: str | None
    curriculumLabel: str | None
    lmsLoadingGuidance: str | None
    isOptional: bool | None
    courseCode: str | None
    publisherIdentifier: str | None
    timeRequired: str | None
    dateCreated: str | None
    attributionStatement: str | None


@dataclass(frozen=True, kw_only=True)
class Lesson:
    """A lesson."""

    # A field the record has no value for is left out, as the published schemas expect,
    # except these, which they declare nullable (null where absent).
    KEEPS_NULL: ClassVar[frozenset[str]] = frozenset({"publisherIdentifier"})

    identifier: str
    name: str | None
    ordinalName: str | None
    position: int | None
    academicSubject: str | None
    gradeLevel: list[str] | None
    author: str | None
    provider: str | None
    inLanguage: str | None
    educationalUse: str | None
    audience: list[str] | None
    license: str | None
    curriculumLabel: str | None
    lmsLoadingGuidance: str | None
    isOptional: bool | None
    courseCode: str | None
    publisherIdentifier: str | None
    timeRequired: str | None
    dateCreated: str | None
    attributionStatement: str | None


@dataclass(frozen=True, kw_only=True)
class Activity:
    """An activity of a lesson."""

    # A field the record has no value for is left out, as the published schemas expect,
    # except these, which they declare nullable (null where absent).
    KEEPS_NULL: ClassVar[frozenset[str]] = frozenset()

    identifier: str
    name: str | None
    ordinalName: str | None
    position: int | None
    academicSubject: str | None
    gradeLevel: list[str] | None
    author: str | None
    provider: str | None
    inLanguage: str | None
    educationalUse: str | None
    audience: list[str] | None
    license: str | None
    curriculumLabel: str | None
    lmsLoadingGuidance: str | None
    isOptional: bool | None
    courseCode: str | None
    timeRequired: str | None
    studentGroupingType: str | None
    dateCreated: str | None
    attributionStatement: str | None


@dataclass(frozen=True, kw_only=True)
class Assessment:
    """An assessment of a course, grouping or lesson."""

    # A field the record has no value for is left out, as the published schemas expect,
    # except these, which they declare nullable (null where absent).
    KEEPS_NULL: ClassVar[frozenset[str]] = frozenset({"publisherIdentifier", "timeRequired"})

    identifier: str
    name: str | None
    academicSubject: str | None
    gradeLevel: list[str] | None
    author: str | None
    provider: str | None
    inLanguage: str | None
    educationalUse: str | None
    audience: list[str] | None
    license: str | None
    curriculumLabel: str | None
    lmsLoadingGuidance: str | None
    isOptional: bool | None
    courseCode: str | None
    publisherIdentifier: str | None
    studentGroupingType: str | None
    timeRequired: str | None
    dateCreated: str | None
    attributionStatement: str | None


@dataclass(frozen=True, kw_only=True)
class DurableSkillsFramework:
    """A durable skills framework."""

    identifier: str
    name: str | None
    description: str | None
    jurisdiction: Jurisdiction | None
    inLanguage: Language | None
    isCurrent: bool
    dateCreated: str | None
    dateModified: str | None
    author: str | None
    provider: str | None
    license: str | None
    attributionStatement: str | None


@dataclass(frozen=True, kw_only=True)
class DurableSkill:
    """A durable skill or a grouping of them."""

    identifier: str
    statementCode: str | None
    name: str | None
    description: str | None
    statementType: str | None
    normalizedStatementType: NormalizedStatementType | None
    gradeLevel: list[GradeLevel] | None
    jurisdiction: Jurisdiction | None
    inLanguage: Language | None
    dateCreated: str | None
    dateModified: str | None
    notes: str | None
    author: str | None
    provider: str | None
    license: str | None
    attributionStatement: str | None
    # Last, as for standards: the loader flips it in place.
    hasChildren: bool
