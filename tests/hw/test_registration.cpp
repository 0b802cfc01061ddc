// The server's registration check and handshake gate, without sockets.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "hw/auth.hpp"
#include "hw/registration.hpp"

using namespace coinfer;
using namespace coinfer::hw;

namespace {
Scenario two_servers() {
  Scenario sc;
  sc.name = "reg";
  for (const char* id : {"edge", "other"}) {
    ServerSpec s;
    s.id = id;
    sc.servers.push_back(s);
  }
  for (auto [id, server] : {std::pair{"pi0", "edge"}, std::pair{"pi1", "other"}}) {
    DeviceSpec d;
    d.id = id;
    d.type = "rpi4b";
    d.model = "dgcnn";
    d.dataset = "modelnet40";
    d.server = server;
    sc.devices.push_back(d);
  }
  return sc;
}

Registration signed_as(const std::string& id, const std::string& secret, const std::string& nonce) {
  Registration r{id, "rpi4b", "dgcnn", "modelnet40", true, ""};
  r.hmac = hmac_sha256_hex(secret, nonce + id);
  return r;
}
}  // namespace

TEST(Registration, AcceptsTheRightDeviceAndNamesEveryRefusal) {
  const Scenario sc = two_servers();
  const std::string nonce = "abc123";
  auto ok = check_registration(signed_as("pi0", "s3cret", nonce), nonce, "s3cret", sc, 0);
  EXPECT_TRUE(ok.accepted()) << ok.refusal;
  EXPECT_EQ(ok.device_index, 0);
  auto refusal = [&](Registration r, const std::string& secret = "s3cret") { return check_registration(r, nonce, secret, sc, 0).refusal; };
  EXPECT_NE(refusal(signed_as("pi0", "s3cret", nonce), "other").find("wrong secret"), std::string::npos);
  EXPECT_NE(refusal(signed_as("pi0", "s3cret", "another nonce")).find("wrong secret"), std::string::npos);  // replayed
  EXPECT_NE(refusal(signed_as("ghost", "s3cret", nonce)).find("unknown device 'ghost'"), std::string::npos);
  EXPECT_NE(refusal(signed_as("pi1", "s3cret", nonce)).find("belongs to server 'other'"), std::string::npos);
  Registration wrong_type = signed_as("pi0", "s3cret", nonce);
  wrong_type.type = "tx2";
  EXPECT_NE(refusal(wrong_type).find("registered as type 'tx2'"), std::string::npos);
  Registration wrong_model = signed_as("pi0", "s3cret", nonce);
  wrong_model.model = "gcn";
  EXPECT_NE(refusal(wrong_model).find("does not have model gcn/modelnet40"), std::string::npos);
}

TEST(Registration, SeveralServersFollowTheSchemeAndRegisterPeers) {
  // hw/README.md "Several edge servers": a device belongs where the scheme has it now; refused only for
  // that, the refusal names the other server (the server then redirects it there).
  const Scenario sc = two_servers();
  const std::string secret = "s3cret", nonce = "n";
  const std::vector<int> moved = {1, 1};  // pi0 moved from edge to other
  RegistrationCheck c = check_registration(signed_as("pi0", secret, nonce), nonce, secret, sc, 0, &moved);
  EXPECT_FALSE(c.accepted());
  EXPECT_EQ(c.other_server, 1);
  EXPECT_NE(c.refusal.find("belongs to server 'other'"), std::string::npos) << c.refusal;
  c = check_registration(signed_as("pi0", secret, nonce), nonce, secret, sc, 1, &moved);
  EXPECT_TRUE(c.accepted()) << c.refusal;
  EXPECT_EQ(c.device_index, 0);
  // Without the scheme, the scenario's binding; any other refusal has no server to go to.
  c = check_registration(signed_as("pi1", secret, nonce), nonce, secret, sc, 0);
  EXPECT_EQ(c.other_server, 1);
  c = check_registration(signed_as("pi0", "wrong", nonce), nonce, secret, sc, 1, &moved);
  EXPECT_FALSE(c.accepted());
  EXPECT_EQ(c.other_server, -1);

  // Peers register with the first server (the coordinator) only, as another of the scenario's servers.
  auto peer = [&](const std::string& id, const std::string& key) {
    return PeerRegistration{id, "127.0.0.1:7071", hmac_sha256_hex(key, nonce + "server:" + id)};
  };
  PeerCheck p = check_peer_registration(peer("other", secret), nonce, secret, sc, 0, false, true);
  EXPECT_TRUE(p.accepted()) << p.refusal;
  EXPECT_EQ(p.server_index, 1);
  EXPECT_NE(check_peer_registration(peer("other", "wrong"), nonce, secret, sc, 0, false, true).refusal.find("wrong secret"), std::string::npos);
  EXPECT_NE(check_peer_registration(peer("nope", secret), nonce, secret, sc, 0, false, true).refusal.find("unknown server"), std::string::npos);
  EXPECT_NE(check_peer_registration(peer("edge", secret), nonce, secret, sc, 0, false, true).refusal.find("coordinator itself"), std::string::npos);
  EXPECT_NE(check_peer_registration(peer("edge", secret), nonce, secret, sc, 1, false, true).refusal.find("not the scenario's first server"),
            std::string::npos);
  // A process that does not coordinate takes no peer, though it is the first server
  // (edge0 as a peer beside a --coordinate-only coordinator took one and redirected devices to it).
  EXPECT_NE(check_peer_registration(peer("other", secret), nonce, secret, sc, 0, false, false).refusal.find("is a peer, not the coordinator"),
            std::string::npos);
  // The coordinator that only coordinates takes the first server itself as a peer.
  EXPECT_TRUE(check_peer_registration(peer("edge", secret), nonce, secret, sc, 0, true, true).accepted());
  // A device's HMAC (nonce + id) does not pass as a server's (nonce + "server:" + id).
  PeerRegistration forged{"other", "127.0.0.1:1", hmac_sha256_hex(secret, nonce + "other")};
  EXPECT_FALSE(check_peer_registration(forged, nonce, secret, sc, 0, false, true).accepted());
}

