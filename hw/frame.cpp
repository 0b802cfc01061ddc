#include "hw/frame.hpp"
#include "core/enum_names.hpp"

#include <zstd.h>

#include <algorithm>
#include <cstring>

namespace coinfer::hw {

namespace {

constexpr unsigned char kMagic[4] = {'C', 'I', 'F', 'R'};
constexpr std::uint8_t kFlagCompressed = 1;

void put_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t get_le(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

namespace {
constexpr auto kMsgTypeNames = enum_names<MsgType>({"hello", "register", "registered", "scheduling", "task", "result", "heartbeat", "error", "resend",
                                                    "peer_register", "peer_report", "peer_scheme", "redirect", "cloud_register"},
                                                   MsgType::hello);
static_assert(kMsgTypeNames.names_each_of(MsgType::hello, MsgType::cloud_register));
}  // namespace

const char* to_string(MsgType t) { return kMsgTypeNames.name(t, "unknown"); }

std::optional<std::string> compress_payload(const std::string& payload) {
  if (payload.size() < kCompressThreshold) return std::nullopt;
  std::string out;
  if (payload.size() > 2 * kCompressProbe) {
    out.resize(ZSTD_compressBound(kCompressProbe));
    const size_t n = ZSTD_compress(out.data(), out.size(), payload.data(), kCompressProbe, 1);
    if (ZSTD_isError(n) || n > kCompressProbe * 9 / 10) return std::nullopt;
  }
  out.resize(ZSTD_compressBound(payload.size()));
  const size_t n = ZSTD_compress(out.data(), out.size(), payload.data(), payload.size(), 1);
  if (ZSTD_isError(n) || n >= payload.size()) return std::nullopt;
  out.resize(n);
  return out;
}

std::string encode_header(MsgType type, std::uint64_t task_id, bool compressed, std::size_t wire_size, std::size_t payload_size) {
  std::string out;
  out.reserve(kHeaderBytes);
  out.append(reinterpret_cast<const char*>(kMagic), 4);
  out.push_back(static_cast<char>(kProtocolVersion));
  out.push_back(static_cast<char>(type));
  out.push_back(static_cast<char>(compressed ? kFlagCompressed : 0));
  out.push_back(0);
  put_le(out, task_id, 8);
  put_le(out, wire_size, 4);
  put_le(out, payload_size, 4);
  return out;
}

std::string encode_frame(const Frame& f, std::uint32_t max_payload) {
  if (f.payload.size() > max_payload)
    throw ProtocolError("payload of " + std::to_string(f.payload.size()) + " bytes exceeds the maximum of " + std::to_string(max_payload));
  const std::optional<std::string> z = compress_payload(f.payload);
  const std::string& wire = z ? *z : f.payload;
  std::string out = encode_header(f.type, f.task_id, z.has_value(), wire.size(), f.payload.size());
  out += wire;
  return out;
}

FrameHeader parse_header(const unsigned char* p, std::uint32_t max_payload) {
  if (std::memcmp(p, kMagic, 4) != 0) throw ProtocolError("bad magic (not a coinfer frame)");
  if (p[4] != kProtocolVersion)
    throw ProtocolError("protocol version " + std::to_string(p[4]) + " (this side speaks " + std::to_string(kProtocolVersion) + ")");
  if (p[5] < static_cast<unsigned>(MsgType::hello) || p[5] > static_cast<unsigned>(MsgType::cloud_register))
    throw ProtocolError("unknown message type " + std::to_string(p[5]));
  if ((p[6] & ~kFlagCompressed) != 0 || p[7] != 0) throw ProtocolError("unknown flags");
  FrameHeader h;
  h.type = static_cast<MsgType>(p[5]);
  h.compressed = (p[6] & kFlagCompressed) != 0;
  h.task_id = get_le(p + 8, 8);
  h.wire_size = static_cast<std::uint32_t>(get_le(p + 16, 4));
  h.payload_size = static_cast<std::uint32_t>(get_le(p + 20, 4));
  if (h.payload_size > max_payload || h.wire_size > max_payload)
    throw ProtocolError("message of " + std::to_string(std::max(h.payload_size, h.wire_size)) + " bytes exceeds the maximum of " +
                        std::to_string(max_payload));
  if (!h.compressed && h.wire_size != h.payload_size) throw ProtocolError("inconsistent payload sizes");
  return h;
}

std::string decode_payload(const FrameHeader& h, const std::string& wire) {
  if (!h.compressed) {
    if (wire.size() != h.wire_size) throw ProtocolError("truncated payload");
    return wire;
  }
  return decode_payload(h, std::string(wire));
}

std::string decode_payload(const FrameHeader& h, std::string&& wire) {
  if (wire.size() != h.wire_size) throw ProtocolError("truncated payload");
  if (!h.compressed) return std::move(wire);
  const unsigned long long declared = ZSTD_getFrameContentSize(wire.data(), wire.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN || declared != h.payload_size)
    throw ProtocolError("compressed payload does not match its declared size");
  std::string out(h.payload_size, '\0');
  const size_t n = ZSTD_decompress(out.data(), out.size(), wire.data(), wire.size());
  if (ZSTD_isError(n) || n != h.payload_size) throw ProtocolError("undecodable compressed payload");
  return out;
}

std::optional<Frame> FrameDecoder::next() {
  if (buf_.size() - pos_ < kHeaderBytes) return std::nullopt;
  const FrameHeader h = parse_header(reinterpret_cast<const unsigned char*>(buf_.data() + pos_), max_);
  if (buf_.size() - pos_ < kHeaderBytes + h.wire_size) return std::nullopt;
  Frame f;
  f.type = h.type;
  f.task_id = h.task_id;
  f.payload = decode_payload(h, buf_.substr(pos_ + kHeaderBytes, h.wire_size));
  pos_ += kHeaderBytes + h.wire_size;
  if (pos_ > 65536 && pos_ * 2 > buf_.size()) {  // drop consumed bytes now and then
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  return f;
}

}  // namespace coinfer::hw
