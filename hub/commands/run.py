"""``domino-hub run --config FILE``: the service systemd starts (see ``systemd/domino-hub.service``)."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

from hub.config import DEFAULT_PATH


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run the hub at a real table (the systemd service)")
    p.add_argument("--config", type=Path, default=DEFAULT_PATH, help=f"the device's config (default {DEFAULT_PATH})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hub.config import ConfigError, load_config
    from hub.service import serve

    # journald stamps the time itself; the level and the part are what a reader needs.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        config = load_config(args.config)
    except ConfigError as e:
        print(f"domino-hub: bad config: {e}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    return serve(config, stop)
