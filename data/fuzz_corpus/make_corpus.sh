#!/usr/bin/env bash
# Regenerates the libFuzzer seed corpus (tests/fuzz_harness): a few small,
# valid inputs per harness, made by the project's own writers, so that the
# fuzzer starts from files that pass the readers' first checks.
#   data/fuzz_corpus/make_corpus.sh build/dsa-oracle
set -euo pipefail
cli="$(realpath "$1")"
cd "$(dirname "$0")"
python=/usr/bin/python3
rm -rf safetensors golden_case npy npz dump replay
mkdir -p safetensors golden_case npy npz dump replay

# Replay descriptions: the properties' own probe cases, one per kind.
cat > replay/topk.json <<'JSON'
{"k":4,"kind":"topk","rows":[[0,10,"normal",1],[0,3,"few_levels",2]],"seed":1,"tail":"garbage","width_pad":0}
JSON
cat > replay/candidate.json <<'JSON'
{"block_size":4,"k":4,"kind":"candidate","lens_2d":false,"next_n":1,"requests":[[20,[],"normal",1]],"seed":1,"slots":2,"source":"selected","tail":"garbage","width_pad":0}
JSON
cat > replay/decode.json <<'JSON'
{"block_size":16,"candidate_block_size":8,"candidate_slots":4,"compress_ratio":1,"element":"e4m3fn","extra_table_pages":0,"head_dim":64,"heads":8,"k_codes":"quantized_normal","k_scales":"quantizer","kind":"decode","layout":"block_flat","lens_2d":false,"next_n":2,"padded":true,"page_table":"contiguous","profile":"exact","q_codes":"quantized_normal","requests":[[20,[],1,1],[9,[],2,2]],"seed":1,"spare_pages":0,"weights":"normal","width_pad":0}
JSON
cat > replay/prefill.json <<'JSON'
{"element":"e4m3fn","head_dim":64,"heads":8,"k_codes":"quantized_normal","k_scales":"quantizer","kind":"prefill","num_k":16,"profile":"exact","q_codes":"quantized_normal","rows":[[0,16,1]],"seed":1,"weights":"normal"}
JSON

# Golden cases: the requests the fuzzer's exchange makes for those cases (every op of the exchange).
requests="$(mktemp -d)"
trap 'rm -rf "$requests"' EXIT
recorder="sh -c 'cp \"\$1\" $requests/\$\$.safetensors; exit 3'"
for p in every_entry_written:topk every_entry_written:candidate every_entry_written:decode prefill_logits_agree:prefill; do
  "$cli" fuzz --impl "external:$recorder" --property "${p%%:*}" --replay "$(cat replay/${p##*:}.json)" > /dev/null || true
done
n=0
for f in "$requests"/*.safetensors; do
  op="$($python -c "import sys; sys.path.insert(0, '../../python'); from dsa_oracle_io import read_safetensors; print(read_safetensors(sys.argv[1])[1]['op'])" "$f")"
  cp "$f" "golden_case/$op.safetensors"
  n=$((n + 1))
done
# A golden file with expected outputs, as `dsa-oracle reference` writes it.
"$cli" reference --op prefill_topk --profile exact --in golden_case/prefill_topk.safetensors --out golden_case/prefill_topk_expected.safetensors > /dev/null
cp golden_case/prefill_topk_expected.safetensors golden_case/candidate_select.safetensors safetensors/

$python - <<'PY'
import struct, sys
import numpy as np
sys.path.insert(0, "../../python")
np.save("npy/f4.npy", np.arange(6, dtype="<f4").reshape(2, 3))
np.save("npy/i8_scalar.npy", np.array(1000, dtype="<i8"))
np.save("npy/u1.npy", np.array([1, 2, 250], dtype="u1"))
np.save("npy/text.npy", np.array("{\"op\": 1}"))
np.savez("npz/stored.npz", a=np.arange(4, dtype="<i4"), b=np.ones((2, 2), dtype="<f4"))
np.savez_compressed("npz/deflated.npz", q=np.zeros((1, 2, 8), dtype="u1"), meta=np.array("x"))

# mma-check dumps: two headerless mma.sync m16n8k32 records (the H200 probe's first bytes), and
# one record under the project's own header (docs/matrix-unit-models.md).
with open("../hardware/probe_mma_sync_m16n8k32_e4m3_edge.bin", "rb") as f:
    records = f.read(2 * 1792)
open("dump/mma_sync_headerless.bin", "wb").write(records)
header = b"DSAMMA01" + struct.pack("<II", 80, 0) + b"sm90_mma_sync_e4m3".ljust(32, b"\0")
header += struct.pack("<IIIIQQ", 16, 8, 32, 0, 1, 0)
open("dump/mma_sync_header.bin", "wb").write(header + records[:1792])
PY
echo "corpus: $(find . -type f ! -name '*.sh' | wc -l) files, $(du -sk . | cut -f1) KiB"
