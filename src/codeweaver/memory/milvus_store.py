"""The Milvus backend (`CODEWEAVER_VECTOR_STORE=milvus`) over `pymilvus.MilvusClient`.

`MILVUS_URI` names a Milvus server (`http://host:19530`), Zilliz Cloud (with
`MILVUS_TOKEN`) or a Milvus Lite `.db` path; unset, Milvus Lite runs embedded on
`Settings.milvus_lite_path`. Embedded Milvus Lite opens its files in one process at a
time, so several processes share a store through a server: `python -m milvus_lite server
--data-dir D --host 127.0.0.1` and `MILVUS_URI=http://127.0.0.1:19530`.

A collection has a string primary key `id`, a `vector` (FLOAT_VECTOR, COSINE) and the
payload as dynamic fields. Reads use Strong consistency, so another client's writes are
seen. Clients are shared per location (`memory.milvus_clients`); pymilvus is imported
only when used (the `milvus` extra).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from codeweaver.memory.milvus_clients import (
    MilvusLocation,
    close_shared_clients,
    loaded_collections,
    pymilvus_module,
    using,
)
from codeweaver.memory.vector_store import (
    Hit,
    Payload,
    VectorCollection,
    VectorStoreError,
    VectorStoreNotWritableError,
    Where,
    collection_name,
    register_vector_store,
    unwritable,
)

__all__ = ["MilvusCollection", "MilvusStore", "close_shared_clients"]

if TYPE_CHECKING:
    from codeweaver.config import Settings

ID_FIELD = "id"
VECTOR_FIELD = "vector"
_RESERVED = frozenset({ID_FIELD, VECTOR_FIELD, "$meta"})
_ID_MAX_LENGTH = 128  # our ids are UUID strings (36 characters)
_WRITE_BATCH = 256  # rows per upsert call: keeps each request far below gRPC's limit
_STRONG = "Strong"  # reads see every write acknowledged before them, from any client
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def milvus_name(name: str) -> str:
    """The Milvus spelling of a `collection_name` (Milvus allows letters, digits and
    underscores, starting with a letter or underscore): `-` becomes `H`, `.` becomes `D`,
    and a leading digit gets an `N`. Names are lower case, so this is reversible, and it
    maps a prefix of a name to a prefix of its image."""
    if re.fullmatch(r"[a-z0-9._-]*", name) is None:
        raise ValueError(f"not a collection name: {name!r}")
    mapped = name.replace("-", "H").replace(".", "D")
    return f"N{mapped}" if mapped[:1].isdigit() else mapped


def logical_name(milvus: str) -> str | None:
    """The `collection_name` whose `milvus_name` is `milvus`, or None for another's."""
    body = milvus[1:] if milvus.startswith("N") else milvus
    if re.fullmatch(r"[a-z0-9_HD]*", body) is None:
        return None
    name = body.replace("H", "-").replace("D", ".")
    return name if milvus_name(name) == milvus else None


