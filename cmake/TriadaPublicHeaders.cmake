# The installed headers: the public API, include/triada/*.hpp (consumers write
# #include <triada/jobs.hpp>), and the library headers those include, directly or not,
# installed under include/triada/detail/<layer>/ and found there by the library's own
# "layer/x.hpp" includes. Nothing else of src/ is installed: the kernels (whose inline
# constants follow the compiler's flags), the fused executor and the I/O internals stay
# private to the library's build.
#
# triada_header_closure(OUT): the src/-relative paths of every header of src/ (or generated)
# that include/triada/*.hpp reach by #include "...", found by reading them; configure reruns
# when any of them changes.
function(triada_header_closure out)
  file(GLOB todo RELATIVE ${PROJECT_SOURCE_DIR}/include CONFIGURE_DEPENDS
       ${PROJECT_SOURCE_DIR}/include/triada/*.hpp)
  set(seen "")
  set(found "")
  while(todo)
    list(POP_FRONT todo h)
    if(h IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${h})
    if(EXISTS ${PROJECT_SOURCE_DIR}/include/${h})
      set(file ${PROJECT_SOURCE_DIR}/include/${h})
    elseif(EXISTS ${PROJECT_SOURCE_DIR}/src/${h})
      set(file ${PROJECT_SOURCE_DIR}/src/${h})
      list(APPEND found ${h})
    elseif(EXISTS ${TRIADA_GENERATED}/${h})
      list(APPEND found ${h})
      continue()
    else()
      continue()  # a system or third-party header
    endif()
    set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
    file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<][^\">]+[\">]")
    foreach(line ${lines})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]+)[\">].*$" "\\1" inc "${line}")
      list(APPEND todo ${inc})
    endforeach()
  endwhile()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Installs the public headers and their closure (above).
function(triada_install_headers)
  install(DIRECTORY include/triada DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.hpp")
  triada_header_closure(headers)
  foreach(h ${headers})
    get_filename_component(dir ${h} DIRECTORY)
    set(file ${PROJECT_SOURCE_DIR}/src/${h})
    if(NOT EXISTS ${file})
      set(file ${TRIADA_GENERATED}/${h})
    endif()
    install(FILES ${file} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/triada/detail/${dir})
  endforeach()
endfunction()
