#!/usr/bin/env bash
# Teamwork round trip: publish a repo's DVC outputs, then prove that a teammate's
# fresh clone gets the identical submission without recomputing anything.
#
#   bench/teamwork_roundtrip.sh [REPO] [CLONE_DIR]
#
#   REPO       the repository to publish (default: the current directory); its
#              pipeline must be reproduced and dvc.lock + the cache:false outputs
#              (metrics/*.json, reports, plot CSVs) committed: a clone only sees commits.
#   CLONE_DIR  where the fresh clone goes (default: a new folder under /tmp); must not exist.
#
# Steps: dvc status (workspace == dvc.lock) -> dvc push -> git clone -> (local
# remote: point the clone at the same folder) -> dvc pull -> dvc repro, which
# must run no stage -> dvc status clean -> sha256 of every file named in
# $FILES identical in both trees. Exit 0 only if all of that holds.
# Env: DVC (dvc executable; default REPO/.venv/bin/dvc, else dvc on PATH),
#      FILES (space-separated paths to compare; default submissions/submission.csv),
#      REMOTE (remote name; default the repo's default remote).
set -euo pipefail

REPO=$(cd "${1:-.}" && pwd)
CLONE=${2:-}
FILES=${FILES:-submissions/submission.csv}
export DVC_NO_ANALYTICS=1

if [[ -z "${DVC:-}" ]]; then
  if [[ -x "$REPO/.venv/bin/dvc" ]]; then DVC="$REPO/.venv/bin/dvc"; else DVC=$(command -v dvc || true); fi
fi
[[ -n "$DVC" ]] || { echo "FAIL: no dvc found: set DVC=/path/to/dvc" >&2; exit 1; }
# `dvc` runs stage commands through PATH: keep the repo's venv first (only matters if a stage reruns)
[[ -d "$REPO/.venv/bin" ]] && export PATH="$REPO/.venv/bin:$PATH"

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo; echo "== $*"; }

cd "$REPO"
git rev-parse --git-dir >/dev/null 2>&1 || fail "$REPO is not a git repository"

step "1. $REPO: workspace matches dvc.lock and the pipeline state is committed"
status=$("$DVC" status 2>&1) || fail "dvc status failed: $status"
echo "$status"
grep -q "Data and pipelines are up to date" <<<"$status" || fail "the workspace differs from dvc.lock: run dvc repro (and commit) first"
dirty=$(git status --porcelain -- dvc.yaml dvc.lock params.yaml $(git ls-files -- metrics) || true)
[[ -z "$dirty" ]] || fail "uncommitted pipeline state (a clone would not see it):"$'\n'"$dirty"
untracked_metrics=$(git status --porcelain --untracked-files=all -- metrics | grep '^??' || true)
[[ -z "$untracked_metrics" ]] || fail "untracked cache:false outputs (commit them):"$'\n'"$untracked_metrics"

REMOTE=${REMOTE:-$("$DVC" config core.remote 2>/dev/null || true)}
[[ -n "$REMOTE" ]] || fail "no default DVC remote (see README, 'Team: sharing artifacts')"
REMOTE_URL=$("$DVC" config "remote.$REMOTE.url")
echo "remote '$REMOTE' -> $REMOTE_URL"

step "2. dvc push"
"$DVC" push -r "$REMOTE"

step "3. fresh clone"
if [[ -z "$CLONE" ]]; then CLONE=$(mktemp -d /tmp/treerag-clone.XXXXXX)/repo; fi
[[ ! -e "$CLONE" ]] || fail "$CLONE already exists"
git clone -q "$REPO" "$CLONE"
cd "$CLONE"
echo "cloned $(git rev-parse --short HEAD) into $CLONE"
# A local remote given as a relative path resolves against the clone's .dvc/:
# point the clone at the folder the original pushed to (cloud URLs need nothing).
if [[ "$REMOTE_URL" != *://* ]]; then
  "$DVC" remote modify --local "$REMOTE" url "$REMOTE_URL"
fi

step "4. dvc pull"
"$DVC" pull -r "$REMOTE"

step "5. dvc repro (must run nothing)"
repro=$("$DVC" repro 2>&1) || { echo "$repro"; fail "dvc repro failed in the clone"; }
echo "$repro"
if grep -q "Running stage" <<<"$repro"; then
  fail "dvc repro recomputed: $(grep 'Running stage' <<<"$repro" | tr '\n' ' ')"
fi
after=$("$DVC" status 2>&1)
grep -q "Data and pipelines are up to date" <<<"$after" || fail "clone not up to date after repro: $after"
git diff --quiet -- dvc.lock || fail "dvc.lock changed in the clone"

step "6. identical outputs"
rc=0
for f in $FILES; do
  [[ -f "$REPO/$f" ]] || fail "$REPO/$f missing"
  [[ -f "$CLONE/$f" ]] || fail "$CLONE/$f missing after pull"
  a=$(sha256sum "$REPO/$f" | cut -d' ' -f1)
  b=$(sha256sum "$CLONE/$f" | cut -d' ' -f1)
  if [[ "$a" == "$b" ]]; then echo "same   $a  $f"; else echo "DIFFER $a != $b  $f"; rc=1; fi
done
[[ $rc -eq 0 ]] || fail "outputs differ between $REPO and $CLONE"
echo
echo "PASS: push -> clone -> pull -> repro ran no stage; ${FILES} identical (clone: $CLONE)"
