// Code generation end to end: models/manifest.json through the `tightfit` program and the
// generated C++ built with the host compiler (and compiled for Cortex-M4). docs/numerics.md states
// the figures these tests pin.
//
// Run one model pair with `tightfit_codegen_tests "[models]" --model NAME` (ctest has one test per
// model); without --model the [models] test runs every pair of the manifest.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_support.hpp"
#include "util/npy.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace tightfit::codegen_test;

namespace {

std::string g_model;  // --model NAME: the [models] test runs only that pair

const fs::path kModels = TIGHTFIT_MODELS_DIR;
const std::string kTightfit = TIGHTFIT_BIN;

// ---------------------------------------------------------------------------------------------
// The stated bounds: largest |tightfit(QDQ file) - ONNX Runtime(QDQ file)| / output scale, in
// output LSBs, over the stored samples of each QDQ model. ONNX Runtime runs a QDQ file in float
// between DequantizeLinear and QuantizeLinear; tightfit runs it as integer kernels and equals the
// QOperator twin exactly, so the difference is ONNX Runtime's own float-vs-integer difference.
//   measured: what this test measures on the two stored samples (it must stay exactly this, so
//             the table and docs/numerics.md cannot go stale);
//   bound:    the stated bound: the larger of `measured` and the manifest's
//             qdq_vs_twin_max_lsb_extra (ONNX Runtime QDQ vs its QOp twin over 16 more seeded
//             random inputs), i.e. what a user should expect on other inputs too.
// Every QDQ model of the manifest must have a row; QOperator files and twins: 0, always.
struct Bound {
  const char* name;
  int measured;
  int bound;
};
constexpr Bound kBounds[] = {
    {"conv_s8", 0, 0},
    {"conv_u8", 0, 0},
    {"ops_s8", 0, 0},
    {"ops_u8", 0, 1},
    {"ops2_s8", 0, 0},
    {"ops2_u8", 0, 0},
    {"multi_io", 0, 0},
    {"conv_s8_extdata", 0, 0},
    {"conv_u8_symbatch", 0, 1},
    {"dscnn", 0, 0},
    {"resnet8", 1, 1},
    {"mobilenet_v1_025", 0, 0},
    {"autoencoder", 0, 2},
    {"digits_cnn", 0, 0},
    {"inception", 0, 0},
    {"unet", 0, 1},
    {"chain50", 0, 1},
    {"unit_sigmoid_s8", 0, 0},
    {"unit_sigmoid_u8", 0, 0},
    {"unit_tanh_s8", 0, 0},
    {"unit_tanh_u8", 0, 0},
    {"unit_leakyrelu_s8", 0, 0},
    {"unit_leakyrelu_u8", 0, 0},
    {"unit_softmax_s8", 0, 0},
    {"unit_softmax_u8", 0, 0},
    {"unit_add_s8", 0, 0},
    {"unit_add_u8", 0, 0},
    {"unit_mul_s8", 0, 0},
    {"unit_mul_u8", 0, 0},
    {"unit_concat_s8", 0, 0},
    {"unit_concat_u8", 0, 0},
    {"unit_avgpool_s8", 0, 0},
    {"unit_avgpool_u8", 0, 1},
    {"unit_gap_s8", 0, 0},
    {"unit_gap_u8", 0, 0},
    {"padfold_s8", 0, 0},
    {"padfold_u8", 0, 1},
    {"inception_shared", 0, 0},
    {"unet_shared", 0, 0},
    {"unet_convt", 0, 0},
};

const Bound* find_bound(const std::string& name) {
  for (const Bound& b : kBounds)
    if (name == b.name) return &b;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Helpers

const json& manifest() {
  static const json m = read_json(kModels / "manifest.json");
  return m;
}

const json& entry(const std::string& file) {
  for (const json& e : manifest()["models"])
    if (e["file"] == file) return e;
  FAIL("no manifest entry for " << file);
  throw 0;  // not reached
}

void write_bytes(const fs::path& p, const void* data, std::size_t n) {
  std::ofstream out(p, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
  REQUIRE(out.good());
}

std::vector<float> floats(const tightfit::npy::Array& a) {
  REQUIRE(a.dtype == "f4");
  std::vector<float> v(static_cast<std::size_t>(a.elements()));
  std::memcpy(v.data(), a.data.data(), v.size() * sizeof(float));
  return v;
}

std::vector<float> load_floats(const fs::path& p) { return floats(tightfit::npy::load(p.string())); }

std::vector<float> load_raw_floats(const fs::path& p) {
  const std::string bytes = read_text(p);
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

// `tightfit run` on the model file with the given inputs; the generated code and the host program
// stay in build_dir. Returns the outputs.
std::vector<std::vector<float>> tightfit_run(const json& e, const std::vector<std::string>& inputs,
                                             const fs::path& out_dir, const fs::path& build_dir,
                                             const std::string& extra = "") {
  std::string cmd = shell_quote(kTightfit) + " run " + shell_quote((kModels / e["file"].get<std::string>()).string());
  for (const std::string& in : inputs) cmd += " --input " + shell_quote((kModels / in).string());
  cmd += " --output-dir " + shell_quote(out_dir.string()) + " --build-dir " + shell_quote(build_dir.string());
  cmd += extra;
  const Result r = run(cmd, out_dir.string() + ".log");
  INFO(cmd << "\n" << r.output);
  REQUIRE(r.status == 0);
  std::vector<std::vector<float>> outs;
  for (std::size_t k = 0; k < e["outputs"].size(); ++k)
    outs.push_back(load_floats(out_dir / ("output_" + std::to_string(k) + ".npy")));
  return outs;
}

// Runs the program that `tightfit run` built (its harness reads input_K.f32 from a folder and
// writes output_K.f32 there) on further float inputs, without rebuilding it.
std::vector<std::vector<float>> rerun_program(const json& e, const fs::path& build_dir,
                                              const std::vector<std::vector<float>>& inputs, const fs::path& io_dir) {
  fs::create_directories(io_dir);
  for (std::size_t k = 0; k < inputs.size(); ++k)
    write_bytes(io_dir / ("input_" + std::to_string(k) + ".f32"), inputs[k].data(), inputs[k].size() * sizeof(float));
  const Result r =
      run(shell_quote((build_dir / "model").string()) + " " + shell_quote(io_dir.string()), io_dir / "run.log");
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::vector<std::vector<float>> outs;
  for (std::size_t k = 0; k < e["outputs"].size(); ++k)
    outs.push_back(load_raw_floats(io_dir / ("output_" + std::to_string(k) + ".f32")));
  return outs;
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Largest |a - b| in LSBs of the given scale (both sides are dequantized integers, so the quotient
// is an integer up to float rounding).
long max_lsb(const std::vector<float>& a, const std::vector<float>& b, double scale) {
  REQUIRE(a.size() == b.size());
  long worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::lround(std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])) / scale));
  return worst;
}

std::string stem(const std::string& file) { return file.substr(0, file.find('.')); }

// `tightfit compile` of a model file into dir, as NAME.
Result compile(const std::string& file, const fs::path& dir, const std::string& name, const std::string& extra = "") {
  std::string cmd = shell_quote(kTightfit) + " compile " + shell_quote((kModels / file).string()) + " -o " +
                    shell_quote(dir.string()) + " --name " + name + extra;
  return run(cmd, dir.string() + ".log");
}

// The runtime headers: $TIGHTFIT_SOURCE_DIR/runtime/include or $TIGHTFIT_RUNTIME_DIR if set (the
// overrides `tightfit run` honours, so that one modified copy of the runtime reaches every test),
// else the source tree's.
std::string runtime_include() {
  if (const char* root = std::getenv("TIGHTFIT_SOURCE_DIR"); root && *root)
    return (fs::path(root) / "runtime" / "include").string();
  const char* env = std::getenv("TIGHTFIT_RUNTIME_DIR");
  return env && *env ? env : TIGHTFIT_RUNTIME_INCLUDE;
}

std::string compile_flags() {
  return " -std=c++17 -Wall -Wextra -Werror -fno-exceptions -fno-rtti -ffp-contract=off -fno-fast-math -I" +
         shell_quote(runtime_include());
}

// Models whose generated code together calls every kernel that the code generator emits (checked
// below). `clamp` is not in the list: every Relu/Clip of the models is fused into its producer,
// so no model here makes the generator call it; tests/runtime compiles every kernel instantiation
// (clamp included) with the same flags.
const std::vector<std::string> kRepresentative = {"ops_s8.qop.onnx",  "ops_u8.qdq.onnx",   "ops2_s8.qdq.onnx",
                                                  "ops2_u8.qop.onnx", "conv_u8.qdq.onnx",  "dscnn.qop.onnx",
                                                  "unet.qdq.onnx",    "multi_io.qop.onnx", "padfold_u8.qop.onnx"};
const std::vector<std::string> kEveryKernel = {"conv",
                                               "fully_connected",
                                               "max_pool",
                                               "average_pool",
                                               "global_average_pool",
                                               "add",
                                               "mul",
                                               "lookup",
                                               "concat",
                                               "softmax",
                                               "pad",
                                               "transpose",
                                               "resize_nearest",
                                               "quantize_linear",
                                               "dequantize_linear"};

}  // namespace

// =============================================================================================
// 1. Every model file, every sample.

TEST_CASE(
    "every sample: QOp output equals ONNX Runtime's bit for bit; QDQ output equals its QOp twin's and is within the "
    "stated LSB bound of ONNX Runtime's float path",
    "[models]") {
  std::set<std::string> names;
  for (const json& e : manifest()["models"]) names.insert(e["name"].get<std::string>());
  if (!g_model.empty()) {
    REQUIRE(names.count(g_model) == 1);
    names = {g_model};
  }
  for (const std::string& name : names) {
    const json* qdq = nullptr;
    const json* qop = nullptr;
    for (const json& e : manifest()["models"])
      if (e["name"] == name) (e["form"] == "qdq" ? qdq : qop) = &e;
    INFO("model " << name);
    REQUIRE(qdq != nullptr);
    REQUIRE(qop != nullptr);
    REQUIRE((*qdq)["twin"] == (*qop)["file"]);
    const Bound* bound = find_bound(name);
    INFO("the bounds table in codegen_test.cpp (and docs/numerics.md) needs a row for every QDQ model");
    REQUIRE(bound != nullptr);

    const fs::path dir = scratch("models/" + name);
    const std::vector<double> scales = (*qdq)["output_scales"].get<std::vector<double>>();
    long qdq_vs_ort = 0, qop_vs_ort = 0, qdq_vs_twin = 0;
    for (std::size_t s = 0; s < (*qop)["samples"].size(); ++s) {
      const json& qop_sample = (*qop)["samples"][s];
      const json& qdq_sample = (*qdq)["samples"][s];
      REQUIRE(qop_sample["inputs"] == qdq_sample["inputs"]);
      const std::vector<std::string> inputs = qop_sample["inputs"].get<std::vector<std::string>>();
      // Sample 0 through `tightfit run` (compile, build, run); later samples through the program it
      // built, so that each model file is built once.
      std::vector<std::vector<float>> got_qop, got_qdq;
      if (s == 0) {
        got_qop = tightfit_run(*qop, inputs, dir / "qop.out0", dir / "qop.build");
        got_qdq = tightfit_run(*qdq, inputs, dir / "qdq.out0", dir / "qdq.build");
      } else {
        std::vector<std::vector<float>> x;
        for (const std::string& in : inputs) x.push_back(load_floats(kModels / in));
        got_qop = rerun_program(*qop, dir / "qop.build", x, dir / ("qop.out" + std::to_string(s)));
        got_qdq = rerun_program(*qdq, dir / "qdq.build", x, dir / ("qdq.out" + std::to_string(s)));
      }
      for (std::size_t k = 0; k < scales.size(); ++k) {
        INFO("sample " << s << ", output " << k);
        const std::vector<float> ort_qop = load_floats(kModels / qop_sample["expected"][k].get<std::string>());
        const std::vector<float> ort_qdq = load_floats(kModels / qdq_sample["expected"][k].get<std::string>());
        INFO("QOp vs ONNX Runtime: " << max_lsb(got_qop[k], ort_qop, scales[k])
                                     << " LSB; QDQ vs twin: " << max_lsb(got_qdq[k], got_qop[k], scales[k]) << " LSB");
        CHECK(bitwise_equal(got_qop[k], ort_qop));
        CHECK(bitwise_equal(got_qdq[k], got_qop[k]));
        qdq_vs_ort = std::max(qdq_vs_ort, max_lsb(got_qdq[k], ort_qdq, scales[k]));
        qop_vs_ort = std::max(qop_vs_ort, max_lsb(got_qop[k], ort_qop, scales[k]));
        qdq_vs_twin = std::max(qdq_vs_twin, max_lsb(got_qdq[k], got_qop[k], scales[k]));
      }
    }
    INFO("QDQ vs ONNX Runtime's float path: " << qdq_vs_ort << " LSB measured; table: measured " << bound->measured
                                              << ", bound " << bound->bound);
    std::printf(
        "%s: QOp vs ONNX Runtime %ld LSB, QDQ vs QOp twin %ld LSB, QDQ vs ONNX Runtime's float path %ld LSB "
        "(stated bound %d)\n",
        name.c_str(), qop_vs_ort, qdq_vs_twin, qdq_vs_ort, bound->bound);
    CHECK(qdq_vs_ort <= bound->bound);
    CHECK(qdq_vs_ort == bound->measured);
    // The stated bound covers ONNX Runtime's own QDQ-vs-QOp figures recorded in the manifest.
    CHECK(bound->bound >= (*qdq)["qdq_vs_twin_max_lsb"].get<int>());
    CHECK(bound->bound >= (*qdq)["qdq_vs_twin_max_lsb_extra"].get<int>());
  }
}

// =============================================================================================
// 2. digits_cnn over its whole test set.

TEST_CASE("digits_cnn: accuracy of the generated code over the whole test set equals ONNX Runtime's", "[digits]") {
  const fs::path dir = scratch("digits");
  const tightfit::npy::Array x = tightfit::npy::load((kModels / "digits_cnn.test_x.npy").string());
  const tightfit::npy::Array y = tightfit::npy::load((kModels / "digits_cnn.test_y.npy").string());
  REQUIRE(x.dtype == "f4");
  REQUIRE(y.dtype == "i8");
  const std::size_t count = static_cast<std::size_t>(y.elements());
  REQUIRE(x.shape.size() == 4);
  REQUIRE(static_cast<std::size_t>(x.shape[0]) == count);
  const std::size_t image = static_cast<std::size_t>(x.elements()) / count;
  const std::vector<float> pixels = floats(x);
  std::vector<std::int64_t> labels(count);
  std::memcpy(labels.data(), y.data.data(), count * sizeof(std::int64_t));

  std::map<std::string, std::vector<float>> all_logits;  // per form, every image's logits in a row
  for (const char* file : {"digits_cnn.qop.onnx", "digits_cnn.qdq.onnx"}) {
    INFO(file);
    const json& e = entry(file);
    REQUIRE(e["test_set"]["count"].get<std::size_t>() == count);
    const std::string form = e["form"].get<std::string>();
    tightfit_run(e, e["samples"][0]["inputs"].get<std::vector<std::string>>(), dir / (form + ".out"),
                 dir / (form + ".build"));
    std::size_t correct = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const std::vector<float> in(pixels.begin() + static_cast<std::ptrdiff_t>(i * image),
                                  pixels.begin() + static_cast<std::ptrdiff_t>((i + 1) * image));
      const std::vector<float> logits = rerun_program(e, dir / (form + ".build"), {in}, dir / (form + ".io"))[0];
      all_logits[form].insert(all_logits[form].end(), logits.begin(), logits.end());
      const auto best =
          std::max_element(logits.begin(), logits.end()) - logits.begin();  // first maximum, as numpy's argmax
      correct += best == labels[i];
    }
    const double accuracy = static_cast<double>(correct) / static_cast<double>(count);
    INFO("tightfit: " << correct << " / " << count << " correct; ONNX Runtime: " << e["test_correct"] << " ("
                      << e["test_accuracy"] << ")");
    CHECK(correct == e["test_correct"].get<std::size_t>());
    CHECK(std::fabs(accuracy - e["test_accuracy"].get<double>()) < 1e-4);  // the manifest rounds to 4 digits
  }
  // Over every test image, not only the two stored samples, the QDQ file computes exactly what its
  // QOperator twin computes (ONNX Runtime's QDQ-vs-QOp figure over the test set is 0 LSB too:
  // qdq_vs_twin_max_lsb_test_set).
  CHECK(entry("digits_cnn.qdq.onnx")["qdq_vs_twin_max_lsb_test_set"].get<int>() == 0);
  CHECK(bitwise_equal(all_logits["qdq"], all_logits["qop"]));
}

