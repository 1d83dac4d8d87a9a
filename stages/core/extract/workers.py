"""Parse corpus files in worker processes, results in file order.

`load_all(loader, jobs, ..., workers)` runs `loader(path, doc_id, fmt, params, images_dir)`
for every job, in `workers` processes (spawned: MuPDF, polars and torch are not
fork-safe) or, with one worker, in this process. Each job's outcome carries its
LoadedDoc or the reason it failed, and whatever the loader wrote to stderr, so the
caller replays warnings in file order: logs and artifacts do not depend on the number
of workers. A job that kills its worker process (a crash inside MuPDF, the OOM
killer) fails alone: the jobs that were running when the pool broke are retried one
by one in a fresh process, the rest go on in a new pool.
"""
from __future__ import annotations

import io
import logging
import multiprocessing
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import redirect_stderr
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from stages.core.extract.records import DocumentError, LoadedDoc

Loader = Callable[[Path, str, str, Any, Path | None], LoadedDoc]


@dataclass(frozen=True)
class LoadJob:
    path: Path
    doc_id: str
    fmt: str


@dataclass
class LoadOutcome:
    """A loaded document, or why the file was skipped; plus the loader's stderr."""

    loaded: LoadedDoc | None
    error: str | None
    stderr: str = ""
    cpu_s: float = 0.0  # CPU seconds the loader took (for benchmarks on a busy machine)


def run_job(loader: Loader, job: LoadJob, params: Any, images_dir: Path | None) -> LoadOutcome:
    """One file, never raising: any failure of one file must not stop the others."""
    err = io.StringIO()
    t0 = time.process_time()
    with redirect_stderr(err):
        try:
            loaded = loader(job.path, job.doc_id, job.fmt, params, images_dir)
            return LoadOutcome(loaded, None, err.getvalue(), time.process_time() - t0)
        except Exception as e:  # noqa: BLE001
            reason = str(e) if isinstance(e, DocumentError) else f"unexpected {type(e).__name__}: {e}"
            return LoadOutcome(None, reason, err.getvalue(), time.process_time() - t0)


def _crashed(e: BaseException) -> LoadOutcome:
    return LoadOutcome(None, f"the extraction worker process died while reading this file ({type(e).__name__}: {e})")


def load_all(loader: Loader, jobs: Sequence[LoadJob], params: Any, images_dir: Path | None, workers: int,
             on_done: Callable[[LoadOutcome], None] | None = None) -> list[LoadOutcome]:
    """Every job's outcome, in job order (see the module docstring); `on_done(outcome)` after each file."""
    done = on_done or (lambda _o: None)
    if workers <= 1 or len(jobs) <= 1:
        out = []
        for job in jobs:
            out.append(run_job(loader, job, params, images_dir))
            done(out[-1])
        return out
    ctx = multiprocessing.get_context("spawn")
    outcomes: list[LoadOutcome | None] = [None] * len(jobs)
    todo = list(range(len(jobs)))
    while todo:
        broken = False
        with ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=ctx) as pool:
            futures = {pool.submit(run_job, loader, jobs[i], params, images_dir): i for i in todo}
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    try:
                        outcomes[futures[fut]] = fut.result()
                        done(outcomes[futures[fut]])
                    except BrokenProcessPool:
                        broken = True
        todo = [i for i in todo if outcomes[i] is None]
        if broken and todo:
            # jobs start in submission order: the culprit is among the first `workers` unfinished ones
            for i in todo[:workers]:
                outcomes[i] = _isolated(loader, jobs[i], params, images_dir, ctx)
                done(outcomes[i])
            todo = todo[workers:]
    assert all(o is not None for o in outcomes)
    return outcomes  # type: ignore[return-value]


def _isolated(loader: Loader, job: LoadJob, params: Any, images_dir: Path | None, ctx: Any) -> LoadOutcome:
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
            return pool.submit(run_job, loader, job, params, images_dir).result()
    except BrokenProcessPool as e:
        return _crashed(e)


def _run_one(loader: Loader, params: Any, images_dir: Path | None, job: LoadJob) -> LoadOutcome:
    return run_job(loader, job, params, images_dir)


def engine_load_all(engine: Any) -> Callable[..., list[LoadOutcome]]:
    """`load_all` on an engine's workers (`engine: ray`: one task per file, results in job order). With
    `ray.shared_store` (nodes without the driver's disk) the files stay here, in `extract.workers` processes:
    the workers would need the corpus files and would write the figures' PNGs on their own disks."""
    if getattr(engine, "store", None) is not None:
        logging.getLogger("treerag.engine").info("extract: ray.shared_store is set: the files are parsed on "
                                                 "this machine (extract.workers processes)")
        return load_all

    def run(loader: Loader, jobs: Sequence[LoadJob], params: Any, images_dir: Path | None, workers: int,
            on_done: Callable[[LoadOutcome], None] | None = None) -> list[LoadOutcome]:
        return engine.map(partial(_run_one, loader, params, images_dir), jobs, on_done)
    return run
