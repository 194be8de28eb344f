// best_order(): the suffix of the schedule is solved backwards over the set S of nodes already
// run, memoized on S:
//
//   rest(S) = min over nodes v ready after S of max(live(S, v), rest(S + v)),   rest(all) = 0
//
// where live(S, v) is the bytes live while v runs after S. The bytes live between steps depend
// only on S (a buffer is live once a node that touches it has run, or from the start, and until
// every node that touches it has run, or to the end), so rest(S) does not depend on how S was
// reached. Only downward-closed sets are visited, and on a graph of blocks in series they add up
// over the blocks rather than multiply. Two prunings keep it exact: a step above the peak of an
// order already known (the file order's, or the beam search's below) is never taken (the best
// order has no such step), and a step at least as high as the best suffix found so far from S
// cannot improve it; the lightest steps are tried first so that the second prunes early. The order itself is read off
// forwards: at every step the node of smallest file index whose step and rest stay within the optimum.
#include "schedule/order.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <stdexcept>
#include <unordered_map>

namespace tightfit::schedule {
namespace {

constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

using Bits = std::vector<std::uint64_t>;  // one bit per node: the set S of nodes already run

bool has(const Bits& s, int i) { return (s[i >> 6] >> (i & 63)) & 1u; }
void put(Bits& s, int i) { s[i >> 6] |= std::uint64_t{1} << (i & 63); }
void drop(Bits& s, int i) { s[i >> 6] &= ~(std::uint64_t{1} << (i & 63)); }

struct BitsHash {
  std::size_t operator()(const Bits& s) const {
    std::uint64_t h = 0x9e3779b97f4a7c15u;
    for (const std::uint64_t w : s) h = (h ^ w) * 0x100000001b3u + (h >> 29);
    return static_cast<std::size_t>(h);
  }
};

struct OutOfStates {};

// The bytes live while node v runs after the set S, and after it has run.
struct StepBytes {
  std::uint64_t during = 0, after = 0;
};

class Walk {
 public:
  explicit Walk(const OrderProblem& p) : p_(p), n_(static_cast<int>(p.predecessors.size())) {
    touches_.resize(n_);
    for (int b = 0; b < static_cast<int>(p.buffers.size()); ++b) {
      const OrderBuffer& buffer = p.buffers[b];
      for (const int v : buffer.touchers)
        if (touches_[v].empty() || touches_[v].back() != b) touches_[v].push_back(b);
      if (buffer.from_start && (buffer.to_end || !buffer.touchers.empty())) start_bytes_ += buffer.bytes;
      // lifetimes.hpp keeps a graph input that nothing reads live during the first step.
      if (buffer.from_start && !buffer.to_end && buffer.touchers.empty()) first_step_only_ += buffer.bytes;
    }
  }

  int nodes() const { return n_; }
  Bits empty() const { return Bits((n_ + 63) / 64, 0); }
  std::uint64_t start_bytes() const { return start_bytes_; }

  bool ready(const Bits& s, int v) const {
    if (has(s, v)) return false;
    for (const int u : p_.predecessors[v])
      if (!has(s, u)) return false;
    return true;
  }

  StepBytes step(const Bits& s, bool first, std::uint64_t live_before, int v) const {
    StepBytes bytes{live_before + (first ? first_step_only_ : 0), live_before};
    for (const int b : touches_[v]) {
      const OrderBuffer& buffer = p_.buffers[b];
      bool started = buffer.from_start, ends = !buffer.to_end;
      for (const int u : buffer.touchers) {
        if (u == v) continue;
        if (has(s, u))
          started = true;
        else
          ends = false;
      }
      if (!started) {
        bytes.during += buffer.bytes;
        bytes.after += buffer.bytes;
      }
      if (ends) bytes.after -= buffer.bytes;
    }
    return bytes;
  }

 private:
  const OrderProblem& p_;
  int n_;
  std::vector<std::vector<int>> touches_;  // per node: the buffers it touches, each once
  std::uint64_t start_bytes_ = 0, first_step_only_ = 0;
};

class ExactSearch {
 public:
  ExactSearch(const Walk& walk, std::uint64_t ceiling, std::uint64_t budget)
      : walk_(walk), ceiling_(ceiling), budget_(budget) {}

  // The least peak of the steps after S (which holds `done` nodes and leaves `live` bytes live),
  // or kNever when every order of them has a step above the ceiling.
  std::uint64_t rest(Bits& s, int done, std::uint64_t live) {
    if (done == walk_.nodes()) return 0;
    if (const auto found = memo_.find(s); found != memo_.end()) return found->second;
    if (memo_.size() >= budget_) throw OutOfStates{};
    // The lightest steps first: a good suffix found early prunes the others.
    std::vector<std::pair<StepBytes, int>> steps;
    for (int v = 0; v < walk_.nodes(); ++v)
      if (walk_.ready(s, v)) steps.push_back({walk_.step(s, done == 0, live, v), v});
    std::stable_sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) {
      return a.first.during != b.first.during ? a.first.during < b.first.during : a.first.after < b.first.after;
    });
    std::uint64_t best = kNever;
    for (const auto& [bytes, v] : steps) {
      if (bytes.during > ceiling_ || bytes.during >= best) continue;
      put(s, v);
      best = std::min(best, std::max(bytes.during, rest(s, done + 1, bytes.after)));
      drop(s, v);
    }
    memo_.emplace(s, best);
    return best;
  }

