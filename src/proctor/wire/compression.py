"""Lossless compression for the Network division's wire (Inference rules §Benchmarks and QSL
Preprocessing: "Lossless compression", performed by the QSL, untimed; an SUT that compresses its
output has the QDL decompress it, timed).

zstd (the `zstandard` package) when it is installed, zlib from the standard library always.
Decompression is bounded by the size the receiver expects, so a hostile stream cannot make it
allocate more (a "zip bomb" gives an error, not memory).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from proctor.errors import ConfigError, DecompressionError
from proctor.typed_records import record

NONE = "none"


@record(frozen=True, slots=True)
class Codec:
    name: str
    compress: Callable[[bytes], bytes]
    _decompress: Callable[[bytes, int], bytes]

    def decompress(self, data: bytes, size: int) -> bytes:
        """`data` decompressed; exactly `size` bytes or DecompressionError."""
        try:
            out = self._decompress(data, size)
        except DecompressionError:
            raise
        except Exception as exc:  # zlib.error, zstandard.ZstdError: corrupt input
            raise DecompressionError(f"{self.name}: corrupt data: {exc}") from None
        if len(out) != size:
            raise DecompressionError(f"{self.name}: decompressed to {len(out)} bytes, expected {size}")
        return out


def _zlib_decompress(data: bytes, size: int) -> bytes:
    d = zlib.decompressobj()
    out = d.decompress(data, size + 1)  # one byte more than allowed reveals an oversized stream
    if len(out) > size or d.unconsumed_tail or not d.eof:
        raise DecompressionError(f"zlib: the stream does not decompress to exactly {size} bytes")
    if d.unused_data:
        raise DecompressionError(f"zlib: {len(d.unused_data)} bytes follow the end of the stream")
    return out


def _zlib() -> Codec:
    return Codec("zlib", lambda b: zlib.compress(b, 6), _zlib_decompress)


def _zstd() -> Codec | None:
    try:
        import zstandard  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    cctx = zstandard.ZstdCompressor(level=3)  # thread-safe for one-shot compress
    dctx = zstandard.ZstdDecompressor()

    def decompress(data: bytes, size: int) -> bytes:
        # a frame that declares its size is allocated at that size: check it first; one that does
        # not is bounded by max_output_size
        declared = zstandard.frame_content_size(data)
        if declared > size:
            raise DecompressionError(f"zstd: the frame declares {declared} bytes, expected {size}")
        return dctx.decompress(data, max_output_size=size)  # type: ignore[no-any-return,unused-ignore]

    return Codec("zstd", cctx.compress, decompress)


def available() -> list[str]:
    names = ["zlib"]
    if _zstd() is not None:
        names.insert(0, "zstd")
    return names


def get(name: str) -> Codec | None:
    """The codec called `name` (None for "none"); ConfigError when unknown or not installed."""
    if name == NONE:
        return None
    if name == "zlib":
        return _zlib()
    if name == "zstd":
        codec = _zstd()
        if codec is None:
            raise ConfigError("zstd needs the zstandard package (pip install zstandard); "
                              "or use compress=zlib", key="compress")
        return codec
    raise ConfigError(f"must be none, zlib or zstd, not '{name}'", key="compress")
