"""Downloads from the Parallel Workloads Archive (PWA) by a log's archive name.

The archive keeps each log under ``<base>/l_<site>_<machine>/<file>``, e.g.
``l_kth_sp2/KTH-SP2-1996-2.1-cln.swf.gz``: the directory is the part of the
file name before the year, lower-cased, dashes turned into underscores.
"""

from __future__ import annotations

import hashlib
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from queuecast.errors import InvalidInput

# Directories that do not follow the rule (checked against the archive's index).
DIRECTORY_EXCEPTIONS = {
    "anl_intrepid": "l_anl_int",
    "sdsc_par_1995": "l_sdsc_par95",
    "sdsc_par_1996": "l_sdsc_par96",
    "lpc_egee": "l_lpc",
    "osc_clust": "l_osc",
}
# (size in bytes, sha256) of the .gz files listed in ../shared/traces/MANIFEST.md.
KNOWN_FILES: dict[str, tuple[int, str]] = {
    "CTC-SP2-1996-3.1-cln.swf.gz": (
        1487336,
        "9fa28ac16c4386fb81b72a91d8bd8888281df2948a9d912769d387c5ee285bb4",
    ),
    "HPC2N-2002-2.2-cln.swf.gz": (
        2997773,
        "3c534857d6065cfd9cc35aac8d064c9c17172be7acf336de835006f43a626e64",
    ),
    "KTH-SP2-1996-2.1-cln.swf.gz": (
        411455,
        "3e152f201fd2e96808a735bced6ea6eb0bb07fdc447689cafb0750d87b264c0b",
    ),
    "SDSC-SP2-1998-4.2-cln.swf.gz": (
        1205570,
        "e03fe48be50c4ab04d6bb2285296d9c3399e9c1f27ee79b754ad32a14abd9bac",
    ),
}
_NAME = re.compile(r"^(?P<site>[A-Za-z0-9]+(?:-[A-Za-z][A-Za-z0-9]*)*)-(?P<year>(?:19|20)\d\d)\b")
CHUNK_BYTES = 1 << 20


class FetchError(InvalidInput):
    """A download failed or does not match what the archive is known to hold."""


@dataclass(frozen=True)
class Download:
    path: Path
    size: int
    sha256: str
    verified: bool  # checked against KNOWN_FILES


def archive_directory(name: str) -> str:
    """``KTH-SP2-1996-2.1-cln.swf.gz`` -> ``l_kth_sp2``; ``HPC2N-2002-...`` -> ``l_hpc2n``."""
    match = _NAME.match(Path(name).name)
    if match is None:
        raise FetchError(
            f"cannot tell the archive directory of {name!r} (expected SITE-MACHINE-YEAR-...); "
            "give the full address with --url",
            field="name",
        )
    site = match["site"].lower().replace("-", "_")
    return DIRECTORY_EXCEPTIONS.get(site) or DIRECTORY_EXCEPTIONS.get(
        f"{site}_{match['year']}", f"l_{site}"
    )


def archive_url(name: str, base_url: str) -> str:
    return f"{base_url.rstrip('/')}/{archive_directory(name)}/{Path(name).name}"


def download(
    url: str,
    dest: Path,
    *,
    name: str,
    progress: Callable[[float], None] | None = None,
    timeout_s: float = 60.0,
) -> Download:
    """Stream ``url`` into ``dest``, hashing as it goes; check size and sha256 if known."""
    digest = hashlib.sha256()
    size = 0
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response, dest.open("wb") as out:
            expected = int(response.headers.get("Content-Length") or 0)
            while chunk := response.read(CHUNK_BYTES):
                out.write(chunk)
                digest.update(chunk)
                size += len(chunk)
                if progress and expected:
                    progress(size / expected)
    except urllib.error.HTTPError as exc:
        raise FetchError(f"{url}: HTTP {exc.code} {exc.reason}", field="name") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise FetchError(f"{url}: download failed ({exc})") from exc
    if expected and size != expected:
        raise FetchError(f"{url}: got {size} bytes, the server announced {expected} (truncated)")
    return _verify(Path(name).name, Download(dest, size, digest.hexdigest(), False))


def _verify(filename: str, got: Download) -> Download:
    known = KNOWN_FILES.get(filename)
    if known is None:
        return got
    size, sha256 = known
    if got.size != size or got.sha256 != sha256:
        raise FetchError(
            f"{filename}: checksum mismatch: got {got.size} bytes sha256 {got.sha256}, "
            f"expected {size} bytes sha256 {sha256}"
        )
    return Download(got.path, got.size, got.sha256, True)
