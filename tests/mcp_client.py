"""The MCP tests' client: the official SDK's, over real streamable HTTP, and its calls."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import orjson
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import Api


@asynccontextmanager
async def session(api: Api, headers: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    client = httpx2.AsyncClient(headers={"x-api-key": api.key} if headers is None else headers)
    async with (
        client,
        streamable_http_client(f"{api.server.url}/mcp", http_client=client) as streams,
        ClientSession(streams[0], streams[1]) as s,
    ):
        await s.initialize()
        yield s


async def call(s: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await s.call_tool(tool, arguments)
    assert not result.is_error, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    decoded: dict[str, Any] = orjson.loads(text)
    return decoded


async def call_error(s: ClientSession, tool: str, **arguments: Any) -> str:
    result = await s.call_tool(tool, arguments)
    assert result.is_error
    return str(result.content[0].text)  # type: ignore[union-attr]
