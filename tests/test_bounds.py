"""The fuzzing bounds themselves (tests/_bounds.py): the address-space limit turns a
large allocation into a MemoryError and is lifted afterwards; a failing input is kept,
and replaced only by a shorter one."""

import resource

import numpy as np
import pytest

from ._bounds import bounded, corpus, keep_if_found


def test_an_allocation_beyond_the_limit_is_a_memory_error():
    before = resource.getrlimit(resource.RLIMIT_AS)
    with bounded(extra_bytes=256 << 20), pytest.raises(MemoryError):
        np.ones(1 << 30, dtype=np.uint8)  # 1 GiB, touched
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    assert np.ones(300 << 20, dtype=np.uint8).sum() == 300 << 20


def test_a_found_input_is_kept_in_its_smallest_form(tmp_path, monkeypatch):
    keep_if_found("reader", b"abcdef", ".txt")  # no corpus folder: nothing written
    monkeypatch.setenv("SAPWOOD_FUZZ_CORPUS", str(tmp_path))
    keep_if_found("reader", b"abcdef", ".txt")
    keep_if_found("reader", b"abcdefgh", ".txt")
    assert (tmp_path / "found-reader.txt").read_bytes() == b"abcdef"
    keep_if_found("reader", b"ab", ".txt")
    (tmp_path / "make_corpus.py").write_text("")
    assert corpus(tmp_path) == [tmp_path / "found-reader.txt"]
    assert (tmp_path / "found-reader.txt").read_bytes() == b"ab"