TEST(Registration, AnEdgeRegistersWithTheCloudTheScenarioGivesIt) {
  // hw/README.md "Cloud tier": "other" is edge's cloud here; the HMAC is over nonce + "edge:" + id.
  Scenario sc = two_servers();
  sc.servers[0].cloud = "other";
  const std::string secret = "s3cret", nonce = "n";
  auto edge = [&](const std::string& id, const std::string& key, const std::string& prefix) {
    return PeerRegistration{id, "127.0.0.1:7071", hmac_sha256_hex(key, nonce + prefix + id)};
  };
  PeerCheck c = check_cloud_registration(edge("edge", secret, "edge:"), nonce, secret, sc, 1);
  EXPECT_TRUE(c.accepted()) << c.refusal;
  EXPECT_EQ(c.server_index, 0);
  EXPECT_NE(check_cloud_registration(edge("edge", "wrong", "edge:"), nonce, secret, sc, 1).refusal.find("wrong secret"), std::string::npos);
  // A peer's HMAC (nonce + "server:" + id) does not pass as an edge's.
  EXPECT_FALSE(check_cloud_registration(edge("edge", secret, "server:"), nonce, secret, sc, 1).accepted());
  EXPECT_NE(check_cloud_registration(edge("nope", secret, "edge:"), nonce, secret, sc, 1).refusal.find("unknown server"), std::string::npos);
  // Only the cloud the scenario names: edge's cloud is not edge itself, and "other" has no cloud.
  EXPECT_NE(
      check_cloud_registration(edge("edge", secret, "edge:"), nonce, secret, sc, 0).refusal.find("does not have this server (edge) as its cloud"),
      std::string::npos);
  EXPECT_FALSE(check_cloud_registration(edge("other", secret, "edge:"), nonce, secret, sc, 1).accepted());
}

TEST(StartGate, TheCoordinatorOfSeveralServersWaitsForEveryServersDevices) {
  // Server index -1: the start decision waits for pi0 (edge) and pi1 (other), as the simulator's
  // first decision sees both; a gate of one server waits for its own device only.
  const Scenario sc = two_servers();
  StartGate all(sc, -1, 30);
  EXPECT_FALSE(all.registered(0));
  EXPECT_FALSE(all.is_join(1));
  EXPECT_TRUE(all.registered(1));
  EXPECT_TRUE(all.is_join(1));  // after the start, a registration is a join
  StartGate one(sc, 0, 30);
  EXPECT_TRUE(one.registered(0));
}

TEST(HandshakeGate, AdmitsUpToTheLimitAndWaitsForTheRunningOnes) {
  HandshakeGate gate(2, 1.0);
  const auto a = gate.try_enter(0.0, nullptr), b = gate.try_enter(0.0, nullptr);
  EXPECT_NE(a, 0u);
  EXPECT_NE(b, 0u);
  gate.heard_from(a);
  gate.heard_from(b);
  EXPECT_EQ(gate.try_enter(5.0, nullptr), 0u);  // a third at once is refused: both have spoken
  EXPECT_EQ(gate.refused(), 1);
  gate.leave(a);
  const auto c = gate.try_enter(5.0, nullptr);
  EXPECT_NE(c, 0u);
  std::atomic<bool> waited{false};
  std::thread waiter([&] {
    gate.wait_idle();
    waited = true;
  });
  gate.leave(b);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(waited);  // one still running
  gate.leave(c);
  waiter.join();
  EXPECT_TRUE(waited);
}