// =============================================================================================
// 3. Warning-free builds of the generated code.

TEST_CASE(
    "generated code compiles without warnings with g++ and arm-none-eabi-g++ (Cortex-M4F), and the models compiled "
    "call every kernel",
    "[compile]") {
  const fs::path dir = scratch("compile");
  std::set<std::string> called;
  for (const std::string& file : kRepresentative) {
    INFO(file);
    const std::string name = stem(file) + "_" + entry(file)["form"].get<std::string>();
    const fs::path out = dir / name;
    const Result c = compile(file, out, name, " --max-ram 1M");
    INFO(c.output);
    REQUIRE(c.status == 0);
    const std::string source = read_text(out / (name + ".cpp"));
    const std::regex call(R"(tightfit::([a-z_]+)(<|\())");
    for (auto it = std::sregex_iterator(source.begin(), source.end(), call); it != std::sregex_iterator(); ++it)
      called.insert((*it)[1].str());

    const std::string src = shell_quote((out / (name + ".cpp")).string());
    const Result host = run(std::string(TIGHTFIT_HOST_CXX) + compile_flags() + " -O2 -c " + src + " -o " +
                                shell_quote((out / "host.o").string()),
                            out.string() + ".host.log");
    INFO("g++: " << host.output);
    CHECK(host.status == 0);
    CHECK(host.output.empty());  // not a single diagnostic

    const std::string arm = TIGHTFIT_ARM_GXX;
    if (arm.empty()) {
      WARN("arm-none-eabi-g++ not found: the Cortex-M4 compile is skipped");
      continue;
    }
    const Result target =
        run(arm + compile_flags() + " -Os -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -c " + src +
                " -o " + shell_quote((out / "m4.o").string()),
            out.string() + ".m4.log");
    INFO("arm-none-eabi-g++: " << target.output);
    CHECK(target.status == 0);
    CHECK(target.output.empty());
  }
  for (const std::string& k : kEveryKernel) {
    INFO("kernel " << k << " is called by none of the representative models");
    CHECK(called.count(k) == 1);
  }
}

