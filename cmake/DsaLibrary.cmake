# dsa_add_library(NAME <target> DIR <folder> [DEPS ...] [PLAIN <regex>])
# A static library of every .cpp under <folder>/src, public headers in
# <folder>/include. A folder with no sources yet is an
# INTERFACE library, so the tree configures while parts are being written.
# PLAIN: the sources matching <regex> compile with the plain build's options in every build, the
# sanitizer build included (DSA_PLAIN_COMPILE_OPTIONS, ../CMakeLists.txt), as the test drivers do; their
# objects (<target>_plain) are part of the library. Only for test machinery: the fuzzer's RapidCheck
# generators, which draw descriptions and call the instrumented libraries for everything else.
#
# Every library is installed with its headers and exported as
# dsa_oracle::<NAME without the dsa_ prefix> (dsa_reference -> dsa_oracle::reference),
# the names a consumer's find_package(dsa_oracle) sees (cmake/dsa_oracleConfig.cmake.in).
include(GNUInstallDirs)
function(dsa_add_library)
  cmake_parse_arguments(ARG "" "NAME;DIR;PLAIN" "DEPS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${ARG_DIR}/src/*.cpp)
  set(plain "")
  if(ARG_PLAIN)
    set(plain ${sources})
    list(FILTER plain INCLUDE REGEX "${ARG_PLAIN}")
    list(FILTER sources EXCLUDE REGEX "${ARG_PLAIN}")
  endif()
  set(include_dirs $<BUILD_INTERFACE:${ARG_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  if(sources)
    add_library(${ARG_NAME} STATIC ${sources})
    target_include_directories(${ARG_NAME} PUBLIC ${include_dirs})
    target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS})
  else()
    add_library(${ARG_NAME} INTERFACE)
    target_include_directories(${ARG_NAME} INTERFACE ${include_dirs})
    target_link_libraries(${ARG_NAME} INTERFACE ${ARG_DEPS})
  endif()
  if(sources)
    # The Python module, a shared object, links these: position independent code;
    # -fno-semantic-interposition keeps the inlining of non-PIC code (a library's
    # own functions are never interposed).
    set_target_properties(${ARG_NAME} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_options(${ARG_NAME} PRIVATE -fno-semantic-interposition)
  endif()
  if(plain)
    # The same command line in every build, so ccache compiles these once for the Release and the
    # sanitizer build (scripts/test.sh).
    add_library(${ARG_NAME}_plain OBJECT ${plain})
    set_target_properties(${ARG_NAME}_plain PROPERTIES COMPILE_OPTIONS "${DSA_PLAIN_COMPILE_OPTIONS}"
                                                       POSITION_INDEPENDENT_CODE ON)
    target_compile_options(${ARG_NAME}_plain PRIVATE -fno-semantic-interposition)
    target_include_directories(${ARG_NAME}_plain PRIVATE ${ARG_DIR}/include)
    target_link_libraries(${ARG_NAME}_plain PRIVATE ${ARG_DEPS})
    target_sources(${ARG_NAME} PRIVATE $<TARGET_OBJECTS:${ARG_NAME}_plain>)
  endif()
  string(REGEX REPLACE "^dsa_" "" export_name ${ARG_NAME})
  set_target_properties(${ARG_NAME} PROPERTIES EXPORT_NAME ${export_name} DSA_LIBRARY_DIR ${ARG_DIR})
  # Installed by cmake/DsaInstall.cmake, which knows the whole graph (the CUDA kernels link in later).
  set_property(GLOBAL APPEND PROPERTY DSA_LIBRARIES ${ARG_NAME})
endfunction()
