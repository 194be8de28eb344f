// The tiling pass (compiler/passes/tile.cpp) on hand-made NHWC graphs: which runs of nodes are
// stages, the rows, columns, pads, in-place parts and copies each band's or tile's nodes get, and
// what it refuses. That the tiles compute what the untiled graph does is checked end to end
// (difftest --row-bands, the codegen tiling tests).
#include <catch2/catch.hpp>

#include "ops/operator.hpp"
#include "passes/passes.hpp"

using namespace tightfit;

namespace {

ir::Tensor image(const std::string& name, std::int64_t h, std::int64_t w, std::int64_t c) {
  ir::Tensor t;
  t.name = name;
  t.dtype = ir::DType::Int8;
  t.shape = {1, h, w, c};
  t.layout = ir::Layout::ChannelsLast;
  t.quantized = true;
  t.quant = ir::Quant{{0.5f}, {0}, -1};
  return t;
}

ir::Tensor weights(const std::string& name, std::int64_t out_c, std::int64_t in_c, std::int64_t k) {
  ir::Tensor t;
  t.name = name;
  t.dtype = ir::DType::Int8;
  t.shape = {out_c, in_c, k, k};
  t.is_constant = true;
  t.quantized = true;
  t.quant = ir::Quant{{0.25f}, {0}, -1};
  t.data.assign(static_cast<std::size_t>(out_c * in_c * k * k), 1);
  return t;
}

ir::Node conv(const std::string& name, ir::TensorId x, ir::TensorId w, ir::TensorId y, std::int64_t k,
              std::int64_t stride, std::int64_t pad) {
  ir::Node n;
  n.name = name;
  n.op = ir::OpKind::Conv;
  n.inputs = {x, w};
  n.outputs = {y};
  n.attrs.strides = {stride, stride};
  n.attrs.dilations = {1, 1};
  n.attrs.pads = {pad, pad, pad, pad};
  n.attrs.kernel_shape = {k, k};
  return n;
}

// x [16x8x4] -> a: 3x3 s1 p1 conv [16x8x4] -> b: 3x3 s2 p1 conv [8x4x4] -> c: 1x1 conv [8x4x4].
ir::Graph chain() {
  ir::Graph g;
  g.source = "hand.onnx";
  g.tensors = {image("x", 16, 8, 4),   image("a", 16, 8, 4),   image("b", 8, 4, 4),   image("c", 8, 4, 4),
               weights("wa", 4, 4, 3), weights("wb", 4, 4, 3), weights("wc", 4, 4, 1)};
  g.nodes = {conv("A", 0, 4, 1, 3, 1, 1), conv("B", 1, 5, 2, 3, 2, 1), conv("C", 2, 6, 3, 1, 1, 0)};
  g.inputs = {0};
  g.outputs = {3};
  return g;
}

// x [8x4x4] -> A (3x3) -> a; B (3x3 on a) -> b; Add(a, b) -> c: a residual block.
ir::Graph residual() {
  ir::Graph g;
  g.source = "hand.onnx";
  g.tensors = {image("x", 8, 4, 4), image("a", 8, 4, 4),    image("b", 8, 4, 4),
               image("c", 8, 4, 4), weights("wa", 4, 4, 3), weights("wb", 4, 4, 3)};
  ir::Node add;
  add.name = "Add";
  add.op = ir::OpKind::Add;
  add.inputs = {1, 2};
  add.outputs = {3};
  g.nodes = {conv("A", 0, 4, 1, 3, 1, 1), conv("B", 1, 5, 2, 3, 1, 1), add};
  g.inputs = {0};
  g.outputs = {3};
  return g;
}

const ir::Node& node(const ir::Graph& g, const std::string& name) {
  for (const ir::Node& n : g.nodes)
    if (n.name == name) return n;
  FAIL("no node " << name);
  return g.nodes.front();
}

const ir::Tensor& in0(const ir::Graph& g, const std::string& name) { return g.tensors[node(g, name).inputs[0]]; }
const ir::Tensor& out0(const ir::Graph& g, const std::string& name) { return g.tensors[node(g, name).outputs[0]]; }

}  // namespace

