#include "models/split_state.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "core/byte_buffer.hpp"

namespace coinfer::models {

namespace {

constexpr char kMagic[4] = {'C', 'I', 'S', 'T'};
constexpr std::uint8_t kVersion = 2;
constexpr std::uint8_t kFloat32 = 1, kInt64 = 2, kQUInt8 = 3;
constexpr std::int32_t kGraphId = -2;
constexpr std::uint64_t kMaxTensorBytes = 1ULL << 34;  // 16 GiB: anything larger is corrupt

template <typename T>
void put(std::string& out, T v) {
  put_bytes(out, v);
}

void put_tensor(std::string& out, std::int32_t id, const torch::Tensor& t0) {
  torch::Tensor t = t0.contiguous().cpu();
  std::uint8_t dtype;
  if (t.scalar_type() == torch::kFloat32)
    dtype = kFloat32;
  else if (t.scalar_type() == torch::kInt64)
    dtype = kInt64;
  else if (t.scalar_type() == torch::kQUInt8 && t.qscheme() == torch::kPerTensorAffine)
    dtype = kQUInt8;
  else
    throw std::invalid_argument("serialize: only float32, int64 and per-tensor quint8 tensors cross a split");
  put(out, id);
  put(out, dtype);
  put(out, static_cast<std::uint8_t>(t.dim()));
  for (int d = 0; d < t.dim(); ++d) put(out, static_cast<std::int64_t>(t.size(d)));
  if (dtype == kQUInt8) {
    put(out, static_cast<float>(t.q_scale()));
    put(out, static_cast<std::int32_t>(t.q_zero_point()));
    t = t.int_repr().contiguous();
  }
  out.append(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size());
}

}  // namespace

std::string serialize(const SplitState& s) {
  std::string out(kMagic, 4);
  put(out, kVersion);
  put(out, static_cast<std::int32_t>(s.next_stage));
  put(out, static_cast<std::int64_t>(s.real_nodes));
  put(out, static_cast<std::uint32_t>(s.tensors.size() + (s.edge_index.defined() ? 1 : 0)));
  for (const auto& [id, t] : s.tensors) put_tensor(out, id, t);
  if (s.edge_index.defined()) put_tensor(out, kGraphId, s.edge_index);
  return out;
}

SplitState deserialize(const std::string& bytes) {
  ByteReader r(bytes, "split state");
  const char* magic = r.take(4);
  if (std::memcmp(magic, kMagic, 4) != 0) throw std::invalid_argument("not a split state (bad magic)");
  const auto version = r.get<std::uint8_t>();
  if (version != 1 && version != kVersion) throw std::invalid_argument("unsupported split state version");
  SplitState s;
  s.next_stage = r.get<std::int32_t>();
  if (version >= 2) {
    s.real_nodes = r.get<std::int64_t>();
    if (s.real_nodes < 0 || s.real_nodes > (1LL << 40)) throw std::invalid_argument("split state: bad real node count");
  }
  const std::uint32_t count = r.get<std::uint32_t>();
  if (count > 4096) throw std::invalid_argument("split state claims too many tensors");
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto id = r.get<std::int32_t>();
    const auto dtype = r.get<std::uint8_t>();
    const auto rank = r.get<std::uint8_t>();
    if (dtype != kFloat32 && dtype != kInt64 && !(dtype == kQUInt8 && version >= 2)) throw std::invalid_argument("split state: unknown dtype");
    if (rank > 8) throw std::invalid_argument("split state: rank too large");
    std::vector<std::int64_t> dims(rank);
    std::uint64_t numel = 1;
    for (auto& d : dims) {
      d = r.get<std::int64_t>();
      if (d < 0 || d > (1LL << 40)) throw std::invalid_argument("split state: bad dimension");
      numel *= static_cast<std::uint64_t>(d);
      if (numel * 8 > kMaxTensorBytes) throw std::invalid_argument("split state: tensor too large");
    }
    float scale = 1;
    std::int32_t zero_point = 0;
    if (dtype == kQUInt8) {
      scale = r.get<float>();
      zero_point = r.get<std::int32_t>();
      if (!(scale > 0) || !std::isfinite(scale) || zero_point < 0 || zero_point > 255)
        throw std::invalid_argument("split state: bad quantisation scale or zero point");
    }
    const std::uint64_t nbytes = numel * (dtype == kFloat32 ? 4 : dtype == kInt64 ? 8 : 1);
    const char* data = r.take(nbytes);
    auto t = torch::empty(dims, dtype == kFloat32 ? torch::kFloat32 : dtype == kInt64 ? torch::kInt64 : torch::kUInt8);
    if (nbytes) std::memcpy(t.data_ptr(), data, nbytes);
    if (dtype == kQUInt8) t = at::_make_per_tensor_quantized_tensor(t, scale, zero_point);
    if (id == kGraphId)
      s.edge_index = t;
    else
      s.tensors[id] = t;
  }
  if (!r.done()) throw std::invalid_argument("split state has trailing bytes");
  return s;
}

}  // namespace coinfer::models
