// Shape rules for the operators that move data without computing on it: Reshape, Transpose,
// Squeeze, Unsqueeze, Flatten, Concat, Split, Slice, Gather, Expand, Shape, Constant and
// ConstantOfShape. They carry known integer values through, so shapes built in the graph
// (Shape → Gather → Unsqueeze → Concat → Reshape, as PyTorch exports them) resolve.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "shape_rules.h"

namespace trn::graph::detail {

std::int64_t sliceLength(std::int64_t size, std::int64_t start, std::int64_t end, std::int64_t step,
                         std::int64_t* first) {
  *first = 0;
  if (size == 0) {
    return 0;
  }
  if (start < 0) {
    start = std::max<std::int64_t>(start, -size) + size;
  }
  if (end < 0) {
    end = std::max<std::int64_t>(end, -size - 1) + size;
  }
  if (step > 0) {
    start = std::clamp<std::int64_t>(start, 0, size);
    end = std::clamp<std::int64_t>(end, 0, size);
    *first = start;
    return end > start ? (end - start - 1) / step + 1 : 0;
  }
  start = std::clamp<std::int64_t>(start, 0, size - 1);
  end = std::clamp<std::int64_t>(end, -1, size - 1);
  *first = start;
  if (start <= end) {
    return 0;
  }
  // A step of INT64_MIN has no positive counterpart; any such step takes one element.
  return step == std::numeric_limits<std::int64_t>::min() ? 1 : (start - end - 1) / -step + 1;
}

namespace {

std::string show(const Sizes& s) { return Shape::of(s).toString(); }

/// Passes known values through an operator that only changes the shape.
void keepConstant(ShapeContext& ctx) {
  if (const std::vector<std::int64_t>* values = ctx.constant(0)) {
    ctx.setConstant(0, *values);
  }
}

Status reshape(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "data"));
  TRN_ASSIGN_OR_RETURN(std::vector<std::int64_t> target, ctx.requireConstant(1, "shape"));
  const Sizes in = ctx.sizes(0);
  const bool allowZero = ctx.node().intAttribute("allowzero").value_or(0) != 0;
  const std::optional<std::int64_t> count = product(in, 0, in.size());
  Sizes out;
  int inferred = -1;
  for (std::size_t k = 0; k < target.size(); ++k) {
    std::int64_t d = target[k];
    if (d == 0 && !allowZero) {
      if (k >= in.size()) {
        return ctx.error(fmt::format("shape {} copies dimension {} (0), which the input {} lacks",
                                     show(target), k, show(in)));
      }
      d = in[k];
    } else if (d == -1) {
      if (inferred >= 0) {
        return ctx.error(fmt::format("shape {} has more than one -1", show(target)));
      }
      inferred = static_cast<int>(k);
      d = 1;
    } else if (d < 0) {
      return ctx.error(fmt::format("shape {} has the invalid dimension {}", show(target), d));
    }
    out.push_back(d);
  }
  const std::optional<std::int64_t> known = product(out, 0, out.size());
  if (!count || !known) {
    return ctx.error("the element count overflows");
  }
  if (inferred >= 0) {
    if (*known == 0 || *count % *known != 0) {
      return ctx.error(
          fmt::format("cannot reshape {} ({} elements) to {}", show(in), *count, show(target)));
    }
    out[static_cast<std::size_t>(inferred)] = *count / *known;
  } else if (*known != *count) {
    return ctx.error(fmt::format("cannot reshape {} ({} elements) to {} ({} elements)", show(in),
                                 *count, show(out), *known));
  }
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, ctx.type(0), out));
  keepConstant(ctx);
  return Status();
}

