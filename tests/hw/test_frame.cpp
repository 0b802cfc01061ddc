// Wire protocol: framing, compression, limits, payload schemas, HMAC, journals (hw/README.md).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "core/input_error.hpp"
#include "hw/auth.hpp"
#include "hw/frame.hpp"
#include "hw/protocol.hpp"
#include "hw/record_journal.hpp"
#include "io/results_h5.hpp"

using namespace coinfer;
using namespace coinfer::hw;

TEST(Frame, HeaderLayoutByHand) {
  // A 3-byte heartbeat payload for task 0x0102: magic, version 1, type 7, no flags, reserved 0, task id
  // little-endian at 8, on-wire size 3 at 16, decoded size 3 at 20, then the payload.
  const std::string b = encode_frame({MsgType::heartbeat, 0x0102, "abc"});
  ASSERT_EQ(b.size(), 24u + 3u);
  EXPECT_EQ(b.substr(0, 4), "CIFR");
  EXPECT_EQ(b[4], 1);
  EXPECT_EQ(b[5], 7);
  EXPECT_EQ(b[6], 0);
  EXPECT_EQ(b[7], 0);
  EXPECT_EQ(static_cast<unsigned char>(b[8]), 0x02);
  EXPECT_EQ(static_cast<unsigned char>(b[9]), 0x01);
  for (int i = 10; i < 16; ++i) EXPECT_EQ(b[i], 0);
  EXPECT_EQ(b[16], 3);
  EXPECT_EQ(b[20], 3);
  EXPECT_EQ(b.substr(24), "abc");
  // Types as logs name them: the list starts at type 1; a byte beyond it has no name.
  EXPECT_STREQ(to_string(MsgType::hello), "hello");
  EXPECT_STREQ(to_string(MsgType::register_), "register");
  EXPECT_STREQ(to_string(MsgType::cloud_register), "cloud_register");
  EXPECT_STREQ(to_string(static_cast<MsgType>(0)), "unknown");
  EXPECT_STREQ(to_string(static_cast<MsgType>(15)), "unknown");
}

TEST(Frame, RoundTripSmallAndCompressed) {
  std::string big(200000, 'x');  // compressible: sent with the zstd flag, much smaller on the wire
  for (size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>('a' + i % 13);
  FrameDecoder d;
  const std::string a = encode_frame({MsgType::task, 42, big});
  EXPECT_EQ(a[6], 1) << "compressed flag";
  EXPECT_LT(a.size(), big.size() / 4);
  const std::string b = encode_frame({MsgType::result, 43, "small"});
  // Fed one byte at a time: nothing until a frame is whole.
  const std::string all = a + b;
  std::vector<Frame> got;
  for (char c : all) {
    d.feed(&c, 1);
    while (auto f = d.next()) got.push_back(*f);
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].type, MsgType::task);
  EXPECT_EQ(got[0].task_id, 42u);
  EXPECT_EQ(got[0].payload, big);
  EXPECT_EQ(got[1].payload, "small");
  EXPECT_EQ(got[1].task_id, 43u);
}

TEST(Frame, IncompressiblePayloadSentRaw) {
  std::string noise(4096, '\0');
  unsigned x = 12345;
  for (auto& c : noise) c = static_cast<char>((x = x * 1103515245 + 12345) >> 24);
  const std::string b = encode_frame({MsgType::task, 1, noise});
  EXPECT_EQ(b[6], 0);
  EXPECT_EQ(b.size(), 24 + noise.size());
}

std::string with_byte(std::string s, size_t i, char v) {
  s[i] = v;
  return s;
}

