#!/usr/bin/env bash
# The SASS check of the SM100 sparse logits kernel (docs/cuda_sm100.md): reads the sm_100a machine
# code of every instantiation of sm100_sparse_logits_kernel in BINARY (a library, object or
# executable) with cuobjdump and fails unless each holds the tcgen05 MMA (UTC*MMA: the
# block-scaled form in the MXFP4 instantiations, the fp8 form in the e4m3 ones), the MXFP4 ones
# also the copy of their scales into tensor memory (UTCCP), and none touches local memory
# (LDL/STL). Writes the ISA report (per kernel: registers, shared memory, stack, the MMA forms)
# as a table to REPORT (default stdout).
#   scripts/check_sm100_sass.sh BINARY [REPORT]
# Without cuobjdump (the CPU machines: CUDA there has no disassembler) it says so and exits 77,
# which ctest reports as skipped; the GPU machine has it (scripts/gpu/run_all.sh runs this).
set -uo pipefail
bin=${1:?usage: check_sm100_sass.sh BINARY [REPORT]}
report=${2:-}
[ -f "$bin" ] || { echo "check_sm100_sass: no file $bin" >&2; exit 2; }
tool=${CUOBJDUMP:-}
if [ -z "$tool" ]; then
  for t in "$(command -v cuobjdump 2>/dev/null)" /usr/local/cuda/bin/cuobjdump \
    "$(python3 -c 'import os, triton; print(os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/cuobjdump"))' 2>/dev/null)"; do
    if [ -n "$t" ] && [ -x "$t" ]; then tool=$t; break; fi
  done
fi
if [ -z "$tool" ]; then
  echo "check_sm100_sass: SKIPPED: no cuobjdump on this machine (set CUOBJDUMP=...); the check runs on the GPU machine"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! "$tool" -sass -arch sm_100a "$bin" >"$work/sass.txt" 2>"$work/err.txt"; then
  echo "check_sm100_sass: FAIL: $tool -sass -arch sm_100a $bin: $(head -3 "$work/err.txt")" >&2
  exit 1
fi
"$tool" -res-usage -arch sm_100a "$bin" >"$work/res.txt" 2>/dev/null
# One file per function of the sm_100a image.
awk -v dir="$work" '/Function :/ { if (file) close(file); name = $3; file = dir "/fn_" ++n ".txt"; print name > (dir "/names.txt") }
                    file { print > file }' "$work/sass.txt"
fail=0
checked=0
{
  echo "| kernel | registers | shared | stack | MMA forms (count) | UTCCP | local memory ops | verdict |"
  echo "|---|---|---|---|---|---|---|---|"
  i=0
  while read -r name; do
    i=$((i + 1))
    case "$name" in *sm100_sparse_logits_kernel*) ;; *) continue ;; esac
    f=$work/fn_$i.txt
    checked=$((checked + 1))
    # Template arguments from the mangled name: <H, row bytes, MXFP4>.
    args=$(echo "$name" | sed -n 's/.*kernelILi\([0-9]*\)ELi\([0-9]*\)ELb\([01]\)E.*/H\1 rowbytes\2 mxfp4=\3/p')
    mxfp4=$(echo "$args" | sed -n 's/.*mxfp4=\([01]\).*/\1/p')
    forms=$(grep -o -E '\bUTC[A-Z0-9]*MMA[A-Z0-9_.]*' "$f" | sort | uniq -c | awk '{printf "%s%s (%s)", sep, $2, $1; sep=", "}')
    utccp=$(grep -c -E '\bUTCCP' "$f")
    lmem=$(grep -c -E '\b(LDL|STL)(\.|\b)' "$f")
    res=$(grep -A1 -F "$name" "$work/res.txt" | grep -o -E 'REG:[0-9]+|SHARED:[0-9]+|STACK:[0-9]+' | tr '\n' ' ')
    reg=$(echo "$res" | grep -o -E 'REG:[0-9]+' | cut -d: -f2)
    shared=$(echo "$res" | grep -o -E 'SHARED:[0-9]+' | cut -d: -f2)
    stack=$(echo "$res" | grep -o -E 'STACK:[0-9]+' | cut -d: -f2)
    verdict=PASS
    [ -n "$forms" ] || verdict="FAIL (no tcgen05 MMA)"
    [ "$mxfp4" = 1 ] && [ "$utccp" -eq 0 ] && verdict="FAIL (no scale copy UTCCP)"
    [ "$lmem" -eq 0 ] || verdict="FAIL (local memory)"
    [ "${stack:-0}" = 0 ] || verdict="FAIL (stack frame)"
    [ "$verdict" = PASS ] || fail=1
    echo "| $args | ${reg:-?} | ${shared:-?} | ${stack:-?} | ${forms:-none} | $utccp | $lmem | $verdict |"
  done <"$work/names.txt"
} >"$work/table.md"
cat "$work/table.md"
[ -z "$report" ] || cp "$work/table.md" "$report"
if [ "$checked" -eq 0 ]; then
  echo "check_sm100_sass: FAIL: no sm100_sparse_logits_kernel in the sm_100a code of $bin" >&2
  exit 1
fi
[ "$fail" = 0 ] && echo "check_sm100_sass: PASS ($checked kernels, $tool)" || echo "check_sm100_sass: FAIL" >&2
exit "$fail"