Status transpose(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "data"));
  const Sizes in = ctx.sizes(0);
  std::vector<std::int64_t> perm;
  if (std::optional<std::vector<std::int64_t>> attr = ctx.node().intsAttribute("perm")) {
    perm = *attr;
  } else {
    for (std::size_t k = in.size(); k-- > 0;) {
      perm.push_back(static_cast<std::int64_t>(k));
    }
  }
  if (perm.size() != in.size()) {
    return ctx.error(fmt::format("perm {} does not match the rank {}", show(perm), in.size()));
  }
  std::set<std::int64_t> seen;
  Sizes out;
  for (std::int64_t p : perm) {
    TRN_ASSIGN_OR_RETURN(std::int64_t axis,
                         ctx.axis(p, static_cast<std::int64_t>(in.size()), "perm entry"));
    if (!seen.insert(axis).second) {
      return ctx.error(fmt::format("perm {} is not a permutation", show(perm)));
    }
    out.push_back(in[static_cast<std::size_t>(axis)]);
  }
  return ctx.setOutput(0, ctx.type(0), out);
}

/// The axes of Squeeze/Unsqueeze/Split-like operators: the attribute before opset 13, input 1
/// after.
Result<std::optional<std::vector<std::int64_t>>> axesOf(ShapeContext& ctx) {
  if (std::optional<std::vector<std::int64_t>> attr = ctx.node().intsAttribute("axes")) {
    return std::optional(*attr);
  }
  if (ctx.has(1)) {
    TRN_ASSIGN_OR_RETURN(std::vector<std::int64_t> axes, ctx.requireConstant(1, "axes"));
    return std::optional(axes);
  }
  return std::optional<std::vector<std::int64_t>>();
}

Status squeeze(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "data"));
  const Sizes in = ctx.sizes(0);
  TRN_ASSIGN_OR_RETURN(std::optional<std::vector<std::int64_t>> axes, axesOf(ctx));
  std::set<std::int64_t> drop;
  if (axes) {
    for (std::int64_t a : *axes) {
      TRN_ASSIGN_OR_RETURN(std::int64_t axis,
                           ctx.axis(a, static_cast<std::int64_t>(in.size()), "axis"));
      if (in[static_cast<std::size_t>(axis)] != 1) {
        return ctx.error(
            fmt::format("cannot squeeze axis {} of {}: its size is not 1", a, show(in)));
      }
      drop.insert(axis);
    }
  }
  Sizes out;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const bool gone = axes ? drop.contains(static_cast<std::int64_t>(k)) : in[k] == 1;
    if (!gone) {
      out.push_back(in[k]);
    }
  }
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, ctx.type(0), out));
  keepConstant(ctx);
  return Status();
}

Status unsqueeze(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "data"));
  const Sizes in = ctx.sizes(0);
  TRN_ASSIGN_OR_RETURN(std::optional<std::vector<std::int64_t>> axes, axesOf(ctx));
  if (!axes) {
    return ctx.error("the axes are missing");
  }
  const auto rank = static_cast<std::int64_t>(in.size() + axes->size());
  std::set<std::int64_t> added;
  for (std::int64_t a : *axes) {
    TRN_ASSIGN_OR_RETURN(std::int64_t axis, ctx.axis(a, rank, "axis"));
    if (!added.insert(axis).second) {
      return ctx.error(fmt::format("axis {} is listed twice", a));
    }
  }
  Sizes out;
  std::size_t next = 0;
  for (std::int64_t k = 0; k < rank; ++k) {
    out.push_back(added.contains(k) ? 1 : in[next++]);
  }
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, ctx.type(0), out));
  keepConstant(ctx);
  return Status();
}

Status flatten(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "input"));
  const Sizes in = ctx.sizes(0);
  const auto rank = static_cast<std::int64_t>(in.size());
  const std::int64_t a = ctx.node().intAttribute("axis").value_or(1);
  if (a < -rank || a > rank) {
    return ctx.error(fmt::format("axis {} is out of range for rank {}", a, rank));
  }
  const auto axis = static_cast<std::size_t>(a < 0 ? a + rank : a);
  const auto outer = product(in, 0, axis);
  const auto inner = product(in, axis, in.size());
  if (!outer || !inner) {
    return ctx.error("the element count overflows");
  }
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, ctx.type(0), {*outer, *inner}));
  keepConstant(ctx);
  return Status();
}

