"""The extensions' schemas are generated from their row types (adapters/schemas_typed.py)."""

from __future__ import annotations

import dataclasses

from edukg.adapters.schemas_typed import alignment_schemas, row_schema
from edukg.model import alignment, framework_rows
from edukg.model.framework_rows import CoverageRow, CoverageSummary, DerivedStandardCrosswalk


def test_every_row_type_has_a_schema_with_every_field() -> None:
    schemas: dict[str, object] = {}
    alignment_schemas(schemas)
    for shape in (*alignment.SHAPES, *framework_rows.SHAPES):
        schema = row_schema(shape)
        own = schema["allOf"][1] if "allOf" in schema else schema
        assert list(own["properties"]) == [f.name for f in dataclasses.fields(shape)]
        assert schemas[shape.__name__] == schema


def test_types_become_references_enums_and_nullables() -> None:
    row = row_schema(CoverageRow)["properties"]
    assert row["standard"] == {"$ref": "#/components/schemas/FrameworkItemBrief"}
    assert row["status"] == {"$ref": "#/components/schemas/CoverageStatusENUM"}
    assert row["domain"]["nullable"] is True
    assert row["viaCrosswalk"]["items"] == {"$ref": "#/components/schemas/CoverageByCrosswalk"}


def test_an_omittable_field_is_not_required_and_never_null() -> None:
    schema = row_schema(CoverageSummary)
    assert "note" not in schema["required"] and "note" in schema["properties"]
    assert "nullable" not in schema["properties"]["note"]


def test_a_row_that_extends_a_record_is_that_record_then_its_fields() -> None:
    schema = row_schema(DerivedStandardCrosswalk)
    assert schema["allOf"][0] == {"$ref": "#/components/schemas/StandardsFrameworkItem"}
    assert "method" in schema["allOf"][1]["required"]
