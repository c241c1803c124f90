#pragma once
// Long calls that Python can interrupt: the work runs on a worker thread while the calling thread
// (GIL held only between waits) checks for signals and calls the user's progress callback.
#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>

#include "doppler/heuristics/budget.hpp"

namespace doppler::python {

namespace py = pybind11;

/// Seconds between two checks for signals (Ctrl-C) and two progress callbacks.
inline constexpr double kWatchSeconds = 0.1;

/// The state a watched call shares with its worker: a stop flag the worker honors, and the user's
/// progress callback, which the worker calls (taking the GIL) at its first report and then at
/// most every kWatchSeconds.
class Watch {
public:
  /// `callback`: a Python callable taking a doppler.Progress, or None.
  explicit Watch(py::object callback = py::none());
  /// True once the work was asked to stop (a signal, or the callback said so).
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }
  /// The stop flag the library's long calls poll.
  const std::atomic<bool>& stop_flag() const { return stop_; }
  /// A ProgressCallback for the library (any thread): calls the Python callback when due
  /// (False, or an exception, stops the work) and answers false once stopped.
  ProgressCallback progress();
  /// Runs `work` on a worker thread; every kWatchSeconds the calling thread checks for signals.
  /// A signal's exception (KeyboardInterrupt) or the callback's is raised once the worker has
  /// stopped; else the work's own exception is rethrown. A callback's False keeps the result.
  void run(const std::function<void()>& work);

private:
  bool report(const ProgressPoint& p);  // on a worker: the callback when due; false = stop
  std::atomic<bool> stop_{false};
  std::mutex calling_;  // one worker at a time calls the callback; others skip
  std::chrono::steady_clock::time_point last_call_{};
  bool called_ = false;
  py::object callback_;
  std::optional<py::error_already_set> error_;  // accessed with the GIL held
};

/// doppler.Progress (a ProgressPoint: seconds, calls, makespan), the callbacks' argument.
void bind_progress(py::module_& m);

}  // namespace doppler::python
