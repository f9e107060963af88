# Run at every build (the custom target triada_git_commit): writes OUT, a one-function .cpp
# returning the source tree's git commit ("<hash>", "<hash>-dirty" with uncommitted changes
# to tracked files, or "unknown" outside a git checkout), only when its text changes, so a
# new commit recompiles this one file and relinks, nothing more.
# Inputs: -DSRC=<source dir> -DOUT=<generated .cpp> -DGIT=<git executable or empty>.
set(commit "unknown")
if(GIT)
  # Only the source tree's own checkout: not a repository that merely contains it.
  execute_process(COMMAND ${GIT} -C ${SRC} rev-parse --show-toplevel
                  OUTPUT_VARIABLE top RESULT_VARIABLE rc_top ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${GIT} -C ${SRC} rev-parse --verify HEAD
                  OUTPUT_VARIABLE hash RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  get_filename_component(top "${top}" REALPATH)
  get_filename_component(src_real "${SRC}" REALPATH)
  if(rc_top EQUAL 0 AND top STREQUAL src_real AND rc EQUAL 0 AND hash MATCHES "^[0-9a-f]+$")
    set(commit ${hash})
    execute_process(COMMAND ${GIT} -C ${SRC} status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND NOT changes STREQUAL "")
      set(commit "${commit}-dirty")
    endif()
  endif()
endif()
set(text "// Generated at build time by cmake/GitCommit.cmake: do not edit.
#include \"core/version.hpp\"

namespace triada {

std::string git_commit() {
  return \"${commit}\";
}

}  // namespace triada
")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
