// The test-only evaluator of tests/workloads (block_eval.cpp, written from docs/exec.md and
// sharing no code with the importer or the engine), compiled into test_onnx too.
#include "workloads/block_eval.cpp"  // NOLINT(bugprone-suspicious-include)
