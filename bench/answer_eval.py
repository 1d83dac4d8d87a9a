"""Score an answering configuration on dev_QA / train_QA from fixed retrieval contexts.

    python bench/answer_eval.py run --name baseline                      # params.yaml as is
    python bench/answer_eval.py run --name t0 -S answer.temperature=0 --sets dev
    python bench/answer_eval.py compare baseline t0                      # paired bootstrap per set
    python bench/answer_eval.py curve t0                                 # score vs ensemble size (no LLM)
    python bench/answer_eval.py table --out ablation baseline t0 t1      # one table: B - A of each vs the first

Needs the built index (`dvc repro index`). Contexts are retrieved once per (questions
file, retrieval params) into bench/results/answer_eval/contexts/ (committed) and
reused, so two configurations see identical contexts; --rebuild-contexts after a
change to the retrieval code. LLM replies come from the persistent response
cache when they were asked before, so a rerun costs nothing and a killed run resumes.
Results per configuration and set in bench/results/answer_eval/<name>/<set>/:
summary.json (official / strict / symmetric, cost), by_type.csv, verdicts.csv,
submission.csv and the members' answers.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.lib.answer_eval import (  # noqa: E402
    apply_overrides,
    changed_questions,
    compare_verdicts,
    contexts_key,
    ensemble_curve,
    plot_by_type,
    plot_curve,
    retrieve_contexts,
    run_config,
    run_cost,
    runs_table,
    same_work_speed,
    table_markdown,
    type_table,
    with_unchanged,
)
from stages.core.common.dataio import doc_urls, read_metadata, read_questions  # noqa: E402
from stages.core.common.logs import setup_logging  # noqa: E402
from stages.core.common.params import load_params, section  # noqa: E402
from stages.core.llm.params import LLMParams  # noqa: E402
from stages.core.llm.session import llm_session  # noqa: E402

OUT = ROOT / "bench" / "results" / "answer_eval"
SETS = {"dev": ROOT / "data" / "wattbot" / "dev_QA.csv", "train": ROOT / "data" / "wattbot" / "train_QA.csv",
        # questions on the kinds of tables that still failed in v15, written for issue 25 (not in dev's score)
        "dev_tables": ROOT / "data" / "wattbot" / "dev_tables_QA.csv",
        # table cells drawn at random (bench/sample_table_cells.py), written in session 42 after every rule: held out
        "heldout_tables": ROOT / "data" / "wattbot" / "heldout_tables_QA.csv",
        # a second draw (session 43) leaving out every table a labelled file asked about: held out from session 42's reading
        "heldout_tables2": ROOT / "data" / "wattbot" / "heldout_tables2_QA.csv",
        # a third draw (session 43): every table no labelled file asked about, drawn after v33's rules were fixed
        "heldout_tables3": ROOT / "data" / "wattbot" / "heldout_tables3_QA.csv",
        # about 150 questions of every kind written from passages drawn at random by someone who never changes
        # the reader (data/wattbot/BLIND.md): whoever changes the reader sees only its scores, never its rows
        "blind": ROOT / "data" / "wattbot" / "blind_QA.csv"}
BLIND = {"blind"}
# a blind set's results keep only these per-question columns: its questions, answers and replies stay unread
BLIND_COLUMNS = ("id", "value", "ref", "na", "score", "strict_value", "strict_score", "symmetric_na",
                 "symmetric_score", "question_type", "error_category")


def _contexts(name: str, path: Path, params: dict, rebuild: bool = False) -> pl.DataFrame:
    """The set's contexts: kept (and committed) per questions file and retrieval params, so
    reader configurations are compared on identical contexts, also across sessions. They
    do not follow changes to the retrieval *code*: pass --rebuild-contexts after one."""
    cached = OUT / "contexts" / f"{name}-{contexts_key(path, params)}.parquet"
    if cached.exists() and not rebuild:
        return pl.read_parquet(cached)
    ctx = retrieve_contexts(pl.read_csv(path, infer_schema=False), params, ROOT / "artifacts" / "index",
                            ROOT / "artifacts" / "tree" / "nodes.parquet")
    cached.parent.mkdir(parents=True, exist_ok=True)
    ctx.write_parquet(cached)
    return ctx


# sections whose overrides need an index built with them (`dvc repro index`): the index on disk is then the variant's
_INDEX_SECTIONS = ("tree", "index", "embed", "extract", "caption")


def _base_contexts_saved(name: str, path: Path, base: dict, overrides: list[str], given: bool) -> None:
    """--changed-by with a tree or index override compares against params.yaml's saved contexts: the index on
    disk is the variant's, so base contexts retrieved now would be the variant's too (and saved under
    params.yaml's key). Raises when they are not saved."""
    if given or not any(o.split(".", 1)[0] in _INDEX_SECTIONS for o in overrides):
        return
    cached = OUT / "contexts" / f"{name}-{contexts_key(path, base)}.parquet"
    if not cached.exists():
        raise SystemExit(f"answer_eval: --changed-by {' '.join(overrides)}: no saved contexts of params.yaml for "
                         f"{path.name} ({cached.name}); the index on disk is the variant's. Run `answer_eval.py run` "
                         "on params.yaml first, with the index built from params.yaml (`dvc repro index`).")


def cmd_run(args: argparse.Namespace) -> int:
    params = apply_overrides(load_params(ROOT / "params.yaml"), args.set)
    # --changed-by: the questions whose requests differ between params.yaml and params.yaml with those
    # overrides, whatever this run's own -S (the base run and the variant's answer the same questions)
    base = load_params(ROOT / "params.yaml")
    changed_by = None if args.changed_by is None else apply_overrides(base, args.changed_by)
    if args.n is not None:
        params["ensemble"]["n"] = args.n
        base["ensemble"]["n"] = args.n
        if changed_by is not None:
            changed_by["ensemble"]["n"] = args.n
    given = dict(c.split("=", 1) for c in args.contexts)
    with llm_session(section(LLMParams, "llm", params)) as llm:
        for set_name in args.sets:
            path = SETS.get(set_name, Path(set_name))
            name = Path(path).stem if set_name not in SETS else set_name
            ctx = pl.read_parquet(given[set_name]) if set_name in given else \
                _contexts(name, Path(path), params, args.rebuild_contexts)
            only_ids = None
            if changed_by is not None:  # given contexts serve both; else each its own (a retrieval change)
                _base_contexts_saved(name, Path(path), base, args.changed_by, set_name in given)
                base_ctx, changed_ctx = (ctx, ctx) if set_name in given else \
                    (_contexts(name, Path(path), base), _contexts(name, Path(path), changed_by))
                only_ids = changed_questions(base, changed_by, read_questions(Path(path)), base_ctx,
                                             ROOT / params["data"]["metadata"], changed_ctx)
                print(f"{set_name}: {len(only_ids)} questions whose requests {' '.join(args.changed_by)} changes")
                if not only_ids:  # nothing to answer: the variant scores as params.yaml on this set
                    print(f"{set_name}: skipped: no question's requests change, so it scores as params.yaml here")
                    continue
            limits = list(range(args.step, args.limit, args.step)) + [args.limit] if args.limit and args.step else \
                [args.limit]
            for limit in limits:  # each step rescored and written: a killed run leaves its last step
                res = run_config(llm, params, Path(path), ctx, ROOT / params["data"]["metadata"],
                                 desc=f"{args.name}/{set_name}", limit=limit, only_ids=only_ids)
                _write(args, set_name, path, params, res, limit, given.get(set_name, "retrieved with these params"))
    return 0


def _write(args: argparse.Namespace, set_name: str, path: Path, params: dict, res, limit: int | None,
           contexts: str) -> None:
    out = OUT / args.name / set_name
    out.mkdir(parents=True, exist_ok=True)
    res.summary["config"] = {"overrides": args.set, "n": params["ensemble"]["n"], "questions": str(path),
                             "contexts": contexts, "limit": limit, "changed_by": args.changed_by,
                             "sample": "first `limit` ids in sha256 order" if limit else "all"}
    (out / "summary.json").write_text(json.dumps(res.summary, indent=2, sort_keys=True) + "\n")
    by_type = type_table(res.verdicts)
    by_type.write_csv(out / "by_type.csv")
    plot_by_type(by_type, f"{args.name} on {set_name} (n={res.summary['n']}, {params['ensemble']['n']} members)",
                 out / "by_type.png")
    if set_name in BLIND:  # scores only: no question, gold or predicted answer, no replies
        res.verdicts.select([c for c in BLIND_COLUMNS if c in res.verdicts.columns]).write_csv(out / "verdicts.csv")
    else:
        res.verdicts.write_csv(out / "verdicts.csv")
        res.submission.write_csv(out / "submission.csv")
        for i, m in enumerate(res.members):
            m.write_parquet(out / f"run_{i}.parquet")
    s = res.summary
    print(f"{args.name}/{set_name}: official {s['score']:.4f}  strict {s['strict']['score']:.4f}  "
          f"symmetric {s['symmetric']['score']:.4f}  n={s['n']}  members {s['member_scores']}  "
          f"cost {s['cost']}")
    print(by_type)


def _changed_by(name: str, set_name: str) -> list[str] | None:
    path = OUT / name / set_name / "summary.json"
    return json.loads(path.read_text()).get("config", {}).get("changed_by") if path.exists() else None


def _verdicts(name: str, set_name: str, base: str | None = None) -> pl.DataFrame:
    """A run's verdicts; a `--changed-by` run's filled in with ``base``'s rows for the questions it left
    out (`with_unchanged`), when ``base`` answered the whole set."""
    v = pl.read_csv(OUT / name / set_name / "verdicts.csv")
    if base is None or base == name or not _changed_by(name, set_name) or _changed_by(base, set_name):
        return v
    full = OUT / base / set_name / "verdicts.csv"
    return with_unchanged(v, pl.read_csv(full)) if full.exists() else v


def cmd_compare(args: argparse.Namespace) -> int:
    pooled: list[tuple[pl.DataFrame, pl.DataFrame]] = []
    for set_name in args.sets:
        a_path, b_path = OUT / args.a / set_name / "verdicts.csv", OUT / args.b / set_name / "verdicts.csv"
        missing = [str(p) for p in (a_path, b_path) if not p.exists()]
        if missing:
            print(f"compare: {set_name}: not run yet: {', '.join(missing)}", file=sys.stderr)
            continue
        a, b = _verdicts(args.a, set_name), _verdicts(args.b, set_name, base=args.a)
        set_id = (pl.lit(f"{set_name}:") + pl.col("id").cast(pl.String)).alias("id")  # ids unique across sets
        pooled.append((a.with_columns(set_id), b.with_columns(set_id)))
        d = compare_verdicts(a, b, column=args.column)
        types = ", ".join(f"{t} {v:+.3f} (n={n})" for t, (n, v) in d.per_type.items())
        print(f"{set_name}: {args.b} - {args.a} = {d.delta:+.4f} [{d.low:+.4f}, {d.high:+.4f}] 95% paired bootstrap, "
              f"P(delta<=0)={d.p_not_better:.3f}, n={d.n}; per type: {types}")
    if args.pooled and len(pooled) > 1:  # one bootstrap over all sets' questions: a small set's noise weighs less
        cols = ["id", "question_type", args.column]
        d = compare_verdicts(pl.concat([a.select(cols) for a, _ in pooled]),
                             pl.concat([b.select(cols) for _, b in pooled]), column=args.column)
        print(f"pooled {'+'.join(args.sets)}: {args.b} - {args.a} = {d.delta:+.4f} [{d.low:+.4f}, {d.high:+.4f}] "
              f"95% paired bootstrap, P(delta<=0)={d.p_not_better:.3f}, n={d.n}")
    return 0


def cmd_curve(args: argparse.Namespace) -> int:
    """Score vs ensemble size from a run's saved members (no LLM call): curve.json and curve.png."""
    params = load_params(ROOT / "params.yaml")
    urls = doc_urls(read_metadata(ROOT / params["data"]["metadata"]))
    points = {}
    for set_name in args.sets:
        folder = OUT / args.name / set_name
        runs = sorted(folder.glob("run_*.parquet"), key=lambda p: int(p.stem.split("_")[1]))
        if not runs:
            print(f"curve: {folder}: no run_*.parquet (run it first)", file=sys.stderr)
            continue
        members = [pl.read_parquet(p) for p in runs]
        ids = members[0]["question_id"].to_list()
        labels = read_questions(SETS.get(set_name, Path(set_name)))
        labels = labels.filter(pl.col("id").is_in(ids))
        points[set_name] = ensemble_curve(labels, members, urls)
        for p in points[set_name]:
            print(f"{args.name}/{set_name}: n={p['n']} official {p['score']:.4f} [{p['low']:.4f}, {p['high']:.4f}] "
                  f"({p['questions']} questions)")
    if points:
        (OUT / args.name / "curve.json").write_text(json.dumps(points, indent=2) + "\n")
        plot_curve(points, f"{args.name}: score vs ensemble size", OUT / args.name / "curve.png")
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    """A `--changed-by` run as a whole-set run: its rows and the base run's for the questions it left out,
    written as run NAME (verdicts, by_type, summary; no LLM call), so that the next change is measured
    against it: a chain of changed-by runs then needs no full run between its links."""
    for set_name in args.sets:
        sub, full = OUT / args.changed / set_name / "verdicts.csv", OUT / args.base / set_name / "verdicts.csv"
        if not full.exists():
            print(f"merge: {set_name}: {args.base} not run yet", file=sys.stderr)
            return 1
        if _changed_by(args.base, set_name):
            print(f"merge: {set_name}: {args.base} is a --changed-by run itself; merge it first", file=sys.stderr)
            return 1
        base = pl.read_csv(full)
        changed = pl.read_csv(sub) if sub.exists() else None  # no file: it changed nothing on this set
        v = base if changed is None else with_unchanged(changed, base)
        out = OUT / args.name / set_name
        out.mkdir(parents=True, exist_ok=True)
        v.write_csv(out / "verdicts.csv")
        type_table(v).write_csv(out / "by_type.csv")
        summary = {"score": round(float(v["score"].mean()), 6), "n": v.height,
                   "config": {"merged": {"base": args.base, "changed": None if changed is None else args.changed},
                              "n": json.loads((full.parent / "summary.json").read_text()).get("config", {}).get("n")}}
        (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
        print(f"{args.name}/{set_name}: official {summary['score']:.4f} (n={v.height}; {args.base} with "
              f"{0 if changed is None else changed.height} rows of {args.changed})")
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    """Every named run against the first (paired bootstrap), per set: <out>.md and <out>.json."""
    tables: dict[str, list[dict]] = {}
    lines: list[str] = []
    for set_name in args.sets:
        runs = {}
        for name in args.names:
            folder = OUT / name / set_name
            if (folder / "verdicts.csv").exists():
                runs[name] = (_verdicts(name, set_name, base=args.names[0]),
                              json.loads((folder / "summary.json").read_text()))
        if args.names[0] not in runs:
            print(f"table: {set_name}: {args.names[0]} not run yet", file=sys.stderr)
            continue
        labels = read_questions(SETS.get(set_name, Path(set_name)))
        tables[set_name] = runs_table(runs, labels)
        lines += [f"### {set_name}", "", *table_markdown(tables[set_name]), ""]
    if not tables:
        return 1
    (OUT / f"{args.out}.md").write_text("\n".join(lines))
    (OUT / f"{args.out}.json").write_text(json.dumps(tables, indent=2) + "\n")
    print("\n".join(lines))
    return 0


def cmd_speed(args: argparse.Namespace) -> int:
    """B's cost against A's on the questions both ran, and the machine-speed ratio from the member
    calls both made with the same work (so that runs made on different days compare)."""
    for set_name in args.sets:
        folders = [OUT / name / set_name for name in (args.a, args.b)]
        runs = [sorted(f.glob("run_*.parquet"), key=lambda p: int(p.stem.split("_")[1])) for f in folders]
        if not all(runs):
            print(f"speed: {set_name}: not run yet: {args.a if not runs[0] else args.b}", file=sys.stderr)
            continue
        a, b = ([pl.read_parquet(p) for p in r] for r in runs)
        ids = sorted(set(a[0]["question_id"].to_list()) & set(b[0]["question_id"].to_list()))
        ca, cb = run_cost(a, ids), run_cost(b, ids)
        print(f"{set_name} ({len(ids)} questions both ran): {args.a} {ca}; {args.b} {cb}")
        for i, j in ((i, j) for i in range(len(a)) for j in range(len(b))):
            s = same_work_speed(a[i], b[j])
            if s["calls"]:
                print(f"  same work, {args.a} member {i} vs {args.b} member {j}: {s}")
    return 0


def main(argv: list[str] | None = None) -> int:
    setup_logging()  # INFO, without one "HTTP Request" line per call
    parser = argparse.ArgumentParser(prog="bench/answer_eval.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="answer and score one configuration")
    run.add_argument("--name", required=True, help="results folder name of this configuration")
    run.add_argument("-S", "--set", action="append", default=[], help="override section.key=value (repeatable)")
    run.add_argument("--n", type=int, default=None, help="ensemble size (default: params.yaml)")
    run.add_argument("--sets", nargs="+", default=["dev", "train"], help="dev, train, dev_tables, heldout_tables, heldout_tables2, heldout_tables3, blind or a labelled CSV path")
    run.add_argument("--rebuild-contexts", action="store_true",
                     help="retrieve the contexts again (after a change to the retrieval code or the index)")
    run.add_argument("--contexts", nargs="+", default=[], metavar="SET=PARQUET",
                     help="answer a set from these saved contexts (e.g. an earlier run's) instead of its params' key")
    run.add_argument("--limit", type=int, default=None,
                     help="only a fixed random sample of this many questions per set (grows by prefix)")
    run.add_argument("--changed-by", nargs="+", default=None, metavar="SECTION.KEY=VALUE",
                     help="only the questions whose requests these overrides of params.yaml change (pass the same "
                          "to the base run and to the variant's)")
    run.add_argument("--step", type=int, default=None,
                     help="with --limit: score and write the results every this many questions")
    cmp = sub.add_parser("compare", help="paired bootstrap of configuration B against A")
    cmp.add_argument("a")
    cmp.add_argument("b")
    cmp.add_argument("--sets", nargs="+", default=["dev", "train"])
    cmp.add_argument("--column", default="score", choices=["score", "strict_score", "symmetric_score"])
    cmp.add_argument("--pooled", action="store_true", help="also one paired bootstrap over the sets' questions together")
    crv = sub.add_parser("curve", help="score vs ensemble size from a run's saved members (no LLM call)")
    crv.add_argument("name")
    crv.add_argument("--sets", nargs="+", default=["dev", "train"])
    tab = sub.add_parser("table", help="several runs against the first, one markdown table per set (no LLM call)")
    tab.add_argument("names", nargs="+", help="run names; the first is the base of the deltas")
    tab.add_argument("--out", required=True, help="writes bench/results/answer_eval/<out>.md and .json")
    tab.add_argument("--sets", nargs="+", default=["dev", "train"])
    mrg = sub.add_parser("merge", help="a --changed-by run and its base as one whole-set run (no LLM call)")
    mrg.add_argument("name", help="the merged run's name")
    mrg.add_argument("base", help="a whole-set run: the rows of the questions the changed run left out")
    mrg.add_argument("changed", help="the --changed-by run")
    mrg.add_argument("--sets", nargs="+", default=["dev", "train"])
    spd = sub.add_parser("speed", help="B's LLM cost against A's on the questions both ran, and the machine-speed "
                                       "ratio from calls both made with the same work (no LLM call)")
    spd.add_argument("a")
    spd.add_argument("b")
    spd.add_argument("--sets", nargs="+", default=["dev", "train"])
    args = parser.parse_args(argv)
    return {"run": cmd_run, "compare": cmd_compare, "curve": cmd_curve, "table": cmd_table,
            "speed": cmd_speed, "merge": cmd_merge}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
