# gfx942 (MI300) code objects, built with Debian's clang-19 and lld-19 against
# Debian's ROCm device libraries and HIP headers: no ROCm install, no GPU.
#
# DSA_GFX942: AUTO builds them where the tools are found, ON fails the
# configure when one is missing (CI), OFF skips them. Sets DSA_WITH_GFX942 and
# dsa_add_gfx942_code_object(NAME SOURCE) for optimized/hip.
set(DSA_GFX942 AUTO CACHE STRING "Build the gfx942 code objects: AUTO, ON or OFF")
set_property(CACHE DSA_GFX942 PROPERTY STRINGS AUTO ON OFF)
set(DSA_WITH_GFX942 OFF)
if(DSA_GFX942 STREQUAL "OFF")
  return()
endif()

find_program(DSA_GFX942_CLANG NAMES clang++-19)
find_program(DSA_GFX942_LLD NAMES ld.lld-19)
find_program(DSA_GFX942_LLVM_AS NAMES llvm-as-19)
find_program(DSA_GFX942_READELF NAMES llvm-readelf-19)
find_program(DSA_GFX942_OBJDUMP NAMES llvm-objdump-19)
find_path(DSA_GFX942_DEVICE_LIBS oclc_abi_version_500.bc
          PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/amdgcn/bitcode /usr/lib/amdgcn/bitcode NO_DEFAULT_PATH)
find_path(DSA_GFX942_HIP_INCLUDE hip/hip_runtime.h PATHS /usr/include NO_DEFAULT_PATH)
set(missing "")
foreach(var DSA_GFX942_CLANG DSA_GFX942_LLD DSA_GFX942_LLVM_AS DSA_GFX942_READELF DSA_GFX942_OBJDUMP
            DSA_GFX942_DEVICE_LIBS DSA_GFX942_HIP_INCLUDE)
  if(NOT ${var})
    list(APPEND missing ${var})
  endif()
endforeach()
if(missing)
  set(msg "gfx942 code objects: not found: ${missing} (scripts/install-deps.sh installs clang-19 lld-19 llvm-19 rocm-device-libs libamdhip64-dev)")
  if(DSA_GFX942 STREQUAL "ON")
    message(FATAL_ERROR "${msg}")
  endif()
  message(STATUS "${msg}; skipped")
  return()
endif()
set(DSA_WITH_GFX942 ON)
set(DSA_GFX942_DIR ${PROJECT_BINARY_DIR}/gfx942)
message(STATUS "gfx942 code objects: ${DSA_GFX942_CLANG}, device libraries ${DSA_GFX942_DEVICE_LIBS}")

# clang links the device libraries of the target it builds for from one folder.
# Debian's stop at gfx940: the folder is Debian's files (links) plus the
# gfx942 ISA-version library assembled from its IR here.
set(bitcode_dir ${DSA_GFX942_DIR}/bitcode)
file(MAKE_DIRECTORY ${bitcode_dir})
file(GLOB debian_libs ${DSA_GFX942_DEVICE_LIBS}/*.bc)
foreach(lib ${debian_libs})
  get_filename_component(lib_name ${lib} NAME)
  if(NOT lib_name STREQUAL "oclc_isa_version_942.bc")
    file(CREATE_LINK ${lib} ${bitcode_dir}/${lib_name} SYMBOLIC)
  endif()
endforeach()
set(DSA_GFX942_ISA_VERSION_BC ${bitcode_dir}/oclc_isa_version_942.bc)

set(DSA_GFX942_FLAGS
    -x hip --offload-arch=gfx942 --cuda-device-only --no-gpu-bundle-output -O3 -std=c++20
    -ffp-contract=off -fno-fast-math -Wall -Wextra -Werror
    # Every device function inlined: the shared selection code passes a thread's
    # keys by reference, which a real call would put in scratch.
    -mllvm -amdgpu-early-inline-all=true -mllvm -amdgpu-function-calls=false
    --rocm-path=/usr --rocm-device-lib-path=${bitcode_dir} -fuse-ld=lld --ld-path=${DSA_GFX942_LLD}
    -I${PROJECT_SOURCE_DIR}/optimized/hip/include -I${PROJECT_SOURCE_DIR}/optimized/common/include)

# The rule that assembles oclc_isa_version_942.bc; call it once, in the folder
# whose code objects need it (a custom command's output is known to its folder).
function(dsa_add_gfx942_isa_version IR)
  add_custom_command(OUTPUT ${DSA_GFX942_ISA_VERSION_BC}
                     COMMAND ${DSA_GFX942_LLVM_AS} ${IR} -o ${DSA_GFX942_ISA_VERSION_BC}
                     DEPENDS ${IR} COMMENT "gfx942: assembling oclc_isa_version_942.bc" VERBATIM)
endfunction()

# NAME.hsaco from SOURCE (one kernel file), with its metadata note (NAME.notes.txt)
# and disassembly (NAME.s) beside it for the ISA report and the tests.
function(dsa_add_gfx942_code_object NAME SOURCE)
  set(out ${DSA_GFX942_DIR}/${NAME})
  add_custom_command(
    OUTPUT ${out}.hsaco
    COMMAND ${CMAKE_CXX_COMPILER_LAUNCHER} ${DSA_GFX942_CLANG} ${DSA_GFX942_FLAGS} -MD -MF ${out}.d -c ${SOURCE}
            -o ${out}.hsaco
    DEPENDS ${SOURCE} ${DSA_GFX942_ISA_VERSION_BC}
    DEPFILE ${out}.d
    COMMENT "gfx942: ${NAME}.hsaco" VERBATIM)
  add_custom_command(
    OUTPUT ${out}.notes.txt ${out}.s
    COMMAND ${DSA_GFX942_READELF} --notes ${out}.hsaco > ${out}.notes.txt
    COMMAND ${DSA_GFX942_OBJDUMP} -d --mcpu=gfx942 ${out}.hsaco > ${out}.s
    DEPENDS ${out}.hsaco VERBATIM)
endfunction()
