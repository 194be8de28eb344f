// ONNX's own quantized operator tests (Debian's libonnx-testdata), made tightfit-ready by
// models/onnx_node_tests.py (weights, scales and zero points turned into initializers; the
// activation inputs and the expected outputs stored as .npy in models/onnx_node_tests/), through
// `tightfit run`: every output must equal ONNX's expected output exactly (same dtype, same shape,
// same bytes), or the test must be refused with its stated one-line reason.
//
// Run one test with `tightfit_onnx_node_tests --test NAME` (ctest has one test per ONNX test).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_support.hpp"
#include "util/npy.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace tightfit::codegen_test;

namespace {

std::string g_test;  // --test NAME: only that ONNX test

const fs::path kDir = fs::path(TIGHTFIT_MODELS_DIR) / "onnx_node_tests";
const std::string kTightfit = TIGHTFIT_BIN;

const json& manifest() {
  static const json m = read_json(kDir / "manifest.json");
  return m;
}

// numpy's dtype name -> the .npy code tightfit's reader gives.
std::string npy_code(const std::string& dtype) {
  if (dtype == "float32") return "f4";
  if (dtype == "int32") return "i4";
  if (dtype == "uint8") return "u1";
  if (dtype == "int8") return "i1";
  return "?" + dtype;
}

// Empty when the two arrays are the same dtype, shape and bytes; else what differs.
std::string difference(const tightfit::npy::Array& got, const tightfit::npy::Array& want) {
  std::ostringstream why;
  if (got.dtype != want.dtype)
    why << "dtype " << got.dtype << " instead of " << want.dtype;
  else if (got.shape != want.shape)
    why << "shape differs";
  else if (got.data != want.data) {
    const std::size_t size = got.data.size() / static_cast<std::size_t>(std::max<std::int64_t>(1, got.elements()));
    for (std::size_t i = 0; i < got.data.size(); ++i)
      if (got.data[i] != want.data[i]) {
        why << "element " << i / size << " differs (byte " << i << ")";
        break;
      }
  }
  return why.str();
}

// One `tightfit run` of the test's model, into work/<variant>; returns its result.
Result tightfit_run(const json& t, const fs::path& work, const std::string& variant, const std::string& extra) {
  std::string cmd = shell_quote(kTightfit) + " run " + shell_quote((kDir / t["model"].get<std::string>()).string());
  for (const json& in : t["inputs"]) cmd += " --input " + shell_quote((kDir / in["file"].get<std::string>()).string());
  cmd += " --output-dir " + shell_quote((work / (variant + ".out")).string()) + " --build-dir " +
         shell_quote((work / (variant + ".build")).string()) + extra;
  Result r = run(cmd, work / (variant + ".log"));
  r.output = cmd + "\n" + r.output;
  return r;
}

void check_test(const json& t) {
  const std::string name = t["name"].get<std::string>();
  INFO("ONNX node test " << name);
  const fs::path work = scratch("onnx_node_tests/" + name);

  if (t["status"] == "refused") {
    const Result r = tightfit_run(t, work, "arena", "");
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 2);  // the command, then one line
    CHECK(r.output.find(t["refusal"].get<std::string>()) != std::string::npos);
    return;
  }
  REQUIRE(t["status"] == "bit-exact");
  // Inputs and outputs inside the arena (the default), and in the caller's buffers.
  for (const char* variant : {"arena", "io_outside"}) {
    INFO("variant " << variant);
    const Result r = tightfit_run(t, work, variant, std::string(variant) == "io_outside" ? " --io-outside" : "");
    INFO(r.output);
    REQUIRE(r.status == 0);
    for (std::size_t k = 0; k < t["outputs"].size(); ++k) {
      const json& o = t["outputs"][k];
      INFO("output " << k << " '" << o["name"].get<std::string>() << "'");
      const tightfit::npy::Array got = tightfit::npy::load(
          (work / (std::string(variant) + ".out") / ("output_" + std::to_string(k) + ".npy")).string());
      const tightfit::npy::Array want = tightfit::npy::load((kDir / o["file"].get<std::string>()).string());
      CHECK(got.dtype == npy_code(o["dtype"].get<std::string>()));  // int32, uint8/int8 or float32, as ONNX says
      const std::string why = difference(got, want);
      INFO(why);
      CHECK(why.empty());
      // The comparison can fail: one flipped bit of the expected output is caught.
      tightfit::npy::Array perturbed = want;
      REQUIRE(!perturbed.data.empty());
      perturbed.data.back() ^= 1;
      CHECK_FALSE(difference(got, perturbed).empty());
    }
  }
}

}  // namespace

TEST_CASE(
    "ONNX's quantized operator tests through tightfit run: bit-exact with the expected outputs, or refused with the "
    "stated reason",
    "[onnx_node]") {
  int ran = 0;
  for (const json& t : manifest()["tests"]) {
    if (!g_test.empty() && t["name"] != g_test) continue;
    ++ran;
    check_test(t);
  }
  REQUIRE(ran > 0);
}

