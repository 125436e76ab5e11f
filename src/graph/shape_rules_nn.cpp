// Shape rules for convolution networks: Conv, MaxPool, AveragePool, the global pools and
// BatchNormalization (inference form). Spatial output sizes follow ONNX's formulas for explicit
// pads, auto_pad SAME_UPPER / SAME_LOWER / VALID, dilations and ceil_mode.
#include <fmt/format.h>

#include "shape_rules.h"

namespace trn::graph::detail {
namespace {

std::string show(const Sizes& s) { return Shape::of(s).toString(); }

struct Window {
  Sizes kernel;
  Sizes strides;
  Sizes dilations;
  Sizes pads;  ///< begins then ends
  std::string autoPad;
  bool ceilMode = false;
};

Result<Window> windowOf(ShapeContext& ctx, std::size_t spatial, const Sizes& kernel) {
  const Node& node = ctx.node();
  Window w;
  w.kernel = kernel;
  w.strides = node.intsAttribute("strides").value_or(Sizes(spatial, 1));
  w.dilations = node.intsAttribute("dilations").value_or(Sizes(spatial, 1));
  w.pads = node.intsAttribute("pads").value_or(Sizes(2 * spatial, 0));
  w.ceilMode = node.intAttribute("ceil_mode").value_or(0) != 0;
  if (const Attribute* a = node.attribute("auto_pad")) {
    if (const auto* s = std::get_if<std::string>(&a->value)) {
      w.autoPad = *s;
    }
  }
  if (w.autoPad.empty()) {
    w.autoPad = "NOTSET";
  }
  if (w.kernel.size() != spatial || w.strides.size() != spatial || w.dilations.size() != spatial ||
      w.pads.size() != 2 * spatial) {
    return ctx.error(
        fmt::format("kernel_shape {}, strides {}, dilations {} or pads {} do not "
                    "match the {} spatial dimensions",
                    show(w.kernel), show(w.strides), show(w.dilations), show(w.pads), spatial));
  }
  for (std::size_t k = 0; k < spatial; ++k) {
    if (w.kernel[k] < 1 || w.strides[k] < 1 || w.dilations[k] < 1 || w.pads[k] < 0 ||
        w.pads[k + spatial] < 0 || w.kernel[k] > (std::int64_t{1} << 24) ||
        w.dilations[k] > (std::int64_t{1} << 24) || w.strides[k] > (std::int64_t{1} << 32) ||
        w.pads[k] > (std::int64_t{1} << 40) || w.pads[k + spatial] > (std::int64_t{1} << 40)) {
      return ctx.error(
          "kernel sizes, strides and dilations must be positive and pads "
          "non-negative (and not huge)");
    }
  }
  if (w.autoPad != "NOTSET" && w.autoPad != "VALID" && w.autoPad != "SAME_UPPER" &&
      w.autoPad != "SAME_LOWER") {
    return ctx.error(
        fmt::format("auto_pad '{}' is not one of NOTSET, VALID, SAME_UPPER, "
                    "SAME_LOWER",
                    w.autoPad));
  }
  return w;
}

/// Output spatial sizes of a sliding window over `in` (the spatial dims only).
Result<Sizes> slide(ShapeContext& ctx, const Sizes& in, const Window& w) {
  Sizes out;
  for (std::size_t k = 0; k < in.size(); ++k) {
    if (in[k] > (std::int64_t{1} << 48)) {
      return ctx.error(fmt::format("spatial dimension {} of size {} is too large", k, in[k]));
    }
    const std::int64_t extent = w.dilations[k] * (w.kernel[k] - 1) + 1;
    std::int64_t o = 0;
    if (w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER") {
      o = (in[k] + w.strides[k] - 1) / w.strides[k];
    } else {
      const std::int64_t padded =
          in[k] + (w.autoPad == "VALID" ? 0 : w.pads[k] + w.pads[k + in.size()]);
      if (padded < extent) {
        return ctx.error(
            fmt::format("the window {} (dilated {}) is larger than the padded input "
                        "{} in spatial dimension {}",
                        w.kernel[k], extent, padded, k));
      }
      const std::int64_t span = padded - extent;
      o = (w.ceilMode ? (span + w.strides[k] - 1) / w.strides[k] : span / w.strides[k]) + 1;
      // With ceil_mode the last window must start inside the input or its begin padding.
      if (w.ceilMode && (o - 1) * w.strides[k] >= in[k] + w.pads[k]) {
        --o;
      }
    }
    out.push_back(o);
  }
  return out;
}

Status conv(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "X"));
  TRN_RETURN_IF_ERROR(ctx.require(1, "W"));
  const Sizes x = ctx.sizes(0);
  const Sizes w = ctx.sizes(1);
  if (x.size() < 3 || w.size() != x.size()) {
    return ctx.error(
        fmt::format("X {} and W {} must have the same rank, at least 3", show(x), show(w)));
  }
  const std::int64_t group = ctx.node().intAttribute("group").value_or(1);
  if (group < 1 || x[1] % group != 0 || w[0] % group != 0) {
    return ctx.error(fmt::format("group {} does not divide the {} input and {} output channels",
                                 group, x[1], w[0]));
  }
  std::int64_t channels = 0;
  if (__builtin_mul_overflow(w[1], group, &channels) || channels != x[1]) {
    return ctx.error(
        fmt::format("W {} expects {} input channels per group but X {} has {} "
                    "channels in {} groups",
                    show(w), w[1], show(x), x[1], group));
  }
  if (ctx.has(2) && ctx.sizes(2) != Sizes{w[0]}) {
    return ctx.error(fmt::format("the bias {} must be [{}]", show(ctx.sizes(2)), w[0]));
  }
  const std::size_t spatial = x.size() - 2;
  const Sizes kernel =
      ctx.node().intsAttribute("kernel_shape").value_or(Sizes(w.begin() + 2, w.end()));
  if (kernel != Sizes(w.begin() + 2, w.end())) {
    return ctx.error(fmt::format("kernel_shape {} differs from W's spatial dims {}", show(kernel),
                                 show(Sizes(w.begin() + 2, w.end()))));
  }
  TRN_ASSIGN_OR_RETURN(Window window, windowOf(ctx, spatial, kernel));
  TRN_ASSIGN_OR_RETURN(Sizes dims, slide(ctx, Sizes(x.begin() + 2, x.end()), window));
  Sizes out = {x[0], w[0]};
  out.insert(out.end(), dims.begin(), dims.end());
  return ctx.setOutput(0, ctx.type(0), out);
}

