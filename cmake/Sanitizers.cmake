# DOPPLER_SANITIZE: builds every target with sanitizers, for the separate ctest configurations
# of `make test-asan` ("address,undefined": AddressSanitizer + UndefinedBehaviorSanitizer, any
# report fails the test) and `make test-tsan` ("thread": ThreadSanitizer). Empty: none.
set(DOPPLER_SANITIZE "" CACHE STRING "sanitizers for every target: address,undefined | thread")
if(DOPPLER_SANITIZE)
  # C++ only (nvcc takes no -fsanitize); -g1: line tables, enough for the reports' stacks.
  add_compile_options(
    "$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${DOPPLER_SANITIZE};-fno-omit-frame-pointer;-g1>")
  add_link_options(-fsanitize=${DOPPLER_SANITIZE})
  if(DOPPLER_SANITIZE MATCHES "undefined")
    add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=undefined>")
  endif()
endif()