TEST(Frame, RejectsBadHeaders) {
  const std::string ok = encode_frame({MsgType::heartbeat, 0, "{}"});
  auto parse = [](const std::string& s, std::uint32_t max = kDefaultMaxPayload) {
    FrameDecoder d(max);
    d.feed(s.data(), s.size());
    return d.next();
  };
  EXPECT_NO_THROW(parse(ok));
  EXPECT_THROW(parse(with_byte(ok, 0, 'X')), ProtocolError);  // magic
  EXPECT_THROW(parse(with_byte(ok, 4, 2)), ProtocolError);    // version
  EXPECT_THROW(parse(with_byte(ok, 5, 0)), ProtocolError);    // type 0
  EXPECT_NO_THROW(parse(with_byte(ok, 5, 9)));                // type 9: resend
  EXPECT_NO_THROW(parse(with_byte(ok, 5, 13)));               // type 13: redirect (several servers)
  EXPECT_NO_THROW(parse(with_byte(ok, 5, 14)));               // type 14: cloud_register (a cloud tier)
  EXPECT_THROW(parse(with_byte(ok, 5, 15)), ProtocolError);   // type 15
  EXPECT_THROW(parse(with_byte(ok, 6, 2)), ProtocolError);    // unknown flag
  EXPECT_THROW(parse(with_byte(ok, 16, 3)), ProtocolError);   // raw sizes disagree
  // Oversized: refused from the header alone, before any payload byte arrives.
  std::string huge = ok.substr(0, 24);
  huge[16] = huge[20] = 0;
  huge[19] = huge[23] = 0x10;  // 0x10000000 = 256 MiB
  FrameDecoder d;
  d.feed(huge.data(), huge.size());
  EXPECT_THROW(d.next(), ProtocolError);
  // A 1000-byte payload against a 999-byte limit.
  EXPECT_THROW(parse(encode_frame({MsgType::task, 0, std::string(1000, 'a')}), 999), ProtocolError);
  EXPECT_THROW(encode_frame({MsgType::task, 0, std::string(1000, 'a')}, 999), ProtocolError);
}

TEST(Frame, RejectsLyingCompressedPayload) {
  // A compressed frame whose declared decoded size is not what zstd says: refused, nothing inflated.
  std::string b = encode_frame({MsgType::task, 0, std::string(10000, 'z')});
  ASSERT_EQ(b[6], 1);
  b[20] = static_cast<char>(b[20] + 1);
  FrameDecoder d;
  d.feed(b.data(), b.size());
  EXPECT_THROW(d.next(), ProtocolError);
  std::string garbage = encode_frame({MsgType::task, 0, std::string(10000, 'z')});
  for (size_t i = 24; i < garbage.size(); ++i) garbage[i] = static_cast<char>(i);
  FrameDecoder d2;
  d2.feed(garbage.data(), garbage.size());
  EXPECT_THROW(d2.next(), ProtocolError);
}

