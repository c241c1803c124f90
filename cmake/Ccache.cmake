# Compiler cache (Debian ccache) for every configuration: DOPPLER_CCACHE=ON (default) uses it when
# it is installed. The base directory is the source tree, so a fresh clone elsewhere on the same
# machine hits the objects the working checkout cached (CI's clean clone, the sanitizer builds).
#   - pch_defines,time_macros: required by ccache for GCC precompiled headers (torch);
#   - include_file_mtime/ctime: a clone's files (and the .gch) are newer than ccache's margin;
#   - NOHASHDIR: -g builds (RelWithDebInfo sanitizers) do not hash the build directory's path;
#   - INODECACHE: an include file's hash is kept by inode and times, so the 631 MB torch .gch is
#     hashed once per build, not by each of the 52 torch compiles that use it (a direct hit of
#     one took 2.5 s, nearly all of it hashing the .gch; 0.07 s with the inode cache).
option(DOPPLER_CCACHE "Compile through ccache when it is installed" ON)
find_program(DOPPLER_CCACHE_PROGRAM ccache)
if(DOPPLER_CCACHE AND DOPPLER_CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(DOPPLER_CCACHE_LAUNCHER
      env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      CCACHE_NOHASHDIR=1 CCACHE_INODECACHE=true ${DOPPLER_CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${DOPPLER_CCACHE_LAUNCHER})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${DOPPLER_CCACHE_LAUNCHER})
  message(STATUS "ccache: ${DOPPLER_CCACHE_PROGRAM} (base directory ${PROJECT_SOURCE_DIR})")
endif()
