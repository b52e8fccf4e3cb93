# dsa_add_library(NAME <target> DIR <folder> [DEPS ...])
# A static library of every .cpp under <folder>/src, public headers in
# <folder>/include. A folder with no sources yet is an
# INTERFACE library, so the tree configures while parts are being written.
function(dsa_add_library)
  cmake_parse_arguments(ARG "" "NAME;DIR" "DEPS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${ARG_DIR}/src/*.cpp)
  if(sources)
    add_library(${ARG_NAME} STATIC ${sources})
    target_include_directories(${ARG_NAME} PUBLIC ${ARG_DIR}/include)
    target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS})
  else()
    add_library(${ARG_NAME} INTERFACE)
    target_include_directories(${ARG_NAME} INTERFACE ${ARG_DIR}/include)
    target_link_libraries(${ARG_NAME} INTERFACE ${ARG_DEPS})
  endif()
endfunction()
