# Helpers shared by the module, test and benchmark CMake files.

# doppler_module_sources(<out-var> <module>...): every .cpp of src/<module>/ (recursively), less
# the stand-ins for absent components (src/<module>/.../absent/), which a build adds explicitly.
function(doppler_module_sources out)
  set(files)
  foreach(m IN LISTS ARGN)
    file(GLOB_RECURSE f CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${m}/*.cpp)
    list(FILTER f EXCLUDE REGEX "/absent/")
    list(APPEND files ${f})
  endforeach()
  set(${out} ${files} PARENT_SCOPE)
endfunction()

# doppler_add_test(<name> LIBS <libs...>): one GoogleTest binary from tests/<name>/*.cpp,
# each test case registered with ctest (label = <name>). SERIAL <gtest filter>: the test cases that
# match run with RUN_SERIAL (nothing else runs beside them), for checks that time the engine.
# ENV <VAR=value>: environment of every test case of the binary. PER_SUITE: one ctest per test
# suite instead (named after the suite; cmake/DiscoverSuites.cmake), for binaries whose start is
# costly (libtorch's load).
function(doppler_add_test name)
  cmake_parse_arguments(T "PER_SUITE" "SERIAL" "LIBS;ENV" ${ARGN})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/${name}/*.cpp)
  if(NOT srcs)
    return()
  endif()
  add_executable(test_${name} ${srcs})
  target_include_directories(test_${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(test_${name} PRIVATE ${T_LIBS} doppler_testsupport GTest::gtest GTest::gtest_main)
  set(props LABELS ${name})
  if(T_ENV)
    list(APPEND props ENVIRONMENT "${T_ENV}")
  endif()
  if(T_PER_SUITE)
    set(ctest_file ${CMAKE_CURRENT_BINARY_DIR}/test_${name}_suites.cmake)
    add_custom_command(TARGET test_${name} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -D TEST_EXECUTABLE=$<TARGET_FILE:test_${name}>
              -D CTEST_FILE=${ctest_file} -D WORKING_DIRECTORY=${PROJECT_SOURCE_DIR}
              -D LABEL=${name} -D ENV=${T_ENV}
              -P ${PROJECT_SOURCE_DIR}/cmake/DiscoverSuites.cmake
      BYPRODUCTS ${ctest_file} VERBATIM)
    # Read by ctest; says so when the binary was never built (as gtest_discover_tests does).
    set(include_file ${CMAKE_CURRENT_BINARY_DIR}/test_${name}_include.cmake)
    file(WRITE ${include_file}
         "if(EXISTS [==[${ctest_file}]==])\n  include([==[${ctest_file}]==])\nelse()\n"
         "  add_test(test_${name}_NOT_BUILT test_${name}_NOT_BUILT)\nendif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
    return()
  endif()
  if(NOT T_SERIAL)
    gtest_discover_tests(test_${name}
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      PROPERTIES ${props}
      DISCOVERY_TIMEOUT 60)
    return()
  endif()
  # SERIAL <gtest filter>: the matching tests time the engine, so ctest runs them alone.
  gtest_discover_tests(test_${name}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    TEST_FILTER "-${T_SERIAL}"
    PROPERTIES ${props}
    DISCOVERY_TIMEOUT 60)
  gtest_discover_tests(test_${name}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    TEST_FILTER "${T_SERIAL}"
    PROPERTIES ${props} RUN_SERIAL TRUE
    DISCOVERY_TIMEOUT 60)
endfunction()