TEST(Protocol, PayloadRoundTripsAndErrors) {
  Registration r{"pi0", "rpi4b", "dgcnn", "modelnet40", true, "ab12"};
  Registration back = decode_registration(encode(r));
  EXPECT_EQ(back.device_id, "pi0");
  EXPECT_EQ(back.model, "dgcnn");
  EXPECT_EQ(back.hmac, "ab12");
  EXPECT_EQ(decode_assignment(encode(Assignment{"pp(3)", true})).strategy, "pp(3)");
  std::string bytes;
  TaskHeader t = unpack_task(pack_task({4, "pi1", 12.5}, std::string("\0\1\2", 3)), bytes);
  EXPECT_EQ(t.split, 4);
  EXPECT_EQ(t.origin, "pi1");
  EXPECT_EQ(bytes, std::string("\0\1\2", 3));
  ResultHeader h;
  h.ok = false;
  h.error = "boom";
  h.batch_size = 3;
  ResultHeader hb = unpack_result(pack_result(h, "out"), bytes);
  EXPECT_FALSE(hb.ok);
  EXPECT_EQ(hb.error, "boom");
  EXPECT_EQ(hb.batch_size, 3);
  EXPECT_EQ(bytes, "out");
  try {
    decode_registration(R"({"device":"pi0"})");
    FAIL();
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("missing field 'type'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(decode_assignment("not json"), ProtocolError);
  EXPECT_THROW(decode_assignment(R"({"strategy": 3, "helper": false})"), ProtocolError);
  EXPECT_THROW(unpack_task("\xff\xff\xff\x7f{}", bytes), ProtocolError);  // header length beyond the payload
  EXPECT_THROW(unpack_task("ab", bytes), ProtocolError);
}

TEST(Protocol, HandoverCopiesAndResendRequests) {
  // mobility.mid_transfer: resend on the wire (hw/README.md "Handovers mid-transfer"): the copy flags
  // and the result's send time survive the round trip and are absent from a plain header (older
  // peers read it unchanged); a resend request carries the bytes and the time to wait for, bounded.
  std::string bytes;
  TaskHeader t{0, "pi1", 12.5};
  EXPECT_EQ(pack_task(t, "").find("copy"), std::string::npos);
  t.copy = true;
  EXPECT_TRUE(unpack_task(pack_task(t, "xy"), bytes).copy);
  ResultHeader r;
  EXPECT_EQ(pack_result(r, "").find("t_sent"), std::string::npos);
  r.copy = true;
  r.t_sent = 7.25;
  const ResultHeader rb = unpack_result(pack_result(r, ""), bytes);
  EXPECT_TRUE(rb.copy);
  EXPECT_EQ(rb.t_sent, 7.25);
  const ResendRequest q = decode_resend(encode(ResendRequest{12345, 99.5}));
  EXPECT_EQ(q.bytes, 12345);
  EXPECT_EQ(q.not_before_unix_s, 99.5);
  EXPECT_THROW(decode_resend(R"({"bytes": -1, "not_before": 0})"), ProtocolError);
  EXPECT_THROW(decode_resend(R"({"bytes": 68719476736, "not_before": 0})"), ProtocolError);  // 64 GiB > the frame limit
  EXPECT_THROW(decode_resend(R"({"bytes": 10})"), ProtocolError);
  // The filler: as long as asked, different per task, and zstd cannot shrink it (the copy crosses the
  // link with the first copy's bytes): sent raw, 24 header bytes + payload.
  const std::string a = incompressible_filler(10001, 1), b = incompressible_filler(10001, 2);
  EXPECT_EQ(a.size(), 10001u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, incompressible_filler(10001, 1));
  const std::string wire = encode_frame({MsgType::task, 1, a});
  EXPECT_EQ(wire[6], 0);  // not compressed
  EXPECT_EQ(wire.size(), 24u + 10001u);
}

TEST(Protocol, CloudTierFieldsRoundTripAndAreOptional) {
  // hw/README.md "Cloud tier": a device's task names m (cloud_split); the edge's result carries the
  // cloud's stamps. Without a cloud part neither key is on the wire (what a two-tier run sends is unchanged).
  TaskHeader t{2, "pi0", 1.5};
  std::string bytes;
  EXPECT_EQ(pack_task(t, "s").find("cloud_split"), std::string::npos);
  t.cloud_split = 5;
  const TaskHeader tb = unpack_task(pack_task(t, "state"), bytes);
  EXPECT_EQ(tb.cloud_split, 5);
  EXPECT_EQ(tb.split, 2);
  EXPECT_EQ(bytes, "state");
  ResultHeader r;
  EXPECT_EQ(pack_result(r, "").find("cloud"), std::string::npos);
  r.cloud = "cloud";
  r.t_cloud_queued = 10.25;
  r.t_cloud_batch_start = 10.5;
  r.t_cloud_batch_end = 10.75;
  r.cloud_batch_size = 3;
  r.cloud_bytes = 524288;
  const ResultHeader rb = unpack_result(pack_result(r, "out"), bytes);
  EXPECT_EQ(rb.cloud, "cloud");
  EXPECT_DOUBLE_EQ(rb.t_cloud_queued, 10.25);
  EXPECT_DOUBLE_EQ(rb.t_cloud_batch_start, 10.5);
  EXPECT_DOUBLE_EQ(rb.t_cloud_batch_end, 10.75);
  EXPECT_EQ(rb.cloud_batch_size, 3);
  EXPECT_DOUBLE_EQ(rb.cloud_bytes, 524288);
  EXPECT_EQ(bytes, "out");
  // A cloud that is not an object, or names no server, is a protocol error.
  const std::string head =
      R"({"ok": true, "error": "", "batch_size": 1, "helper": "", "t_received": 0, "t_queued": 0, "t_batch_start": 0, "t_batch_end": 0, )";
  for (const char* bad :
       {R"("cloud": 3})", R"("cloud": {"server": "", "t_queued": 0, "t_batch_start": 0, "t_batch_end": 0, "batch_size": 0, "bytes": 0}})",
        R"("cloud": {"server": "c"}})"}) {
    std::string h = head + bad;
    std::string payload;
    const std::uint32_t n = static_cast<std::uint32_t>(h.size());
    for (int i = 0; i < 4; ++i) payload.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
    payload += h;
    EXPECT_THROW(unpack_result(payload, bytes), ProtocolError) << bad;
  }
}

TEST(Protocol, SeveralServersMessagesRoundTripAndAreBounded) {
  // hw/README.md "Several edge servers": a move in a scheduling message, a peer's registration, report
  // and scheme, a redirect. What a single server sends is unchanged (no "server" key).
  Assignment a;
  a.strategy = "offload";
  EXPECT_EQ(encode(a).find("server"), std::string::npos);
  a.server = "edge1";
  a.address = "10.200.1.1:7070";
  const Assignment ab = decode_assignment(encode(a));
  EXPECT_EQ(ab.server, "edge1");
  EXPECT_EQ(ab.address, "10.200.1.1:7070");
  EXPECT_THROW(decode_assignment(R"({"strategy": "local", "helper": false, "server": "e", "address": "nohost"})"), ProtocolError);
  EXPECT_THROW(decode_assignment(R"({"strategy": "local", "helper": false, "server": "", "address": "h:1"})"), ProtocolError);
  // Addresses: host:port, port 1..65535, the last colon splits (a bracket-less IPv6 host keeps its colons).
  EXPECT_EQ(split_address("127.0.0.1:65535", "x"), (std::pair<std::string, int>{"127.0.0.1", 65535}));
  EXPECT_EQ(split_address("::1:80", "x"), (std::pair<std::string, int>{"::1", 80}));
  for (const char* bad : {"host", ":80", "host:", "host:0", "host:65536", "host:8a", "host:1234567"})
    EXPECT_THROW(split_address(bad, "x"), ProtocolError) << bad;

  Registration r{"pi0", "rpi4b", "gcn", "mr", true, "h"};
  EXPECT_EQ(encode(r).find("moved"), std::string::npos);
  r.moved = true;
  EXPECT_TRUE(decode_registration(encode(r)).moved);

  const PeerRegistration pr = decode_peer_registration(encode(PeerRegistration{"edge1", "127.0.0.1:4000", "ab"}));
  EXPECT_EQ(pr.server_id, "edge1");
  EXPECT_EQ(pr.address, "127.0.0.1:4000");
  EXPECT_THROW(decode_peer_registration(R"({"server": "e", "address": "x", "hmac": ""})"), ProtocolError);

  PeerReport rep;
  rep.events = {{PeerEvent::Kind::registered, 2, 0}, {PeerEvent::Kind::bandwidth, 1, 12.5}, {PeerEvent::Kind::leave, 3, 0}};
  rep.queue_length = 4;
  rep.busy_workers = 1;
  DeviceStatus st;
  st.bandwidth_mbps = 40;
  st.queue_length = 2;
  st.completed = 17;
  rep.devices = {{2, false, st}};
  const PeerReport rb = decode_peer_report(encode(rep));
  ASSERT_EQ(rb.events.size(), 3u);
  EXPECT_EQ(rb.events[1].kind, PeerEvent::Kind::bandwidth);
  EXPECT_EQ(rb.events[1].bandwidth_mbps, 12.5);
  EXPECT_EQ(rb.events[2].kind, PeerEvent::Kind::leave);
  EXPECT_EQ(rb.events[2].device, 3);
  EXPECT_EQ(rb.queue_length, 4);
  EXPECT_EQ(rb.busy_workers, 1);
  ASSERT_EQ(rb.devices.size(), 1u);
  EXPECT_FALSE(rb.devices[0].generates);
  EXPECT_EQ(rb.devices[0].status.queue_length, 2);
  EXPECT_EQ(rb.devices[0].status.completed, 17);
  EXPECT_THROW(decode_peer_report(R"({"events": [{"kind": "teleport", "device": 0}], "queue": 0, "busy": 0, "devices": []})"), ProtocolError);
  EXPECT_THROW(decode_peer_report(R"({"events": [{"kind": "bandwidth", "device": 0, "mbps": -1}], "queue": 0, "busy": 0, "devices": []})"),
               ProtocolError);
  EXPECT_THROW(decode_peer_report(R"({"events": {}, "queue": 0, "busy": 0, "devices": []})"), ProtocolError);

  PeerScheme ps;
  ps.strategies = {"offload", "pp(2)"};
  ps.helpers = {false, true};
  ps.servers = {1, 0};
  ps.server_helpers = {1};
  ps.batch_window_ms = 20;
  ps.batch_max_size = 8;
  ps.addresses = {{"edge0", "127.0.0.1:1"}, {"edge1", "127.0.0.1:2"}};
  const PeerScheme sb = decode_peer_scheme(encode(ps));
  EXPECT_EQ(sb.strategies, ps.strategies);
  EXPECT_EQ(sb.helpers, ps.helpers);
  EXPECT_EQ(sb.servers, ps.servers);
  EXPECT_EQ(sb.server_helpers, ps.server_helpers);
  EXPECT_EQ(sb.batch_window_ms, 20);
  EXPECT_EQ(sb.batch_max_size, 8);
  EXPECT_EQ(sb.addresses, ps.addresses);
  // Lengths must agree; batching within the batch limit; addresses host:port.
  PeerScheme bad = ps;
  bad.servers = {1};
  EXPECT_THROW(decode_peer_scheme(encode(bad)), ProtocolError);
  bad = ps;
  bad.batch_max_size = 4097;  // core/limits.hpp kMaxBatch = 4096
  EXPECT_THROW(decode_peer_scheme(encode(bad)), ProtocolError);
  bad = ps;
  bad.batch_window_ms = -1;
  EXPECT_THROW(decode_peer_scheme(encode(bad)), ProtocolError);
  bad = ps;
  bad.addresses["edge2"] = "nowhere";
  EXPECT_THROW(decode_peer_scheme(encode(bad)), ProtocolError);

  const Redirect to = decode_redirect(encode(Redirect{"edge1", "10.200.1.1:7070"}));
  EXPECT_EQ(to.server, "edge1");
  EXPECT_EQ(to.address, "10.200.1.1:7070");
  EXPECT_THROW(decode_redirect(R"({"server": "edge1"})"), ProtocolError);
  // The frame layer knows the four new types and nothing past them.
  EXPECT_STREQ(to_string(MsgType::redirect), "redirect");
  std::string wire = encode_frame({MsgType::redirect, 0, "{}"});
  EXPECT_EQ(parse_header(reinterpret_cast<const unsigned char*>(wire.data())).type, MsgType::redirect);
  wire[5] = 15;  // cloud_register (14) is the last
  EXPECT_THROW(parse_header(reinterpret_cast<const unsigned char*>(wire.data())), ProtocolError);
}

TEST(Auth, HmacSha256KnownAnswer) {
  // RFC 4231 test case 2.
  EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
  EXPECT_EQ(random_nonce_hex(16).size(), 32u);
  EXPECT_NE(random_nonce_hex(), random_nonce_hex());
}

TEST(Auth, SecretFile) {
  const std::string p = testing::TempDir() + "/secret";
  std::ofstream(p) << "s3cret\n";
  EXPECT_EQ(load_secret(p), "s3cret");
  std::ofstream(p) << "\n";
  EXPECT_THROW(load_secret(p), std::runtime_error);
  EXPECT_THROW(load_secret(p + ".missing"), std::runtime_error);
}

TEST(Journal, UnfinishedRequestsComeBackFailedAndTornLinesAreIgnored) {
  const std::string p = testing::TempDir() + "/journal.jsonl";
  {
    JournalWriter w(p);
    w.note("device", "pi0");
    RequestRecord a;
    a.id = 0;
    a.t_created = 1.0;
    w.created(a);
    a.t_result = 1.5;
    w.done(a);
    RequestRecord b;
    b.id = 1;
    b.t_created = 2.0;
    w.created(b);  // never done: the device was killed
  }
  { std::ofstream(p, std::ios::app) << R"({"ev":"done","id":)"; }  // torn by the kill
  auto recs = read_journal(p);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].status, RequestRecord::Status::ok);
  EXPECT_DOUBLE_EQ(recs[0].latency_s(), 0.5);
  EXPECT_EQ(recs[1].status, RequestRecord::Status::failed);
  EXPECT_NE(recs[1].failure.find("ended before"), std::string::npos);
  { std::ofstream(p, std::ios::app) << "\n{\"ev\":\"weird\",\"id\":3,\"device\":0}\n"; }
  EXPECT_THROW(read_journal(p), InputError);  // bad input: exit 2 in the CLI
}

