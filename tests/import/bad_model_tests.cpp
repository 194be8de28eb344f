// Every malformed input gets one line naming the file (and the node or tensor), exit status 1,
// and no crash: the built `tightfit inspect` is run on each model in bad/ as a user would.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "import/model_file.hpp"
#include "run_tightfit.hpp"

using import_tests::run_tightfit;

namespace {

struct BadModel {
  std::string file;                    // in bad/ (or a path that does not exist)
  std::vector<std::string> fragments;  // each must appear in the message
};

// The one line `tightfit inspect <path>` printed, after checking the rest of the contract.
std::string refusal(const std::string& path) {
  const auto run = run_tightfit("inspect " + import_tests::quote(path));
  INFO("stderr: " << run.err);
  REQUIRE(run.exited);
  CHECK(run.status == 1);
  CHECK(run.out.empty());
  REQUIRE(!run.err.empty());
  CHECK(run.err.find('\n') == run.err.size() - 1);  // exactly one line
  CHECK(run.err.rfind("tightfit: error: " + path + ": ", 0) == 0);
  return run.err;
}

const std::vector<BadModel>& bad_models() {
  static const std::vector<BadModel> cases = {
      {"empty.onnx", {"empty file"}},
      {"truncated.onnx", {"not an ONNX model"}},
      {"wrong_magic.onnx", {"not an ONNX model"}},
      {"float_only.onnx", {"not quantized"}},
      {"float_if_lstm.onnx",
       {"not quantized", "(quantize it first, e.g. with onnxruntime.quantization); input 'sr' is int64"}},
      {"unsupported_operator.onnx", {"hardmax (Hardmax)", "unsupported operator", "docs/operators.md"}},
      {"unsupported_operators.onnx",
       {"hardmax (Hardmax)", "unsupported operator", "docs/operators.md", "2 more unsupported nodes",
        "tightfit inspect --json"}},
      {"conv_weights_rank_above_input.onnx", {"ONNX shape inference crashed on this model"}},
      {"unsupported_dtype.onnx", {"tensor 'd'", "double", "not supported"}},
      {"dynamic_length.onnx", {"tensor 'x'", "dimension 0", "'L'", "dynamic"}},
      {"dynamic_height.onnx", {"tensor 'x'", "dimension 2", "'H'", "dynamic"}},
      {"opset_too_new.onnx", {"opset 18", "10 to 17"}},
      {"opset_too_old.onnx", {"opset 9", "10 to 17"}},
      {"zero_dimension.onnx", {"tensor 'x'", "dimension 1 is 0"}},
      {"negative_dimension.onnx", {"tensor 'x'", "dimension 3 is -5"}},
      {"huge_dimensions.onnx", {"tensor 'huge'", "elements"}},
      {"missing_initializer.onnx", {"dequant_w (DequantizeLinear)", "input 'w'"}},
      {"dangling_output.onnx", {"tensor 'nobody_makes_this'", "no node produces"}},
      {"cycle.onnx", {"cycle"}},
      {"zero_point_out_of_range.onnx", {"dequant_w (DequantizeLinear)", "200", "outside int8"}},
      {"scale_zero.onnx", {"dequant_w (DequantizeLinear)", "scale 'w_scale'", "value 0"}},
      {"scale_negative.onnx", {"scale 'w_scale'", "-0.5"}},
      {"scale_nan.onnx", {"scale 'w_scale'", "nan"}},
      {"scale_inf.onnx", {"scale 'w_scale'", "inf"}},
      {"per_channel_length.onnx", {"tensor 'w'", "3 per-channel scales for 4 channels"}},
      {"bias_scale_mismatch.onnx", {"conv (Conv)", "bias 'b'", "x_scale*w_scale"}},
      {"float_output_not_quantized.onnx", {"conv (Conv)", "QuantizeLinear", "exactly"}},
      {"unsupported_attribute_contrib.onnx", {"qsigmoid (QLinearSigmoid)", "unsupported attribute 'channels_last'"}},
      {"unsupported_attribute_gemm.onnx", {"matmul (Gemm)", "attribute alpha"}},
      {"external_traversal.onnx", {"tensor 'w'", "leaves the model's folder"}},
      {"external_missing.onnx", {"tensor 'w'", "'no_such_weights.bin' not found"}},
      {"external_absolute.onnx", {"tensor 'w'", "'/etc/passwd' is absolute"}},
      {"external_out_of_range.onnx", {"tensor 'w'", "offset 1000000", "lie outside 'external_data_short.bin'"}},
      {"dangling_input.onnx", {"relu (Relu)", "input 'nobody_writes_this'", "not a graph input"}},
      {"huge_input.onnx", {"tensor 'x'", "elements"}},
      {"slice_step_2.onnx", {"op (Slice)", "step 2 is not supported"}},
      {"pow_by_activation.onnx", {"op (Pow)", "exponent 'xf' is an activation", "2 or 3"}},
      {"convtranspose_grouped.onnx", {"op (ConvTranspose)", "grouped ConvTranspose (group != 1) is not supported"}},
      {"convtranspose_output_shape.onnx", {"op (ConvTranspose)", "output_shape is not supported"}},
  };
  return cases;
}

// The files under `dir`, recursively, as paths relative to it.
std::vector<std::string> files_under(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec))
    files.push_back(std::filesystem::relative(e.path(), dir, ec).string());
  return files;
}

}  // namespace

