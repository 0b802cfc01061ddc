#include "models/paper_modules.hpp"
#include "core/enum_names.hpp"

#include <torch/torch.h>

#include <chrono>
#include <stdexcept>

namespace coinfer::models {

const std::vector<PaperModule>& paper_modules() {
  static const std::vector<PaperModule> all = {PaperModule::avgpool,   PaperModule::bn,           PaperModule::bn_relu,
                                               PaperModule::conv_bn,   PaperModule::conv_bn_relu, PaperModule::conv,
                                               PaperModule::conv_relu, PaperModule::linear,       PaperModule::maxpool};
  return all;
}

namespace {
constexpr auto kPaperModuleNames =
    enum_names<PaperModule>({"avgpool", "bn", "bn+relu", "conv+bn", "conv+bn+relu", "conv", "conv+relu", "linear", "maxpool"});
static_assert(kPaperModuleNames.names_each_of(PaperModule::avgpool, PaperModule::maxpool));
}  // namespace

const char* paper_module_name(PaperModule m) { return kPaperModuleNames.name(m); }

std::optional<PaperModule> paper_module_named(const std::string& name) {
  for (PaperModule m : paper_modules())
    if (name == paper_module_name(m)) return m;
  return std::nullopt;
}

bool has_convolution(PaperModule m) {
  return m == PaperModule::conv || m == PaperModule::conv_bn || m == PaperModule::conv_bn_relu || m == PaperModule::conv_relu;
}
bool has_batch_norm(PaperModule m) {
  return m == PaperModule::bn || m == PaperModule::bn_relu || m == PaperModule::conv_bn || m == PaperModule::conv_bn_relu;
}
bool has_relu(PaperModule m) { return m == PaperModule::bn_relu || m == PaperModule::conv_bn_relu || m == PaperModule::conv_relu; }
bool is_pool(PaperModule m) { return m == PaperModule::avgpool || m == PaperModule::maxpool; }

int paper_module_output_size(const PaperModuleConfig& c) {
  if (!has_convolution(c.module) && !is_pool(c.module)) return c.l;
  return (c.l + 2 * (c.k / 2) - c.k) / c.s + 1;
}

double paper_module_input_elements(const PaperModuleConfig& c) {
  if (c.module == PaperModule::linear) return static_cast<double>(c.n) * c.c_in;
  return static_cast<double>(c.n) * c.c_in * c.l * c.l;
}

double paper_module_weights(const PaperModuleConfig& c) {
  if (is_pool(c.module)) return 0;
  if (c.module == PaperModule::linear) return static_cast<double>(c.c_in) * c.c_out + c.c_out;
  if (has_convolution(c.module)) {
    const double w = static_cast<double>(c.c_out) * c.c_in * c.k * c.k;
    return w + (has_batch_norm(c.module) ? 2.0 * c.c_out : static_cast<double>(c.c_out));  // bn's scale and shift, or the bias
  }
  return 2.0 * c.c_in;  // bn: scale and shift per channel
}

namespace {
double output_elements(const PaperModuleConfig& c) {
  const double o = paper_module_output_size(c);
  if (c.module == PaperModule::linear) return static_cast<double>(c.n) * c.c_out;
  if (has_convolution(c.module)) return static_cast<double>(c.n) * c.c_out * o * o;
  return static_cast<double>(c.n) * c.c_in * o * o;
}
}  // namespace

double paper_module_flops(const PaperModuleConfig& c) {
  const double out = output_elements(c);
  double f = 0;
  if (c.module == PaperModule::linear)
    f = 2.0 * c.n * c.c_in * c.c_out;
  else if (has_convolution(c.module))
    f = 2.0 * out * c.c_in * c.k * c.k;
  else if (is_pool(c.module))
    f = out * c.k * c.k;
  if (has_batch_norm(c.module)) f += 2 * out;
  if (has_relu(c.module)) f += out;
  return f;
}

double paper_module_bytes(const PaperModuleConfig& c) { return 4 * (paper_module_input_elements(c) + output_elements(c) + paper_module_weights(c)); }

FeatureLayout paper_module_features(PaperModule m) {
  FeatureLayout f;
  auto add = [&](const char* name, const char* cls) { f.names.push_back(name), f.classes.push_back(cls); };
  if (is_pool(m)) {
    for (const char* n : {"N", "C_i", "L", "K", "S"}) add(n, "sampling");
  } else if (m == PaperModule::bn || m == PaperModule::bn_relu) {
    for (const char* n : {"N", "L", "C_i"}) add(n, "sampling");
  } else if (m == PaperModule::linear) {
    for (const char* n : {"N", "C_i", "C_o"}) add(n, "sampling");
  } else {
    for (const char* n : {"N", "L", "C_i", "C_o", "K", "S"}) add(n, "sampling");
  }
  add("M", "measurable");
  add("U", "measurable");
  add("N_d", "inferable");
  if (!is_pool(m)) add("N_m", "inferable");
  return f;
}

std::vector<double> paper_module_feature_values(const PaperModuleConfig& c, double available_memory_bytes, double utilisation) {
  const FeatureLayout layout = paper_module_features(c.module);
  std::vector<double> v;
  for (const auto& name : layout.names) {
    if (name == "N")
      v.push_back(c.n);
    else if (name == "L")
      v.push_back(c.l);
    else if (name == "C_i")
      v.push_back(c.c_in);
    else if (name == "C_o")
      v.push_back(c.c_out);
    else if (name == "K")
      v.push_back(c.k);
    else if (name == "S")
      v.push_back(c.s);
    else if (name == "M")
      v.push_back(available_memory_bytes);
    else if (name == "U")
      v.push_back(utilisation);
    else if (name == "N_d")
      v.push_back(paper_module_input_elements(c));
    else
      v.push_back(paper_module_weights(c));  // N_m
  }
  return v;
}

PaperModuleConfig sample_paper_module(PaperModule m, RandomStream& rng, const PaperModuleBounds& bounds, RejectionCounts* counts) {
  static const int kSizes[] = {224, 112, 56, 32, 28, 27, 14, 13, 8, 7};
  static const int kKernels[] = {1, 3, 5, 7, 9};
  static const int kStrides[] = {1, 2, 4};
  auto uniform_int = [&](int lo, int hi) { return lo + static_cast<int>(rng.next_u64() % static_cast<std::uint64_t>(hi - lo + 1)); };
  auto pick = [&](const int* a, int n) { return a[rng.next_u64() % static_cast<std::uint64_t>(n)]; };
  for (int tries = 0; tries < 100000; ++tries) {
    PaperModuleConfig c;
    c.module = m;
    c.n = uniform_int(1, 64);
    c.c_in = uniform_int(3, 512);
    if (m != PaperModule::linear) c.l = pick(kSizes, 10);
    if (has_convolution(m) || m == PaperModule::linear) c.c_out = uniform_int(3, 512);
    if (has_convolution(m) || is_pool(m)) c.k = pick(kKernels, 5), c.s = pick(kStrides, 3);
    if (counts) ++counts->drawn;
    if (paper_module_flops(c) <= bounds.max_flops && paper_module_bytes(c) <= bounds.max_bytes) return c;
    if (counts) ++counts->rejected;
  }
  throw std::runtime_error(std::string("no configuration of ") + paper_module_name(m) + " within the bounds in 100,000 draws");
}

struct PaperModuleInstance::Impl {
  PaperModuleConfig c;
  torch::Tensor input, weight, bias, bn_scale, bn_shift, bn_mean, bn_var;
};

PaperModuleInstance::PaperModuleInstance(const PaperModuleConfig& c) : impl_(std::make_unique<Impl>()) {
  torch::NoGradGuard no_grad;
  Impl& i = *impl_;
  i.c = c;
  if (c.n < 1 || c.c_in < 1 || (c.module != PaperModule::linear && c.l < 1) ||
      ((has_convolution(c.module) || c.module == PaperModule::linear) && c.c_out < 1) ||
      ((has_convolution(c.module) || is_pool(c.module)) && (c.k < 1 || c.s < 1)))
    throw std::invalid_argument(std::string("an incomplete configuration of ") + paper_module_name(c.module));
  i.input = c.module == PaperModule::linear ? torch::rand({c.n, c.c_in}) : torch::rand({c.n, c.c_in, c.l, c.l});
  if (has_convolution(c.module)) {
    i.weight = torch::empty({c.c_out, c.c_in, c.k, c.k}).uniform_(-0.05, 0.05);
    if (!has_batch_norm(c.module)) i.bias = torch::empty({c.c_out}).uniform_(-0.05, 0.05);
  } else if (c.module == PaperModule::linear) {
    i.weight = torch::empty({c.c_out, c.c_in}).uniform_(-0.05, 0.05);
    i.bias = torch::empty({c.c_out}).uniform_(-0.05, 0.05);
  }
  if (has_batch_norm(c.module)) {
    const int64_t ch = has_convolution(c.module) ? c.c_out : c.c_in;
    i.bn_scale = torch::ones({ch}), i.bn_shift = torch::zeros({ch});
    i.bn_mean = torch::zeros({ch}), i.bn_var = torch::ones({ch});
  }
}

PaperModuleInstance::~PaperModuleInstance() = default;

double PaperModuleInstance::forward() {
  torch::NoGradGuard no_grad;
  const Impl& i = *impl_;
  const PaperModuleConfig& c = i.c;
  const auto t0 = std::chrono::steady_clock::now();
  torch::Tensor y;
  if (c.module == PaperModule::linear) {
    y = torch::linear(i.input, i.weight, i.bias);
  } else if (is_pool(c.module)) {
    y = c.module == PaperModule::maxpool ? torch::max_pool2d(i.input, {c.k, c.k}, {c.s, c.s}, {c.k / 2, c.k / 2})
                                         : torch::avg_pool2d(i.input, {c.k, c.k}, {c.s, c.s}, {c.k / 2, c.k / 2});
  } else {
    y = i.input;
    if (has_convolution(c.module)) y = torch::conv2d(y, i.weight, i.bias, {c.s, c.s}, {c.k / 2, c.k / 2});
    if (has_batch_norm(c.module)) y = torch::batch_norm(y, i.bn_scale, i.bn_shift, i.bn_mean, i.bn_var, false, 0.1, 1e-5, false);
    if (has_relu(c.module)) y = torch::relu(y);
  }
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace coinfer::models
