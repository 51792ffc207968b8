#!/usr/bin/env bash
# An agent that answers from directories of files (its arguments): for
# each call it prints the first that exists, directory by directory, of
# DIR/STEP.ATTEMPT.json (the answer to the ATTEMPT-th call) and
# DIR/STEP.json.
set -eu
cat >/dev/null
for d in "$@"; do
  for f in "$d/$APL_STEP.$APL_ATTEMPT.json" "$d/$APL_STEP.json"; do
    if [ -f "$f" ]; then cat "$f"; exit 0; fi
  done
done
echo "answers.sh: no answer in $* for step $APL_STEP" >&2
exit 1
