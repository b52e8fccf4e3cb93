# What `cmake --install` puts under the prefix: the CLI, the static libraries
# with their headers (dsa_add_library), this CMake package, and (python/) the
# Python module where Debian's python3 finds it.
include(CMakePackageConfigHelpers)
set(DSA_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/dsa_oracle)
install(TARGETS dsa-oracle RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT dsa_oracleTargets NAMESPACE dsa_oracle:: DESTINATION ${DSA_CMAKE_INSTALL_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/dsa_oracleConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/dsa_oracleConfig.cmake INSTALL_DESTINATION ${DSA_CMAKE_INSTALL_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dsa_oracleConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dsa_oracleConfig.cmake ${PROJECT_BINARY_DIR}/dsa_oracleConfigVersion.cmake
        DESTINATION ${DSA_CMAKE_INSTALL_DIR})
