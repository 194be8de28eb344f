// ONNX's own operator tests (Debian's libonnx-testdata). Their models take weights and
// quantization parameters as graph inputs with values in test_data_set_0; tightfit needs those
// constant, so every input after the first becomes an initializer holding its test value
// before the import. The quantized tests must import (or be refused for a stated reason we do
// not carry); the float tests of operators we carry must be refused as "not quantized".
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "error.hpp"
#include "driver/pipeline.hpp"
#include "run_tightfit.hpp"

namespace fs = std::filesystem;
using namespace tightfit;

namespace {

const fs::path kNodeTests = ONNX_NODE_TEST_DIR;

// The model of one ONNX node test with inputs 1.. turned into initializers, written to a
// temporary file whose path is returned.
std::string with_constant_inputs(const std::string& test) {
  onnx::ModelProto model;
  {
    std::ifstream in(kNodeTests / test / "model.onnx", std::ios::binary);
    REQUIRE(model.ParseFromIstream(&in));
  }
  auto* graph = model.mutable_graph();
  const int count = graph->input_size();
  for (int i = 1; i < count; ++i) {
    onnx::TensorProto value;
    std::ifstream in(kNodeTests / test / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"), std::ios::binary);
    REQUIRE(value.ParseFromIstream(&in));
    value.set_name(graph->input(i).name());
    *graph->add_initializer() = value;
  }
  while (graph->input_size() > 1) graph->mutable_input()->RemoveLast();
  const std::string path = import_tests::temp_file(test) + ".onnx";
  std::ofstream out(path, std::ios::binary);
  REQUIRE(model.SerializeToOstream(&out));
  return path;
}

ir::Graph import_node_test(const std::string& test) {
  const std::string path = with_constant_inputs(test);
  struct Remove {
    std::string p;
    ~Remove() { std::remove(p.c_str()); }
  } remove{path};
  return driver::import_graph(path);
}

std::vector<ir::OpKind> ops(const ir::Graph& g) {
  std::vector<ir::OpKind> kinds;
  for (const auto& n : g.nodes) kinds.push_back(n.op);
  return kinds;
}

bool have_node_tests() {
  if (fs::exists(kNodeTests / "test_qlinearconv")) return true;
  WARN("SKIPPED: " << kNodeTests.string() << " does not exist: install it with apt-get install libonnx-testdata");
  return false;
}

}  // namespace

TEST_CASE("ONNX's QLinearConv test imports as one Conv") {
  if (!have_node_tests()) return;
  const ir::Graph g = import_node_test("test_qlinearconv");
  REQUIRE(ops(g) == std::vector<ir::OpKind>{ir::OpKind::Conv});
  CHECK(g.nodes[0].onnx_op == "QLinearConv");
  CHECK(g.tensors[g.nodes[0].outputs[0]].shape == std::vector<std::int64_t>{1, 1, 7, 7});
}

TEST_CASE(
    "ONNX's 2-D and batched 3-D QLinearMatMul tests import as a FullyConnected (3-D: one weight matrix per batch)") {
  if (!have_node_tests()) return;
  const ir::Graph g = import_node_test("test_qlinearmatmul_2D");
  CHECK(ops(g) == std::vector<ir::OpKind>{ir::OpKind::FullyConnected});
  const ir::Graph b = import_node_test("test_qlinearmatmul_3D");
  REQUIRE(ops(b) == std::vector<ir::OpKind>{ir::OpKind::FullyConnected});
  // B [2, 4, 3] becomes [2, 3, 4]: per batch, the [M, K] weight of a FullyConnected.
  CHECK(b.tensors[b.nodes[0].inputs[1]].shape == std::vector<std::int64_t>{2, 3, 4});
  CHECK(b.tensors[b.nodes[0].outputs[0]].shape == std::vector<std::int64_t>{2, 2, 3});
}

TEST_CASE("ONNX's ConvInteger and MatMulInteger tests import with int32 accumulator outputs") {
  if (!have_node_tests()) return;
  for (const char* test :
       {"test_basic_convinteger", "test_convinteger_with_padding", "test_convinteger_without_padding"}) {
    SECTION(test) {
      const ir::Graph g = import_node_test(test);
      REQUIRE(ops(g) == std::vector<ir::OpKind>{ir::OpKind::Conv});
      CHECK(g.tensors[g.nodes[0].outputs[0]].dtype == ir::DType::Int32);
    }
  }
  SECTION("test_matmulinteger") {
    const ir::Graph g = import_node_test("test_matmulinteger");
    REQUIRE(ops(g) == std::vector<ir::OpKind>{ir::OpKind::FullyConnected});
    CHECK(g.tensors[g.nodes[0].outputs[0]].shape == std::vector<std::int64_t>{4, 2});
  }
}

TEST_CASE("ONNX's per-tensor QuantizeLinear and DequantizeLinear tests import as edge nodes") {
  if (!have_node_tests()) return;
  CHECK(ops(import_node_test("test_quantizelinear")) == std::vector<ir::OpKind>{ir::OpKind::Quantize});
  CHECK(ops(import_node_test("test_dequantizelinear")) == std::vector<ir::OpKind>{ir::OpKind::Dequantize});
}

TEST_CASE("ONNX's per-axis Quantize/DequantizeLinear tests import as edge nodes quantized per channel along axis 1") {
  if (!have_node_tests()) return;
  const ir::Graph q = import_node_test("test_quantizelinear_axis");
  REQUIRE(ops(q) == std::vector<ir::OpKind>{ir::OpKind::Quantize});
  CHECK(q.tensors[q.nodes[0].outputs[0]].quant.axis == 1);
  CHECK(q.tensors[q.nodes[0].outputs[0]].quant.scale.size() == 3);
  const ir::Graph d = import_node_test("test_dequantizelinear_axis");
  REQUIRE(ops(d) == std::vector<ir::OpKind>{ir::OpKind::Dequantize});
  CHECK(d.tensors[d.nodes[0].inputs[0]].quant.axis == 1);
}

TEST_CASE(
    "ONNX's DynamicQuantizeLinear test imports as an edge DynamicQuantize, and its expanded float form is refused") {
  if (!have_node_tests()) return;
  const ir::Graph g = import_node_test("test_dynamicquantizelinear");
  REQUIRE(ops(g) == std::vector<ir::OpKind>{ir::OpKind::DynamicQuantize});
  REQUIRE(g.nodes[0].outputs.size() == 3);
  CHECK(g.tensors[g.nodes[0].inputs[0]].dtype == ir::DType::Float32);
  CHECK(g.tensors[g.nodes[0].outputs[0]].dtype == ir::DType::UInt8);
  CHECK_FALSE(g.tensors[g.nodes[0].outputs[0]].quantized);  // its parameters are computed at run time
  CHECK(g.tensors[g.nodes[0].outputs[1]].dtype == ir::DType::Float32);
  CHECK(g.outputs.size() == 3);
  CHECK_THROWS_WITH(import_node_test("test_dynamicquantizelinear_expanded"),
                    Catch::Contains("(Min): input 'DynamicQuantizeLinear_test_dynamicquantizelinear"));

  // Read by another node, y would need a static quantization: refused with the reason.
  onnx::ModelProto model;
  {
    std::ifstream in(kNodeTests / "test_dynamicquantizelinear" / "model.onnx", std::ios::binary);
    REQUIRE(model.ParseFromIstream(&in));
  }
  auto* node = model.mutable_graph()->add_node();
  node->set_op_type("Identity");
  node->add_input("y");
  node->add_output("y_copy");
  *model.mutable_graph()->add_output() = model.graph().output(0);
  model.mutable_graph()->mutable_output(3)->set_name("y_copy");
  const std::string path = import_tests::temp_file("dynamic_read") + ".onnx";
  {
    std::ofstream out(path, std::ios::binary);
    REQUIRE(model.SerializeToOstream(&out));
  }
  CHECK_THROWS_WITH(driver::import_graph(path), Catch::Contains("(DynamicQuantizeLinear)") &&
                                                    Catch::Contains("computed from the data at run time"));
  std::remove(path.c_str());
}

TEST_CASE("ONNX's float tests of the operators we carry are refused as not quantized") {
  if (!have_node_tests()) return;
  // Float versions of every operator tightfit carries in quantized form.
  const std::vector<std::string> prefixes = {"test_conv_",
                                             "test_basic_conv_",
                                             "test_gemm_",
                                             "test_matmul_",
                                             "test_add",
                                             "test_mul",
                                             "test_maxpool_",
                                             "test_averagepool_",
                                             "test_globalaveragepool",
                                             "test_relu",
                                             "test_clip",
                                             "test_leakyrelu",
                                             "test_sigmoid",
                                             "test_tanh",
                                             "test_softmax_",
                                             "test_concat_",
                                             "test_reshape_",
                                             "test_flatten_",
                                             "test_squeeze",
                                             "test_unsqueeze_",
                                             "test_transpose_",
                                             "test_resize_upsample_scales_nearest"};
  int tried = 0;
  for (const auto& entry : fs::directory_iterator(kNodeTests)) {
    const std::string name = entry.path().filename().string();
    bool carried = false;
    for (const auto& p : prefixes) carried = carried || name.rfind(p, 0) == 0;
    if (!carried || name.find("expanded") != std::string::npos) continue;
    ++tried;
    const auto run = import_tests::run_tightfit("inspect " + (entry.path() / "model.onnx").string());
    INFO(name << ": " << run.err);
    REQUIRE(run.exited);
    CHECK(run.status == 1);
    const bool refused_as_float = run.err.find("not quantized") != std::string::npos;
    // A few old tests predate opset 10, and a few have empty tensors: refused for that first.
    const bool refused_for_opset = run.err.find("is not supported (supported: 10 to 17)") != std::string::npos;
    const bool refused_as_empty = run.err.find("is 0 (must be at least 1)") != std::string::npos;
    CHECK((refused_as_float || refused_for_opset || refused_as_empty));
  }
  CHECK(tried > 50);
}