TEST_CASE("a band's nodes read the rows their windows reach, with the image's padding only at its edges") {
  ir::Graph g = chain();
  const std::int64_t untiled = ops::macs(g, g.nodes[0]) + ops::macs(g, g.nodes[1]) + ops::macs(g, g.nodes[2]);
  const auto tiled = passes::tile_stage(g, {{"A", "B", "C"}, 4});
  REQUIRE(tiled);
  // Band 1 of 4 makes c's rows 0-1; B reads a's rows 0-3 (2*1 - 1 + 3 = 4, the top pad 1 kept);
  // A reads x's rows 0-4 (the top pad 1 kept).
  CHECK(out0(g, "C [band 1/4]").shape == std::vector<std::int64_t>{1, 2, 4, 4});
  CHECK(out0(g, "B [band 1/4]").shape[1] == 2);
  CHECK(out0(g, "A [band 1/4]").shape[1] == 4);
  CHECK(in0(g, "A [band 1/4]").shape[1] == 5);
  CHECK(node(g, "A [band 1/4]").attrs.pads[0] == 1);
  CHECK(node(g, "B [band 1/4]").attrs.pads[0] == 1);
  // Band 2 makes c's rows 2-3: B reads a's rows 3-7 with no top pad, A reads x's rows 2-8.
  CHECK(out0(g, "A [band 2/4]").name == "a [rows 3-7]");
  CHECK(node(g, "B [band 2/4]").attrs.pads[0] == 0);
  CHECK(in0(g, "A [band 2/4]").name == "x [rows 2-8]");
  CHECK(node(g, "A [band 2/4]").attrs.pads[0] == 0);
  // The last band reaches the bottom edge: A's window there reads the bottom pad.
  CHECK(in0(g, "A [band 4/4]").name == "x [rows 10-15]");
  CHECK(node(g, "A [band 4/4]").attrs.pads[2] == 1);
  // The stage's input rows are read in place from x; c's rows are written in place into c.
  const ir::Tensor& x_rows = in0(g, "A [band 2/4]");
  CHECK(x_rows.slice_of == 0);
  CHECK(x_rows.slice_offset == 2 * 8 * 4);
  const ir::Tensor& c_rows = out0(g, "C [band 2/4]");
  CHECK(c_rows.slice_of == 3);
  CHECK(c_rows.slice_offset == 2 * 4 * 4);
  // A Concat along H, all in place, makes c; the untiled nodes are gone.
  const ir::Node& bands = g.nodes.back();
  CHECK(bands.op == ir::OpKind::Concat);
  CHECK(bands.outputs == std::vector<ir::TensorId>{3});
  CHECK(bands.inputs.size() == 4);
  CHECK(g.nodes.size() == 3 * 4 + 1);
  // a's halo rows are computed twice: the MACs grow.
  CHECK(tiled->macs == untiled);
  CHECK(tiled->tiled_macs > untiled);
}

TEST_CASE("a tensor read by two nodes of a stage is made for both and each reads its own rows in place") {
  ir::Graph g = residual();
  REQUIRE(passes::stage_of_steps(g, 0, 2));
  REQUIRE(passes::tile_stage(g, {{"A", "B", "Add"}, 2}));
  // Band 2 makes c's rows 4-7; B needs a's rows 3-7, Add a's rows 4-7: a's band holds rows 3-7
  // and Add reads rows 4-7 of it in place, one row in.
  const ir::Tensor& a_rows = out0(g, "A [band 2/2]");
  CHECK(a_rows.name == "a [rows 3-7]");
  const ir::Tensor& add_reads = g.tensors[node(g, "Add [band 2/2]").inputs[0]];
  CHECK(add_reads.name == "a [rows 4-7]");
  CHECK(add_reads.slice_of == node(g, "A [band 2/2]").outputs[0]);
  CHECK(add_reads.slice_offset == 1 * 4 * 4);
  CHECK(node(g, "B [band 2/2]").inputs[0] == node(g, "A [band 2/2]").outputs[0]);
}

TEST_CASE("a run of nodes is no stage when a tensor inside is read outside it, or it reads two from outside") {
  ir::Graph g = chain();
  g.outputs = {3, 1};  // a is also a model output
  CHECK_FALSE(passes::stage_of_steps(g, 0, 2));
  CHECK(passes::stage_of_steps(g, 1, 2));  // B and C: a is their input
  ir::Graph two = chain();
  two.tensors.push_back(image("y", 16, 8, 4));
  ir::Node add;
  add.name = "Add";
  add.op = ir::OpKind::Add;
  add.inputs = {1, 7};  // a and a second model input
  add.outputs = {8};
  two.tensors.push_back(image("d", 16, 8, 4));
  two.nodes.insert(two.nodes.begin() + 1, add);
  two.inputs = {0, 7};
  two.outputs = {3, 8};
  CHECK_FALSE(passes::stage_of_steps(two, 0, 1));
}

TEST_CASE("more bands than output rows leave the graph untouched") {
  ir::Graph g = chain();
  const std::size_t tensors = g.tensors.size();
  CHECK_FALSE(passes::tile_stage(g, {{"A", "B", "C"}, 9}));  // c has 8 rows
  CHECK(g.tensors.size() == tensors);
  CHECK(g.nodes.size() == 3);
  CHECK(passes::tile_stage(g, {{"A", "B", "C"}, 8}));
}

