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
# ENV <VAR=value...>: environment of every test case of the binary.
function(doppler_add_test name)
  cmake_parse_arguments(T "" "SERIAL" "LIBS;ENV" ${ARGN})
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
