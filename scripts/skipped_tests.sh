#!/usr/bin/env bash
# Prints the tests a CTest run skipped, counted by reason, so that skips are seen and not
# hidden behind "100% tests passed": GoogleTest's own skips (GTEST_SKIP, with the message that
# follows "Skipped" in the test's output) from the run's log, by CTest entry and reason.
#   scripts/skipped_tests.sh BUILD_DIR
set -euo pipefail
log="${1:?usage: $0 BUILD_DIR}/Testing/Temporary/LastTest.log"
[ -f "$log" ] || { echo "skipped_tests: no $log (has CTest run?)" >&2; exit 1; }

skips=$(awk '
  /^[0-9]+\/[0-9]+ Testing: / { entry = $3 }
  / Skipped$/ {
    if ((getline reason) <= 0) reason = "(no reason given)"
    sub(/: .*/, "", reason)  # "not supported by ascend: <call>" -> by backend
    # A program whose tests are spread over several CTest entries skips the tests of the others.
    if (reason ~ /^run by the CTest entry/) reason = "run by another CTest entry"
    print entry " | " reason
  }
' "$log")
if [ -z "$skips" ]; then
  echo "Skipped tests: none"
  exit 0
fi
echo "Skipped tests: $(printf '%s\n' "$skips" | wc -l) (GoogleTest skips, by CTest entry and reason)"
printf '%s\n' "$skips" | sort | uniq -c