Status concat(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "inputs"));
  const std::optional<std::int64_t> a = ctx.node().intAttribute("axis");
  if (!a) {
    return ctx.error("the attribute 'axis' is required");
  }
  Sizes out = ctx.sizes(0);
  TRN_ASSIGN_OR_RETURN(std::int64_t axis,
                       ctx.axis(*a, static_cast<std::int64_t>(out.size()), "axis"));
  const auto ax = static_cast<std::size_t>(axis);
  bool allKnown = ctx.constant(0) != nullptr;
  std::vector<std::int64_t> values = allKnown ? *ctx.constant(0) : std::vector<std::int64_t>();
  for (std::size_t i = 1; i < ctx.node().inputs.size(); ++i) {
    TRN_RETURN_IF_ERROR(ctx.require(i, "inputs"));
    const Sizes s = ctx.sizes(i);
    if (ctx.type(i) != ctx.type(0)) {
      return ctx.error(fmt::format("input {} is {} but input 0 is {}", i,
                                   elementTypeName(ctx.type(i)), elementTypeName(ctx.type(0))));
    }
    if (s.size() != out.size()) {
      return ctx.error(fmt::format("input {} {} has rank {}, input 0 rank {}", i, show(s), s.size(),
                                   out.size()));
    }
    for (std::size_t k = 0; k < s.size(); ++k) {
      if (k != ax && s[k] != out[k]) {
        return ctx.error(fmt::format("input {} {} differs from input 0 {} in dimension {}", i,
                                     show(s), show(ctx.sizes(0)), k));
      }
    }
    if (__builtin_add_overflow(out[ax], s[ax], &out[ax])) {
      return ctx.error("the concatenated size overflows");
    }
    if (const std::vector<std::int64_t>* v = ctx.constant(i); allKnown && v != nullptr) {
      values.insert(values.end(), v->begin(), v->end());
    } else {
      allKnown = false;
    }
  }
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, ctx.type(0), out));
  if (allKnown && out.size() == 1) {
    ctx.setConstant(0, std::move(values));
  }
  return Status();
}

Status split(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "input"));
  const Sizes in = ctx.sizes(0);
  TRN_ASSIGN_OR_RETURN(std::int64_t axis, ctx.axis(ctx.node().intAttribute("axis").value_or(0),
                                                   static_cast<std::int64_t>(in.size()), "axis"));
  const std::int64_t total = in[static_cast<std::size_t>(axis)];
  const auto n = static_cast<std::int64_t>(ctx.outputCount());
  if (n == 0) {
    return ctx.error("Split needs at least one output");
  }
  std::vector<std::int64_t> parts;
  if (std::optional<std::vector<std::int64_t>> attr = ctx.node().intsAttribute("split")) {
    parts = *attr;
  } else if (ctx.has(1)) {
    TRN_ASSIGN_OR_RETURN(parts, ctx.requireConstant(1, "split"));
  } else if (ctx.node().intAttribute("num_outputs") || total % n == 0) {
    const std::int64_t chunk = (total + n - 1) / n;
    for (std::int64_t k = 0; k < n; ++k) {
      parts.push_back(std::min(chunk, total - k * chunk));
    }
  } else {
    return ctx.error(fmt::format("dimension {} of size {} does not split evenly into {} outputs",
                                 axis, total, n));
  }
  std::int64_t sum = 0;
  for (std::int64_t p : parts) {
    if (p < 0 || __builtin_add_overflow(sum, p, &sum)) {
      return ctx.error(fmt::format("the split sizes {} are invalid", show(parts)));
    }
  }
  if (static_cast<std::int64_t>(parts.size()) != n || sum != total) {
    return ctx.error(fmt::format("the split sizes {} do not give {} outputs summing to {}",
                                 show(parts), n, total));
  }
  for (std::size_t k = 0; k < parts.size(); ++k) {
    Sizes out = in;
    out[static_cast<std::size_t>(axis)] = parts[k];
    TRN_RETURN_IF_ERROR(ctx.setOutput(k, ctx.type(0), out));
  }
  return Status();
}