// =============================================================================================
// 4. The arena the report states is the arena the code declares.

namespace {
std::uint64_t symbol_size(const fs::path& object, const std::string& symbol_part, const fs::path& log) {
  const Result r = run(std::string(TIGHTFIT_NM) + " --size-sort -S -C " + shell_quote(object.string()), log);
  REQUIRE(r.status == 0);
  std::istringstream lines(r.output);
  std::string line;
  std::uint64_t size = 0;
  int found = 0;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    std::string address, hex, type, sym;
    f >> address >> hex >> type;
    std::getline(f, sym);
    if (sym.find(symbol_part) == std::string::npos) continue;
    size = std::stoull(hex, nullptr, 16);
    ++found;
  }
  INFO(r.output);
  REQUIRE(found == 1);
  return size;
}
}  // namespace

TEST_CASE("the arena that the report states is the arena the generated code declares (kArenaBytes and arena_storage)",
          "[arena]") {
  const fs::path dir = scratch("arena");
  for (const std::string file : {"dscnn.qop.onnx", "ops_s8.qdq.onnx", "multi_io.qdq.onnx", "resnet8.qop.onnx"}) {
    for (const std::string& extra : {std::string(""), std::string(" --io-outside")}) {
      INFO(file << extra);
      const std::string name = stem(file) + (extra.empty() ? "_in" : "_out");
      const fs::path out = dir / name;
      const Result c = compile(file, out, name, " --max-ram 1M" + extra);
      INFO(c.output);
      REQUIRE(c.status == 0);
      const json report = json::parse(read_text(out / (name + ".report.json")));
      const std::uint64_t stated = report["arena_bytes"].get<std::uint64_t>();
      REQUIRE(stated > 0);

      std::smatch m;
      const std::string header = read_text(out / (name + ".hpp"));
      REQUIRE(std::regex_search(header, m, std::regex(R"(constexpr std::size_t kArenaBytes = (\d+);)")));
      CHECK(std::stoull(m[1].str()) == stated);

      const fs::path object = out / "host.o";
      const Result b = run(std::string(TIGHTFIT_HOST_CXX) + compile_flags() + " -O0 -c " +
                               shell_quote((out / (name + ".cpp")).string()) + " -o " + shell_quote(object.string()),
                           out.string() + ".build.log");
      INFO(b.output);
      REQUIRE(b.status == 0);
      CHECK(symbol_size(object, name + "::arena_storage", out.string() + ".nm.log") == stated);

      // And a program that uses the header sees the same size at compile time.
      const fs::path check = out / "static_check.cpp";
      std::ofstream(check) << "#include \"" << name << ".hpp\"\nstatic_assert(" << name << "::kArenaBytes == " << stated
                           << "u, \"kArenaBytes\");\nint main() { return 0; }\n";
      const Result s = run(std::string(TIGHTFIT_HOST_CXX) + compile_flags() + " -I" + shell_quote(out.string()) +
                               " -fsyntax-only " + shell_quote(check.string()),
                           out.string() + ".static.log");
      INFO(s.output);
      CHECK(s.status == 0);
    }
  }
}

// =============================================================================================
// 5. No heap.

namespace {
// A host program around the generated code in which malloc, calloc, realloc, free and every
// operator new/delete fail (the process exits with status 99 naming the call) while the model
// runs; outside that window they forward to glibc so that start-up and stdio work. It reads the
// float input from argv[1] and writes the float output to argv[2]; with a third argument it
// allocates while armed, to show that the trap works.
std::string trap_program(const std::string& name) {
  return R"(#include ")" + name + R"(.hpp"
#include <cstdio>
#include <cstdlib>
#include <new>
#include <unistd.h>

extern "C" void* __libc_malloc(std::size_t);
extern "C" void* __libc_calloc(std::size_t, std::size_t);
extern "C" void* __libc_realloc(void*, std::size_t);
extern "C" void __libc_free(void*);

static volatile bool armed = false;
[[noreturn]] static void trap(const char* what) {
  (void)!write(2, what, __builtin_strlen(what));
  _exit(99);
}
extern "C" void* malloc(std::size_t n) { if (armed) trap("malloc\n"); return __libc_malloc(n); }
extern "C" void* calloc(std::size_t n, std::size_t s) { if (armed) trap("calloc\n"); return __libc_calloc(n, s); }
extern "C" void* realloc(void* p, std::size_t n) { if (armed) trap("realloc\n"); return __libc_realloc(p, n); }
extern "C" void free(void* p) { if (armed) trap("free\n"); __libc_free(p); }
void* operator new(std::size_t n) { if (armed) trap("operator new\n"); return __libc_malloc(n ? n : 1); }
void* operator new[](std::size_t n) { if (armed) trap("operator new[]\n"); return __libc_malloc(n ? n : 1); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { if (armed) trap("operator new\n"); return __libc_malloc(n ? n : 1); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { if (armed) trap("operator new[]\n"); return __libc_malloc(n ? n : 1); }
void operator delete(void* p) noexcept { if (armed) trap("operator delete\n"); __libc_free(p); }
void operator delete[](void* p) noexcept { if (armed) trap("operator delete[]\n"); __libc_free(p); }
void operator delete(void* p, std::size_t) noexcept { if (armed) trap("operator delete\n"); __libc_free(p); }
void operator delete[](void* p, std::size_t) noexcept { if (armed) trap("operator delete[]\n"); __libc_free(p); }

static float input[)" +
         name + R"(::kInput0.elements];
static float output[)" +
         name + R"(::kOutput0.elements];
void* volatile sink;

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  std::FILE* f = std::fopen(argv[1], "rb");
  if (!f || std::fread(input, sizeof input, 1, f) != 1) return 3;
  std::fclose(f);
  armed = true;
  if (argc > 3) sink = std::malloc(16);
  if (argc > 4) sink = ::operator new(16);
  )" + name +
         R"(::set_input_0(input);
  )" + name +
         R"(::run();
  )" + name +
         R"(::get_output_0(output);
  armed = false;
  f = std::fopen(argv[2], "wb");
  if (!f || std::fwrite(output, sizeof output, 1, f) != 1) return 4;
  return std::fclose(f) == 0 ? 0 : 5;
}
)";
}
}  // namespace