  // An order whose peak is `peak` (rest() of the empty set), taking at each step the first node
  // in `preference` that keeps within it.
  std::vector<int> read_order(std::uint64_t peak, const std::vector<int>& preference) {
    Bits s = walk_.empty();
    std::uint64_t live = walk_.start_bytes();
    std::vector<int> order;
    while (static_cast<int>(order.size()) < walk_.nodes()) {
      const int done = static_cast<int>(order.size());
      const std::size_t before = order.size();
      for (const int v : preference) {
        if (!walk_.ready(s, v)) continue;
        const StepBytes bytes = walk_.step(s, done == 0, live, v);
        if (bytes.during > peak) continue;
        put(s, v);
        if (rest(s, done + 1, bytes.after) <= peak) {
          order.push_back(v);
          live = bytes.after;
          break;
        }
        drop(s, v);
      }
      // rest() said some order keeps within the peak: a node on it is always found.
      if (order.size() == before) throw std::logic_error("the order search lost its optimal order");
    }
    return order;
  }

  std::uint64_t states() const { return memo_.size(); }

 private:
  const Walk& walk_;
  std::uint64_t ceiling_, budget_;
  std::unordered_map<Bits, std::uint64_t, BitsHash> memo_;
};

// The fallback: forwards, keeping the `width` best partial orders (by peak so far, then bytes live
// after them, then file order) per step; partial orders that reach the same set keep the best.
struct Partial {
  Bits set;
  std::uint64_t live = 0, peak = 0;
  std::vector<int> order;
};

bool better(const Partial& a, const Partial& b) {
  if (a.peak != b.peak) return a.peak < b.peak;
  if (a.live != b.live) return a.live < b.live;
  return a.order < b.order;
}

Partial beam_order(const Walk& walk, int width, std::uint64_t& states) {
  std::vector<Partial> level{{walk.empty(), walk.start_bytes(), 0, {}}};
  for (int done = 0; done < walk.nodes(); ++done) {
    std::unordered_map<Bits, Partial, BitsHash> next;
    for (const Partial& from : level)
      for (int v = 0; v < walk.nodes(); ++v) {
        if (!walk.ready(from.set, v)) continue;
        const StepBytes bytes = walk.step(from.set, done == 0, from.live, v);
        Partial to{from.set, bytes.after, std::max(from.peak, bytes.during), from.order};
        put(to.set, v);
        to.order.push_back(v);
        auto [at, inserted] = next.try_emplace(to.set, to);
        if (!inserted && better(to, at->second)) at->second = std::move(to);
      }
    states += next.size();
    level.clear();
    for (auto& entry : next) level.push_back(std::move(entry.second));
    std::sort(level.begin(), level.end(), better);
    if (static_cast<int>(level.size()) > width) level.resize(width);
  }
  return level.front();
}

// What every order must hold at some step: each node's own buffers at once (with the buffers live
// throughout), the graph inputs at the first step, the graph outputs at the last.
std::uint64_t peak_lower_bound(const OrderProblem& p) {
  std::uint64_t always = 0, inputs = 0, outputs = 0;
  for (const OrderBuffer& b : p.buffers) {
    if (b.from_start && b.to_end) always += b.bytes;
    if (b.from_start) inputs += b.bytes;
    if (b.to_end) outputs += b.bytes;
  }
  std::vector<std::uint64_t> own(p.predecessors.size(), always);
  for (const OrderBuffer& b : p.buffers) {
    if (b.from_start && b.to_end) continue;
    std::vector<int> touchers = b.touchers;
    std::sort(touchers.begin(), touchers.end());
    touchers.erase(std::unique(touchers.begin(), touchers.end()), touchers.end());
    for (const int v : touchers) own[v] += b.bytes;
  }
  std::uint64_t bound = std::max(inputs, outputs);
  for (const std::uint64_t bytes : own) bound = std::max(bound, bytes);
  return p.predecessors.empty() ? 0 : bound;
}

}  // namespace

