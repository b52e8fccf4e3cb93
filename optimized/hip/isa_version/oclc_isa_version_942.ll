; The device libraries' ISA-version constant for gfx942 (MI300): major 9, minor 4,
; stepping 2. Debian's rocm-device-libs (ROCm 5.2) ship this library up to gfx940
; only; clang links the file of the target it builds for, so the build assembles
; this one (llvm-as) beside links to Debian's other libraries. ockl reads the
; constant to choose gfx9 code paths; no other target's file is used.
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 9402, align 4