TEST(RequestFields, EveryFieldSurvivesTheJournalAndResultsH5) {
  // core/request_record.hpp's field table drives both formats: a record with every member set to a
  // value of its own (none the default) comes back equal from each.
  RequestRecord a;
  a.id = 7;
  a.device = 2;
  a.server = 1;
  a.strategy = "pp(3)";
  a.split = 3;
  a.bytes_up = 1234.5;
  a.bytes_down = 160;
  a.t_created = 1.25;
  a.t_device_start = 1.5;
  a.t_device_end = 1.75;
  a.t_uplink_end = 2;
  a.t_queued = 2.25;
  a.t_batch_start = 2.5;
  a.t_batch_end = 2.75;
  a.batch_size = 4;
  a.helper = 5;
  a.t_result = 3;
  a.status = RequestRecord::Status::dropped;
  a.failure = "dropped at server s: late";
  auto expect_same = [&](const RequestRecord& b, const std::string& where) {
    EXPECT_EQ(b.id, a.id) << where;
    EXPECT_EQ(b.device, a.device) << where;
    EXPECT_EQ(b.server, a.server) << where;
    EXPECT_EQ(b.strategy, a.strategy) << where;
    EXPECT_EQ(b.split, a.split) << where;
    EXPECT_EQ(b.bytes_up, a.bytes_up) << where;
    EXPECT_EQ(b.bytes_down, a.bytes_down) << where;
    for (auto m : {&RequestRecord::t_created, &RequestRecord::t_device_start, &RequestRecord::t_device_end, &RequestRecord::t_uplink_end,
                   &RequestRecord::t_queued, &RequestRecord::t_batch_start, &RequestRecord::t_batch_end, &RequestRecord::t_result})
      EXPECT_EQ(b.*m, a.*m) << where;
    EXPECT_EQ(b.batch_size, a.batch_size) << where;
    EXPECT_EQ(b.helper, a.helper) << where;
    EXPECT_EQ(b.status, a.status) << where;
    EXPECT_EQ(b.failure, a.failure) << where;
  };
  const std::string j = testing::TempDir() + "/fields.jsonl";
  {
    JournalWriter w(j);
    w.created(a);
    w.done(a);
  }
  const auto from_journal = read_journal(j);
  ASSERT_EQ(from_journal.size(), 1u);
  expect_same(from_journal[0], "journal");
  RunResults r;
  r.scenario = "fields";
  r.requests = {a};
  const std::string h = testing::TempDir() + "/fields.h5";
  std::remove(h.c_str());
  write_results_h5(h, r);
  const auto from_h5 = read_request_records(h);
  ASSERT_EQ(from_h5.size(), 1u);
  expect_same(from_h5[0], "results.h5");
}

