#!/usr/bin/env bash
# failures.sh LOG: repeats the failures of a `go test` log, the shortest summary last, so that a
# log cut to its last lines (CI keeps the tail) still names the failing tests and their first
# message.
set -u
log=$1
echo "== the failures (whole log: $log):"
grep -E -A12 'WARNING: DATA RACE' "$log" | head -60
grep -E -A10 '^panic:' "$log" | head -30
grep -E -A6 '^\s*--- FAIL' "$log" | head -80
echo '== failed (first message of each):'
grep -E -A1 '^\s*--- FAIL' "$log" | grep -v '^--$' | cut -c1-200 | head -16
grep -E '^FAIL\s' "$log" | head -8