TEST_CASE("a Concat input written in place stays in place in its band of the Concat, even the stage's output's") {
  // x -> A (1x1) -> a, in place in c at channel 0; x -> B (3x3) -> b, copied; Concat(a, b) -> c.
  ir::Graph g;
  g.source = "hand.onnx";
  g.tensors = {image("x", 8, 4, 4), image("a", 8, 4, 2),    image("b", 8, 4, 2),
               image("c", 8, 4, 4), weights("wa", 2, 4, 1), weights("wb", 2, 4, 3)};
  g.tensors[1].slice_of = 3;
  g.tensors[1].slice_offset = 0;
  g.tensors[1].slice_pixel_stride = 4;
  ir::Node concat;
  concat.name = "Concat";
  concat.op = ir::OpKind::Concat;
  concat.attrs.axis = 3;
  concat.inputs = {1, 2};
  concat.outputs = {3};
  g.nodes = {conv("A", 0, 4, 1, 1, 1, 0), conv("B", 0, 5, 2, 3, 1, 1), concat};
  g.inputs = {0};
  g.outputs = {3};
  REQUIRE(passes::tile_stage(g, {{"A", "B", "Concat"}, 2}));
  const ir::Tensor& a_rows = out0(g, "A [band 2/2]");
  const ir::TensorId c_rows = node(g, "Concat [band 2/2]").outputs[0];
  CHECK(a_rows.slice_of == c_rows);  // the Concat's band then copies b alone
  CHECK(a_rows.slice_offset == 0);
  CHECK(a_rows.slice_pixel_stride == 4);
  CHECK(g.tensors[c_rows].slice_of == 3);  // which lies in c from row 4 on
  CHECK(g.tensors[c_rows].slice_offset == 4 * 4 * 4);
}

TEST_CASE(
    "a grid's tiles copy the columns they read of the stage's input, pad only at the image's edges, and "
    "each band's tiles are copied side by side into its rows of the output") {
  ir::Graph g = chain();
  const auto tiled = passes::tile_stage(g, {{"A", "B", "C"}, 2, 2, false});
  REQUIRE(tiled);
  // Band 1, column 2 makes c's rows 0-3, columns 2-3. C reads b's rows 0-3, columns 2-3; B (3x3,
  // stride 2, pad 1) reads a's rows 0-7 (the top pad kept) and columns 3-7 (2*2 - 1 = 3, no left
  // pad inside the image; 3*2 - 1 + 3 = 8 reaches the right edge exactly: no right pad);
  // A (3x3, pad 1) reads x's rows 0-8 and columns 2-7, and its window passes the right edge by one.
  const std::string tile = "band 1/2, column 2/2";
  CHECK(out0(g, "C [" + tile + "]").name == "c [rows 0-3, cols 2-3]");
  CHECK(out0(g, "C [" + tile + "]").slice_of == ir::kNoTensor);
  CHECK(out0(g, "A [" + tile + "]").name == "a [rows 0-7, cols 3-7]");
  CHECK(node(g, "B [" + tile + "]").attrs.pads == std::vector<std::int64_t>{1, 0, 0, 0});
  CHECK(node(g, "A [" + tile + "]").attrs.pads == std::vector<std::int64_t>{1, 0, 0, 1});
  // x's columns 2-7 are copied (a Slice from x) before A reads them.
  const ir::Node& copy = node(g, "copy of x [rows 0-8, cols 2-7] [" + tile + "]");
  CHECK(copy.op == ir::OpKind::Slice);
  CHECK(copy.inputs == std::vector<ir::TensorId>{0});
  CHECK(copy.attrs.starts == std::vector<std::int64_t>{0, 0, 0, 2});
  CHECK(node(g, "A [" + tile + "]").inputs[0] == copy.outputs[0]);
  // Band 1's two tiles of c are copied into c's rows 0-3 (a Concat along W, in place in c), and a
  // Concat along H of the bands, all in place, makes c.
  const ir::Node& columns = node(g, "C [band 1/2, columns]");
  CHECK(columns.op == ir::OpKind::Concat);
  CHECK(columns.attrs.axis == 2);
  CHECK(columns.inputs == std::vector<ir::TensorId>{node(g, "C [band 1/2, column 1/2]").outputs[0],
                                                    node(g, "C [" + tile + "]").outputs[0]});
  CHECK(out0(g, "C [band 1/2, columns]").slice_of == 3);
  CHECK(out0(g, "C [band 2/2, columns]").slice_offset == 4 * 4 * 4);
  CHECK(g.nodes.back().attrs.axis == 1);
  CHECK(g.nodes.back().inputs.size() == 2);
  CHECK(g.nodes.size() == 4 * (1 + 3) + 2 + 1);
  // The copies: x's columns of each tile, and c once.
  std::int64_t copied = 0;
  for (const ir::Node& n : g.nodes)
    if (n.op == ir::OpKind::Slice || (n.op == ir::OpKind::Concat && n.attrs.axis == 2))
      copied += g.tensors[n.outputs[0]].bytes();
  CHECK(tiled->copied_bytes == copied);
  CHECK(copied > 16 * 8 * 4 + 8 * 4 * 4);  // the halo columns are copied twice
}

