#pragma once
// A stand-in for an asynchronous device (a GPU) that needs none, to test on any machine what
// the Runtime does with one: each device has a compute executor and an incoming-copy executor
// (threads, like a GPU's two streams) that run what launch() and copy() enqueue (the CPU
// kernels, memcpy) after a seeded random delay, so that completions come back in another order
// than the launches. launch() and copy() wait for the completion, as a GPU backend waits for its
// event, and return the executor's own times (its clock started at begin_run()'s origin).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "engine/device_backend.hpp"

namespace doppler::test {

/// One op or copy as the fake device ran it.
struct FakeEvent {
  NodeId v = -1;        ///< the op (its kernel, or its output copied)
  DeviceId from = -1;   ///< copies: the source device; kernels: -1
  DeviceId to = -1;     ///< the device that ran it (kernels) or received it (copies)
  double launched = 0;  ///< host time launch()/copy() was called, seconds since the origin
  engine_detail::DeviceInterval ran;  ///< the times returned
  std::uint64_t completion = 0;       ///< global completion sequence number
};

class FakeAsyncBackend : public engine_detail::DeviceBackend {
public:
  /// Behaviour of the fake devices.
  struct Options {
    std::uint64_t seed = 1;             ///< seeds every executor's delays
    double max_delay_seconds = 200e-6;  ///< delay before each job, uniform in [0, this]
    NodeId failing_kernel = -1;         ///< this op's kernel throws (after its delay)
    NodeId failing_copy = -1;           ///< copies of this op's output throw
  };

  FakeAsyncBackend(const engine_detail::Plan& plan, int devices, int nodes, Options options);
  ~FakeAsyncBackend() override;

  void attach(DeviceId d) override;
  void begin_run(std::chrono::steady_clock::time_point origin) override;
  void ensure(DeviceId d, NodeId v, std::size_t elements) override;
  void* buffer(DeviceId d, NodeId v) override;
  bool has_buffer(DeviceId d, NodeId v) const override;
  std::optional<engine_detail::DeviceInterval> launch(DeviceId d, NodeId v,
                                                      std::span<const void* const> inputs,
                                                      void* out) override;
  std::optional<engine_detail::DeviceInterval> copy(NodeId v, DeviceId from, DeviceId to,
                                                    std::size_t elements) override;

  /// Replaces the options (between runs).
  void set_options(const Options& o) { options_ = o; }
  /// Every kernel and copy of the last run, in completion order.
  std::vector<FakeEvent> events() const;
  /// (device, thread) pairs that called attach().
  std::set<std::pair<DeviceId, std::thread::id>> attached() const;

private:
  class Executor;
  double since_origin() const;
  engine_detail::DeviceInterval run_on(Executor& ex, FakeEvent ev,
                                       const std::function<void()>& job);

  std::unique_ptr<engine_detail::DeviceBackend> cpu_;
  Options options_;
  std::vector<std::unique_ptr<Executor>> compute_, copy_in_;  // per device
  std::chrono::steady_clock::time_point origin_;
  mutable std::mutex mu_;  // events_, attached_
  std::vector<FakeEvent> events_;
  std::set<std::pair<DeviceId, std::thread::id>> attached_;
  std::atomic<std::uint64_t> completions_{0};
};

}  // namespace doppler::test