// tests/import/good/convinteger_qdq.onnx: x -> QuantizeLinear (uint8, 0.1, 3) -> ConvInteger (int8 w
// [[1, -2], [3, 4]], x zero point 3) -> DequantizeLinear (int32, 0.1 * 0.5) -> QuantizeLinear (int8,
// 0.2, 0) -> DequantizeLinear -> y: the int32 accumulator requantized (requantize_accumulator).
// ONNX Runtime has no ConvInteger with int8 weights, so the reference is ONNX's arithmetic, one
// float32 operation at a time, computed here with <cmath> (nearbyint: ties to even).
TEST_CASE(
    "ConvInteger then DequantizeLinear then QuantizeLinear: the int32 accumulator requantized as ONNX computes it",
    "[int32_requantize]") {
  const fs::path work = scratch("onnx_node_tests/convinteger_qdq");
  // Values chosen so that the accumulators land on both sides of rounding ties and saturate.
  const std::vector<float> x = {0.05f, -1.0f, 2.5f, 25.4f, -0.35f, 0.15f, 7.0f, -30.0f, 12.25f};
  tightfit::npy::Array in;
  in.dtype = "f4";
  in.shape = {1, 1, 3, 3};
  in.data.resize(x.size() * sizeof(float));
  std::memcpy(in.data.data(), x.data(), in.data.size());
  tightfit::npy::save((work / "x.npy").string(), in);
  const std::string cmd =
      shell_quote(kTightfit) + " run " +
      shell_quote((fs::path(TIGHTFIT_SOURCE_DIR) / "tests/import/good/convinteger_qdq.onnx").string()) + " --input " +
      shell_quote((work / "x.npy").string()) + " --output-dir " + shell_quote((work / "out").string()) +
      " --build-dir " + shell_quote((work / "build").string());
  const Result r = run(cmd, work / "run.log");
  INFO(cmd << "\n" << r.output);
  REQUIRE(r.status == 0);
  const tightfit::npy::Array got = tightfit::npy::load((work / "out" / "output_0.npy").string());
  REQUIRE(got.dtype == "f4");
  REQUIRE(got.shape == std::vector<std::int64_t>{1, 1, 2, 2});

  const float x_scale = 0.1f, acc_scale = 0.1f * 0.5f, y_scale = 0.2f;
  std::vector<int> xq;
  for (float v : x)
    xq.push_back(static_cast<int>(std::min(255.0f, std::max(0.0f, std::nearbyint(v / x_scale) + 3.0f))));
  const int w[2][2] = {{1, -2}, {3, 4}};
  std::vector<float> want;
  for (int oy = 0; oy < 2; ++oy)
    for (int ox = 0; ox < 2; ++ox) {
      int acc = 0;
      for (int ky = 0; ky < 2; ++ky)
        for (int kx = 0; kx < 2; ++kx) acc += (xq[(oy + ky) * 3 + ox + kx] - 3) * w[ky][kx];
      const float real = static_cast<float>(acc) * acc_scale;
      const float q = std::min(127.0f, std::max(-128.0f, std::nearbyint(real / y_scale)));
      want.push_back(q * y_scale);
    }
  std::vector<float> values(want.size());
  std::memcpy(values.data(), got.data.data(), got.data.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": tightfit " << values[i] << ", ONNX " << want[i]);
    CHECK(std::memcmp(&values[i], &want[i], sizeof(float)) == 0);
  }
}

int main(int argc, char** argv) {
  Catch::Session session;
  using namespace Catch::clara;
  session.cli(session.cli() | Opt(g_test, "name")["--test"]("only this ONNX node test"));
  const int rc = session.applyCommandLine(argc, argv);
  if (rc != 0) return rc;
  return session.run();
}

// The first output of `tightfit run` on tests/import/good/<file> with float input `x` of `shape`;
// the generated code stays in work/<file>/build.
static std::vector<std::uint8_t> run_good_model(const fs::path& work, const std::string& file,
                                                const std::vector<float>& x, const std::vector<std::int64_t>& shape) {
  tightfit::npy::Array in;
  in.dtype = "f4";
  in.shape = shape;
  in.data.resize(x.size() * sizeof(float));
  std::memcpy(in.data.data(), x.data(), in.data.size());
  const fs::path dir = work / file;
  fs::create_directories(dir);
  tightfit::npy::save((dir / "x.npy").string(), in);
  const std::string cmd = shell_quote(kTightfit) + " run " +
                          shell_quote((fs::path(TIGHTFIT_SOURCE_DIR) / "tests/import/good" / file).string()) +
                          " --input " + shell_quote((dir / "x.npy").string()) + " --output-dir " +
                          shell_quote((dir / "out").string()) + " --build-dir " +
                          shell_quote((dir / "build").string()) + " --name m";
  const Result r = run(cmd, dir / "run.log");
  INFO(cmd << "\n" << r.output);
  REQUIRE(r.status == 0);
  return tightfit::npy::load((dir / "out" / "output_0.npy").string()).data;
}

