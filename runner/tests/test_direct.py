"""The direct execute channel over real sockets, with a stand-in for the execution (no Spark)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from spark_runner.direct import DirectServer
from spark_runner.execution import ExecutionResult

SECRET = "s3cr3t"


async def _echo(request: dict[str, Any]) -> ExecutionResult:
    return {"result": request.get("jobClass"), "error": None, "startTime": 1, "endTime": 2, "instanceId": "i-1"}


async def _call(port: int, requests: list[tuple[str, str, dict[str, str], bytes]]) -> list[tuple[int, Any]]:
    """Sends the requests one after another on one connection; returns (status, JSON body) of each."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    answers = []
    try:
        for method, path, headers, body in requests:
            head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
            head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            writer.write(head.encode() + b"\r\n" + body)
            await writer.drain()
            status_line = await reader.readuntil(b"\r\n")
            rest = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1]) for line in rest.split(b"\r\n") if line.lower().startswith(b"content-length")
            )
            answers.append((int(status_line.split()[1]), json.loads(await reader.readexactly(length))))
    finally:
        writer.close()
    return answers


def test_executes_with_the_secret_and_keeps_the_connection() -> None:
    async def scenario() -> list[tuple[int, Any]]:
        server = DirectServer(SECRET, _echo)
        port = await server.start("127.0.0.1")
        try:
            body = json.dumps({"type": "interactive_job_execute", "jobClass": "jobs.Noop"}).encode()
            auth = {"X-Runner-Secret": SECRET}
            return await _call(port, [("POST", "/execute", auth, body), ("POST", "/execute", auth, body)])
        finally:
            await server.close()

    answers = asyncio.run(scenario())
    assert [status for status, _ in answers] == [200, 200]
    assert answers[1][1]["result"] == "jobs.Noop"


def test_refuses_missing_or_forged_secrets_and_bad_requests() -> None:
    async def scenario() -> list[tuple[int, Any]]:
        server = DirectServer(SECRET, _echo)
        port = await server.start("127.0.0.1")
        try:
            body = b"{}"
            return await _call(
                port,
                [
                    ("POST", "/execute", {}, body),
                    ("POST", "/execute", {"X-Runner-Secret": "s3cr3u"}, body),
                    ("POST", "/execute", {"X-Runner-Secret": SECRET}, b"not json"),
                    ("GET", "/execute", {"X-Runner-Secret": SECRET}, b""),
                    ("POST", "/other", {"X-Runner-Secret": SECRET}, body),
                ],
            )
        finally:
            await server.close()

    answers = asyncio.run(scenario())
    assert [status for status, _ in answers] == [401, 401, 400, 405, 404]
    assert all("message" in payload for _, payload in answers)
