"""Throwaway certificate authorities and server certificates for the test API server.

Made with the `openssl` command-line tool (present wherever Python's ssl module
is), so the tests need no extra package. EC P-256 keys keep generation fast.
"""

from __future__ import annotations

import base64
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TLSMaterial:
    ca_cert: Path
    server_cert: Path
    server_key: Path

    def ca_data_b64(self) -> str:
        """The CA as kubeconfig's `certificate-authority-data` wants it."""
        return base64.b64encode(self.ca_cert.read_bytes()).decode("ascii")


def _openssl(*args: str, cwd: Path) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed: {proc.stderr.strip()}")


def make_ca(directory: Path, name: str = "kschedx-test-ca") -> tuple[Path, Path]:
    """A self-signed CA; returns (cert, key)."""
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2",
        "-subj", f"/CN={name}",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-addext", "subjectKeyIdentifier=hash",
        cwd=directory,
    )
    return cert, key


def make_server_material(directory: Path) -> TLSMaterial:
    """A CA and a server certificate for 127.0.0.1 / localhost signed by it."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_cert, ca_key = make_ca(directory)
    key, csr, cert = directory / "server.key", directory / "server.csr", directory / "server.crt"
    ext = directory / "server.ext"
    ext.write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid\n"
    )
    _openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", str(key), "-out", str(csr), "-subj", "/CN=kube-apiserver",
        cwd=directory,
    )
    _openssl(
        "x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key),
        "-CAcreateserial", "-out", str(cert), "-days", "2", "-extfile", str(ext),
        cwd=directory,
    )
    return TLSMaterial(ca_cert=ca_cert, server_cert=cert, server_key=key)