TEST_CASE(
    "the generated code allocates nothing: no heap symbol in its object file, and it runs with malloc and operator new "
    "made to fail",
    "[heap]") {
  const fs::path dir = scratch("heap");
  // Undefined symbols of the object files: none may be an allocation function.
  const std::regex heap(
      R"(^(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|memalign|valloc|pvalloc|_Znw.*|_Zna.*|_Zdl.*|_Zda.*)$)");
  for (const std::string& file : kRepresentative) {
    INFO(file);
    const std::string name = stem(file) + "_" + entry(file)["form"].get<std::string>();
    const fs::path out = dir / name;
    const Result c = compile(file, out, name, " --max-ram 1M");
    REQUIRE(c.status == 0);
    for (const char* opt : {"-O0", "-O2"}) {
      const fs::path object = out / (std::string("model") + opt + ".o");
      const Result b = run(std::string(TIGHTFIT_HOST_CXX) + compile_flags() + " " + opt + " -c " +
                               shell_quote((out / (name + ".cpp")).string()) + " -o " + shell_quote(object.string()),
                           out.string() + ".build.log");
      INFO(b.output);
      REQUIRE(b.status == 0);
      const Result nm = run(std::string(TIGHTFIT_NM) + " -u " + shell_quote(object.string()), out.string() + ".nm.log");
      REQUIRE(nm.status == 0);
      std::istringstream lines(nm.output);
      std::string line;
      while (std::getline(lines, line)) {
        const std::string sym = line.substr(line.find_last_of(' ') + 1);
        INFO(opt << ": undefined symbol " << sym);
        CHECK_FALSE(std::regex_match(sym, heap));
      }
    }
  }

  // One model run with the allocation functions trapped: ops_s8's QOp file (every kernel family
  // but depthwise conv and average pool; one float input, one float output).
  const json& e = entry("ops_s8.qop.onnx");
  const std::string name = "ops_s8_trap";
  const fs::path out = dir / name;
  REQUIRE(compile("ops_s8.qop.onnx", out, name, " --max-ram 1M").status == 0);
  std::ofstream(out / "trap.cpp") << trap_program(name);
  const fs::path program = out / "trap";
  const Result b = run(std::string(TIGHTFIT_HOST_CXX) + compile_flags() + " -O2 -I" + shell_quote(out.string()) + " " +
                           shell_quote((out / "trap.cpp").string()) + " " +
                           shell_quote((out / (name + ".cpp")).string()) + " -o " + shell_quote(program.string()),
                       out.string() + ".build.log");
  INFO(b.output);
  REQUIRE(b.status == 0);
  const std::vector<float> x = load_floats(kModels / e["samples"][0]["inputs"][0].get<std::string>());
  write_bytes(out / "input.f32", x.data(), x.size() * sizeof(float));
  const std::string base = shell_quote(program.string()) + " " + shell_quote((out / "input.f32").string()) + " " +
                           shell_quote((out / "output.f32").string());
  const Result ok = run(base, out / "run.log");
  INFO(ok.output);
  REQUIRE(ok.status == 0);
  CHECK(bitwise_equal(load_raw_floats(out / "output.f32"),
                      load_floats(kModels / e["samples"][0]["expected"][0].get<std::string>())));
  // The trap is live: an allocation while armed ends the program.
  const Result m = run(base + " malloc", out / "trap_malloc.log");
  CHECK(m.status == 99);
  CHECK(m.output == "malloc\n");
}

// =============================================================================================
// 6. Determinism.

namespace {
// Compiles each model twice into two folders and compares every file whose name passes `keep`.
void check_compiles_twice_identical(const std::string& what, bool (*keep)(const std::string&)) {
  const fs::path dir = scratch("deterministic_" + what);
  for (const std::string file : {"ops_s8.qdq.onnx", "dscnn.qop.onnx", "inception.qdq.onnx", "unet.qop.onnx"}) {
    INFO(file);
    const std::string name = stem(file);
    std::vector<std::map<std::string, std::string>> runs;
    for (const char* which : {"a", "b"}) {
      const fs::path out = dir / (name + "." + which);
      const Result c = compile(file, out, name, " --max-ram 1M");
      INFO(c.output);
      REQUIRE(c.status == 0);
      std::map<std::string, std::string> files;
      for (const auto& f : fs::directory_iterator(out))
        if (keep(f.path().filename().string())) files[f.path().filename().string()] = read_text(f.path());
      runs.push_back(files);
    }
    REQUIRE(!runs[0].empty());
    REQUIRE(runs[0].size() == runs[1].size());
    for (const auto& [n, text] : runs[0]) {
      INFO(n << " differs between two compiles (diff " << (dir / (name + ".a") / n).string() << " "
             << (dir / (name + ".b") / n).string() << ")");
      REQUIRE(runs[1].count(n) == 1);
      CHECK(runs[1].at(n) == text);
    }
  }
}

bool is_code(const std::string& f) {
  return f.size() > 4 && (f.substr(f.size() - 4) == ".hpp" || f.substr(f.size() - 4) == ".cpp");
}
bool is_not_code(const std::string& f) { return !is_code(f); }
}  // namespace

TEST_CASE("tightfit compile run twice gives byte-identical generated code (NAME.hpp, NAME.cpp)", "[deterministic]") {
  check_compiles_twice_identical("code", is_code);
}

TEST_CASE("tightfit compile run twice gives byte-identical reports and memory map (NAME.report.*, NAME.memory.svg)",
          "[deterministic_reports]") {
  check_compiles_twice_identical("reports", is_not_code);
}

// =============================================================================================
// 7. Failed compiles leave nothing; --io-outside.

TEST_CASE("a compile that cannot fit exits with status 3, one line naming the minimum, and leaves no new file",
          "[failure]") {
  const fs::path dir = scratch("failure");
  // Into a folder that does not exist yet: it must not appear (or stay empty).
  const fs::path fresh = dir / "fresh";
  const Result r = compile("dscnn.qop.onnx", fresh, "dscnn", " --max-ram 1K");
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  CHECK(std::regex_search(r.output, std::regex(R"(minimum[^\n]*\d+ bytes)")));
  CHECK((!fs::exists(fresh) || fs::is_empty(fresh)));

  // Into a folder that holds a previous compile: every file keeps its bytes, nothing is added.
  const fs::path old = dir / "old";
  REQUIRE(compile("ops_s8.qop.onnx", old, "dscnn", " --max-ram 64K").status == 0);
  std::map<std::string, std::string> before;
  for (const auto& f : fs::directory_iterator(old)) before[f.path().filename().string()] = read_text(f.path());
  const Result again = compile("dscnn.qop.onnx", old, "dscnn", " --max-ram 1K");
  CHECK(again.status == 3);
  std::map<std::string, std::string> after;
  for (const auto& f : fs::directory_iterator(old)) after[f.path().filename().string()] = read_text(f.path());
  CHECK(after.size() == before.size());
  CHECK(after == before);
}

