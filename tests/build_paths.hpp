// Where the tests find the checkout, the shared data and the project's program. The paths live in one
// generated source file (build_paths.cpp in the build folder), not in compile definitions, so that
// every other test object is the same in any checkout and ccache shares it between them.
#pragma once

namespace dsa::test {

const char* build_source_dir();   // the repository root the build was configured from
const char* build_cli_path();     // the dsa-oracle program of this build
const char* build_shared_data();  // the CMake cache variable DSA_SHARED_DATA
const char* build_gfx942_dir();   // the folder of the gfx942 code objects of this build
const char* build_gfx942_code_objects();  // their names, comma-separated ("" where the build has none)

}  // namespace dsa::test

#define DSA_SOURCE_DIR (::dsa::test::build_source_dir())
#define DSA_CLI_PATH (::dsa::test::build_cli_path())
#define DSA_SHARED_DATA_DIR (::dsa::test::build_shared_data())
#define DSA_GFX942_DIR (::dsa::test::build_gfx942_dir())
