# Parallel HDF5 (C) as the imported target hdf5::hdf5. FindHDF5 defines that target since
# CMake 3.19; where it does not (older module, wrapper-only find), an INTERFACE IMPORTED
# stand-in is made from the HDF5_C_* variables. Used by the build and by the installed
# triadaConfig.cmake (which runs find_dependency(HDF5) first, so nothing is searched here).
set(HDF5_PREFER_PARALLEL TRUE)  # Debian ships the MPI build beside the serial one
if(NOT HDF5_FOUND)
  # HDF5's wrapper (h5pcc) splits its arguments at spaces, and FindHDF5 hands it a file of
  # the build directory: a build directory whose path has a space found no HDF5. There the
  # wrapper runs through hdf5_wrapper.sh, which passes that file by its name.
  if(CMAKE_CURRENT_BINARY_DIR MATCHES " " AND NOT HDF5_C_COMPILER_EXECUTABLE)
    find_program(TRIADA_HDF5_WRAPPER NAMES h5pcc h5cc HINTS ${HDF5_ROOT} PATH_SUFFIXES bin)
    if(TRIADA_HDF5_WRAPPER)
      set(HDF5_C_COMPILER_EXECUTABLE sh "${CMAKE_CURRENT_LIST_DIR}/hdf5_wrapper.sh"
          "${TRIADA_HDF5_WRAPPER}" CACHE STRING "HDF5's C wrapper, called by name")
    endif()
  endif()
  find_package(HDF5 REQUIRED COMPONENTS C)
endif()
if(NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR "triada needs parallel HDF5 (Debian: libhdf5-openmpi-dev); found the "
                      "serial one at ${HDF5_C_INCLUDE_DIRS}")
endif()
if(NOT TARGET hdf5::hdf5)
  add_library(hdf5::hdf5 INTERFACE IMPORTED)
  set_target_properties(hdf5::hdf5 PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${HDF5_C_INCLUDE_DIRS}"
    INTERFACE_COMPILE_DEFINITIONS "${HDF5_C_DEFINITIONS}"
    INTERFACE_LINK_LIBRARIES "${HDF5_C_LIBRARIES}")
endif()
