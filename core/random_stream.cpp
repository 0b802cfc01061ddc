#include "core/random_stream.hpp"

#include <cmath>

namespace coinfer {

namespace {
constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ULL;       // splitmix64 increment (golden ratio)
constexpr std::uint64_t kPurposeMul = 0xD1B54A32D192ED03ULL;  // odd: purpose enters the key here
constexpr std::uint64_t kIndexMul = 0xAEF17502108EF2D9ULL;    // odd, different: index enters here

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

RandomStream::RandomStream(std::uint64_t seed, StreamPurpose purpose, std::uint64_t index) {
  // key = mix(mix(mix(seed) + purpose*P) + index*I): each step a bijection of the previous key, so
  // two different (seed, purpose, index) triples share a key only by a 64-bit collision.
  std::uint64_t key = mix64(seed + kGamma);
  key = mix64(key + (static_cast<std::uint64_t>(purpose) + 1) * kPurposeMul);
  key = mix64(key + (index + 1) * kIndexMul);
  // Expand the key into xoshiro256**'s state with splitmix64 (the seeding its authors recommend).
  for (auto& w : s_) {
    key += kGamma;
    w = mix64(key);
  }
  if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) s_[0] = 1;  // the one forbidden state
}

std::uint64_t RandomStream::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double RandomStream::next_unit() {
  return (static_cast<double>(next_u64() >> 11) + 0.5) / 9007199254740992.0;  // (k + 0.5) / 2^53
}

double RandomStream::next_exponential(double rate_per_s) { return -std::log(next_unit()) / rate_per_s; }

}  // namespace coinfer
