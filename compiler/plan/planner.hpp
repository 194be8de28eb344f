// The memory planner: gives every buffer a region and an offset so that buffers live at the same
// schedule step never share a byte, with the smallest peak possible, and says how sure it is.
// It knows nothing of ONNX: a buffer is a size, an alignment and the steps it is live at (an
// interval of steps, less its gaps).
//
// Mutually exclusive lifetimes: a schedule with a data-dependent If lays both branches out, one
// after the other, and a run executes the steps of one of them only. Liveness is per step: a buffer
// is live at a step if some run executing that step still needs it there. So a value read by the
// else branch only is dead over the then branch's steps (a gap), and the If's output, written by
// the last step of either branch, is dead over the else branch's steps before its last one. Two
// buffers then conflict exactly when some run needs both at once: when they are live at a common
// step; one of the then branch and one of the else branch never are. The peak of a run is the most
// bytes live at one of its steps, so the live-sum bound, the most over all steps, is the most over
// every run.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tightfit::plan {

struct Region {
  std::string name;
  std::uint64_t capacity = UINT64_MAX;  // bytes; the cap (--max-ram)
  std::uint32_t alignment = 16;         // the region's base address is aligned to this
};

struct Pin {
  int region = 0;
  std::uint64_t offset = 0;
};

// `value` rounded up to a multiple of `multiple` (> 0): an aligned offset, a size in granules.
constexpr std::uint64_t round_up(std::uint64_t value, std::uint64_t multiple) {
  const std::uint64_t rest = value % multiple;
  return rest == 0 ? value : value + (multiple - rest);
}

// Whether the half-open ranges [a_begin, a_end) and [b_begin, b_end) share a point (bytes, sections).
template <typename T>
constexpr bool ranges_overlap(T a_begin, T a_end, T b_begin, T b_end) {
  return a_begin < b_end && b_begin < a_end;
}

// Steps [first, last], inclusive.
struct StepRange {
  int first = 0, last = 0;
};

struct Buffer {
  std::string name;
  std::uint64_t size = 0;             // bytes; 0-size buffers get offset 0 and never conflict
  std::uint32_t alignment = 16;       // the offset must be a multiple of this (a power of two)
  int first_step = 0, last_step = 0;  // live interval, inclusive of both steps
  // Steps inside the interval where the buffer is dead (the other branch of an If runs there):
  // ascending, disjoint, not touching each other nor either end of the interval. Usually none.
  std::vector<StepRange> gaps;
  std::optional<Pin> pin;     // region and offset fixed by the user
  std::uint64_t traffic = 0;  // bytes read + written; with several regions the busiest go first

  bool live_at(int step) const;
};

// A buffer that may overlap the input its kernel consumes: while both are live, `output` may lie
// over `input` if it starts at least `below` bytes below it (output offset + below <= input
// offset), or, when the kernel can run backwards, at least `above` bytes above it (input offset
// + above <= output offset); otherwise the two share no byte, as any two live buffers. The
// distances are the kernel's (docs/runtime.md, "The overlap contract"); none: not that way. A
// buffer is the output of one pair at most and the input of one pair at most.
struct Overlap {
  int output = 0, input = 0;  // indices into Problem::buffers
  std::optional<std::uint64_t> below;
  std::optional<std::uint64_t> above;
};

// How far an output may start below (or, run backwards, above) an input and still overlap it:
// its kernel's distances (an operator's overlap rule, compiler/ops/); none: not that way.
struct OverlapDistances {
  std::optional<std::uint64_t> below, above;
};

struct Problem {
  std::vector<Region> regions;  // fastest first; at least one
  std::vector<Buffer> buffers;
  std::vector<Overlap> overlaps;  // may be empty
};

// Where the search stands, for a progress line: the best peak found so far in the region being
// solved, its proven lower bound, and the time since solve() began.
struct Progress {
  std::uint64_t best_peak = 0;
  std::uint64_t lower_bound = 0;
  double elapsed_ms = 0;
};