TEST_CASE(
    "the cap takes the fewest extra MACs that fit: ResNet-8 one byte under its untiled arena runs untiled with "
    "byte-aligned buffers; with --alignment 4, at the cheapest level of its table that fits",
    "[cap_choice]") {
  const fs::path dir = scratch("cap_choice");
  constexpr std::uint64_t kCap = 33311;  // ResNet-8's untiled arena, 4-byte aligned, is 33,312 B
  REQUIRE(compile("resnet8.qop.onnx", dir / "bytes", "m", " --max-ram " + std::to_string(kCap)).status == 0);
  const json bytes = read_json(dir / "bytes" / "m.report.json");
  INFO(bytes["ram_vs_cost"].dump());
  CHECK(bytes["alignment"]["bytes"] == 1);
  CHECK(bytes["alignment"]["source"] == "cap");
  CHECK(bytes["arena_bytes"].get<std::uint64_t>() <= kCap);
  const json& last = bytes["ram_vs_cost"].back();
  CHECK(last["technique"] == "byte_aligned");
  CHECK(last["chosen"] == true);
  CHECK(last["extra_macs"] == 0);
  CHECK(last["stage"].is_null());
  CHECK(bytes["alignment"]["aligned_arena_bytes"].get<std::uint64_t>() <= kCap);  // aligned fit, with more MACs

  REQUIRE(compile("resnet8.qop.onnx", dir / "aligned", "m", " --max-ram " + std::to_string(kCap) + " --alignment 4")
              .status == 0);
  const json aligned = read_json(dir / "aligned" / "m.report.json");
  INFO(aligned["ram_vs_cost"].dump());
  CHECK(aligned["alignment"]["source"] == "flag");
  std::int64_t cheapest = INT64_MAX, chosen = -1;
  for (const json& level : aligned["ram_vs_cost"]) {
    if (level["technique"] != "tiling") continue;
    if (level["arena_bytes"].get<std::uint64_t>() <= kCap)
      cheapest = std::min(cheapest, level["extra_macs"].get<std::int64_t>());
    if (level["chosen"] == true) chosen = level["extra_macs"].get<std::int64_t>();
  }
  REQUIRE(cheapest != INT64_MAX);
  CHECK(chosen == cheapest);
  // The aligned plan the byte-aligned report names is this one.
  CHECK(aligned["arena_bytes"] == bytes["alignment"]["aligned_arena_bytes"]);
}

TEST_CASE("--io-outside: the compiled model runs with caller-owned inputs and outputs and gives the same outputs",
          "[io_outside]") {
  const fs::path dir = scratch("io_outside");
  for (const std::string file : {"multi_io.qop.onnx", "ops_u8.qdq.onnx"}) {
    INFO(file);
    const json& e = entry(file);
    const std::string name = stem(file);
    const std::vector<std::string> inputs = e["samples"][0]["inputs"].get<std::vector<std::string>>();
    const auto inside =
        tightfit_run(e, inputs, dir / (name + ".in.out"), dir / (name + ".in.build"), " --name " + name);
    const auto outside = tightfit_run(e, inputs, dir / (name + ".outside.out"), dir / (name + ".outside.build"),
                                      " --name " + name + " --io-outside");
    REQUIRE(inside.size() == outside.size());
    for (std::size_t k = 0; k < inside.size(); ++k) CHECK(bitwise_equal(inside[k], outside[k]));
    // The header says who owns the buffers, and run() takes them.
    const std::string header = read_text(dir / (name + ".outside.build") / (name + ".hpp"));
    CHECK(header.find("the caller owns its buffer") != std::string::npos);
    CHECK((header.find("const std::int8_t* input_0") != std::string::npos ||
           header.find("const std::uint8_t* input_0") != std::string::npos));
    const json report = json::parse(read_text(dir / (name + ".outside.build") / (name + ".report.json")));
    INFO(report.dump().substr(0, 400));
    const json in_report = json::parse(read_text(dir / (name + ".in.build") / (name + ".report.json")));
    CHECK(report.dump().find("\"io_in_arena\":false") != std::string::npos);
    CHECK(in_report.dump().find("\"io_in_arena\":true") != std::string::npos);
  }
}

TEST_CASE(
    "two regions chosen together: inception runs in a 5 KiB DTCM beside a 20.5 KiB SRAM, a split that filling "
    "DTCM busiest-first cannot make, and gives the one-arena outputs",
    "[regions]") {
  const fs::path dir = scratch("regions");
  const json& e = entry("inception.qop.onnx");
  const std::vector<std::string> inputs = e["samples"][0]["inputs"].get<std::vector<std::string>>();
  const fs::path memory = dir / "regions.json";
  {
    std::ofstream out(memory);
    out << R"({"regions": [{"name": "DTCM", "size": 5120, "section": ".dtcm_bss"},)"
        << R"( {"name": "SRAM", "size": 20992, "section": ".sram_bss"}]})";
  }
  const auto one = tightfit_run(e, inputs, dir / "one.out", dir / "one.build", " --name inception");
  const auto two = tightfit_run(e, inputs, dir / "two.out", dir / "two.build",
                                " --name inception --memory " + shell_quote(memory.string()));
  REQUIRE(one.size() == two.size());
  for (std::size_t k = 0; k < one.size(); ++k) CHECK(bitwise_equal(one[k], two[k]));
  const json report = json::parse(read_text(dir / "two.build" / "inception.report.json"));
  INFO(report["regions"].dump());
  REQUIRE(report["regions"].size() == 2);
  std::uint64_t total = 0;
  for (const json& region : report["regions"]) {
    CHECK(region["peak"].get<std::uint64_t>() <= region["capacity"].get<std::uint64_t>());
    CHECK(region["peak"].get<std::uint64_t>() > 0);
    total += region["peak"].get<std::uint64_t>();
  }
  CHECK(total == report["arena_bytes"].get<std::uint64_t>());
  const std::string source = read_text(dir / "two.build" / "inception.cpp");
  CHECK(source.find(".dtcm_bss") != std::string::npos);
  CHECK(source.find(".sram_bss") != std::string::npos);
}

TEST_CASE(
    "slow regions: a PSRAM with a cost per byte is used untiled when its traffic costs less than tiling "
    "into the SRAM, and left empty with the SRAM tiled when it costs more (docs/planner.md, Slow regions)",
    "[regions]") {
  const fs::path dir = scratch("slow_regions");
  // MobileNetV1-0.25 with its input outside: 36,880 B untiled, 22,288 B in row bands at +1.1 % MACs under
  // 27,648 B (docs/tiling.md); beside it a PSRAM that holds everything.
  const auto compile_with = [&](const std::string& name, const std::string& cost) {
    const fs::path memory = dir / (name + ".json");
    {
      std::ofstream out(memory);
      out << R"({"regions": [{"name": "SRAM", "size": 27648},)"
          << R"( {"name": "PSRAM", "size": "1M", "section": ".ext_ram.bss", "cycles_per_byte": )" << cost << "}]}";
    }
    const Result r =
        compile("mobilenet_v1_025.qop.onnx", dir / name, "m", " --io-outside --memory " + shell_quote(memory.string()));
    INFO(r.output);
    REQUIRE(r.status == 0);
    return read_json(dir / name / "m.report.json");
  };
  // Bandwidth nearly free: the untiled plan, its overflow in the PSRAM.
  const json cheap = compile_with("cheap", "0.001");
  INFO(cheap["slow_regions"].dump());
  REQUIRE(cheap["slow_regions"].is_object());
  CHECK(cheap["slow_regions"]["kept"] == "with_slow");
  CHECK(cheap["regions"][1]["peak"].get<std::uint64_t>() > 0);
  CHECK(cheap["slow_regions"]["with_slow"]["macs"].get<std::int64_t>() <
        cheap["slow_regions"]["free_only"]["macs"].get<std::int64_t>());
  // 100 cycles a byte: the SRAM alone, tiled, and nothing in the PSRAM.
  const json dear = compile_with("dear", "100");
  INFO(dear["slow_regions"].dump());
  REQUIRE(dear["slow_regions"].is_object());
  CHECK(dear["slow_regions"]["kept"] == "free_only");
  CHECK(dear["regions"][1]["peak"] == 0);
  CHECK(dear["regions"][0]["peak"].get<std::uint64_t>() <= 27648);
  CHECK(dear["regions"][1]["capacity"] == 1048576);  // the memory file's, not the 0 it was planned with
  const auto cycles = [](const json& p) {
    return p["instructions"].get<std::int64_t>() + p["slow_cycles"].get<std::int64_t>();
  };
  CHECK(cycles(dear["slow_regions"]["free_only"]) < cycles(dear["slow_regions"]["with_slow"]));
  CHECK(cycles(cheap["slow_regions"]["with_slow"]) <= cycles(cheap["slow_regions"]["free_only"]));
  CHECK(read_text(dir / "dear" / "m.report.txt").find("slow regions: kept the plan without them") != std::string::npos);
  // No cost: an ordinary second region, nothing weighed.
  const json free = compile_with("free", "0");
  CHECK(free["slow_regions"].is_null());
  // A cost that is not a number from 0 up: one line naming the file and the region.
  const fs::path bad = dir / "bad.json";
  {
    std::ofstream out(bad);
    out << R"({"regions": [{"name": "PSRAM", "size": "1M", "cycles_per_byte": -1}]})";
  }
  const Result refused =
      compile("mobilenet_v1_025.qop.onnx", dir / "bad", "m", " --memory " + shell_quote(bad.string()));
  INFO(refused.output);
  CHECK(refused.status == 1);
  CHECK(refused.output.find("bad.json: region 'PSRAM': \"cycles_per_byte\"") != std::string::npos);
}

