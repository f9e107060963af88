# The installed headers: the public API, include/triada/*.hpp (consumers write
# #include <triada/jobs.hpp>), and the library headers those include, directly or not,
# installed under include/triada/detail/<layer>/. Installed headers reach each other by
# namespaced paths only: each library include "layer/x.hpp" of an installed header is
# written <triada/detail/layer/x.hpp>, so a consumer needs PREFIX/include alone on its
# include path, and a header of its own named core/types.hpp is never taken for ours.
# Nothing else of src/ is installed: the kernels (whose inline constants follow the
# compiler's flags), the fused executor and the I/O internals stay private to the build.
#
# Run by `cmake --install` (install(SCRIPT), so that editing a header never reconfigures
# the build), with TRIADA_SOURCE_DIR, TRIADA_GENERATED, TRIADA_STAGE (a folder of the
# build for the rewritten copies) and TRIADA_INCLUDEDIR set.
cmake_policy(PUSH)
cmake_policy(VERSION 3.20)  # the project's: IN_LIST, POP_FRONT

# The src/-relative paths of every header of src/ (or generated) that include/triada/*.hpp
# reach by #include, found by reading them.
function(triada_header_closure out)
  file(GLOB todo RELATIVE ${TRIADA_SOURCE_DIR}/include ${TRIADA_SOURCE_DIR}/include/triada/*.hpp)
  set(seen "")
  set(found "")
  while(todo)
    list(POP_FRONT todo h)
    if(h IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${h})
    if(EXISTS ${TRIADA_SOURCE_DIR}/include/${h})
      set(file ${TRIADA_SOURCE_DIR}/include/${h})
    elseif(EXISTS ${TRIADA_SOURCE_DIR}/src/${h})
      set(file ${TRIADA_SOURCE_DIR}/src/${h})
      list(APPEND found ${h})
    elseif(EXISTS ${TRIADA_GENERATED}/${h})
      list(APPEND found ${h})
      continue()
    else()
      continue()  # a system or third-party header
    endif()
    file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<][^\">]+[\">]")
    foreach(line ${lines})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]+)[\">].*$" "\\1" inc "${line}")
      list(APPEND todo ${inc})
    endforeach()
  endwhile()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Installs `file` into `dest`/`sub` with its includes of the installed `headers` namespaced.
function(triada_install_header file sub headers)
  file(READ ${file} text)
  foreach(h ${headers})
    string(REPLACE "#include \"${h}\"" "#include <triada/detail/${h}>" text "${text}")
  endforeach()
  get_filename_component(name ${file} NAME)
  file(WRITE ${TRIADA_STAGE}/${sub}/${name} "${text}")
  file(INSTALL DESTINATION ${dest}/${sub} TYPE FILE FILES ${TRIADA_STAGE}/${sub}/${name})
endfunction()

set(dest ${CMAKE_INSTALL_PREFIX}/${TRIADA_INCLUDEDIR}/triada)
file(REMOVE_RECURSE ${TRIADA_STAGE})
triada_header_closure(headers)
file(GLOB public ${TRIADA_SOURCE_DIR}/include/triada/*.hpp)
foreach(file ${public})
  triada_install_header(${file} "." "${headers}")
endforeach()
foreach(h ${headers})
  get_filename_component(dir ${h} DIRECTORY)
  set(file ${TRIADA_SOURCE_DIR}/src/${h})
  if(NOT EXISTS ${file})
    set(file ${TRIADA_GENERATED}/${h})
  endif()
  triada_install_header(${file} detail/${dir} "${headers}")
endforeach()
cmake_policy(POP)
