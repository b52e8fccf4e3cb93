#!/usr/bin/env bash
# Packs the DeepGEMM source that scripts/gpu/run_all.sh builds on the GPU machine (its second argument):
# DeepGEMM at the commit the speed table names, with the include/ folders of its CUTLASS and fmt submodules
# at the commits that DeepGEMM commit pins. Reads three git repositories (clones or mirrors; no work tree
# needed) and writes one tarball (about 1.2 MB). The tarball is third-party source: keep it in an ignored
# folder (.gpu-carry/, build-carry/), never commit it.
#   scripts/gpu/pack_deepgemm.sh DEEPGEMM_GIT CUTLASS_GIT FMT_GIT [OUT.tar.xz] [COMMIT]
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,7p' "$0" >&2; exit 2; }
deepgemm=$1 cutlass=$2 fmt=$3
out=${4:-.gpu-carry/deepgemm-477618c.tar.xz}
commit=${5:-477618c}
git -C "$deepgemm" cat-file -e "$commit^{commit}" 2>/dev/null ||
  { echo "pack_deepgemm: $deepgemm has no commit $commit" >&2; exit 2; }
pinned() {  # the submodule commit DeepGEMM's tree pins at third-party/NAME
  git -C "$deepgemm" ls-tree "$commit" "third-party/$1" | awk '$2 == "commit" {print $3}'
}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/DeepGEMM"
git -C "$deepgemm" archive "$commit" | tar -C "$stage/DeepGEMM" -x
for sub in cutlass:"$cutlass" fmt:"$fmt"; do
  name=${sub%%:*} repo=${sub#*:}
  pin=$(pinned "$name")
  [ -n "$pin" ] || { echo "pack_deepgemm: DeepGEMM $commit pins no third-party/$name" >&2; exit 2; }
  git -C "$repo" cat-file -e "$pin^{commit}" 2>/dev/null ||
    { echo "pack_deepgemm: $repo has no commit $pin (pinned by DeepGEMM $commit)" >&2; exit 2; }
  mkdir -p "$stage/DeepGEMM/third-party/$name"
  git -C "$repo" archive "$pin" include | tar -C "$stage/DeepGEMM/third-party/$name" -x
done
mkdir -p "$(dirname "$out")"
tar -C "$stage" -I 'xz -T0 -9' -cf "$out" DeepGEMM
echo "pack_deepgemm: $out ($(du -h "$out" | cut -f1)) from DeepGEMM $commit"