// =============================================================================================
// Float islands: models/layernorm_head.py's LayerNorm MLP head, quantized as ORT's quantize_static
// does, leaves ReduceMean, Sub, Pow, Sqrt and Div float between DequantizeLinear and QuantizeLinear.
// tightfit runs them as float32 kernels; the outputs must stay within the stated bound of ONNX
// Runtime's float path (optimizations disabled; 'all' gives the same outputs on this model) on both
// samples, measured exactly (docs/numerics.md, "Float islands"), and the report marks the steps.
TEST_CASE("float islands: the LayerNorm head runs its float32 kernels within the stated LSB bound of ONNX Runtime",
          "[float]") {
  constexpr long kMeasured = 0, kBound = 1;  // LSB of the output scale
  const fs::path dir = scratch("float");
  const json e = {{"file", "layernorm_head.qdq.onnx"}, {"outputs", json::array({0})}};
  const json figures = read_json(kModels / "layernorm_head.json");
  const double scale = figures["output_scale"].get<double>();
  long worst = 0;
  for (const std::string sample : {"", "sample1."}) {
    INFO("sample '" << sample << "'");
    const auto got = tightfit_run(e, {"layernorm_head." + sample + "input_0.npy"}, dir / ("out" + sample),
                                  dir / ("build" + sample), " --name layernorm_head");
    const std::vector<float> ort = load_floats(kModels / ("layernorm_head.qdq." + sample + "output_0.npy"));
    const std::vector<float> ort_all = load_floats(kModels / ("layernorm_head.qdq.all." + sample + "output_0.npy"));
    CHECK(bitwise_equal(ort, ort_all));
    worst = std::max(worst, max_lsb(got[0], ort, scale));
  }
  std::printf("layernorm_head: tightfit vs ONNX Runtime's float path %ld LSB (stated bound %ld)\n", worst, kBound);
  CHECK(worst <= kBound);
  CHECK(worst == kMeasured);

  const json report = json::parse(read_text(dir / "build" / "layernorm_head.report.json"));
  std::set<std::string> float_ops;
  std::uint64_t float_bytes = 0;
  for (const json& step : report["steps"]) {
    if (step["float"].get<bool>()) float_ops.insert(step["op"].get<std::string>());
    float_bytes = std::max(float_bytes, step["float_bytes"].get<std::uint64_t>());
  }
  // The two islands: Dequantize in, ReduceMean, Sub, Pow, ReduceMean, Quantize out; Dequantize in,
  // Sqrt, Div (with the Sub's float output), Quantize out. The integer Add, Mul and Gemms are not.
  CHECK(float_ops == std::set<std::string>{"Dequantize", "ReduceMean", "Sub", "Pow", "Quantize", "Sqrt", "Div"});
  // At the Sub: its float32 [1, 64] input (the Dequantize's 256 B), the mean's 4 B and its output's 256 B.
  CHECK(float_bytes >= 2 * 64 * 4);
  const std::string text = read_text(dir / "build" / "layernorm_head.report.txt");
  CHECK(text.find("Float islands: ") != std::string::npos);
  CHECK(text.find("Sqrt f32") != std::string::npos);
}

// The probe: the same model with the islands' float values as graph outputs (mean, centered,
// squared, variance, std, normed), on 64 more inputs (scales 0.1 to 10), against ONNX Runtime's
// float path value by value: every float32 bit equal (the ReduceMeans in ORT's Eigen order, Pow as
// x * x, Sqrt correctly rounded, one rounding per operation), and the output within the bound. A
// reduction in index order, a mean times 1/n or an FMA would show here.
TEST_CASE("float islands: every float32 value of the LayerNorm island equals ONNX Runtime's bit for bit on 64 inputs",
          "[float]") {
  const fs::path dir = scratch("float_probe");
  const json e = {{"file", "layernorm_head_probe.qdq.onnx"}, {"outputs", json::array({0, 1, 2, 3, 4, 5, 6})}};
  const double scale = read_json(kModels / "layernorm_head.json")["output_scale"].get<double>();
  tightfit_run(e, {"layernorm_head.input_0.npy"}, dir / "out", dir / "build");
  const tightfit::npy::Array extra = tightfit::npy::load((kModels / "layernorm_head.extra_inputs.npy").string());
  const std::vector<float> inputs = floats(extra);
  const std::size_t count = static_cast<std::size_t>(extra.shape[0]), per = inputs.size() / count;
  REQUIRE(count == 64);
  const char* const names[] = {"output", "mean", "centered", "squared", "variance", "std", "normed"};
  long worst_lsb = 0;
  std::size_t total_differing = 0;
  for (std::size_t k = 0; k < 7; ++k) {
    const std::vector<float> ort =
        load_floats(kModels / ("layernorm_head_probe.qdq.extra.output_" + std::to_string(k) + ".npy"));
    const std::size_t size = ort.size() / count;
    std::size_t differing = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const fs::path io = dir / ("io" + std::to_string(i));
      if (k == 0) {
        fs::create_directories(io);
        write_bytes(io / "input_0.f32", inputs.data() + i * per, per * sizeof(float));
        const Result r =
            run(shell_quote((dir / "build" / "model").string()) + " " + shell_quote(io.string()), io / "run.log");
        REQUIRE(r.status == 0);
      }
      // Output 0 is dequantized by get_output (.f32); the float island's values are written raw.
      const std::vector<float> got =
          load_raw_floats(io / (k == 0 ? "output_0.f32" : "output_" + std::to_string(k) + ".raw"));
      const std::vector<float> want(ort.begin() + static_cast<std::ptrdiff_t>(i * size),
                                    ort.begin() + static_cast<std::ptrdiff_t>((i + 1) * size));
      REQUIRE(got.size() == size);
      for (std::size_t j = 0; j < size; ++j) differing += std::memcmp(&got[j], &want[j], sizeof(float)) != 0;
      if (k == 0) worst_lsb = std::max(worst_lsb, max_lsb(got, want, scale));
    }
    INFO(names[k] << ": " << differing << " of " << ort.size() << " values differ from ONNX Runtime's");
    CHECK(differing == 0);
    total_differing += differing;
  }
  std::printf("layernorm_head_probe: 64 inputs, %zu float32 values differ from ONNX Runtime's; output %ld LSB\n",
              total_differing, worst_lsb);
  CHECK(worst_lsb == 0);
}