TEST_CASE("every malformed model is refused with one line naming the file and the node or tensor and the reason") {
  for (const auto& c : bad_models()) {
    SECTION(c.file) {
      const std::string line = refusal(std::string(IMPORT_TEST_DIR) + "/bad/" + c.file);
      for (const auto& f : c.fragments) CHECK_THAT(line, Catch::Contains(f));
    }
  }
}

TEST_CASE("a missing model file is refused with one line") {
  const std::string line = refusal(std::string(IMPORT_TEST_DIR) + "/bad/no_such_model.onnx");
  CHECK_THAT(line, Catch::Contains("no such file"));
}

TEST_CASE("a directory given as the model is refused with one line") {
  const std::string line = refusal(std::string(IMPORT_TEST_DIR) + "/bad");
  CHECK_THAT(line, Catch::Contains("directory"));
}

TEST_CASE("the dynamic-batch model imports without a flag and says its batch is pinned") {
  const auto run = run_tightfit("inspect " + std::string(IMPORT_TEST_DIR) + "/good/dynamic_batch.onnx");
  REQUIRE(run.exited);
  CHECK(run.status == 0);
  CHECK(run.err.empty());
  CHECK_THAT(run.out, Catch::Contains("input 'x': symbolic batch (dimension 0) pinned to 1"));
  // Scripts that still pass --pin-batch keep working.
  const auto old_flag =
      run_tightfit("inspect --pin-batch " + std::string(IMPORT_TEST_DIR) + "/good/dynamic_batch.onnx");
  REQUIRE(old_flag.exited);
  CHECK(old_flag.status == 0);
  CHECK(old_flag.out == run.out);
}

TEST_CASE("compiling a malformed model: exit 1, one line, and no output files") {
  const std::string dir = import_tests::temp_file("compile-bad");
  std::filesystem::remove(dir);
  std::filesystem::create_directories(dir);
  for (const auto& c : bad_models()) {
    SECTION(c.file) {
      const std::string out = dir + "/out";
      const std::string model = std::string(IMPORT_TEST_DIR) + "/bad/" + c.file;
      const auto run =
          run_tightfit("compile " + import_tests::quote(model) + " --max-ram 1M -o " + import_tests::quote(out));
      INFO("stderr: " << run.err);
      REQUIRE(run.exited);
      CHECK(run.status == 1);
      CHECK(run.out.empty());
      CHECK(run.err.find('\n') == run.err.size() - 1);
      CHECK_THAT(run.err, Catch::StartsWith("tightfit: error: " + model + ": "));
      CHECK(files_under(dir).empty());
    }
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a model file above the size limit is refused before it is read") {
  // A sparse file: the size is what counts, and checking it costs no disk.
  const std::string dir = import_tests::temp_file("too-big");
  std::filesystem::remove(dir);
  std::filesystem::create_directories(dir);
  const std::string model = dir + "/big.onnx";
  std::ofstream(model) << "x";
  std::filesystem::resize_file(model, static_cast<std::uintmax_t>(tightfit::import::kMaxModelBytes) + 1);
  const std::string line = refusal(model);
  CHECK_THAT(line, Catch::Contains("above the limit of"));
  std::filesystem::remove_all(dir);
}
