// The memory map: one panel per region (x = schedule step, y = address, one rectangle per buffer),
// then the bytes live at each step with the lines to compare them with (this plan, the lower
// bound, greedy by size, the cap). The scale adapts to the schedule: wide steps with op names at 5
// layers, narrow ones with sparse ticks at 200; labels are drawn only where they fit.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "report/report.hpp"
#include "report/units.hpp"
#include "util/model_text.hpp"
#include "report/views.hpp"

namespace tightfit::report {
namespace {

constexpr double kLeft = 64;           // room for the address ticks
constexpr double kRight = 150;         // room for the line labels
constexpr double kPlotWidth = 1200;    // with the margins, fits a laptop screen
constexpr double kMinStepWidth = 6;    // narrower and a one-step buffer disappears
constexpr double kMaxStepWidth = 144;  // a short schedule gets 720 px, not a stretched 1200
constexpr double kPanelGap = 70;       // between panels: step labels, op names, the next heading
constexpr double kCharWidth = 6.2;     // of the 10px label font, on average, to decide what fits
constexpr double kLabelFont = 10;
constexpr std::size_t kLeastLabel = 8;  // characters of a shortened label

const char* const kCapColour = "#d62728";
const char* const kBoundColour = "#333333";
const char* const kPlanColour = "#1f4e79";
const char* const kGreedyColour = "#e07b00";
const char* const kRowBandFill = "#cfe8dc";

std::string num(double v) { return fmt::format("{:.1f}", v); }

// A horizontal line across a panel, labelled in the right margin.
struct Line {
  std::uint64_t bytes;
  std::string label;
  const char* colour;
  const char* dash;  // stroke-dasharray, "" for solid
};

// A plot area: steps along x, bytes along y (0 at the bottom).
struct Frame {
  double left, top, width, height, step_width, y_max;
  double x(double step) const { return left + step * step_width; }
  double y(double bytes) const { return top + height - bytes / y_max * height; }
  double bottom() const { return top + height; }
};

// The top of a panel's scale: the largest value to show, plus the cap when it is close enough to
// show without squashing everything else.
double scale_top(std::uint64_t largest, std::optional<std::uint64_t> cap) {
  double top = std::max<double>(1, static_cast<double>(largest));
  if (cap && *cap <= top * 1.3) top = std::max<double>(top, static_cast<double>(*cap));
  return top * 1.08;
}

// A power-of-two tick step giving at most `most` ticks up to `top` (addresses read best in K).
std::uint64_t tick_step(double top, int most) {
  std::uint64_t step = 1;
  while (top / static_cast<double>(step) > most) step *= 2;
  return step;
}

class MemoryMap {
 public:
  explicit MemoryMap(const Document& d) : d_(d) {
    const auto steps = static_cast<double>(std::max<std::size_t>(1, d.steps.size()));
    step_width_ = std::clamp(kPlotWidth / steps, kMinStepWidth, kMaxStepWidth);
    plot_width_ = step_width_ * steps;
    region_height_ = d.regions.size() == 1 ? 320 : 230;
    // With nothing placed (a failed plan) the address panels would be empty: the live bytes
    // against the cap tell the story, so they get the room.
    any_placed_ = std::any_of(d.buffers.begin(), d.buffers.end(), [](const Buffer& b) { return b.offset.has_value(); });
    live_height_ = any_placed_ ? 150 : 300;
    find_row_bands();
  }

  std::string draw() const {
    double y = 86;  // below the title and the legend, with room for the first panel's heading
    std::string body;
    for (std::size_t i = 0; any_placed_ && i < d_.regions.size(); ++i) {
      body += region_panel(i, y);
      y += region_height_ + kPanelGap;
    }
    body += live_panel(y);
    y += live_height_ + kPanelGap - 20;
    const double width = kLeft + plot_width_ + kRight;
    std::string out = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif\" font-size=\"11\" "
        "class=\"tightfit-memory-map\">\n",
        num(width), num(y));
    out += "<style>.buffer:hover{stroke:#000;stroke-width:1.5px}.step-hit:hover{fill:#000;fill-opacity:0.06}</style>\n";
    // The bytes an output shares with the input it overlaps: red hatching over both.
    out +=
        "<defs><pattern id=\"overlap-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#d62728\" fill-opacity=\"0.25\"/>"
        "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#d62728\" stroke-width=\"2.5\"/></pattern></defs>\n";
    out += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", num(width), num(y));
    out += title();
    out += legend();
    return out + body + "</svg>\n";
  }