int main(int argc, char** argv) {
  Catch::Session session;
  using namespace Catch::clara;
  session.cli(session.cli() | Opt(g_model, "name")["--model"]("the [models] test runs only this model (both files)"));
  const int rc = session.applyCommandLine(argc, argv);
  if (rc != 0) return rc;
  return session.run();
}

TEST_CASE("overlap: DS-CNN fits in 9,000 B with outputs over their inputs, 16,000 B with --no-overlap, same outputs",
          "[overlap]") {
  const fs::path dir = scratch("overlap");
  const json& e = entry("dscnn.qop.onnx");
  const std::vector<std::string> inputs = e["samples"][0]["inputs"].get<std::vector<std::string>>();
  const auto over = tightfit_run(e, inputs, dir / "over.out", dir / "over.build", " --name dscnn");
  const auto apart = tightfit_run(e, inputs, dir / "apart.out", dir / "apart.build", " --name dscnn --no-overlap");
  REQUIRE(over.size() == apart.size());
  for (std::size_t k = 0; k < over.size(); ++k) CHECK(bitwise_equal(over[k], apart[k]));
  const json report = json::parse(read_text(dir / "over.build" / "dscnn.report.json"));
  const json apart_report = json::parse(read_text(dir / "apart.build" / "dscnn.report.json"));
  CHECK(report["arena_bytes"].get<std::uint64_t>() <= 9000);
  CHECK(report["status"] == "optimal");
  CHECK(apart_report["arena_bytes"].get<std::uint64_t>() == 16000);
  CHECK(apart_report["overlaps"].empty());
  // Both sides are used: the depthwise layers run backwards, the pointwise ones forwards.
  std::set<std::string> directions;
  for (const json& o : report["overlaps"])
    if (o["shared_bytes"].get<std::uint64_t>() > 0) directions.insert(o["direction"].get<std::string>());
  CHECK(directions == std::set<std::string>{"above", "below"});
  const std::string source = read_text(dir / "over.build" / "dscnn.cpp");
  CHECK(source.find("tightfit::conv<std::int8_t, std::int8_t, true>") != std::string::npos);
}

// Counts the occurrences of `needle` in `text`.
std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

TEST_CASE(
    "fold_pad: four of padfold's five Pads become their reader's pads, the one before a MaxPool over "
    "values below the zero point stays; same outputs with --no-fold-pad",
    "[fold_pad]") {
  const fs::path dir = scratch("fold_pad");
  for (const char* file : {"padfold_s8.qop.onnx", "padfold_u8.qop.onnx"}) {
    const json& e = entry(file);
    const std::vector<std::string> inputs = e["samples"][0]["inputs"].get<std::vector<std::string>>();
    const auto folded = tightfit_run(e, inputs, dir / "folded.out", dir / "folded.build", " --name padfold");
    const auto kept = tightfit_run(e, inputs, dir / "kept.out", dir / "kept.build", " --name padfold --no-fold-pad");
    REQUIRE(folded.size() == kept.size());
    for (std::size_t k = 0; k < folded.size(); ++k) CHECK(bitwise_equal(folded[k], kept[k]));
    const json report = json::parse(read_text(dir / "folded.build" / "padfold.report.json"));
    const json kept_report = json::parse(read_text(dir / "kept.build" / "padfold.report.json"));
    std::set<std::string> into;
    for (const json& r : report["rewrites"]) {
      CHECK(r["technique"] == "fold_pad");
      CHECK(r["saved_bytes"].get<std::uint64_t>() > 0);
      into.insert(r["op"].get<std::string>());
    }
    CHECK(report["rewrites"].size() == 4);
    CHECK(into == std::set<std::string>{"Conv", "AveragePool", "MaxPool"});
    CHECK(kept_report["rewrites"].empty());
    // Each call is written twice: in run() and in run_profiled().
    CHECK(count_of(read_text(dir / "folded.build" / "padfold.cpp"), "tightfit::pad<") == 2 * 1);
    CHECK(count_of(read_text(dir / "kept.build" / "padfold.cpp"), "tightfit::pad<") == 2 * 5);
    CHECK(read_text(dir / "folded.build" / "padfold.report.txt").find("Rewrites: 4 applied") != std::string::npos);
  }
}

TEST_CASE(
    "zero_copy: Concat inputs written in place by their producers (strided channel slices, one contiguous "
    "block), the same outputs with --no-zero-copy-concat, the smaller arena kept",
    "[zero_copy]") {
  const fs::path dir = scratch("zero_copy");
  struct Case {
    const char* file;
    const char* flags;
    std::size_t in_place;      // Concat inputs written in place
    std::size_t concat_calls;  // Concat calls left in run()
    std::uint64_t arena, copying_arena;
  };
  // inception: two of its eight Concat inputs share the Concat's quantization; inception_shared:
  // all eight do; multi_io: a Gemm writes its half of a [1, 16] Concat; unet_shared: each
  // decoder's Resize writes its channels into the Concat with the skip (the skip, read by a
  // MaxPool too, is copied). With the Concat's output over an input it copies (the default),
  // copying ties with writing in place on these models and the walk keeps the inputs in place
  // that cost nothing; without that overlap (--no-overlap) writing in place is what lowers
  // inception_shared (six of eight: all eight keep the whole Concat output live beside the block
  // input) and unet_shared.
  for (const Case& c :
       {Case{"inception.qop.onnx", "", 1, 2, 18432, 18432}, Case{"inception_shared.qop.onnx", "", 4, 1, 18432, 18432},
        Case{"inception_shared.qop.onnx", " --no-overlap", 6, 1, 20480, 22528},
        Case{"multi_io.qop.onnx", "", 1, 1, 710, 710}, Case{"unet_shared.qop.onnx", "", 1, 2, 32768, 32768},
        Case{"unet_shared.qop.onnx", " --no-overlap", 2, 2, 36864, 49152}}) {
    INFO(c.file << c.flags);
    const json& e = entry(c.file);
    const std::vector<std::string> inputs = e["samples"][0]["inputs"].get<std::vector<std::string>>();
    const std::string flags = std::string(" --name m") + c.flags;
    const auto in_place = tightfit_run(e, inputs, dir / "in_place.out", dir / "in_place.build", flags);
    const auto copying =
        tightfit_run(e, inputs, dir / "copying.out", dir / "copying.build", flags + " --no-zero-copy-concat");
    REQUIRE(in_place.size() == copying.size());
    for (std::size_t k = 0; k < in_place.size(); ++k) CHECK(bitwise_equal(in_place[k], copying[k]));
    const json report = json::parse(read_text(dir / "in_place.build" / "m.report.json"));
    const json copying_report = json::parse(read_text(dir / "copying.build" / "m.report.json"));
    std::size_t written = 0;
    for (const json& r : report["rewrites"]) written += r["technique"] == "zero_copy_concat";
    CHECK(written == c.in_place);
    CHECK(report["arena_bytes"].get<std::uint64_t>() == c.arena);
    CHECK(report["comparisons"]["zero_copy_concat_bytes"].get<std::uint64_t>() >= c.arena);
    CHECK(report["comparisons"]["copying_concat_bytes"].get<std::uint64_t>() == c.copying_arena);
    CHECK(copying_report["arena_bytes"].get<std::uint64_t>() == c.copying_arena);
    CHECK(copying_report["rewrites"].empty());
    CHECK(count_of(read_text(dir / "in_place.build" / "m.cpp"), "tightfit::concat<") == 2 * c.concat_calls);
    // A Concat output written in part before the Concat's step is no overlap pair's output (the
    // pair's distances are for a buffer written whole at its step), and neither are the parts.
    std::set<std::string> concats_in_place, written_in_place;
    for (const json& r : report["rewrites"]) {
      concats_in_place.insert(r["node"].get<std::string>());
      written_in_place.insert(r["into"].get<std::string>());
    }
    for (const json& o : report["overlaps"]) {
      CHECK(concats_in_place.count(o["node"].get<std::string>()) == 0);
      CHECK(written_in_place.count(o["node"].get<std::string>()) == 0);
    }
  }
}