def _literal(value: Any) -> str:
    """A Milvus expression literal; strings are quoted and escaped, so an untrusted value
    can never end the string or add to the expression."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot filter on {value!r}")
        return repr(value)
    if isinstance(value, str):
        # The escapes every Milvus parser reads; a raw newline would end the literal.
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
        return f'"{escaped}"'
    raise ValueError(f"cannot filter on a {type(value).__name__}: {value!r}")


def filter_expression(where: Where | None) -> str | None:
    """`where` as a Milvus boolean expression; "" for no filter, None when it can match
    nothing (an empty list of allowed values)."""
    terms: list[str] = []
    for key, value in (where or {}).items():
        if _IDENTIFIER.fullmatch(key) is None or key in _RESERVED:
            raise ValueError(f"cannot filter on the field {key!r}")
        if isinstance(value, list | tuple | set | frozenset):
            if not value:
                return None
            items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
            terms.append(f"{key} in [{', '.join(_literal(v) for v in items)}]")
        else:
            terms.append(f"{key} == {_literal(value)}")
    return " and ".join(f"({t})" for t in terms)


class MilvusCollection:
    """One cosine collection of a fixed dimension in Milvus (`VectorCollection`)."""

    def __init__(
        self,
        location: MilvusLocation,
        name: str,
        dimension: int,
        keyword_fields: Sequence[str] = (),
    ) -> None:
        self.location = location
        self.logical_name = name
        self.name = milvus_name(name)
        self.dimension = dimension
        # Payload fields are dynamic, filtered by expression; kept for a later index.
        self.keyword_fields = tuple(keyword_fields)
        _open_checked(location)  # fail now (missing extra, locked file), not on first use

    def describe(self) -> str:
        return self.location.describe()

    def exists(self) -> bool:
        with using(self.location) as client:
            return bool(client.has_collection(self.name))

    def ensure(self) -> None:
        """Create the collection if missing, and load it once per client."""
        pymilvus = pymilvus_module()
        loaded = loaded_collections(self.location)
        with using(self.location) as client:
            if self.name in loaded:
                return
            if not client.has_collection(self.name):
                schema = client.create_schema(auto_id=False, enable_dynamic_field=True)
                schema.add_field(
                    ID_FIELD, pymilvus.DataType.VARCHAR, is_primary=True, max_length=_ID_MAX_LENGTH
                )
                schema.add_field(VECTOR_FIELD, pymilvus.DataType.FLOAT_VECTOR, dim=self.dimension)
                # Another process may create it meanwhile: then the checks below pass.
                with contextlib.suppress(pymilvus.MilvusException):
                    client.create_collection(self.name, schema=schema, consistency_level=_STRONG)
            if not client.list_indexes(self.name):
                index = client.prepare_index_params()
                index.add_index(VECTOR_FIELD, index_type="AUTOINDEX", metric_type="COSINE")
                try:
                    # An empty collection's index is ready at once; waiting for it polls
                    # a timestamp call Milvus Lite does not implement.
                    client.create_index(self.name, index, sync=False)
                except pymilvus.MilvusException:
                    if not client.list_indexes(self.name):  # not another process's index
                        raise
            client.load_collection(self.name)
            loaded.add(self.name)

    def _ready(self) -> bool:
        """Whether the collection exists (then loaded, ready for reads)."""
        if self.name in loaded_collections(self.location):
            return True
        if not self.exists():
            return False
        self.ensure()
        return True

    def upsert(
        self, ids: Sequence[str], vectors: NDArray[np.float32], payloads: Sequence[Payload]
    ) -> None:
        if not (len(ids) == len(vectors) == len(payloads)):
            raise ValueError("ids, vectors and payloads must have the same length")
        if len(ids) == 0:
            return
        if vectors.shape[1] != self.dimension:
            raise ValueError(
                f"vectors have {vectors.shape[1]} dimensions, expected {self.dimension}"
            )
        rows = [
            _row(pid, vector, payload)
            for pid, vector, payload in zip(ids, vectors, payloads, strict=True)
        ]
        self.ensure()
        self._write(rows)

    def _write(self, rows: list[dict[str, Any]]) -> None:
        # Milvus replaces a row with the same id; Milvus Lite merges the new fields into
        # it, which is the same here because one purpose always writes the same fields.
        with using(self.location) as client:
            for start in range(0, len(rows), _WRITE_BATCH):
                client.upsert(self.name, rows[start : start + _WRITE_BATCH])

    def query(
        self, vector: NDArray[np.float32], limit: int, where: Where | None = None
    ) -> list[Hit]:
        expr = filter_expression(where)
        if expr is None or limit <= 0 or not self._ready():
            return []
        with using(self.location) as client:
            results = client.search(
                self.name,
                data=[vector.astype(np.float32).tolist()],
                filter=expr,
                limit=limit,
                output_fields=["*"],
                search_params={"metric_type": "COSINE"},
                consistency_level=_STRONG,
            )
        hits = results[0] if results else []
        return [
            Hit(str(h["id"]), float(h["distance"]), _payload(h.get("entity") or {})) for h in hits
        ]

    def delete(self, where: Where) -> None:
        """Delete the points matching `where` (never everything: `where` must be non-empty)."""
        expr = filter_expression(where)
        if expr == "":
            raise ValueError("refusing to delete without a filter")
        if expr is None or not self._ready():
            return
        with using(self.location) as client:
            client.delete(self.name, filter=expr)

    def delete_ids(self, ids: Sequence[str]) -> None:
        if not ids or not self._ready():
            return
        with using(self.location) as client:
            client.delete(self.name, ids=list(ids))

    def set_payload(self, ids: Sequence[str], payload: Payload) -> None:
        """Merge `payload` into the given points' payloads (points gone meanwhile are skipped).

        Milvus has no payload update: the rows are read with their vectors and written
        back whole (not atomic against another process writing the same rows)."""
        if not ids or not self._ready():
            return
        with using(self.location) as client:
            rows = client.get(self.name, list(ids), output_fields=["*"], consistency_level=_STRONG)
            merged = [
                _row(str(r[ID_FIELD]), r[VECTOR_FIELD], {**_payload(r), **payload}) for r in rows
            ]
            if merged:
                self._write(merged)

    def count(self, where: Where | None = None) -> int:
        expr = filter_expression(where)
        if expr is None or not self._ready():
            return 0
        with using(self.location) as client:
            rows = client.query(
                self.name, filter=expr, output_fields=["count(*)"], consistency_level=_STRONG
            )
        return int(rows[0]["count(*)"]) if rows else 0

    def scroll(
        self, where: Where | None = None, fields: Sequence[str] | None = None, page: int = 1024
    ) -> Iterator[tuple[str, Payload]]:
        """Every matching point's id and payload (only `fields` when given), page by page."""
        expr = filter_expression(where)
        if expr is None or not self._ready():
            return
        with using(self.location) as client:
            iterator = client.query_iterator(
                self.name,
                batch_size=max(1, page),
                filter=expr,
                output_fields=["*"],
                consistency_level=_STRONG,
            )
        try:
            while True:
                with using(self.location):
                    rows = iterator.next()
                if not rows:
                    return
                for row in rows:
                    payload = _payload(row)
                    if fields is not None:
                        payload = {k: payload[k] for k in fields if k in payload}
                    yield str(row[ID_FIELD]), payload
        finally:
            with contextlib.suppress(Exception):
                iterator.close()

    def retrieve(self, ids: Sequence[str]) -> dict[str, Payload]:
        if not ids or not self._ready():
            return {}
        with using(self.location) as client:
            rows = client.get(self.name, list(ids), output_fields=["*"], consistency_level=_STRONG)
        return {str(r[ID_FIELD]): _payload(r) for r in rows}


