"""The control plane's certificates and keys, made with `cryptography` (no openssl).

One CA signs the API server's serving certificate and every client certificate (as kubeadm's
cluster CA does); the ServiceAccount tokens are signed by a key pair of their own.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALID = datetime.timedelta(days=7)
# The API server's names: loopback, and the in-cluster names a pod's client would use.
SERVING_NAMES = (
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)
SERVING_IPS = ("127.0.0.1", "10.0.0.1")  # loopback and the first IP of 10.0.0.0/24


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _name(common: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    return x509.Name(
        [
            *(x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations),
            x509.NameAttribute(NameOID.COMMON_NAME, common),
        ]
    )


@dataclass(frozen=True)
class Pair:
    cert: Path
    key: Path


class Authority:
    """A CA that writes what it signs into one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._key = _key()
        now = datetime.datetime.now(datetime.UTC)
        self._name = _name("elastic-quota-control-plane-ca")
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(self._name)
            .issuer_name(self._name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALID)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(self._key, hashes.SHA256())
        )
        self.pair = self._write("ca", self._cert, self._key)

    @property
    def cert_pem(self) -> bytes:
        return self._cert.public_bytes(serialization.Encoding.PEM)

    def _write(self, stem: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> Pair:
        pair = Pair(self.directory / f"{stem}.crt", self.directory / f"{stem}.key")
        pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        pair.key.write_bytes(_key_pem(key))
        pair.key.chmod(0o600)
        return pair

    def _issue(
        self,
        stem: str,
        subject: x509.Name,
        usage: x509.ObjectIdentifier,
        names: tuple[str, ...] = (),
        ips: tuple[str, ...] = (),
    ) -> Pair:
        key = _key()
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self._name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALID)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if names or ips:
            alternatives: list[x509.GeneralName] = [x509.DNSName(n) for n in names]
            alternatives += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
            builder = builder.add_extension(
                x509.SubjectAlternativeName(alternatives), critical=False
            )
        return self._write(stem, builder.sign(self._key, hashes.SHA256()), key)

    def serving(self, stem: str, names: tuple[str, ...], ips: tuple[str, ...]) -> Pair:
        return self._issue(stem, _name(names[0]), ExtendedKeyUsageOID.SERVER_AUTH, names, ips)

    def client(self, stem: str, user: str, groups: tuple[str, ...] = ()) -> Pair:
        """A client certificate: the API server reads the user from CN, the groups from O."""
        return self._issue(stem, _name(user, groups), ExtendedKeyUsageOID.CLIENT_AUTH)


def service_account_keys(directory: Path) -> Pair:
    """The key pair that signs and checks ServiceAccount tokens (`cert` is the public key)."""
    key = _key()
    pair = Pair(directory / "sa.pub", directory / "sa.key")
    pair.key.write_bytes(_key_pem(key))
    pair.key.chmod(0o600)
    pair.cert.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return pair