struct Options {
  double time_limit_seconds = 5.0;
  std::function<void(const Progress&)> on_progress;  // called after every probe of the search; may be empty
  // 0: none. Else the search also stops once a round of it has searched this many nodes per
  // buffer under each preorder (counting at least kBudgetBuffers buffers, so that a small problem
  // still gets a few rounds): the plan then depends on counts, not on the clock (unless the time
  // limit cuts first), so the same problem always gives the same plan. Per buffer, because one
  // descent of the search places every buffer once: a large problem needs as many rounds of
  // backtracking as a small one.
  std::int64_t nodes_per_buffer = 0;
  static constexpr std::int64_t kBudgetBuffers = 128;
};

enum class Status { Optimal, Feasible, Infeasible };
const char* status_name(Status status);  // "optimal", "feasible", "infeasible"

struct Placement {
  int region = 0;
  std::uint64_t offset = 0;
};

struct Plan {
  Status status = Status::Feasible;
  std::vector<Placement> placements;              // one per buffer, in the order of Problem::buffers
  std::vector<std::uint64_t> region_peak;         // per region: max(offset + size) over its buffers
  std::vector<std::uint64_t> region_lower_bound;  // per region: proven for the buffers it was given
  std::uint64_t peak = 0;                         // one region: region_peak[0]; several: their sum
  std::uint64_t lower_bound = 0;                  // proven: no plan has a smaller `peak`
  std::uint64_t greedy_peak = 0;                  // greedy_by_size(problem): TFLite Micro's arena, no cap
  int peak_step = 0;                              // a step where the live (aligned) sizes sum to the most
  std::vector<int> peak_buffers;                  // the buffers live at peak_step
  std::string reason;                             // Infeasible: one line with the cap, the minimum, the peak step
  double time_ms = 0;
};

// Whether a plan lays a pair's output over its input from above, so that the kernel must run
// backwards: the two share a byte and the `below` distance does not hold (a valid plan then
// keeps the `above` one). An output at its input's very offset is above it unless `below` is 0.
bool output_above_input(const Problem& problem, const Overlap& pair, const Placement& output, const Placement& input);

// The best plan found within the time limit. Status::Optimal when peak == lower_bound or the
// search proved nothing smaller fits; Feasible with the gap otherwise; Infeasible when no plan
// fits under the caps (placements then hold the best plan with the last region uncapped, for
// reports). With several regions, the regions are chosen by one search over all of them: a plan
// is infeasible only if no choice of regions fits (or none was found in time: `reason` says).
Plan solve(const Problem& problem, const Options& options);

// TFLite Micro rounds every buffer's size up to this before planning (MicroArenaBufferAlignment).
inline constexpr std::uint64_t kTflmSizeGranule = 16;

// TFLite Micro's GreedyMemoryPlanner, to the byte, with the buffers added in Problem order (the
// order breaks ties of size) and each size first rounded up to `size_granule`: pinned buffers
// first, then the rest by size, largest first, each at the lowest offset where it fits
// (plan/greedy.hpp). With the default granule, `peak` is the arena a TFLM user would need for
// these buffers; with 1, the planner's figure on the sizes as given. TFLM has one arena: every
// buffer not pinned elsewhere goes to the first region. Offsets honour the buffers' alignments
// (a no-op when they divide the granule, as TFLM's do). Never fails on capacity (it may exceed it).
Plan greedy_by_size(const Problem& problem, std::uint64_t size_granule = kTflmSizeGranule);

// The largest sum of sizes live at one step (in one region's alignment), less what the overlap
// pairs live there can share, a bound no plan beats.
// `step`, when given, receives a step where it is reached.
std::uint64_t live_sum_lower_bound(const Problem& problem, int* step = nullptr);

// The bytes live at each of steps 0 .. steps-1, less what each overlap pair k saves at its step
// (`overlap_step[k]`): `shared[k]` bytes. The report's live bytes per step (with the bytes the
// plan lays over each other, shared_bytes()) and the tiling search's bound (with the most each
// pair may share, most_shared_bytes()) are this one sum.
std::vector<std::uint64_t> live_bytes_per_step(const Problem& problem, std::size_t steps,
                                               const std::vector<int>& overlap_step,
                                               const std::vector<std::uint64_t>& shared);

// The most bytes pair `o`'s output and input can share: what its distances allow.
std::uint64_t most_shared_bytes(const Problem& problem, const Overlap& o);

// The bytes pair `o`'s output and input share in `plan`.
std::uint64_t shared_bytes(const Problem& problem, const Plan& plan, const Overlap& o);

}  // namespace tightfit::plan
