"""`ray.shared_store: s3://bucket/prefix`: where the driver puts the files its Ray workers read, for a
cluster whose nodes do not share the driver's disk.

`put(name, files)` uploads a set of files under ``prefix/name-<content hash>/`` and returns that folder's
URI; workers open the URIs (Lance reads s3:// itself, Parquet and JSON through pyarrow's S3 filesystem,
stages/core/common/storage.py). The key is the hash of the files' names and bytes, so an input that did not
change is not uploaded again, and a changed one never overwrites what a running worker reads. A marker
object is written last: a folder without it (an upload cut short) is uploaded again.

The store is checked when the engine opens (credentials in the environment, endpoint reachable, bucket
there): a bad setting fails before any work, with an error naming `ray.shared_store`.
"""
from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from stages.core.common import storage
from stages.core.common.hashing import file_sha256
from stages.core.common.params import ParamError

log = logging.getLogger("treerag.engine")
KEY = "ray.shared_store"
DONE = ".complete"  # written after every file of a folder


def content_key(files: dict[str, Path]) -> str:
    """The hash of the files' names (as they are stored) and contents."""
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(f"{rel}\0{file_sha256(files[rel])}\0".encode())
    return h.hexdigest()[:32]


def folder_files(folder: Path, under: str = "") -> dict[str, Path]:
    """Every file of ``folder``, by its path relative to it (prefixed with ``under/``)."""
    return {"/".join(filter(None, [under, p.relative_to(folder).as_posix()])): p
            for p in sorted(folder.rglob("*")) if p.is_file()}


class SharedStore:
    def __init__(self, uri: str) -> None:
        from pyarrow import fs

        self.uri = uri.rstrip("/")
        what = f"{KEY}={uri!r}"
        try:
            self.fs = storage.s3_filesystem(what)
        except storage.StorageError as e:
            raise ParamError(str(e)) from e
        self.root = self.uri[len(storage.S3):]
        bucket = self.root.split("/", 1)[0]
        try:
            found = self.fs.get_file_info(bucket).type
        except OSError as e:
            raise ParamError(f"{what}: the S3 endpoint cannot be reached or refused the credentials ({e})") from e
        if found == fs.FileType.NotFound:
            raise ParamError(f"{what}: bucket {bucket!r} does not exist on the S3 endpoint")

    def put(self, name: str, files: dict[str, Path]) -> str:
        """``files`` (stored name -> local file) under one content-addressed folder; its s3:// URI."""
        folder = f"{self.root}/{name}-{content_key(files)}"
        from pyarrow import fs

        if self.fs.get_file_info(f"{folder}/{DONE}").type == fs.FileType.File:
            log.info("engine ray: %s already in %s", name, KEY)
            return storage.S3 + folder
        for rel, path in files.items():
            with path.open("rb") as src, self.fs.open_output_stream(f"{folder}/{rel}") as dst:
                for block in iter(lambda: src.read(1 << 20), b""):
                    dst.write(block)
        with self.fs.open_output_stream(f"{folder}/{DONE}") as dst:
            dst.write(b"")
        log.info("engine ray: %s uploaded to %s (%d files)", name, storage.S3 + folder, len(files))
        return storage.S3 + folder