// Silent connections cannot hold the bound. Full with two silent handshakes (entered
// at 0 s and 0.5 s), a newcomer at 0.8 s is refused (none silent for 1 s yet); at 1.2 s the one from
// 0 s is closed and the newcomer takes its place; at 1.3 s the one from 0.5 s is not yet 1 s silent
// (0.8 s), so a fourth is refused; one that has spoken is never closed.
TEST(HandshakeGate, TheOldestSilentHandshakeMakesRoom) {
  HandshakeGate gate(2, 1.0);
  int closed_first = 0, closed_second = 0, closed_talker = 0;
  const auto first = gate.try_enter(0.0, [&] { ++closed_first; });
  const auto second = gate.try_enter(0.5, [&] { ++closed_second; });
  EXPECT_EQ(gate.try_enter(0.8, nullptr), 0u);
  const auto third = gate.try_enter(1.2, [&] { ++closed_talker; });
  EXPECT_NE(third, 0u);
  EXPECT_EQ(closed_first, 1);
  EXPECT_EQ(closed_second, 0);
  EXPECT_EQ(gate.evicted(), 1);
  EXPECT_EQ(gate.try_enter(1.3, nullptr), 0u);
  gate.heard_from(third);
  // At 10 s only `second` is silent: it makes room; `third` spoke and stays.
  const auto fourth = gate.try_enter(10.0, nullptr);
  EXPECT_NE(fourth, 0u);
  EXPECT_EQ(closed_second, 1);
  EXPECT_EQ(closed_talker, 0);
  // The evicted ones' threads leave later; that frees nothing the limit counts (they no longer count).
  gate.leave(first);
  gate.leave(second);
  EXPECT_EQ(gate.try_enter(10.9, nullptr), 0u);  // third and fourth fill it; fourth silent for 0.9 s only
  // A disarmed handshake is never closed, even when evicted.
  gate.disarm(fourth);
  EXPECT_NE(gate.try_enter(12.0, nullptr), 0u);
  EXPECT_EQ(gate.evicted(), 3);
}

TEST(LogThrottle, AtMostABurstPerPeriodThenSaysHowManyWereLeftOut) {
  LogThrottle t(2, 10.0);
  std::string note;
  EXPECT_TRUE(t.allow("refusal", 0.0, &note));
  EXPECT_TRUE(t.allow("refusal", 1.0, &note));
  EXPECT_FALSE(t.allow("refusal", 2.0, &note));
  EXPECT_FALSE(t.allow("refusal", 3.0, &note));
  EXPECT_TRUE(t.allow("redirect", 3.0, &note));  // kinds are counted apart
  EXPECT_EQ(note, "");
  EXPECT_TRUE(t.allow("refusal", 10.5, &note));  // a new period: the first line says what was left out
  EXPECT_EQ(note, "(2 more refusal lines left out before this one) ");
  EXPECT_EQ(t.suppressed("refusal"), 2);
  EXPECT_TRUE(t.allow("refusal", 11.0, &note));
  EXPECT_EQ(note, "");
}

// A device following redirects. Waits: 0 for the first redirect, then 0.05, 0.1, 0.2, ... up to 2 s. A -> B -> A is
// a loop (the device asks the coordinator next); the fifth loop since the last registration is an
// error naming the addresses. A registration starts everything again; a failed connection the chain
// (A after a failure is no loop) but not the count of loops.
TEST(RedirectGuard, BacksOffAndEndsALoop) {
  RedirectGuard g;
  EXPECT_DOUBLE_EQ(g.on_redirect("a:1"), 0.0);
  EXPECT_FALSE(g.looped());
  EXPECT_DOUBLE_EQ(g.on_redirect("b:2"), 0.05);
  EXPECT_DOUBLE_EQ(g.on_redirect("a:1"), 0.1);
  EXPECT_TRUE(g.looped());
  g.on_unreachable();
  EXPECT_DOUBLE_EQ(g.on_redirect("a:1"), 0.2);  // after a failed connection: no loop
  EXPECT_FALSE(g.looped());
  for (int i = 0; i < 20; ++i) {
    g.on_registered();
    g.on_redirect("x:9");
  }
  EXPECT_EQ(g.redirects(), 1);
  // A server redirecting to itself: loops 1..4 are waited out, the fifth is the error.
  RedirectGuard self;
  double waited = 0;
  self.on_redirect("me:7");
  for (int loop = 1; loop < RedirectGuard::kMaxLoops; ++loop) {
    waited += self.on_redirect("me:7");
    EXPECT_TRUE(self.looped());
  }
  EXPECT_NEAR(waited, 0.05 + 0.1 + 0.2 + 0.4, 1e-12);
  try {
    self.on_redirect("me:7");
    FAIL() << "the fifth loop must end the redirects";
  } catch (const RedirectLoop& e) {
    EXPECT_NE(std::string(e.what()).find("redirect loop: sent back to me:7"), std::string::npos) << e.what();
  }
  // The back-off is bounded: 2 s at most.
  RedirectGuard many;
  double last = 0;
  for (int i = 0; i < 40; ++i) {
    many.on_unreachable();
    last = many.on_redirect("n:" + std::to_string(i));
  }
  EXPECT_DOUBLE_EQ(last, 2.0);
}
