"""Network stand-ins that tests and benchmarks share: a database one network hop away (a
delaying TCP proxy) and a server that accepts and never answers (a hung Redis)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time


class LatencyProxy:
    """A TCP proxy on loopback that delays every chunk by `delay` seconds each way, in
    order, as a database one network hop away would (for fault tests and benchmarks)."""

    def __init__(self, target_port: int, delay: float) -> None:
        self.target_port = target_port
        self.delay = delay
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._writers: list[asyncio.StreamWriter] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._client, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()
        tasks = asyncio.all_tasks(self._loop)
        for task in tasks:
            task.cancel()
        self._loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        for writer in self._writers:
            writer.close()
        self._loop.run_until_complete(server.wait_closed())
        self._loop.run_until_complete(asyncio.sleep(0))
        self._loop.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        self._writers.append(up_writer)
        with contextlib.suppress(asyncio.CancelledError):  # the proxy stopping
            await asyncio.gather(
                self._pipe(reader, up_writer),
                self._pipe(up_reader, writer),
                return_exceptions=True,
            )

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, chunk = await queue.get()
                if not chunk:
                    break
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                writer.write(chunk)
                await writer.drain()
            writer.close()

        sender = asyncio.ensure_future(deliver())
        try:
            while chunk := await reader.read(65536):
                queue.put_nowait((time.monotonic() + self.delay, chunk))
        except (ConnectionError, asyncio.CancelledError):
            sender.cancel()
            raise
        queue.put_nowait((0.0, b""))
        await sender

    def start(self) -> LatencyProxy:
        """Start proxying; returns once the port is known."""
        self._thread.start()
        self._ready.wait(5)
        return self

    def stop(self) -> None:
        """Stop accepting and end the proxy's loop."""
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)


class SilentServer:
    """A socket that accepts connections and never answers (a hung Redis)."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        self.port = self._sock.getsockname()[1]
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        self._sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._held.append(conn)  # read nothing, answer nothing

    def start(self) -> SilentServer:
        """Start accepting."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Close everything."""
        self._stop.set()
        self._thread.join(timeout=5)
        for conn in self._held:
            conn.close()
        self._sock.close()
