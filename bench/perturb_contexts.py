"""A null perturbation of saved contexts: the last two units of every attempt swap places.

    python bench/perturb_contexts.py bench/results/answer_eval/contexts/train-47836f5b27e8.parquet OUT.parquet
    python bench/answer_eval.py run --name s36-swap --n 1 --sets train dev --contexts train=OUT.parquet dev=...

The reader sees the same evidence, only two low-ranked units in the other order. What that costs or gains
is the noise floor of any change to the contexts: a retrieval change whose answers move no more than this
has not shown an effect. Session 36's numbers: bench/results/answer_eval/s36_null_perturbation.md.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl


def swap_last_two(ctx: pl.DataFrame) -> pl.DataFrame:
    """Ranks k-2 and k-1 of each (question, attempt) exchanged; an attempt with one unit is unchanged."""
    last = ctx.group_by("question_id", "attempt").agg(pl.col("rank").max().alias("_last"))
    rank, end = pl.col("rank"), pl.col("_last")
    return (ctx.join(last, on=["question_id", "attempt"])
            .with_columns(pl.when((rank == end) & (end >= 1)).then(rank - 1)
                          .when(rank == end - 1).then(rank + 1).otherwise(rank).alias("rank"))
            .drop("_last").sort("question_id", "attempt", "rank"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src", type=Path)
    ap.add_argument("dst", type=Path)
    args = ap.parse_args()
    out = swap_last_two(pl.read_parquet(args.src))
    out.write_parquet(args.dst)
    print(f"{args.dst}: {out.height} units, {out.select('question_id').n_unique()} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
