"""`codeweaver serve` keeps one BLAS thread: requests compute small products at once."""

from __future__ import annotations

from threadpoolctl import threadpool_info, threadpool_limits

from codeweaver.cli.serve_cmd import _one_blas_thread


def test_the_server_limits_blas_to_one_thread() -> None:
    with threadpool_limits(limits=None):  # restores this process's limits afterwards
        _one_blas_thread()
        blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
        assert blas and all(pool["num_threads"] == 1 for pool in blas)