// Every number on the wire within its type and the scenario's bounds, every address
// one a peer can connect to. Each of these was accepted before (device 4294967296 read as 0, 2.9 as 2,
// bandwidth -5 and queue -7 kept, a window of 1e308 ms applied, "a b:80", "0.0.0.0:1" and a 15,000-byte
// host sent to every peer).
TEST(Protocol, NumbersAndAddressesAreBounded) {
  const auto report = [](const std::string& event) { return R"({"events": [)" + event + R"(], "queue": 0, "busy": 0, "devices": []})"; };
  EXPECT_THROW(decode_peer_report(report(R"({"kind": "leave", "device": 4294967296})")), ProtocolError);
  EXPECT_THROW(decode_peer_report(report(R"({"kind": "leave", "device": 2.9})")), ProtocolError);
  EXPECT_THROW(decode_peer_report(report(R"({"kind": "leave", "device": -1})")), ProtocolError);
  EXPECT_THROW(decode_peer_report(report(R"({"kind": "bandwidth", "device": 0, "mbps": 2e6})")), ProtocolError);
  EXPECT_EQ(decode_peer_report(report(R"({"kind": "leave", "device": 5})")).events.at(0).device, 5);
  EXPECT_THROW(decode_peer_report(R"({"events": [], "queue": -7, "busy": 0, "devices": []})"), ProtocolError);
  EXPECT_THROW(decode_peer_report(R"({"events": [], "queue": 0, "busy": 300, "devices": []})"), ProtocolError);  // > 256 workers
  EXPECT_THROW(decode_status(R"({"bandwidth_mbps": -5, "queue": 0, "unfinished": 0, "busy": false})"), ProtocolError);
  EXPECT_THROW(decode_status(R"({"bandwidth_mbps": 5, "queue": -7, "unfinished": 0, "busy": false})"), ProtocolError);
  EXPECT_THROW(decode_status(R"({"bandwidth_mbps": 5, "queue": 0, "unfinished": 0, "busy": false, "latency_sum_s": -1})"), ProtocolError);
  EXPECT_EQ(decode_status(R"({"bandwidth_mbps": 0, "queue": 0, "unfinished": 0, "busy": false})").bandwidth_mbps, 0);  // no estimate yet
  const std::string scheme = R"({"strategies": ["local"], "helpers": [false], "servers": [0], "server_helpers": [], "batch_max_size": 4, )";
  EXPECT_THROW(decode_peer_scheme(scheme + R"("batch_window_ms": 1e308, "addresses": {}})"), ProtocolError);
  EXPECT_EQ(decode_peer_scheme(scheme + R"("batch_window_ms": 1e6, "addresses": {}})").batch_window_ms, 1e6);
  EXPECT_THROW(decode_peer_scheme(scheme + R"("batch_window_ms": 5, "addresses": {"e": "a b:80"}})"), ProtocolError);
  for (const std::string& bad : std::vector<std::string>{"a b:80", "0.0.0.0:1", "[::]:80", std::string(15000, 'h') + ":80", "h\x01:80"})
    EXPECT_THROW(split_address(bad, "x"), ProtocolError) << bad.substr(0, 20);
  EXPECT_EQ(split_address("edge-1.lab_net:7070", "x").first, "edge-1.lab_net");
}
