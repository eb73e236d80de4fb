"""Serving the page: waitress, sized for Server-Sent Events.

Why waitress, and how it is set up (see the README's "The web page"):

- It is pure Python, packaged in Debian and on PyPI, and runs the same on a Pi and a laptop.
  It can be started and stopped inside the ``domino-hub run`` process, which gunicorn cannot.
- Each open ``/events`` stream holds one worker thread for as long as the phone is connected.
  So the pool is sized as ``max_streams`` streams plus spare threads for pages and API calls,
  and :class:`web.live.Live` refuses a stream beyond ``max_streams`` (503, the browser retries)
  rather than let streams starve page loads.
- Waitress sends a response's headers only with its first non-empty body chunk, so every stream
  starts with a ``retry:`` line at once; with ``send_bytes=1`` (waitress 3's default, kept)
  every event is flushed to the socket as soon as it is yielded.
- Streams send a comment every few seconds, so a phone that vanished without closing its
  socket frees its thread at the next write, well inside waitress's ``channel_timeout``.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from flask import Flask

SPARE_THREADS = 8

log = logging.getLogger(__name__)


@dataclass
class ServerHandle:
    """A running server: its address, and :meth:`stop` to end it (open streams included)."""

    app: Flask
    host: str
    port: int
    _server: object
    _thread: threading.Thread
    _stopped: bool = False

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}/"

    def stop(self, timeout: float = 5.0) -> None:
        """End every stream, let the worker threads finish, then close the sockets."""
        if self._stopped:
            return
        self._stopped = True
        ctx = self.app.extensions.get("domino_hub")
        if ctx is not None:
            ctx.live.close()  # every stream returns, so its worker thread is free at once
        server = self._server
        server.task_dispatcher.shutdown(timeout=timeout)  # type: ignore[attr-defined]

        def close_all() -> None:  # runs on the server's own loop thread
            for dispatcher in list(server._map.values()):  # type: ignore[attr-defined]
                dispatcher.close()

        try:
            server.trigger.pull_trigger(close_all)  # type: ignore[attr-defined]
        except OSError:  # the loop already closed its trigger: nothing runs there any more
            close_all()
        self._thread.join(timeout)


def start_server(app: Flask, host: str = "0.0.0.0", port: int = 8000) -> ServerHandle:
    """Serve ``app`` on a background thread; port 0 picks a free port (see ``handle.port``)."""
    import waitress

    ctx = app.extensions.get("domino_hub")
    max_streams = ctx.live.max_streams if ctx is not None else 40
    server = waitress.create_server(
        app,
        host=host,
        port=port,
        threads=max_streams + SPARE_THREADS,
        connection_limit=max_streams + 64,
        channel_timeout=120,
        asyncore_use_poll=True,  # select() stops at 1024 descriptors; poll() does not
        ident="domino-hub",
        clear_untrusted_proxy_headers=True,
    )
    thread = threading.Thread(target=server.run, name=f"web-{server.effective_port}", daemon=True)
    thread.start()
    log.info("serving the page on %s:%s", server.effective_host, server.effective_port)
    return ServerHandle(app, host, int(server.effective_port), server, thread)
