// Watch: interruptible long calls with a progress callback (see watch.hpp).
#include "watch.hpp"

#include <chrono>
#include <exception>
#include <future>
#include <string>
#include <thread>

namespace doppler::python {

Watch::Watch(py::object callback) : callback_(std::move(callback)) {
  if (!callback_.is_none() && !PyCallable_Check(callback_.ptr()))
    throw py::type_error("callback must be callable (it is given a doppler.Progress) or None");
}

ProgressCallback Watch::progress() {
  return [this](const ProgressPoint& p) { return report(p) && !stopped(); };
}

bool Watch::report(const ProgressPoint& p) {
  if (callback_.is_none()) return true;
  const std::unique_lock<std::mutex> lock(calling_, std::try_to_lock);
  if (!lock.owns_lock()) return true;
  const auto now = std::chrono::steady_clock::now();
  if (called_ && now - last_call_ < std::chrono::duration<double>(kWatchSeconds)) return true;
  called_ = true;
  last_call_ = now;
  py::gil_scoped_acquire gil;
  if (stopped()) return false;
  try {
    const py::object answer = callback_(p);
    if (!(py::isinstance<py::bool_>(answer) && !answer.cast<bool>())) return true;
  } catch (py::error_already_set& e) {
    if (!error_) error_.emplace(std::move(e));
  }
  stop_.store(true, std::memory_order_relaxed);
  return false;
}

void Watch::run(const std::function<void()>& work) {
  std::packaged_task<void()> task(work);
  std::future<void> done = task.get_future();
  std::thread worker(std::move(task));
  const auto period = std::chrono::duration<double>(kWatchSeconds);
  for (;;) {
    bool finished = false;
    {
      py::gil_scoped_release unlocked;
      finished = done.wait_for(period) == std::future_status::ready;
    }
    if (finished) break;
    if (!stopped() && PyErr_CheckSignals() != 0) {
      if (!error_) error_.emplace();  // the pending KeyboardInterrupt (or the handler's error)
      stop_.store(true, std::memory_order_relaxed);
    }
  }
  {
    py::gil_scoped_release unlocked;  // a worker may still be leaving a callback
    worker.join();
  }
  if (error_) {
    py::error_already_set e = std::move(*error_);
    error_.reset();
    throw e;
  }
  done.get();  // rethrows the work's exception
}

void bind_progress(py::module_& m) {
  py::class_<ProgressPoint>(m, "Progress",
                            "A long call's progress, given to `callback`: seconds since it "
                            "started, simulator calls so far and the best makespan so far "
                            "(problem units; inf before the first).")
      .def_readonly("seconds", &ProgressPoint::seconds)
      .def_readonly("calls", &ProgressPoint::calls)
      .def_readonly("makespan", &ProgressPoint::makespan)
      .def("__repr__", [](const ProgressPoint& p) {
        return "<doppler.Progress " + std::to_string(p.seconds) + " s, " + std::to_string(p.calls) +
               " calls, best " + std::to_string(p.makespan) + ">";
      });
}

}  // namespace doppler::python
