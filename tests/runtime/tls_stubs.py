"""A self-signed certificate, a TLS stub runtime, and a CONNECT proxy, all on 127.0.0.1.

The certificate is made with the ``openssl`` command for ``runtime.example`` and
127.0.0.1. The TLS stub answers every request with a whoami body (it counts
connections, so a test can tell a retry from none). The proxy records each
``CONNECT host:port`` and tunnels it to the TLS stub, whatever host was asked
for, so ``https://runtime.example`` reaches the stub only through the proxy.
"""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import threading
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from tests.support.http_stub import SocketServer, read_head

WHOAMI = json.dumps({"user": {"email": "ada@example.com"}, "org": {"name": "Acme"}}).encode()


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path
    directory: Path  # holding only the certificate, hashed (`openssl rehash`), for SSL_CERT_DIR


def make_certificate(where: Path) -> Certificate:
    where.mkdir(parents=True, exist_ok=True)
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "2", "-subj", "/CN=runtime.example", "-addext",
                    "subjectAltName=DNS:runtime.example,IP:127.0.0.1"],
                   check=True, capture_output=True)
    directory = where / "certs"
    directory.mkdir()
    (directory / "runtime.pem").write_bytes(cert.read_bytes())
    subprocess.run(["openssl", "rehash", str(directory)], check=True, capture_output=True)
    return Certificate(cert, key, directory)


class TlsRuntime(SocketServer):
    """Answers any request over TLS with a whoami body."""

    timeout = 10.0

    def __init__(self, certificate: Certificate) -> None:
        super().__init__()
        self._context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._context.load_cert_chain(certificate.cert, certificate.key)

    def handle(self, conn: socket.socket) -> None:
        with self._context.wrap_socket(conn, server_side=True) as tls:
            if read_head(tls) is None:
                return
            tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        b"Content-Length: " + str(len(WHOAMI)).encode() + b"\r\n"
                        b"Connection: close\r\n\r\n" + WHOAMI)


class ConnectProxy(SocketServer):
    """An HTTP proxy that tunnels every CONNECT to ``127.0.0.1:target_port``."""

    timeout = 10.0

    def __init__(self, target_port: int) -> None:
        super().__init__()
        self.target_port = target_port
        self.requests: list[str] = []

    def handle(self, conn: socket.socket) -> None:
        found = read_head(conn)
        if found is None:
            return
        head, rest = found
        self.requests.append(head.split(b"\r\n", 1)[0].decode("latin-1"))
        if not head.startswith(b"CONNECT "):
            conn.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        upstream = socket.create_connection(("127.0.0.1", self.target_port))
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        with upstream:
            upstream.sendall(rest)
            pump = threading.Thread(target=_pipe, args=(upstream, conn), daemon=True)
            pump.start()
            _pipe(conn, upstream)
            pump.join(5)


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
        sink.shutdown(socket.SHUT_WR)