TEST_CASE("a node of a tile that reads other columns of a tensor than the tile holds reads a copy of them") {
  ir::Graph g = residual();
  REQUIRE(passes::tile_stage(g, {{"A", "B", "Add"}, 2, 2, false}));
  // Tile (2, 2) makes c's rows 4-7, columns 2-3: B needs a's rows 3-7, columns 1-3, and Add a's
  // rows 4-7, columns 2-3, which no view of a's tile gives: Add reads a copy.
  const std::string tile = "band 2/2, column 2/2";
  CHECK(out0(g, "A [" + tile + "]").name == "a [rows 3-7, cols 1-3]");
  const ir::Node& copy = node(g, "copy of a [rows 4-7, cols 2-3] [" + tile + "]");
  CHECK(copy.inputs[0] == node(g, "A [" + tile + "]").outputs[0]);
  CHECK(copy.attrs.starts == std::vector<std::int64_t>{0, 0, 1, 1});
  CHECK(node(g, "Add [" + tile + "]").inputs[0] == copy.outputs[0]);
  CHECK(node(g, "B [" + tile + "]").inputs[0] == node(g, "A [" + tile + "]").outputs[0]);
}

TEST_CASE("one tile of a grid makes only the rows and columns its output needs, as a tile of a larger grid would") {
  // x [5x5x4] -> A: 3x3 s1 p1 conv [5x5x4] -> P: 2x2 max pool, stride 2 [2x2x4]: P reads a's rows
  // and columns 0-3 only (the last row and column fall outside every window). The whole output in
  // one tile makes a's 4x4 and reads x's 5x5 (A's window at row 3 reaches row 4): the cut that a
  // 1-pixel tile of a larger image's grid makes, where one band of whole rows keeps every column.
  ir::Graph g;
  g.source = "hand.onnx";
  g.tensors = {image("x", 5, 5, 4), image("a", 5, 5, 4), image("p", 2, 2, 4), weights("wa", 4, 4, 3)};
  ir::Node pool;
  pool.name = "P";
  pool.op = ir::OpKind::MaxPool;
  pool.inputs = {1};
  pool.outputs = {2};
  pool.attrs.strides = {2, 2};
  pool.attrs.dilations = {1, 1};
  pool.attrs.pads = {0, 0, 0, 0};
  pool.attrs.kernel_shape = {2, 2};
  g.nodes = {conv("A", 0, 3, 1, 3, 1, 1), pool};
  g.inputs = {0};
  g.outputs = {2};
  const ir::Graph untiled = g;
  ir::Graph bands = untiled;
  REQUIRE(passes::tile_stage(bands, {{"A", "P"}, 1}));
  CHECK(out0(bands, "A [band 1/1]").name == "a [rows 0-3]");
  CHECK(out0(bands, "A [band 1/1]").shape == std::vector<std::int64_t>{1, 4, 5, 4});
  const auto tiled = passes::tile_stage(g, {{"A", "P"}, 1, 1, false});
  REQUIRE(tiled);
  const std::string tile = "band 1/1, column 1/1";
  CHECK(out0(g, "A [" + tile + "]").name == "a [rows 0-3, cols 0-3]");
  CHECK(node(g, "A [" + tile + "]").attrs.pads == std::vector<std::int64_t>{1, 1, 0, 0});
  CHECK(in0(g, "A [" + tile + "]").name == "x [rows 0-4, cols 0-4]");  // all of x: read in place
  CHECK(out0(g, "P [band 1/1, columns]").slice_of == 2);
  CHECK(tiled->copied_bytes == 2 * 2 * 4);  // the tile of p into p
  // A band of whole rows cannot have columns (p has two: as a grid, that tiles).
  ir::Graph split = untiled;
  CHECK_FALSE(passes::tile_stage(split, {{"A", "P"}, 1, 2}));
  CHECK(passes::tile_stage(split, {{"A", "P"}, 1, 2, false}));
}
