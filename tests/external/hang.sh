#!/bin/sh
# A kernel that never answers (tests/fuzz_external_robustness_test.cpp): it
# starts a grandchild that would outlive it, then sleeps. Both must be killed
# with the call's process group.
sleep 300 &
[ -n "$DSA_TEST_PIDS" ] && echo $$ $! >> "$DSA_TEST_PIDS"
echo "hang.sh: waiting forever" >&2
sleep 300
