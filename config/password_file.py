"""Redis passwords read from files (`IUI_REDIS_PASSWORD_FILE`, `IUI_RQ_REDIS_PASSWORD_FILE`).

A password file keeps the secret out of the environment and out of compose files: the local
stack generates one per Redis user on a volume (ops/redis/secrets.sh).  The password goes into
the Redis URL percent-encoded, so any character is allowed; the errors never quote the file.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

MAX_PASSWORD_BYTES = 4096


def read_password(path: Path) -> str:
    """The password in `path`: one line of UTF-8 (a final newline is dropped), or ValueError saying why not."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_PASSWORD_BYTES + 3)  # room for a final CRLF, and one byte more to see the excess
    except OSError as error:
        raise ValueError(f"cannot be read ({error.strerror or type(error).__name__})") from None
    data = data.removesuffix(b"\n").removesuffix(b"\r")
    if len(data) > MAX_PASSWORD_BYTES:
        raise ValueError(f"must hold at most {MAX_PASSWORD_BYTES} bytes")
    try:
        password = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("must hold UTF-8 text") from None
    if not password:
        raise ValueError("is empty")
    if any(char in password for char in "\r\n\0"):
        raise ValueError("must hold one line: the password")
    return password


def with_password(url: str, password: str) -> str:
    """`url` with `password` (percent-encoded) after its user name, or ValueError if it carries one already."""
    parts = urlsplit(url)
    userinfo, _, host = parts.netloc.rpartition("@")
    if ":" in userinfo:
        raise ValueError("is set but the URL already carries a password")
    return urlunsplit(parts._replace(netloc=f"{userinfo}:{quote(password, safe='')}@{host}"))