Status slice(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "data"));
  const Sizes in = ctx.sizes(0);
  const auto rank = static_cast<std::int64_t>(in.size());
  std::vector<std::int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.node().intsAttribute("starts").value_or(std::vector<std::int64_t>{});
    ends = ctx.node().intsAttribute("ends").value_or(std::vector<std::int64_t>{});
    axes = ctx.node().intsAttribute("axes").value_or(std::vector<std::int64_t>{});
  } else {
    TRN_ASSIGN_OR_RETURN(starts, ctx.requireConstant(1, "starts"));
    TRN_ASSIGN_OR_RETURN(ends, ctx.requireConstant(2, "ends"));
    if (ctx.has(3)) {
      TRN_ASSIGN_OR_RETURN(axes, ctx.requireConstant(3, "axes"));
    }
    if (ctx.has(4)) {
      TRN_ASSIGN_OR_RETURN(steps, ctx.requireConstant(4, "steps"));
    }
  }
  if (axes.empty()) {
    for (std::size_t k = 0; k < starts.size(); ++k) {
      axes.push_back(static_cast<std::int64_t>(k));
    }
  }
  if (steps.empty()) {
    steps.assign(starts.size(), 1);
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return ctx.error("starts, ends, axes and steps differ in length");
  }
  Sizes out = in;
  std::set<std::int64_t> seen;
  std::int64_t first1d = 0;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    TRN_ASSIGN_OR_RETURN(std::int64_t axis, ctx.axis(axes[k], rank, "axis"));
    if (!seen.insert(axis).second) {
      return ctx.error(fmt::format("axis {} is sliced twice", axes[k]));
    }
    if (steps[k] == 0) {
      return ctx.error("a step is 0");
    }
    const auto ax = static_cast<std::size_t>(axis);
    out[ax] = sliceLength(in[ax], starts[k], ends[k], steps[k], &first1d);
  }
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, ctx.type(0), out));
  if (const std::vector<std::int64_t>* v = ctx.constant(0); v != nullptr && in.size() == 1) {
    std::vector<std::int64_t> values;
    const std::int64_t step = steps.empty() ? 1 : steps[0];
    for (std::int64_t k = 0; k < out[0]; ++k) {
      values.push_back((*v)[static_cast<std::size_t>(first1d + k * step)]);
    }
    ctx.setConstant(0, std::move(values));
  }
  return Status();
}

Status gather(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "data"));
  TRN_RETURN_IF_ERROR(ctx.require(1, "indices"));
  const Sizes data = ctx.sizes(0);
  const Sizes indices = ctx.sizes(1);
  if (!isInteger(ctx.type(1))) {
    return ctx.error("the indices must be integers");
  }
  TRN_ASSIGN_OR_RETURN(std::int64_t axis, ctx.axis(ctx.node().intAttribute("axis").value_or(0),
                                                   static_cast<std::int64_t>(data.size()), "axis"));
  const auto ax = static_cast<std::size_t>(axis);
  const std::int64_t size = data[ax];
  const std::vector<std::int64_t>* known = ctx.constant(1);
  if (known != nullptr) {
    for (std::int64_t i : *known) {
      if (i < -size || i >= size) {
        return ctx.error(
            fmt::format("index {} is out of range for dimension {} of size {}", i, axis, size));
      }
    }
  }
  Sizes out(data.begin(), data.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, ctx.type(0), out));
  if (const std::vector<std::int64_t>* v = ctx.constant(0);
      v != nullptr && known != nullptr && data.size() == 1) {
    std::vector<std::int64_t> values;
    for (std::int64_t i : *known) {
      values.push_back((*v)[static_cast<std::size_t>(i < 0 ? i + size : i)]);
    }
    ctx.setConstant(0, std::move(values));
  }
  return Status();
}

Status expand(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "input"));
  TRN_ASSIGN_OR_RETURN(std::vector<std::int64_t> target, ctx.requireConstant(1, "shape"));
  for (std::int64_t d : target) {
    if (d < 0) {
      return ctx.error(fmt::format("shape {} has a negative dimension", show(target)));
    }
  }
  TRN_ASSIGN_OR_RETURN(Sizes out, ctx.broadcast(ctx.sizes(0), target));
  return ctx.setOutput(0, ctx.type(0), out);
}

