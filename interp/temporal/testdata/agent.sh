#!/bin/sh
# An example agent: answers JSON when asked for a number, else echoes.
prompt=$(cat)
case "$prompt" in
  *number*) echo '{"n": 2, "word": "two"}' ;;
  *) echo "done: $prompt" ;;
esac