 private:
  std::string title() const {
    const std::string what = d_.status == "infeasible"
                                 ? fmt::format("does not fit: minimum {}", human_bytes(d_.failure->minimum_bytes))
                                 : fmt::format("{} of RAM, {}", human_bytes(d_.arena_bytes), d_.status);
    return fmt::format("<text x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"600\">{}: memory map, {}</text>\n",
                       num(kLeft), model_text::xml(d_.name), model_text::xml(what));
  }

  // Region hues, the shades of the kinds, the lines and the peak band, in one row.
  std::string legend() const {
    std::string out;
    double x = kLeft;
    auto swatch = [&](const std::string& fill, const std::string& label) {
      out += fmt::format("<rect x=\"{}\" y=\"33\" width=\"12\" height=\"12\" fill=\"{}\"/>", num(x), fill);
      out += fmt::format("<text x=\"{}\" y=\"43\">{}</text>\n", num(x + 16), model_text::xml(label));
      x += 16 + static_cast<double>(label.size()) * kCharWidth + 14;
    };
    auto line = [&](const char* colour, const char* dash, const std::string& label) {
      out += fmt::format("<line x1=\"{}\" y1=\"39\" x2=\"{}\" y2=\"39\" stroke=\"{}\" stroke-width=\"2\"{}/>", num(x),
                         num(x + 18), colour, *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "");
      out += fmt::format("<text x=\"{}\" y=\"43\">{}</text>\n", num(x + 22), model_text::xml(label));
      x += 22 + static_cast<double>(label.size()) * kCharWidth + 14;
    };
    if (any_placed_ && d_.regions.size() > 1) {
      for (std::size_t i = 0; i < d_.regions.size(); ++i) swatch(buffer_fill(i, "activation", 0), d_.regions[i].name);
    }
    if (any_placed_) {
      for (const char* kind : {"input", "activation", "output", "scratch"}) swatch(buffer_fill(0, kind, 0), kind);
    }
    if (any_placed_ &&
        std::any_of(d_.overlaps.begin(), d_.overlaps.end(), [](const Overlap& o) { return o.shared_bytes > 0; }))
      swatch("url(#overlap-hatch)", "output over its input");
    if (!row_bands_.empty()) swatch(kRowBandFill, "row band of the tiled stage");
    line(kCapColour, "6 3", "cap");
    line(kBoundColour, "2 3", "lower bound");
    swatch("#fff0b3", "peak step");
    return out;
  }

  Frame frame(double top, double height, double y_max) const {
    return {kLeft, top, plot_width_, height, step_width_, y_max};
  }

  std::string region_panel(std::size_t index, double top) const {
    const Region& r = d_.regions[index];
    const std::optional<std::uint64_t> cap =
        r.capacity ? r.capacity : (d_.regions.size() == 1 ? d_.cap_bytes : std::nullopt);
    const Frame f = frame(top, region_height_, scale_top(std::max(r.peak, r.lower_bound), cap));

    std::string out = fmt::format("<g class=\"region\" data-region=\"{}\">\n", model_text::xml(r.name));
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" font-weight=\"600\">{}</text>", num(kLeft),
                       num(top - 8), model_text::xml(panel_heading(r, cap)));
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#555\" text-anchor=\"end\">address</text>\n",
                       num(kLeft - 6), num(top - 8));
    out += background(f) + row_band_columns(f) + peak_bands(f) + row_band_labels(f) + y_axis(f);

