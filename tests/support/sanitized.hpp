#pragma once
// Whether the tests run under a sanitizer (DOPPLER_SANITIZE: `make test-asan`, `make test-tsan`).

namespace doppler::test {

/// True in a build under AddressSanitizer or ThreadSanitizer, which runs the search code 2-3x
/// slower: the slowest brute-force checks take fewer random instances there (the same code paths
/// for the sanitizer to watch); `make test` runs them all.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace doppler::test
