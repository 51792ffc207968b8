#!/usr/bin/env bash
# The agent of testdata/phase-gates, for running the playbook
# offline. It is not an AI: it answers each step from a scenario's files,
# following the command-driver contract (prompt on stdin, APL_STEP and
# APL_ATTEMPT in the environment, the answer on stdout).
#
# SCENARIO picks scenarios/NAME/ (default: pass). For each call it prints the
# first file that exists of:
#   scenarios/NAME/STEP.ATTEMPT.txt   (the answer to the ATTEMPT-th call)
#   scenarios/NAME/STEP.txt           (the answer to every call)
#   scenarios/default/STEP.txt        (the happy path)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
scenario=${SCENARIO:-pass}
cat >/dev/null
for f in "$here/scenarios/$scenario/$APL_STEP.$APL_ATTEMPT.txt" \
         "$here/scenarios/$scenario/$APL_STEP.txt" \
         "$here/scenarios/default/$APL_STEP.txt"; do
  if [ -f "$f" ]; then
    cat "$f"
    exit 0
  fi
done
echo "agent.sh: scenario $scenario has no answer for step $APL_STEP" >&2
exit 1
