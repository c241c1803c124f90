#include "fake_async_backend.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <random>
#include <stdexcept>
#include <string>

namespace doppler::test {

// One stream of a fake device: a thread that runs its jobs in order, each after a random delay.
class FakeAsyncBackend::Executor {
public:
  explicit Executor(std::uint64_t seed) : rng_(seed), thread_([this] { loop(); }) {}
  ~Executor() {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  /// Enqueues `job` to run after a delay in [0, max_delay]; the future holds its error message
  /// ("" when it succeeded). Only the message crosses threads, as a device's error code would.
  std::future<std::string> enqueue(std::function<void()> job, double max_delay) {
    std::promise<std::string> done;
    std::future<std::string> result = done.get_future();
    {
      std::lock_guard lk(mu_);
      jobs_.push_back({std::move(job), max_delay, std::move(done)});
    }
    cv_.notify_one();
    return result;
  }

private:
  struct Job {
    std::function<void()> run;
    double max_delay = 0;
    std::promise<std::string> done;
  };
  void loop() {
    while (true) {
      Job job;
      {
        std::unique_lock lk(mu_);
        cv_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
        if (stop_) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      const double delay = std::uniform_real_distribution<double>(0, job.max_delay)(rng_);
      std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      std::string error;
      try {
        job.run();
      } catch (const std::exception& e) {
        error = e.what();
      }
      job.done.set_value(std::move(error));
    }
  }
  std::mt19937_64 rng_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stop_ = false;
  std::thread thread_;
};

FakeAsyncBackend::FakeAsyncBackend(const engine_detail::Plan& plan, int devices, int nodes,
                                   Options options)
    : cpu_(engine_detail::make_cpu_backend(plan, devices, nodes)), options_(options) {
  for (int d = 0; d < devices; ++d) {
    compute_.push_back(
        std::make_unique<Executor>(options.seed * 1000 + 2 * static_cast<unsigned>(d)));
    copy_in_.push_back(
        std::make_unique<Executor>(options.seed * 1000 + 2 * static_cast<unsigned>(d) + 1));
  }
}

FakeAsyncBackend::~FakeAsyncBackend() = default;

void FakeAsyncBackend::attach(DeviceId d) {
  std::lock_guard lk(mu_);
  attached_.insert({d, std::this_thread::get_id()});
}

void FakeAsyncBackend::begin_run(std::chrono::steady_clock::time_point origin) {
  origin_ = origin;
  std::lock_guard lk(mu_);
  events_.clear();
}

void FakeAsyncBackend::ensure(DeviceId d, NodeId v, std::size_t elements) {
  cpu_->ensure(d, v, elements);
}

void* FakeAsyncBackend::buffer(DeviceId d, NodeId v) {
  return cpu_->buffer(d, v);
}

bool FakeAsyncBackend::has_buffer(DeviceId d, NodeId v) const {
  return cpu_->has_buffer(d, v);
}

double FakeAsyncBackend::since_origin() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

engine_detail::DeviceInterval FakeAsyncBackend::run_on(Executor& ex, FakeEvent ev,
                                                       const std::function<void()>& job) {
  ev.launched = since_origin();
  auto timed = [this, &ev, &job] {
    ev.ran.start = since_origin();
    job();  // may throw: the executor passes its message back
    ev.ran.finish = since_origin();
    ev.completion = completions_.fetch_add(1);
  };
  // The worker waits for the completion, then fails in its own thread if the device did.
  const std::string error = ex.enqueue(timed, options_.max_delay_seconds).get();
  if (!error.empty()) throw std::runtime_error(error);
  std::lock_guard lk(mu_);
  events_.push_back(ev);
  return ev.ran;
}

std::optional<engine_detail::DeviceInterval> FakeAsyncBackend::launch(
    DeviceId d, NodeId v, std::span<const void* const> inputs, void* out) {
  const std::vector<const void*> in(inputs.begin(), inputs.end());  // the worker's list changes
  return run_on(*compute_[static_cast<std::size_t>(d)], {v, -1, d, 0, {}, 0}, [&, d, v, out] {
    if (v == options_.failing_kernel) throw std::runtime_error("fake device fault in a kernel");
    cpu_->launch(d, v, in, out);
  });
}

std::optional<engine_detail::DeviceInterval> FakeAsyncBackend::copy(NodeId v, DeviceId from,
                                                                    DeviceId to,
                                                                    std::size_t elements) {
  return run_on(*copy_in_[static_cast<std::size_t>(to)], {v, from, to, 0, {}, 0}, [&] {
    if (v == options_.failing_copy) throw std::runtime_error("fake device fault in a copy");
    cpu_->copy(v, from, to, elements);
  });
}

std::vector<FakeEvent> FakeAsyncBackend::events() const {
  std::lock_guard lk(mu_);
  std::vector<FakeEvent> e = events_;
  std::sort(e.begin(), e.end(),
            [](const FakeEvent& a, const FakeEvent& b) { return a.completion < b.completion; });
  return e;
}

std::set<std::pair<DeviceId, std::thread::id>> FakeAsyncBackend::attached() const {
  std::lock_guard lk(mu_);
  return attached_;
}

}  // namespace doppler::test
