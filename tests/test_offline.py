"""The suite runs offline (docs/ARCHITECTURE.md, invariant 7): the guard in conftest.py cuts everything but loopback."""

from __future__ import annotations

import socket

import pytest


def test_connections_leaving_the_machine_are_refused():
    with pytest.raises(ConnectionRefusedError, match="test suite is offline"):
        socket.create_connection(("192.0.2.1", 80), timeout=1)


def test_loopback_connections_pass():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        socket.create_connection(server.getsockname(), timeout=5).close()
