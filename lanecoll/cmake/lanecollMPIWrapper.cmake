# lanecoll_mpi_from_wrapper(): when CMAKE_C_COMPILER is an MPI compiler wrapper
# (mpicc, mpicc.openmpi, mpicc.mpich, smpicc, ...) and MPI_C_COMPILER is not given, make
# FindMPI use that wrapper, so that the MPI found is the one the compiler links (and not
# the first mpicc in PATH). For mpicc.<flavour> also default MPIEXEC_EXECUTABLE to
# mpiexec.<flavour> when it exists (Debian's side-by-side Open MPI and MPICH).
# Installed with lanecoll's CMake package and called by lanecollConfig.cmake too.
macro(lanecoll_mpi_from_wrapper)
  get_filename_component(_lc_cc_name "${CMAKE_C_COMPILER}" NAME)
  if(NOT MPI_C_COMPILER AND _lc_cc_name MATCHES "^(s?mpi[a-z]*cc)(\\.(.+))?$")
    set(MPI_C_COMPILER "${CMAKE_C_COMPILER}" CACHE FILEPATH "MPI C compiler wrapper")
  endif()
  get_filename_component(_lc_mpicc_name "${MPI_C_COMPILER}" NAME)
  if(NOT MPIEXEC_EXECUTABLE AND _lc_mpicc_name MATCHES "^mpicc\\.(.+)$")
    get_filename_component(_lc_mpicc_dir "${MPI_C_COMPILER}" DIRECTORY)
    find_program(_lc_mpiexec NAMES mpiexec.${CMAKE_MATCH_1} mpirun.${CMAKE_MATCH_1}
                 HINTS "${_lc_mpicc_dir}" NO_CACHE)
    if(_lc_mpiexec)
      set(MPIEXEC_EXECUTABLE "${_lc_mpiexec}" CACHE FILEPATH "MPI launcher")
    endif()
  endif()
endmacro()
