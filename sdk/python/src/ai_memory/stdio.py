"""A small standard-library MCP client over stdio: enough to drive
ai-memory with no dependency at all (newline-delimited JSON-RPC 2.0)."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import threading
import time
from typing import Any, Mapping, Sequence

from ._version import __version__
from .errors import McpError

PROTOCOL_VERSION = "2025-06-18"


class StdioClient:
    """Starts command, initializes an MCP session, and makes requests.

    Requests are serialized (one at a time); notifications the server sends
    are kept in ``notifications`` (their method names)."""

    transport_kind = "stdio"  # for ProfileNotLoaded's hint

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        client_name: str = "ai-memory-sdk",
        stderr: int | None = subprocess.DEVNULL,
        timeout: float = 30.0,
        cwd: str | None = None,
    ) -> None:
        self.timeout = timeout
        self.notifications: list[str] = []
        self._next_id = 0
        self._lock = threading.Lock()
        self._buf = bytearray()
        self._proc = subprocess.Popen(
            [command, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._proc.stdout, selectors.EVENT_READ)
        try:
            init = self.request(
                "initialize",
                {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": client_name, "version": __version__},
                },
            )
        except BaseException:
            self.close()
            raise
        self.server_info: dict[str, Any] = init.get("serverInfo", {})
        self.server_capabilities: dict[str, Any] = init.get("capabilities", {})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            rid = self._next_id
            msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
            if params is not None:
                msg["params"] = params
            self._send(msg)
            deadline = time.monotonic() + self.timeout
            while True:
                m = self._read(deadline)
                if "method" in m:
                    self._answer(m)
                    continue
                if m.get("id") != rid:
                    continue
                if "error" in m:
                    e = m["error"]
                    raise McpError(int(e.get("code", 0)), str(e.get("message", "")))
                return m.get("result", {})

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """tools/call; the raw result (content, isError)."""
        return self.request("tools/call", {"name": name, "arguments": dict(arguments or {})})

    def list_tools(self) -> list[dict[str, Any]]:
        return list(self.request("tools/list").get("tools", []))

    def close(self) -> None:
        if self._proc.stdin and not self._proc.stdin.closed:
            try:
                self._proc.stdin.close()
            except OSError:
                pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._sel.close()
        if self._proc.stdout:
            self._proc.stdout.close()

    def __enter__(self) -> "StdioClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, msg: Mapping[str, Any]) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
        self._proc.stdin.flush()

    def _answer(self, m: Mapping[str, Any]) -> None:
        if "id" not in m:  # a notification
            self.notifications.append(str(m.get("method")))
        elif m.get("method") == "ping":
            self._send({"jsonrpc": "2.0", "id": m["id"], "result": {}})
        else:
            self._send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "method not found"}})

    def _read(self, deadline: float) -> dict[str, Any]:
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[: nl + 1]
                if line.strip():
                    return json.loads(line)
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer from the MCP server within {self.timeout} s")
            if not self._sel.select(left):
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise ConnectionError(f"the MCP server exited (status {self._proc.poll()})")
            self._buf += chunk
