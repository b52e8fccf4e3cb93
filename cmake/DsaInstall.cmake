# What `cmake --install` puts under the prefix: the CLI, the static libraries
# with their headers (dsa_add_library), this CMake package, and (python/) the
# Python module where Debian's python3 finds it.
include(CMakePackageConfigHelpers)
set(DSA_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/dsa_oracle)
install(TARGETS dsa-oracle RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Whether a library links the GPU kernels' libraries (the CUDA kernels, the
# gfx942 launchers with their code objects), directly or through another of ours.
function(dsa_reaches_gpu_kernels target out)
  set(reaches OFF)
  get_target_property(deps ${target} INTERFACE_LINK_LIBRARIES)
  foreach(dep IN LISTS deps)
    if(dep STREQUAL "dsa_optimized_cuda" OR dep STREQUAL "dsa_optimized_hip")
      set(reaches ON)
    elseif(dep MATCHES "^dsa_" AND TARGET ${dep})
      dsa_reaches_gpu_kernels(${dep} sub)
      if(sub)
        set(reaches ON)
      endif()
    endif()
  endforeach()
  set(${out} ${reaches} PARENT_SCOPE)
endfunction()

# Every dsa_add_library library with its headers, except, in a build with the
# CUDA kernels or the gfx942 launchers, those that link them (the table
# dsa_optimized and dsa_fuzz): a consumer of the package would need the CUDA
# toolkit and the kernels' device link, or the HIP headers. The package's
# promise is the CPU libraries (reference, oracle, dataset).
get_property(DSA_LIBRARIES GLOBAL PROPERTY DSA_LIBRARIES)
set(DSA_EXPORTED_LIBRARIES)
foreach(library IN LISTS DSA_LIBRARIES)
  dsa_reaches_gpu_kernels(${library} reaches_gpu)
  if(reaches_gpu)
    continue()
  endif()
  install(TARGETS ${library} EXPORT dsa_oracleTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  get_target_property(dir ${library} DSA_LIBRARY_DIR)
  if(EXISTS ${dir}/include)
    install(DIRECTORY ${dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
  list(APPEND DSA_EXPORTED_LIBRARIES ${library})
endforeach()
message(STATUS "dsa-oracle: cmake --install exports ${DSA_EXPORTED_LIBRARIES}")
install(EXPORT dsa_oracleTargets NAMESPACE dsa_oracle:: DESTINATION ${DSA_CMAKE_INSTALL_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/dsa_oracleConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/dsa_oracleConfig.cmake INSTALL_DESTINATION ${DSA_CMAKE_INSTALL_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dsa_oracleConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dsa_oracleConfig.cmake ${PROJECT_BINARY_DIR}/dsa_oracleConfigVersion.cmake
        DESTINATION ${DSA_CMAKE_INSTALL_DIR})
