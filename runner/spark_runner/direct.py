"""The direct execute channel: a small HTTP/1.1 server (keep-alive) inside the runner, so the API can run
a synchronous execution without a workflow of its own.

POST /execute with the JSON the `executeJobInstance` activity takes and the header `X-Runner-Secret`
(HMAC-SHA256 of the driver id under the service's SECRET_KEY, handed over by the cluster adapter as
RUNNER_DIRECT_SECRET); the answer is the activity's result shape. A missing or wrong secret is 401
(compared in constant time). Executions run on the same single execution thread as the activity's, so
they stay serial. Only what this service sends is understood: Content-Length bodies, no chunked encoding.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from .execution import ExecutionResult

log = logging.getLogger("spark_runner.direct")

SECRET_HEADER = "x-runner-secret"
MAX_BODY = 16 * 1024 * 1024
MAX_HEAD = 64 * 1024

RunExecution = Callable[[dict[str, Any]], Awaitable[ExecutionResult]]

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Payload Too Large",
}


class DirectServer:
    def __init__(self, secret: str, run: RunExecution) -> None:
        self._secret = secret.encode()
        self._run = run
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task[Any]] = set()

    async def start(self, host: str, port: int = 0) -> int:
        """Listens on host (a free port when 0); returns the port."""
        self._server = await asyncio.start_server(self._serve, host, port, limit=MAX_HEAD)
        port_bound: int = self._server.sockets[0].getsockname()[1]
        return port_bound

    async def close(self) -> None:
        """Stops listening and drops open connections (a caller then retries on another instance)."""
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while await self._one_request(reader, writer):
                pass
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass  # the caller went away or spoke something else: drop the connection
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serves one request; returns whether the connection stays open."""
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        keep = version.strip() == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        if "transfer-encoding" in headers:
            return _respond(writer, 411, {"message": "send the body with Content-Length"}, False)
        length = int(headers.get("content-length", "0") or "0")
        if length < 0 or length > MAX_BODY:
            return _respond(writer, 413, {"message": f"the body may have at most {MAX_BODY} bytes"}, False)
        body = await reader.readexactly(length) if length else b""
        status, payload = await self._handle(method, target, headers, body)
        _respond(writer, status, payload, keep)
        await writer.drain()
        return keep

    async def _handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
        if target.split("?", 1)[0] != "/execute":
            return 404, {"message": f"no such path {target!r}; POST /execute"}
        if method != "POST":
            return 405, {"message": "POST /execute"}
        given = headers.get(SECRET_HEADER, "").encode("latin-1")
        if not hmac.compare_digest(given, self._secret):
            log.warning("direct execute refused: %s secret", "wrong" if given else "no")
            return 401, {"message": f"a valid {SECRET_HEADER} header is required"}
        try:
            request = json.loads(body)
        except ValueError as err:
            return 400, {"message": f"the body is not JSON: {err}"}
        if not isinstance(request, dict):
            return 400, {"message": "the body must be a JSON object"}
        return 200, await self._run(request)


def _respond(writer: asyncio.StreamWriter, status: int, payload: Any, keep: bool) -> bool:
    body = json.dumps(payload).encode()
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        f"Connection: {'keep-alive' if keep else 'close'}\r\n\r\n"
    )
    writer.write(head.encode("latin-1") + body)
    return keep


def advertised_host(bind: str) -> str:
    """The address callers use: the bound one, or this host's address when bound to every interface."""
    if bind not in ("0.0.0.0", "::", ""):
        return bind
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"
