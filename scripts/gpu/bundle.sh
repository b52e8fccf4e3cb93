# Sourced by the GPU scripts (run_all.sh, profile_*.sh, ab_bundles.sh), which run on the GPU machine.
# unpack_bundle TARBALL DIR: DIR emptied, a make_bundle.sh tarball unpacked into it; prints the bundle's
# folder (DIR/gpu-bundle), whose binaries load their libraries from its lib/; fails without printing
# when the tarball does not unpack into one.
unpack_bundle() {
  local tarball=$1 dir=$2
  rm -rf "$dir" && mkdir -p "$dir" && tar -C "$dir" -xJf "$tarball" && [ -d "$dir/gpu-bundle/lib" ] || return 1
  echo "$dir/gpu-bundle"
}