namespace {

// The least of the arenas an exit-3 message states ("... the least arena found is N bytes").
std::uint64_t least_stated(const std::string& message) {
  std::uint64_t least = UINT64_MAX;
  const std::regex figure("least arena found is ([0-9]+) bytes");
  for (auto m = std::sregex_iterator(message.begin(), message.end(), figure); m != std::sregex_iterator(); ++m)
    least = std::min<std::uint64_t>(least, std::stoull((*m)[1].str()));
  return least;
}

std::uint64_t least_tiling_arena(const json& report) {
  std::uint64_t least = 0;
  for (const json& level : report["ram_vs_cost"])
    if (level["technique"] == "tiling" && (least == 0 || level["arena_bytes"].get<std::uint64_t>() < least))
      least = level["arena_bytes"].get<std::uint64_t>();
  return least;
}

// `e`'s model under caps that force patch-based execution: with --io-outside under `outside_cap`
// (0: the least tiling level of the uncapped --io-outside report), and with the inputs in the arena
// under the least tiling level of the uncapped report. Each tiled run gives the untiled run's
// outputs and `reference`'s bit for bit, its report names the tiling rewrite, an arena within the
// cap and more MACs than the untiled model; the same cap with --no-tiling, a cap of 1 byte (whose
// message names the least level), and one byte under the least arena that message states
// (byte-aligned buffers included), each exit 3 in one line.
void check_tiled_runs(const json& e, const std::vector<std::string>& inputs,
                      const std::vector<std::vector<float>>& reference, const fs::path& dir,
                      std::uint64_t outside_cap) {
  INFO(e["file"].get<std::string>());
  for (const bool outside : {true, false}) {
    const std::string io = outside ? " --io-outside" : "";
    const fs::path at = dir / (outside ? "outside" : "inside");
    fs::create_directories(at);
    const auto untiled = tightfit_run(e, inputs, at / "untiled.out", at / "untiled.build", " --name m" + io);
    const json untiled_report = read_json(at / "untiled.build" / "m.report.json");
    const std::uint64_t least = least_tiling_arena(untiled_report);
    INFO(untiled_report["ram_vs_cost"].dump());
    REQUIRE(least > 0);
    const std::uint64_t cap = outside && outside_cap ? outside_cap : least;
    INFO("cap " << cap << io);
    REQUIRE(cap < untiled_report["arena_bytes"].get<std::uint64_t>());  // the cap forces tiling
    const std::string capped = " --name m" + io + " --max-ram " + std::to_string(cap);
    const auto tiled = tightfit_run(e, inputs, at / "tiled.out", at / "tiled.build", capped);
    REQUIRE(tiled.size() == untiled.size());
    for (std::size_t k = 0; k < tiled.size(); ++k) {
      CHECK(bitwise_equal(tiled[k], untiled[k]));
      CHECK(bitwise_equal(tiled[k], reference[k]));
    }
    const json report = read_json(at / "tiled.build" / "m.report.json");
    std::size_t tilings = 0;
    for (const json& r : report["rewrites"]) tilings += r["technique"] == "tiling";
    CHECK(tilings == 1);
    CHECK(report["arena_bytes"].get<std::uint64_t>() <= cap);
    CHECK(report["macs"].get<std::int64_t>() > untiled_report["macs"].get<std::int64_t>());
    std::uint64_t bands = 0;
    for (const json& level : report["ram_vs_cost"])
      if (level["chosen"] == true && level["technique"] == "tiling")
        bands = level["stage"]["bands"].get<std::uint64_t>();
    CHECK(bands > 1);
    // The memory map shows the bands: a tinted column per band in the address and the live panels.
    const std::string map = read_text(at / "tiled.build" / "m.memory.svg");
    std::size_t columns = 0;
    for (auto p = map.find("class=\"row-band\""); p != std::string::npos; p = map.find("class=\"row-band\"", p + 1))
      ++columns;
    CHECK(columns == 2 * bands);

    const fs::path model = kModels / e["file"].get<std::string>();
    const auto refused = [&](const std::string& name, const std::string& flags) {
      std::string cmd = shell_quote(kTightfit) + " compile " + shell_quote(model.string()) + " -o " +
                        shell_quote((at / name).string()) + flags;
      const Result r = run(cmd, at / (name + ".log"));
      INFO(cmd << "\n" << r.output);
      CHECK(r.status == 3);
      CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
      CHECK(!fs::exists(at / name));
      return r.output;
    };
    refused("untiled_refused", capped + " --no-tiling");
    // Under the least level, the message names it: the least arena reachable with tiling, and with
    // byte-aligned buffers when they reach less (docs/tiling.md); a byte under the least of them
    // exits 3 too.
    const std::string below = refused("below_refused", " --name m" + io + " --max-ram 1");
    CHECK(below.find("with patch-based execution the least arena found is " + std::to_string(least) + " bytes") !=
          std::string::npos);
    const std::uint64_t every = least_stated(below);
    CHECK(every <= least);
    CHECK(least - every < 64);  // the padding of a few buffers
    refused("below_every_refused", " --name m" + io + " --max-ram " + std::to_string(every - 1));
  }
}

}  // namespace

TEST_CASE(
    "tiling: MobileNetV1-0.25 under caps that force row bands (27,648 B with --io-outside; the least tiling "
    "level with the input in the arena) gives the untiled and ONNX Runtime's outputs, more MACs, an arena "
    "within the cap; --no-tiling or a byte less exits 3",
    "[tiling]") {
  const fs::path dir = scratch("tiling");
  const json& qop = entry("mobilenet_v1_025.qop.onnx");
  const std::vector<std::string> inputs = qop["samples"][0]["inputs"].get<std::vector<std::string>>();
  const std::vector<std::vector<float>> ort = {
      load_floats(kModels / qop["samples"][0]["expected"][0].get<std::string>())};
  // The QDQ file computes exactly what its QOperator twin computes ([models]): the same reference.
  for (const char* file : {"mobilenet_v1_025.qop.onnx", "mobilenet_v1_025.qdq.onnx"})
    check_tiled_runs(entry(file), inputs, ort, dir / entry(file)["form"].get<std::string>(), 27648);

  // Its output is two classes: cut at conv7 (1x32x12x12, after the first eight convolutions, the
  // stages that run in bands), a wrong row of any band shows in many of its 4,608 values.
  const fs::path cut = dir / "mobilenet_v1_025_conv7.qop.onnx";
  const Result made =
      run("/usr/bin/python3 " + shell_quote((kModels / "cut_model.py").string()) + " " +
              shell_quote((kModels / "mobilenet_v1_025.qop.onnx").string()) + " conv7 " + shell_quote(cut.string()),
          dir / "cut.log");
  INFO(made.output);
  REQUIRE(made.status == 0);
  json cut_entry = qop;
  cut_entry["file"] = cut.string();  // absolute: kModels / it is it
  cut_entry["outputs"] = json::array({json::object()});
  // ONNX Runtime on the cut model where node and onnxruntime-node are there; else the untiled run
  // (pinned to ONNX Runtime on the whole model above) is the reference.
  std::vector<std::vector<float>> reference;
  if (std::string(TIGHTFIT_NODE).size() > 0 && fs::exists(kModels / "node_modules" / "onnxruntime-node")) {
    const Result ort_run = run(shell_quote(TIGHTFIT_NODE) + " " + shell_quote((kModels / "dump.mjs").string()) + " " +
                                   shell_quote(cut.string()) + " " + shell_quote(dir.string()) + " " +
                                   shell_quote((kModels / inputs[0]).string()),
                               dir / "ort.log");
    INFO(ort_run.output);
    REQUIRE(ort_run.status == 0);
    reference.push_back(load_floats(dir / "features.npy"));
  } else {
    WARN("no node with onnxruntime-node: the cut model's reference is tightfit's untiled run");
    reference = tightfit_run(cut_entry, inputs, dir / "cut_untiled.out", dir / "cut_untiled.build", " --name m");
  }
  REQUIRE(reference[0].size() == 32 * 12 * 12);
  check_tiled_runs(cut_entry, inputs, reference, dir / "conv7", 0);
}
