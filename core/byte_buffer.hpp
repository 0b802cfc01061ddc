#pragma once
// Little helpers for compact binary formats (the split state that crosses a network split,
// models/split_state.cpp; the LUT tables the isolated LUT reader hands back, io/lut_codec.cpp).
// Values are written in the host's byte order (both ends run on this machine or on the same kind).
// ByteReader never reads past the end: a short input throws std::invalid_argument with `what`.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace coinfer {

template <typename T>
void put_bytes(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

class ByteReader {
 public:
  // `in` must outlive the reader; `what` names the format in errors ("split state is truncated").
  ByteReader(const std::string& in, std::string what) : in_(in), what_(std::move(what)) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  // The next n bytes (valid while `in` lives).
  const char* take(std::uint64_t n) {
    need(n);
    const char* p = in_.data() + pos_;
    pos_ += n;
    return p;
  }
  bool done() const { return pos_ == in_.size(); }
  size_t remaining() const { return in_.size() - pos_; }

 private:
  void need(std::uint64_t n) const {
    if (n > in_.size() - pos_) throw std::invalid_argument(what_ + " is truncated");
  }
  const std::string& in_;
  std::string what_;
  size_t pos_ = 0;
};

}  // namespace coinfer
