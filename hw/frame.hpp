#pragma once
// Framing of the communication middleware (hw/README.md, "Wire protocol"). Engine- and socket-free,
// so the parser can be fuzzed on its own (tests/fuzz/fuzz_frame.cpp).
//
// A frame is a 24-byte header followed by the payload as sent (zstd-compressed when the flag says so):
//   offset 0  magic "CIFR"            4 bytes
//   offset 4  protocol version (1)    1 byte
//   offset 5  message type            1 byte  (MsgType)
//   offset 6  flags                   1 byte  (bit 0: payload compressed with zstd; other bits must be 0)
//   offset 7  reserved, 0             1 byte
//   offset 8  task id                 8 bytes little-endian (0 when not about a task)
//   offset 16 payload bytes on wire   4 bytes little-endian
//   offset 20 payload bytes decoded   4 bytes little-endian (== on-wire size when not compressed)
// Both sizes are checked against the receiver's maximum before a byte of payload is read or allocated.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace coinfer::hw {

constexpr std::uint8_t kProtocolVersion = 1;
constexpr std::size_t kHeaderBytes = 24;
constexpr std::uint32_t kDefaultMaxPayload = 64u << 20;  // 64 MiB decoded
// The most a peer that has not authenticated may send in one frame: a registration is a few hundred
// bytes of JSON. A larger frame is refused from its header, so a stranger costs the server at most
// this much (plus the 64 KiB read buffer) per connection, for at most 32 connections at once.
constexpr std::uint32_t kMaxUnauthenticatedPayload = 16u << 10;  // 16 KiB decoded

enum class MsgType : std::uint8_t {
  hello = 1,       // server -> device: protocol version and a registration challenge (nonce)
  register_ = 2,   // device -> server: identity and HMAC of the challenge
  registered = 3,  // server -> device: accepted, with the device's first strategy
  scheduling = 4,  // server -> device: a new strategy (or helper role)
  task = 5,        // device -> server (or server -> helper): an intermediate state to finish
  result = 6,      // server -> device (or helper -> server): the output of a task, or its failure
  heartbeat = 7,   // either way, keeps the connection alive
  error = 8,       // either way, then the sender closes the connection
  resend = 9,      // either way: a handover caught this task's transfer; send its bytes again (mobility.mid_transfer: resend)
  // Between edge servers of one run (hw/README.md "Several edge servers"): the first server of the
  // scenario (the coordinator) holds the scheduler; every other server is its peer.
  peer_register = 10,  // peer -> coordinator: the peer's server id, its address for devices, HMAC of the challenge
  peer_report = 11,    // peer -> coordinator: triggers it saw (registrations, leaves, bandwidth) and what it observes
  peer_scheme =
      12,  // coordinator -> peer: the scheme now (every device's strategy, helper role, server), its helpers and batching, the servers' addresses
  redirect = 13,  // server -> device, answering a registration: the device belongs to another server now; register there
  // An edge server with a cloud (servers[].cloud; hw/README.md "Cloud tier") registers with it, then
  // sends task frames of pp(k,m) requests' cloud parts [m,n) and receives their result frames.
  cloud_register = 14,  // edge -> its cloud: the edge's server id, its address, HMAC of the challenge over "edge:" + id
};
const char* to_string(MsgType t);

// Bad bytes on the wire (wrong magic, version, type, flags, oversize, undecodable payload).
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Frame {
  MsgType type = MsgType::heartbeat;
  std::uint64_t task_id = 0;
  std::string payload;  // decoded
};

struct FrameHeader {
  MsgType type = MsgType::heartbeat;
  bool compressed = false;
  std::uint64_t task_id = 0;
  std::uint32_t wire_size = 0, payload_size = 0;
};

// Payloads of at least this many bytes are compressed (zstd level 1) when a probe of their first
// kCompressProbe bytes shrinks by at least 10 % and the whole then comes out smaller. Random-looking
// payloads (dense float tensors) are sent raw without paying for a full compression.
constexpr std::size_t kCompressThreshold = 4096;
constexpr std::size_t kCompressProbe = 8192;

// Header + payload. Throws ProtocolError if the payload exceeds max_payload.
std::string encode_frame(const Frame& f, std::uint32_t max_payload = kDefaultMaxPayload);
// The two parts of encode_frame, for writers that send header and payload without joining them:
// the compressed payload (empty optional when sent raw), and the 24 header bytes.
std::optional<std::string> compress_payload(const std::string& payload);
std::string encode_header(MsgType type, std::uint64_t task_id, bool compressed, std::size_t wire_size, std::size_t payload_size);
// Parses and checks 24 header bytes. Throws ProtocolError.
FrameHeader parse_header(const unsigned char* bytes, std::uint32_t max_payload = kDefaultMaxPayload);
// The payload of a frame whose header was parsed; `wire` holds exactly h.wire_size bytes.
std::string decode_payload(const FrameHeader& h, const std::string& wire);
std::string decode_payload(const FrameHeader& h, std::string&& wire);  // no copy when not compressed

// Incremental parser over a byte stream (one per connection). feed() appends bytes; next() returns the
// next complete frame, nothing if more bytes are needed, and throws ProtocolError on bad input (the
// connection must then be closed: the stream cannot be resynchronised).
class FrameDecoder {
 public:
  explicit FrameDecoder(std::uint32_t max_payload = kDefaultMaxPayload) : max_(max_payload) {}
  void feed(const char* data, std::size_t n) { buf_.append(data, n); }
  std::optional<Frame> next();
  std::size_t buffered() const { return buf_.size(); }

 private:
  std::uint32_t max_;
  std::string buf_;
  std::size_t pos_ = 0;
};

}  // namespace coinfer::hw