    std::size_t drawn = 0;
    for (std::size_t i = 0; i < d_.buffers.size(); ++i) {
      const Buffer& b = d_.buffers[i];
      if (b.region != r.name || !b.offset) continue;
      out += buffer_rect(f, b, index, i);
      ++drawn;
    }
    for (const Overlap& o : d_.overlaps) out += overlap_rect(f, o, r.name);
    if (drawn == 0) {
      out +=
          fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">no buffers in this region</text>\n",
                      num(f.left + f.width / 2), num(f.top + f.height / 2));
    }
    std::vector<Line> lines = {{r.lower_bound, "lower bound " + tick_bytes(r.lower_bound), kBoundColour, "2 3"},
                               {r.peak, "peak " + tick_bytes(r.peak), kPlanColour, ""}};
    if (cap) lines.push_back({*cap, (r.capacity ? "capacity " : "cap ") + tick_bytes(*cap), kCapColour, "6 3"});
    out += horizontal_lines(f, lines) + x_axis(f) + "</g>\n";
    return out;
  }

  std::string panel_heading(const Region& r, std::optional<std::uint64_t> cap) const {
    std::string heading = fmt::format("region {}: peak {} ({} B), lower bound {} B, {}", r.name, human_bytes(r.peak),
                                      r.peak, r.lower_bound, r.status);
    if (cap) heading += fmt::format(", {} {}", r.capacity ? "capacity" : "cap", human_bytes(*cap));
    return heading;
  }

  std::string buffer_rect(const Frame& f, const Buffer& b, std::size_t region_index, std::size_t buffer_index) const {
    const double x = f.x(static_cast<double>(b.first_step));
    const double w = f.x(static_cast<double>(b.last_step + 1)) - x;
    const double y = f.y(static_cast<double>(*b.offset + b.size));
    const double h = std::max(1.0, f.y(static_cast<double>(*b.offset)) - y);  // a tiny buffer stays visible
    const std::string made_by =
        b.producer ? fmt::format("produced by {} ({})", *b.producer, b.op.value_or("?")) : std::string("graph input");
    const std::string tooltip =
        fmt::format("{}\n{} B ({}) at offset {} in {}\nsteps {} to {}, {}\n{}", b.tensor, b.size, human_bytes(b.size),
                    *b.offset, b.region, b.first_step, b.last_step, b.kind, made_by);
    std::string out = fmt::format(
        "<rect class=\"buffer kind-{}\" data-tensor=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
        "stroke=\"#ffffff\" stroke-width=\"0.6\"{}><title>{}</title></rect>\n",
        model_text::xml(b.kind), model_text::xml(b.tensor), num(x), num(y), num(w), num(h),
        buffer_fill(region_index, b.kind, buffer_index), b.kind == "scratch" ? " stroke-dasharray=\"3 2\"" : "",
        model_text::xml(tooltip));
    return out + buffer_label(b, x, y, w, h);
  }

  // The bytes an output lays over its input, hatched in the column of the step that does it.
  std::string overlap_rect(const Frame& f, const Overlap& o, const std::string& region) const {
    const Buffer *input = d_.find_buffer(o.input), *output = d_.find_buffer(o.output);
    if (o.shared_bytes == 0 || !input || !output || !input->offset || !output->offset || input->region != region)
      return "";
    const std::uint64_t start = std::max(*input->offset, *output->offset);
    const double x = f.x(static_cast<double>(o.step));
    const double w = f.x(static_cast<double>(o.step + 1)) - x;
    const double y = f.y(static_cast<double>(start + o.shared_bytes));
    const double h = std::max(1.0, f.y(static_cast<double>(start)) - y);
    const std::string tooltip =
        fmt::format("step {}: {} ({}) writes {} over {}\n{} B shared; the output starts {} B or more {} its input",
                    o.step, o.node, o.op, o.output, o.input, o.shared_bytes, o.distance, o.direction);
    return fmt::format(
        "<rect class=\"overlap\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#overlap-hatch)\" "
        "stroke=\"#d62728\" stroke-width=\"1\"><title>{}</title></rect>\n",
        num(x), num(y), num(w), num(h), model_text::xml(tooltip));
  }

  // The tensor's name inside its rectangle: across when it fits, shortened when most of it fits,
  // upright in a tall narrow rectangle, otherwise not at all (the tooltip still has it).
  static std::string buffer_label(const Buffer& b, double x, double y, double w, double h) {
    const char* ink = (b.kind == "input" || b.kind == "output") ? "#ffffff" : "#0b1f33";
    const auto fits = [](double room) { return static_cast<std::size_t>(std::max(0.0, (room - 6) / kCharWidth)); };
    const std::string attrs = fmt::format("font-size=\"{}\" fill=\"{}\" pointer-events=\"none\"", kLabelFont, ink);
    // A cut name must keep enough to be recognised: "conv37_o~", not "dep~".
    const std::size_t least = std::min<std::size_t>(b.tensor.size(), kLeastLabel);
    if (h >= kLabelFont + 3 && fits(w) >= least) {
      return fmt::format("<text x=\"{}\" y=\"{}\" {}>{}</text>\n", num(x + 3), num(y + std::min(h / 2 + 3.5, 12.0)),
                         attrs, model_text::xml(fit(b.tensor, fits(w))));
    }
    if (w >= kLabelFont + 1 && fits(h) >= least) {
      const double cx = x + w / 2 + 3.5, cy = y + h - 3;
      return fmt::format("<text x=\"{0}\" y=\"{1}\" transform=\"rotate(-90 {0} {1})\" {2}>{3}</text>\n", num(cx),
                         num(cy), attrs, model_text::xml(fit(b.tensor, fits(h))));
    }
    return "";
  }

  std::string live_panel(double top) const {
    std::uint64_t most_live = 0;
    for (const auto& s : d_.steps) most_live = std::max(most_live, s.live_bytes);
    const bool placed = d_.status != "infeasible";
    const std::uint64_t plan = placed ? d_.arena_bytes : d_.failure->minimum_bytes;
    std::uint64_t largest = std::max({most_live, plan, d_.lower_bound_bytes});
    if (placed) largest = std::max(largest, d_.greedy_by_size_bytes);
    const Frame f = frame(top, live_height_, scale_top(largest, d_.cap_bytes));

    std::string out = "<g class=\"live\">\n";
    const std::string heading =
        any_placed_ ? fmt::format("bytes live at each step{}: the least any plan of this schedule needs{}",
                                  d_.regions.size() > 1 ? " (all regions)" : "",
                                  d_.overlaps.empty() ? "" : " with these overlaps")
                    : "no placement: bytes live at each step against the cap, which the peak step exceeds";
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" font-weight=\"600\">{}</text>\n", num(kLeft),
                       num(top - 8), heading);
    out += background(f) + row_band_columns(f) + peak_bands(f) + y_axis(f);
    if (!d_.steps.empty()) {
      std::string path = fmt::format("M{},{}", num(f.x(0)), num(f.bottom()));
      for (const auto& s : d_.steps) {
        const double y = f.y(static_cast<double>(s.live_bytes));
        path += fmt::format(" L{},{} L{},{}", num(f.x(s.step)), num(y), num(f.x(s.step + 1)), num(y));
      }
      path += fmt::format(" L{},{} Z", num(f.x(d_.steps.size())), num(f.bottom()));
      out += fmt::format(
          "<path d=\"{}\" fill=\"#9ecae1\" fill-opacity=\"0.75\" stroke=\"#3182bd\" stroke-width=\"1\"/>\n", path);
    }
    if (!d_.peak_steps.empty()) {  // name the peak where it is, so the eye finds it at 200 steps too
      const Step& peak = d_.steps.at(d_.peak_steps.front());
      const double x = f.x(static_cast<double>(peak.step) + 0.5);
      const bool right_half = x > f.left + f.width / 2;
      out += fmt::format(
          "<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" font-size=\"10\" fill=\"#7a5b00\">peak {} at step {}</text>\n",
          num(x + (right_half ? -6 : 6)), num(f.top + 26), right_half ? "end" : "start", tick_bytes(peak.live_bytes),
          peak.step);
    }
    for (const auto& s : d_.steps) {  // an invisible column per step, for its tooltip
      out += fmt::format(
          "<rect class=\"step-hit\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#000\" fill-opacity=\"0\">"
          "<title>step {}: {} ({})\n{} B live ({}), scratch {} B</title></rect>\n",
          num(f.x(s.step)), num(f.top), num(f.step_width), num(f.height), s.step, model_text::xml(s.node),
          model_text::xml(s.op), s.live_bytes, human_bytes(s.live_bytes), s.scratch_bytes);
    }
    std::vector<Line> lines = {
        {d_.lower_bound_bytes, "lower bound " + tick_bytes(d_.lower_bound_bytes), kBoundColour, "2 3"},
        {plan, (placed ? "this plan " : "minimum ") + tick_bytes(plan), kPlanColour, ""}};
    if (placed) {
      lines.push_back(
          {d_.greedy_by_size_bytes, "greedy by size " + tick_bytes(d_.greedy_by_size_bytes), kGreedyColour, "8 3 2 3"});
    }
    if (d_.cap_bytes) lines.push_back({*d_.cap_bytes, "cap " + tick_bytes(*d_.cap_bytes), kCapColour, "6 3"});
    out += horizontal_lines(f, lines) + x_axis(f) + "</g>\n";
    return out;
  }

  // The steps of each row band of the tiled stage (docs/tiling.md): band i's nodes are named
  // "<node> [band i/N]"; in a grid of tiles its tiles' nodes and copies "... [band i/N, column
  // j/M]" and the copy of its tiles into the output "<node> [band i/N, columns]"; N and M from the
  // chosen level of the RAM against cost table.
  void find_row_bands() {
    const auto chosen = std::find_if(d_.ram_vs_cost.begin(), d_.ram_vs_cost.end(),
                                     [](const CostLevel& l) { return l.chosen && !l.nodes.empty(); });
    if (chosen == d_.ram_vs_cost.end()) return;
    stage_ = fmt::format("{} to {}", chosen->nodes.front(), chosen->nodes.back());
    if (!chosen->whole_rows) stage_ += fmt::format(" in {}x{} tiles", chosen->bands, chosen->columns);
    auto ends_with = [](const std::string& s, const std::string& end) {
      return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
    };
    for (std::uint64_t band = 1; band <= chosen->bands; ++band) {
      std::vector<std::string> tags;  // how the names of the band's steps end
      if (chosen->whole_rows) tags.push_back(fmt::format(" [band {}/{}]", band, chosen->bands));
      for (std::uint64_t column = 1; !chosen->whole_rows && column <= chosen->columns; ++column)
        tags.push_back(fmt::format(" [band {}/{}, column {}/{}]", band, chosen->bands, column, chosen->columns));
      if (!chosen->whole_rows) tags.push_back(fmt::format(" [band {}/{}, columns]", band, chosen->bands));
      RowBand span{band, chosen->bands, d_.steps.size(), 0};
      for (const Step& s : d_.steps)
        if (std::any_of(tags.begin(), tags.end(), [&](const std::string& t) { return ends_with(s.node, t); })) {
          span.first_step = std::min<std::uint64_t>(span.first_step, s.step);
          span.last_step = std::max(span.last_step, s.step);
        }
      if (span.first_step <= span.last_step) row_bands_.push_back(span);
    }
  }

  // A tinted column behind the steps of each row band: the eye sees the stage's activations exist
  // a band at a time.
  std::string row_band_columns(const Frame& f) const {
    std::string out;
    for (const RowBand& b : row_bands_) {
      const double x = f.x(static_cast<double>(b.first_step));
      const double w = f.x(static_cast<double>(b.last_step + 1)) - x;
      out += fmt::format(
          "<rect class=\"row-band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" fill-opacity=\"{}\">"
          "<title>row band {}/{} of the tiled stage {}: steps {} to {}</title></rect>\n",
          num(x), num(f.top), num(w), num(f.height), kRowBandFill, b.band % 2 ? "0.55" : "0.3", b.band, b.bands,
          model_text::xml(stage_), b.first_step, b.last_step);
    }
    return out;
  }

  // Each band named at the top of its column, where the name fits (drawn over the peak column).
  std::string row_band_labels(const Frame& f) const {
    std::string out;
    for (const RowBand& b : row_bands_) {
      const double x = f.x(static_cast<double>(b.first_step));
      const double w = f.x(static_cast<double>(b.last_step + 1)) - x;
      const std::string label = fmt::format("band {}/{}", b.band, b.bands);
      if (w >= static_cast<double>(label.size()) * kCharWidth + 4)
        out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#2f6b55\">{}</text>\n", num(x + 2),
                           num(f.top + 11), label);
    }
    return out;
  }

  static std::string background(const Frame& f) {
    return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f7f8fa\" stroke=\"#c9ced6\"/>\n",
                       num(f.left), num(f.top), num(f.width), num(f.height));
  }

  std::string peak_bands(const Frame& f) const {
    std::string out;
    for (const auto step : d_.peak_steps) {
      out += fmt::format("<rect class=\"peak\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fff0b3\"/>\n",
                         num(f.x(static_cast<double>(step))), num(f.top), num(f.step_width), num(f.height));
    }
    return out;
  }

  // The lines within the scale, labelled in the right margin (labels pushed apart so none
  // overlap); a line above the scale (a far-off cap) is named at the top instead.
  static std::string horizontal_lines(const Frame& f, std::vector<Line> lines) {
    std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) { return a.bytes > b.bytes; });
    std::string out;
    double last_label_y = f.top - 100;
    for (const auto& line : lines) {
      const bool on_scale = static_cast<double>(line.bytes) <= f.y_max;
      const double y = on_scale ? f.y(static_cast<double>(line.bytes)) : f.top;
      if (on_scale) {
        out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.5\"{}/>\n",
                           num(f.left), num(y), num(f.left + f.width + 4), num(y), line.colour,
                           *line.dash ? fmt::format(" stroke-dasharray=\"{}\"", line.dash) : "");
      }
      const double label_y = std::max(y + 4, last_label_y + 12);
      last_label_y = label_y;
      out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\">{}{}</text>\n", num(f.left + f.width + 8), num(label_y),
                         line.colour, model_text::xml(line.label), on_scale ? "" : " (above)");
    }
    return out;
  }

  // Address ticks and their grid lines, drawn before the buffers so that the grid stays behind them.
  static std::string y_axis(const Frame& f) {
    std::string out;
    const std::uint64_t step = tick_step(f.y_max, f.height > 200 ? 8 : 4);
    for (std::uint64_t bytes = 0; static_cast<double>(bytes) <= f.y_max; bytes += step) {
      const double y = f.y(static_cast<double>(bytes));
      out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e3e6ea\"/>", num(f.left), num(y),
                         num(f.left + f.width), num(y));
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#333\">{}</text>\n", num(f.left - 6),
                         num(y + 4), tick_bytes(bytes));
    }
    return out;
  }

  // Step numbers under the panel, every 1, 2, 5, 10, 20, 50... steps so that they never crowd;
  // with room to spare, each step's operator under its number.
  std::string x_axis(const Frame& f) const {
    std::uint64_t every = 1;
    for (const std::uint64_t candidate : {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}) {
      every = candidate;
      if (static_cast<double>(candidate) * f.step_width >= 30) break;
    }
    std::string out;
    for (std::uint64_t step = 0; step < d_.steps.size(); step += every) {
      const double x = f.x(static_cast<double>(step) + 0.5);
      out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#888\"/>", num(x), num(f.bottom()),
                         num(f.bottom() + 4));
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n", num(x),
                         num(f.bottom() + 15), step);
      const std::size_t room = static_cast<std::size_t>(f.step_width / kCharWidth) - 1;
      if (every == 1 && f.step_width >= 48) {
        out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#666\" font-size=\"10\">{}</text>\n",
                           num(x), num(f.bottom() + 27), model_text::xml(fit(d_.steps[step].op, room)));
      }
    }
    out +=
        fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#555\" font-size=\"10\">schedule step</text>\n",
                    num(f.left + f.width), num(f.bottom() + 40));
    return out;
  }

  struct RowBand {
    std::uint64_t band, bands, first_step, last_step;
  };

  const Document& d_;
  double step_width_, plot_width_, region_height_, live_height_;
  std::vector<RowBand> row_bands_;  // empty when no stage runs in row bands
  std::string stage_;               // the tiled stage, "<first node> to <last node>"
  bool any_placed_;
};

}  // namespace

std::string buffer_fill(std::size_t region_index, const std::string& kind, std::size_t buffer_index) {
  static constexpr int kHues[] = {211, 145, 28, 280, 350, 180};
  const int hue = kHues[region_index % std::size(kHues)];
  if (kind == "input") return fmt::format("hsl({},60%,38%)", hue);
  if (kind == "output") return fmt::format("hsl({},70%,27%)", hue);
  if (kind == "scratch") return fmt::format("hsl({},20%,82%)", hue);
  // Activations alternate two shades so that neighbours stay apart when they touch.
  return fmt::format("hsl({},55%,{}%)", hue, buffer_index % 2 ? 60 : 70);
}

std::string memory_map_svg(const Document& d) { return MemoryMap(d).draw(); }

std::string render_svg(const nlohmann::json& report) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + memory_map_svg(read_document(report));
}

}  // namespace tightfit::report
