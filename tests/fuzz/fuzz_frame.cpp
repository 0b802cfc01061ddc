// libFuzzer target: the middleware's frame parser and payload decoders on arbitrary bytes.
// Built and run (bounded) by tests/fuzz/run_fuzz.sh. Any crash, sanitizer report, leak or exception
// other than ProtocolError is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hw/frame.hpp"
#include "hw/protocol.hpp"

using namespace coinfer::hw;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // First byte: how the stream is chunked (1..16 bytes per feed), so partial reads are exercised.
  const size_t chunk = 1 + data[0] % 16;
  FrameDecoder d(1 << 20);
  try {
    for (size_t i = 1; i < size; i += chunk) {
      d.feed(reinterpret_cast<const char*>(data + i), std::min(chunk, size - i));
      while (auto f = d.next()) {
        std::string bytes;
        try {
          switch (f->type) {
            case MsgType::hello:
              decode_hello(f->payload);
              break;
            case MsgType::register_:
              decode_registration(f->payload);
              break;
            case MsgType::registered:
            case MsgType::scheduling:
              decode_assignment(f->payload);
              break;
            case MsgType::task:
              unpack_task(f->payload, bytes);
              break;
            case MsgType::result:
              unpack_result(f->payload, bytes);
              break;
            case MsgType::heartbeat:
              decode_status(f->payload);
              break;
            case MsgType::error:
              decode_error(f->payload);
              break;
            case MsgType::resend:
              decode_resend(f->payload);
              break;
            case MsgType::peer_register:
              decode_peer_registration(f->payload);
              break;
            case MsgType::peer_report:
              decode_peer_report(f->payload);
              break;
            case MsgType::peer_scheme:
              decode_peer_scheme(f->payload);
              break;
            case MsgType::redirect:
              decode_redirect(f->payload);
              break;
            case MsgType::cloud_register:
              decode_peer_registration(f->payload);
              break;
          }
        } catch (const ProtocolError&) {
        }
        // Whatever was decoded re-encodes and parses back to the same frame.
        const std::string again = encode_frame(*f, 1 << 20);
        FrameDecoder d2(1 << 20);
        d2.feed(again.data(), again.size());
        auto g = d2.next();
        if (!g || g->payload != f->payload || g->type != f->type || g->task_id != f->task_id) __builtin_trap();
      }
    }
  } catch (const ProtocolError&) {
  }
  return 0;
}