// tests/import/good/matmul_flatten_input_qdq.onnx is matmul_qdq.onnx whose float input x [2, 1, 3]
// is flattened before its QuantizeLinear (as ORT's quantizer leaves a Flatten on a float graph
// input): the same values give the same bytes, and set_input takes the model's own shape.
TEST_CASE("a view of a float graph input before its QuantizeLinear costs nothing and computes the same",
          "[float_edges]") {
  const fs::path work = scratch("float_edges/flatten_input");
  const std::vector<float> x = {0.05f, -1.0f, 2.5f, 12.7f, -0.35f, 0.15f};
  CHECK(run_good_model(work, "matmul_qdq.onnx", x, {2, 3}) ==
        run_good_model(work, "matmul_flatten_input_qdq.onnx", x, {2, 1, 3}));
  std::ifstream header(work / "matmul_flatten_input_qdq.onnx" / "build" / "m.hpp");
  const std::string text((std::istreambuf_iterator<char>(header)), std::istreambuf_iterator<char>());
  CHECK(text.find("// input 0 'x': int8 [2, 1, 3]") != std::string::npos);
}

// tests/import/good/add_constant_node_qdq.onnx adds a Constant node's value that has its own
// QuantizeLinear/DequantizeLinear pair (as ORT's quantizer leaves LayerNorm's eps);
// add_constant_initializer_qdq.onnx stores the same constant already quantized by numpy (two
// rounding ties and a saturating value). The fold at compile time must give the same bytes.
TEST_CASE("a QuantizeLinear of a Constant node folds into the constant quantized as QuantizeLinear does",
          "[constant_fold]") {
  const fs::path work = scratch("constant_fold");
  const std::vector<float> x = {0.05f, -1.0f, 2.5f, -12.7f, -0.35f, 0.15f};
  CHECK(run_good_model(work, "add_constant_initializer_qdq.onnx", x, {1, 6}) ==
        run_good_model(work, "add_constant_node_qdq.onnx", x, {1, 6}));
}

// Max/Min of an activation and a constant off the quantization grid (tf2onnx's clamp, left float
// by ORT's quantizer) against the Clip with the same bound (Max(c, x): the constant first), and
// Max before a float MaxPool against the same with its own QuantizeLinear between them. ORT gives
// each pair the same values (tests/import/make_bad_models.py, clamp_qdq).
TEST_CASE("Max or Min with a constant runs as the Clip with that bound, also before a float MaxPool",
          "[max_min_clamp]") {
  const fs::path work = scratch("max_min_clamp");
  std::vector<float> x(32);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -1.6f + 0.1f * static_cast<float>(i) + (i % 3 == 0 ? 0.03f : 0.0f);
  for (const auto& [model, twin] :
       {std::pair<std::string, std::string>{"max_constant_qdq.onnx", "max_constant_twin_clip_qdq.onnx"},
        {"min_constant_qdq.onnx", "min_constant_twin_clip_qdq.onnx"},
        {"max_constant_maxpool_qdq.onnx", "max_constant_maxpool_twin_qdq.onnx"}}) {
    INFO(model);
    CHECK(run_good_model(work, model, x, {1, 2, 4, 4}) == run_good_model(work, twin, x, {1, 2, 4, 4}));
  }
}

// tests/import/good/flatten_gemm_qdq.onnx flattens a channels-last [1, 4, 4, 4] image into a Gemm:
// its weights' columns are permuted at compile time and the flatten is a view, no copy. The twin
// also outputs the flattened image, which keeps it in ONNX's order (a layout transpose, and the
// Gemm's weights as they are): the two must give the same y, and only the twin may move the image.
TEST_CASE("a flatten of a channels-last image into a FullyConnected is a view: the weights' columns are permuted",
          "[flatten_view]") {
  const fs::path work = scratch("flatten_view");
  std::vector<float> x(48);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -2.3f + 0.1f * static_cast<float>((i * 29) % 48);
  CHECK(run_good_model(work, "flatten_gemm_qdq.onnx", x, {1, 3, 4, 4}) ==
        run_good_model(work, "flatten_gemm_twin_qdq.onnx", x, {1, 3, 4, 4}));
  auto transposes = [&](const std::string& model) {
    std::ifstream source(work / model / "build" / "m.cpp");
    const std::string text((std::istreambuf_iterator<char>(source)), std::istreambuf_iterator<char>());
    std::size_t count = 0;
    for (auto at = text.find("tightfit::transpose"); at != std::string::npos;
         at = text.find("tightfit::transpose", at + 1))
      ++count;
    return count;
  };
  CHECK(transposes("flatten_gemm_qdq.onnx") == 0);
  CHECK(transposes("flatten_gemm_twin_qdq.onnx") > 0);
}
