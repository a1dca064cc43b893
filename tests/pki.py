"""A private certificate authority for TLS tests: real certificates, built with `cryptography`.

Certificates carry the extensions strict verifiers ask for (key identifiers, key
usage, server-auth EKU), so a refusal in a test is about what the test changed
(the trust anchor, the name, the dates) and nothing else.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Sequence
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

LOOPBACK = "127.0.0.1"


def _name(text: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])


def _alt_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


class PrivateCa:
    """A CA whose certificate is written to `directory/ca.pem`; it issues server certificates."""

    def __init__(self, directory: Path, name: str = "gwdesk test CA") -> None:
        self.directory = directory
        self._key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(_name(name))
            .issuer_name(_name(name))
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=30))
            .not_valid_after(now + dt.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True, content_commitment=False, key_encipherment=False,
                    data_encipherment=False, key_agreement=False, key_cert_sign=True,
                    crl_sign=True, encipher_only=False, decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(self._key.public_key()), critical=False
            )
            .sign(self._key, hashes.SHA256())
        )  # fmt: skip
        self.path = directory / "ca.pem"
        self.path.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))

    def issue(
        self,
        stem: str = "server",
        hosts: Sequence[str] = (LOOPBACK,),
        *,
        valid_from: dt.timedelta = dt.timedelta(minutes=-5),
        valid_until: dt.timedelta = dt.timedelta(days=1),
    ) -> tuple[Path, Path]:
        """A server certificate for `hosts`, valid from now+`valid_from` to now+`valid_until`.

        Returns the paths of `stem.pem` (certificate) and `stem-key.pem` (unencrypted key).
        """
        now = dt.datetime.now(dt.UTC)
        key = ec.generate_private_key(ec.SECP256R1())
        leaf = (
            x509.CertificateBuilder()
            .subject_name(_name(hosts[0]))
            .issuer_name(self.certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now + valid_from)
            .not_valid_after(now + valid_until)
            .add_extension(
                x509.SubjectAlternativeName([_alt_name(h) for h in hosts]), critical=False
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()),
                critical=False,
            )
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(self._key, hashes.SHA256())
        )
        cert_path = self.directory / f"{stem}.pem"
        key_path = self.directory / f"{stem}-key.pem"
        cert_path.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        return (cert_path, key_path)


def make_pki(directory: Path) -> tuple[Path, Path, Path]:
    """A private CA and a certificate for 127.0.0.1 signed by it: (ca.pem, cert, key)."""
    ca = PrivateCa(directory)
    cert_path, key_path = ca.issue()
    return (ca.path, cert_path, key_path)