def _row(pid: str, vector: Any, payload: Payload) -> dict[str, Any]:
    clash = _RESERVED.intersection(payload)
    if clash:
        raise ValueError(f"payload fields {sorted(clash)} are reserved by the Milvus store")
    values = np.asarray(vector, dtype=np.float32).tolist()
    return {**payload, ID_FIELD: pid, VECTOR_FIELD: values}


def _payload(entity: Mapping[str, Any]) -> Payload:
    """The payload of a returned row: everything but the id and the vector."""
    payload = {k: v for k, v in entity.items() if k not in _RESERVED}
    meta = entity.get("$meta")  # some servers return the dynamic fields packed
    if isinstance(meta, str):
        meta = json.loads(meta)
    if isinstance(meta, Mapping):
        payload.update(meta)
    return payload


def _not_writable(
    location: MilvusLocation, probe: bool = False
) -> VectorStoreNotWritableError | None:
    """Why a Milvus Lite store cannot be written (see `unwritable`); None on a server."""
    if not location.lite:
        return None
    place = Path(location.uri)
    if place.is_dir():  # Milvus Lite keeps a folder by the file's name, with a LOCK file
        return unwritable(place, ["LOCK"], probe=probe)
    return unwritable(place.parent, [place.name], probe=probe)


def _open_checked(location: MilvusLocation) -> None:
    """Open the location's client; a Lite store that cannot be written is named so, not
    as a file another process holds (which is how Milvus Lite's refusal reads)."""
    problem = _not_writable(location)
    if problem is not None:
        raise problem
    try:
        with using(location):
            pass
    except VectorStoreError as exc:
        problem = _not_writable(location, probe=True)
        if problem is not None:
            raise problem from exc
        raise


@register_vector_store("milvus")
class MilvusStore:
    """The `VectorStore` of the settings' Milvus: `MILVUS_URI`, or an embedded Lite file."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.location = MilvusLocation.from_settings(settings)

    @property
    def label(self) -> str:
        return "milvus-lite" if self.location.lite else "milvus-server"

    def describe(self) -> str:
        return self.location.describe()

    def present(self) -> bool:
        return not self.location.lite or Path(self.location.uri).exists()

    def open(
        self, purpose: str, model: str, dimension: int, keyword_fields: Sequence[str] = ()
    ) -> VectorCollection:
        return MilvusCollection(
            self.location, collection_name(purpose, model, dimension), dimension, keyword_fields
        )

    def list_collections(self, prefix: str = "") -> list[str]:
        _open_checked(self.location)
        with using(self.location) as client:
            names = [logical_name(str(n)) for n in client.list_collections()]
        return sorted(n for n in names if n is not None and n.startswith(prefix))

    def count_points(self, name: str) -> int:
        return MilvusCollection(self.location, name, 0).count()
