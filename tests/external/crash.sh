#!/bin/sh
# A kernel that crashes on every call (tests/fuzz_external_robustness_test.cpp):
# it says something on stderr, then dies of SIGSEGV.
[ -n "$DSA_TEST_PIDS" ] && echo $$ >> "$DSA_TEST_PIDS"
echo "crash.sh: about to fault on $2" >&2
kill -SEGV $$