OrderProblem order_problem(const ir::Graph& g, const Lifetimes& lifetimes) {
  OrderProblem p;
  const int n = static_cast<int>(g.nodes.size());
  std::vector<int> producer(g.tensors.size(), -1);
  for (int v = 0; v < n; ++v)
    for (const ir::TensorId t : g.nodes[v].outputs) producer[t] = v;
  // A tensor read in place from another (a band of a tiled stage's input) waits for its writer.
  for (std::size_t t = 0; t < g.tensors.size(); ++t)
    if (producer[t] < 0 && g.tensors[t].slice_of != ir::kNoTensor) producer[t] = producer[g.tensors[t].slice_of];
  p.predecessors.resize(n);
  for (int v = 0; v < n; ++v) {
    for (const ir::TensorId t : g.nodes[v].inputs)
      if (t != ir::kNoTensor && producer[t] >= 0) p.predecessors[v].push_back(producer[t]);
    std::sort(p.predecessors[v].begin(), p.predecessors[v].end());
    p.predecessors[v].erase(std::unique(p.predecessors[v].begin(), p.predecessors[v].end()), p.predecessors[v].end());
  }

  for (const plan::Buffer& b : lifetimes.problem.buffers)
    p.buffers.push_back({plan::round_up(b.size, b.alignment), {}, false, false});
  // Which nodes touch each buffer, as compute_lifetimes() counts them: a node's inputs and
  // outputs (a view's reader touches its source's buffer), and a scratch buffer's own node.
  for (int v = 0; v < n; ++v) {
    const ir::Node& node = g.nodes[v];
    for (const auto* tensors : {&node.inputs, &node.outputs})
      for (const ir::TensorId t : *tensors)
        if (t != ir::kNoTensor && lifetimes.tensor_buffer[t] >= 0)
          p.buffers[lifetimes.tensor_buffer[t]].touchers.push_back(v);
    if (lifetimes.node_scratch[v] >= 0) p.buffers[lifetimes.node_scratch[v]].touchers.push_back(v);
  }
  for (const ir::TensorId t : g.inputs)
    if (lifetimes.tensor_buffer[t] >= 0) p.buffers[lifetimes.tensor_buffer[t]].from_start = true;
  for (const ir::TensorId t : g.outputs)
    if (lifetimes.tensor_buffer[t] >= 0) p.buffers[lifetimes.tensor_buffer[t]].to_end = true;
  return p;
}

std::uint64_t order_peak(const OrderProblem& p, const std::vector<int>& order) {
  const int n = static_cast<int>(order.size());
  std::vector<int> position(n);
  for (int step = 0; step < n; ++step) position[order[step]] = step;
  std::vector<std::uint64_t> live(n, 0);
  for (const OrderBuffer& b : p.buffers) {
    int first = n, last = -1;
    for (const int v : b.touchers) {
      first = std::min(first, position[v]);
      last = std::max(last, position[v]);
    }
    if (b.from_start) first = 0, last = std::max(last, 0);
    if (b.to_end) last = n - 1;
    for (int step = first; step <= last && step < n; ++step) live[step] += b.bytes;
  }
  return live.empty() ? 0 : *std::max_element(live.begin(), live.end());
}

OrderResult best_order(const OrderProblem& p, const OrderOptions& options) {
  const Walk walk(p);
  const int n = walk.nodes();
  std::vector<int> file_order(n), latest_first(n);
  for (int v = 0; v < n; ++v) file_order[v] = v, latest_first[v] = n - 1 - v;
  const std::uint64_t file_peak = order_peak(p, file_order);

  // The beam first: the better of its order and the file order is the one to beat. The search
  // then looks only for strictly lower peaks, which prunes most sets of nodes; finding none
  // proves the known order optimal.
  OrderResult result;
  const Partial beam = beam_order(walk, options.beam_width, result.states);
  const bool file_is_known = file_peak <= beam.peak;
  const std::uint64_t known_peak = std::min(file_peak, beam.peak);
  const std::vector<int>& known_order = file_is_known ? file_order : beam.order;
  try {
    ExactSearch below(walk, known_peak == 0 ? 0 : known_peak - 1, options.state_budget);
    Bits none = walk.empty();
    const std::uint64_t peak = known_peak == 0 ? kNever : below.rest(none, 0, walk.start_bytes());
    result.states += below.states();
    if (peak != kNever) {
      result.peak = peak;
      result.order = below.read_order(peak, file_order);
      if (std::vector<int> other = below.read_order(peak, latest_first); other != result.order)
        result.other_best_order = std::move(other);
    } else if (file_is_known) {
      // The file order is optimal and the smallest in file order of all orders.
      result.peak = file_peak;
      result.order = file_order;
      if (beam.peak == file_peak && beam.order != file_order) result.other_best_order = beam.order;
    } else {
      // The beam's order is optimal; the first optimal order in file order may cost more states.
      result.peak = beam.peak;
      result.order = beam.order;
      ExactSearch at(walk, known_peak, options.state_budget);
      try {
        Bits start = walk.empty();
        at.rest(start, 0, walk.start_bytes());
        result.order = at.read_order(known_peak, file_order);
        if (result.order != beam.order) result.other_best_order = beam.order;
      } catch (const OutOfStates&) {
      }
      result.states += at.states();
    }
    result.lower_bound = result.peak;
    result.exact = true;
    return result;
  } catch (const OutOfStates&) {
    result.states += options.state_budget;
  }
  result.order = known_order;
  result.peak = known_peak;
  result.lower_bound = std::min(result.peak, peak_lower_bound(p));
  result.exact = result.lower_bound == result.peak;
  return result;
}

void reorder_nodes(ir::Graph& g, const std::vector<int>& order) {
  std::vector<ir::Node> nodes;
  nodes.reserve(order.size());
  for (const int v : order) nodes.push_back(std::move(g.nodes[v]));
  g.nodes = std::move(nodes);
}

}  // namespace tightfit::schedule
