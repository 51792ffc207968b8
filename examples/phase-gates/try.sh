#!/usr/bin/env bash
# Runs examples/phase-gates offline, with the example agent, in a scratch
# git project (a copy of project/, committed), and leaves the project for
# you to look at: its commits, .planning/ and .autopilot/ files, .apl/runs.
#
#   examples/phase-gates/try.sh [SCENARIO] [apl run flags...]
#
# SCENARIO is a directory of scenarios/ (default: pass). APL names the apl
# binary (default: apl on PATH; make run sets ./bin/apl).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
apl=${APL:-apl}
case $apl in */*) apl=$(cd "$(dirname "$apl")" && pwd)/$(basename "$apl") ;; esac
scenario=${1:-pass}
[ $# -gt 0 ] && shift
if [ "$scenario" = default ] || [ ! -d "$here/scenarios/$scenario" ]; then
  echo "try.sh: no scenario \"$scenario\"; the scenarios are: $(cd "$here/scenarios" && ls | grep -vx default | tr '\n' ' ')" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/phase-gates.XXXXXX")
cp -R "$here/project/." "$work/"
cd "$work"
# The agent and the phase runner commit: give them a name if git has none.
export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-phase-gates} GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-phase-gates@example.com}
export GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-$GIT_AUTHOR_NAME} GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-$GIT_AUTHOR_EMAIL}
git init -q
git add .
git commit -q -m 'start'
echo "phase-gates: scenario $scenario in $work" >&2
status=0
SCENARIO=$scenario "$apl" run "$here" --phase 6.3 --last-checkpoint-sha "$(git rev-parse HEAD)" \
  --agent-cmd "$here/agent.sh" "$@" || status=$?
echo "phase-gates: the project is $work (git log, .planning/, .autopilot/, apl show latest)" >&2
exit $status
