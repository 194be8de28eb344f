// The model file to the integer IR, whichever format it is in: a .tflite model (TFLite's file
// identifier, or the extension) through import_tflite, anything else through import_onnx.
#pragma once

#include <string>

#include "ir/ir.hpp"

namespace tightfit::import {

ir::Graph import_model(const std::string& path);

}  // namespace tightfit::import