Status pool(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "X"));
  const Sizes x = ctx.sizes(0);
  if (x.size() < 3) {
    return ctx.error(fmt::format("X {} must have rank 3 or more", show(x)));
  }
  const std::optional<Sizes> kernel = ctx.node().intsAttribute("kernel_shape");
  if (!kernel) {
    return ctx.error("the attribute 'kernel_shape' is required");
  }
  TRN_ASSIGN_OR_RETURN(Window window, windowOf(ctx, x.size() - 2, *kernel));
  TRN_ASSIGN_OR_RETURN(Sizes dims, slide(ctx, Sizes(x.begin() + 2, x.end()), window));
  Sizes out = {x[0], x[1]};
  out.insert(out.end(), dims.begin(), dims.end());
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, ctx.type(0), out));
  return ctx.setOutput(1, ElementType::kInt64, out);  // MaxPool's optional Indices
}

Status globalPool(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "X"));
  Sizes out = ctx.sizes(0);
  if (out.size() < 3) {
    return ctx.error(fmt::format("X {} must have rank 3 or more", show(out)));
  }
  std::fill(out.begin() + 2, out.end(), 1);
  return ctx.setOutput(0, ctx.type(0), out);
}

Status batchNorm(ShapeContext& ctx) {
  const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (std::size_t i = 0; i < 5; ++i) {
    TRN_RETURN_IF_ERROR(ctx.require(i, names[i]));
  }
  const Sizes x = ctx.sizes(0);
  if (x.size() < 2) {
    return ctx.error(fmt::format("X {} must have rank 2 or more", show(x)));
  }
  if (ctx.node().intAttribute("training_mode").value_or(0) != 0 || ctx.outputCount() > 1) {
    return ctx.error("training mode (running statistics as outputs) is not supported");
  }
  for (std::size_t i = 1; i < 5; ++i) {
    if (ctx.sizes(i) != Sizes{x[1]}) {
      return ctx.error(fmt::format("{} {} must be [{}], one value per channel", names[i],
                                   show(ctx.sizes(i)), x[1]));
    }
  }
  return ctx.setOutput(0, ctx.type(0), x);
}

}  // namespace

void addNnRules(ShapeRules& rules) {
  rules["Conv"] = conv;
  rules["MaxPool"] = pool;
  rules["AveragePool"] = pool;
  rules["GlobalAveragePool"] = globalPool;
  rules["GlobalMaxPool"] = globalPool;
  rules["BatchNormalization"] = batchNorm;
}

}  // namespace trn::graph::detail
