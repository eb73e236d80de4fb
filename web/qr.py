"""The join link and its QR code, drawn on the hub itself (segno) so no phone needs the internet."""

from __future__ import annotations

import io
import ipaddress
import socket
from functools import lru_cache

import segno

LOOPBACK_NAMES = {"localhost", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def lan_address() -> str | None:
    """This machine's address on the local network, or None when it has none.

    Connecting a UDP socket sends nothing; it only asks the kernel which address it would use.
    """
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.254.254.254", 9))
            address = s.getsockname()[0]
    except OSError:
        return None
    return None if is_loopback(address) else address


def join_url(host_url: str, configured: str | None) -> str:
    """The address to hand to other phones: the configured one, else this request's, off loopback."""
    if configured:
        return configured
    scheme, _, rest = host_url.partition("://")
    hostport = rest.rstrip("/")
    host, sep, port = hostport.rpartition(":") if not hostport.endswith("]") else (hostport, "", "")
    if not sep:
        host, port = hostport, ""
    if is_loopback(host):
        lan = lan_address()
        if lan is not None:
            host = lan
    return f"{scheme}://{host}{':' + port if port else ''}/"


@lru_cache(maxsize=8)
def qr_svg(url: str) -> bytes:
    """A QR code for ``url`` as a standalone SVG."""
    out = io.BytesIO()
    segno.make(url, error="m").save(
        out, kind="svg", scale=8, border=2, xmldecl=False, svgns=True, dark="#111", light="#fff", title=url,
    )
    return out.getvalue()