Status shapeOp(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "data"));
  const Sizes in = ctx.sizes(0);
  const auto rank = static_cast<std::int64_t>(in.size());
  std::int64_t start = ctx.node().intAttribute("start").value_or(0);
  std::int64_t end = ctx.node().intAttribute("end").value_or(rank);
  start = std::clamp<std::int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<std::int64_t>(end < 0 ? end + rank : end, 0, rank);
  const std::vector<std::int64_t> values(in.begin() + start, in.begin() + std::max(start, end));
  TRN_RETURN_IF_ERROR(
      ctx.setOutput(0, ElementType::kInt64, {static_cast<std::int64_t>(values.size())}));
  ctx.setConstant(0, values);
  return Status();
}

Status constant(ShapeContext& ctx) {
  const Node& node = ctx.node();
  if (node.attributes.size() != 1) {
    return ctx.error("a Constant needs exactly one value attribute");
  }
  const Attribute& a = node.attributes[0];
  if (const auto* t = std::get_if<Tensor>(&a.value); t != nullptr && a.name == "value") {
    TRN_RETURN_IF_ERROR(ctx.setOutput(0, t->type, t->shape.sizes()));
    if (std::optional<std::vector<std::int64_t>> v = t->toInt64()) {
      ctx.setConstant(0, *v);
    }
  } else if (a.name == "value_float") {
    TRN_RETURN_IF_ERROR(ctx.setOutput(0, ElementType::kFp32, {}));
  } else if (const auto* fs = std::get_if<std::vector<float>>(&a.value)) {
    TRN_RETURN_IF_ERROR(
        ctx.setOutput(0, ElementType::kFp32, {static_cast<std::int64_t>(fs->size())}));
  } else if (const auto* i = std::get_if<std::int64_t>(&a.value)) {
    TRN_RETURN_IF_ERROR(ctx.setOutput(0, ElementType::kInt64, {}));
    ctx.setConstant(0, {*i});
  } else if (const auto* is = std::get_if<std::vector<std::int64_t>>(&a.value)) {
    TRN_RETURN_IF_ERROR(
        ctx.setOutput(0, ElementType::kInt64, {static_cast<std::int64_t>(is->size())}));
    ctx.setConstant(0, *is);
  } else {
    return ctx.error(fmt::format("the Constant attribute '{}' is not supported", a.name));
  }
  return Status();
}

Status constantOfShape(ShapeContext& ctx) {
  TRN_ASSIGN_OR_RETURN(std::vector<std::int64_t> shape, ctx.requireConstant(0, "shape"));
  ElementType type = ElementType::kFp32;
  std::optional<std::int64_t> fill;
  if (const Attribute* a = ctx.node().attribute("value")) {
    if (const auto* t = std::get_if<Tensor>(&a->value)) {
      type = t->type;
      if (std::optional<std::vector<std::int64_t>> v = t->toInt64(); v && v->size() == 1) {
        fill = (*v)[0];
      }
    }
  }
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, type, shape));
  const auto count = product(shape, 0, shape.size());
  if (fill && count && *count <= kMaxTrackedElements) {
    ctx.setConstant(0, std::vector<std::int64_t>(static_cast<std::size_t>(*count), *fill));
  }
  return Status();
}

}  // namespace

void addTensorRules(ShapeRules& rules) {
  rules["Reshape"] = reshape;
  rules["Transpose"] = transpose;
  rules["Squeeze"] = squeeze;
  rules["Unsqueeze"] = unsqueeze;
  rules["Flatten"] = flatten;
  rules["Concat"] = concat;
  rules["Split"] = split;
  rules["Slice"] = slice;
  rules["Gather"] = gather;
  rules["Expand"] = expand;
  rules["Shape"] = shapeOp;
  rules["Constant"] = constant;
  rules["ConstantOfShape"] = constantOfShape;
}

}  // namespace trn::graph::detail
