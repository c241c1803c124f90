# Run by doppler_add_test(... PER_SUITE) after each build of a test binary (cmake -P): writes
# CTEST_FILE, which registers one ctest per GoogleTest suite of TEST_EXECUTABLE, run as
# `TEST_EXECUTABLE --gtest_filter=SUITE.*`, instead of one per test: each process of the
# binaries that link libtorch pays 0.7 s to load it, more than most of their tests take.
# Variables: TEST_EXECUTABLE, CTEST_FILE, WORKING_DIRECTORY, LABEL, ENV (a VAR=value or empty).
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
                WORKING_DIRECTORY "${WORKING_DIRECTORY}"
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE status TIMEOUT 60)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${status}): ${errors}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
set(count 0)
foreach(line IN LISTS lines)
  # A suite's line: its name and a dot, then a comment for typed and parameterised suites.
  if(line MATCHES "^([^ #]+)\\.( +#.*)?$")
    set(suite "${CMAKE_MATCH_1}")
    string(APPEND script
      "add_test([==[${suite}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==])\n"
      "set_tests_properties([==[${suite}]==] PROPERTIES WORKING_DIRECTORY "
      "[==[${WORKING_DIRECTORY}]==] LABELS [==[${LABEL}]==] ENVIRONMENT [==[${ENV}]==])\n")
    math(EXPR count "${count} + 1")
  endif()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} lists no test suite")
endif()
file(WRITE "${CTEST_FILE}" "${script}")
