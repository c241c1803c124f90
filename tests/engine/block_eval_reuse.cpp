// The test-only evaluator of tests/workloads (block_eval.cpp, written from docs/exec.md and
// sharing no code with the generators or the engine), compiled into test_engine too.
#include "workloads/block_eval.cpp"  // NOLINT(bugprone-suspicious-include)
