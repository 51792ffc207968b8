#!/usr/bin/env bash
# An example agent for examples/conductor, for running the playbook
# offline. It is not an AI: implementers say they are done; the reviewer
# rejects T2 once (medium severity, so it is retried with feedback) and T3
# always (high severity, so a person is asked). With CONDUCTOR_LOG set it
# logs when each call starts and ends, so tests can check concurrency.
set -eu
cat >/dev/null
log=${CONDUCTOR_LOG:-/dev/null}
echo "start $APL_STEP $APL_ITEM_KEY $(date +%s%N)" >>"$log"
sleep 0.1
case "$APL_STEP" in
  implement_*)
    echo "Implemented $APL_ITEM_KEY."
    ;;
  review)
    case "$APL_ITEM_KEY:$APL_ATTEMPT" in
      T2:1) echo '{"signal": "REJECTED", "severity": "medium", "summary": "no test", "feedback": ["add a test for the loader"]}' ;;
      T3:*) echo '{"signal": "REJECTED", "severity": "high", "summary": "breaks every caller", "feedback": ["keep the old API"]}' ;;
      *) echo '{"signal": "APPROVED", "severity": "low", "summary": "looks good", "feedback": []}' ;;
    esac
    ;;
esac
echo "end $APL_STEP $APL_ITEM_KEY $(date +%s%N)" >>"$log"
