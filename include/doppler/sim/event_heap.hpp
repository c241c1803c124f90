#pragma once
// Internal: the simulator's event queue, a binary min-heap on event time that hands out the
// events of one instant at a time. Storage only grows (it is kept across clear() calls), so a
// warmed-up queue never allocates.
#include <vector>

namespace doppler::detail {

template <typename Item>
class EventHeap {
public:
  /// A pending item and its time.
  struct Entry {
    double time;
    Item item;
  };
  /// Forgets every item; keeps the storage.
  void clear() { size_ = 0; }
  /// True when no item is left.
  bool empty() const { return size_ == 0; }
  /// Number of pending items.
  std::size_t size() const { return size_; }
  /// Adds an item at time `t`.
  void push(double t, const Item& item) {
    if (size_ == heap_.size()) heap_.resize(heap_.size() * 2 + 16);
    Entry* h = heap_.data();
    std::size_t i = size_++;
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (h[parent].time <= t) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = {t, item};
  }
  /// Time of the earliest pending item. Requires !empty().
  double top_time() const { return heap_[0].time; }
  /// Removes and returns the earliest item (any of them when several share the earliest time).
  Item pop() {
    Entry* h = heap_.data();
    const Item top = h[0].item;
    const Entry last = h[--size_];
    const std::size_t size = size_;
    std::size_t i = 0;
    while (true) {
      std::size_t c = 2 * i + 1;
      if (c >= size) break;
      if (c + 1 < size && h[c + 1].time < h[c].time) ++c;
      if (h[c].time >= last.time) break;
      h[i] = h[c];
      i = c;
    }
    if (size > 0) h[i] = last;
    return top;
  }

  /// The pending items in heap order (not sorted; ties of time in no particular order).
  const Entry* begin() const { return heap_.data(); }
  /// One past the last pending item.
  const Entry* end() const { return heap_.data() + size_; }

private:
  std::vector<Entry> heap_;
  std::size_t size_ = 0;
};

}  // namespace doppler::detail
