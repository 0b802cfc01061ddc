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
  auto refusal = [&](Registration r, const std::string& secret = "s3cret") {
    return check_registration(r, nonce, secret, sc, 0).refusal;
  };
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
  PeerCheck p = check_peer_registration(peer("other", secret), nonce, secret, sc, 0);
  EXPECT_TRUE(p.accepted()) << p.refusal;
  EXPECT_EQ(p.server_index, 1);
  EXPECT_NE(check_peer_registration(peer("other", "wrong"), nonce, secret, sc, 0).refusal.find("wrong secret"), std::string::npos);
  EXPECT_NE(check_peer_registration(peer("nope", secret), nonce, secret, sc, 0).refusal.find("unknown server"), std::string::npos);
  EXPECT_NE(check_peer_registration(peer("edge", secret), nonce, secret, sc, 0).refusal.find("coordinator itself"), std::string::npos);
  EXPECT_NE(check_peer_registration(peer("edge", secret), nonce, secret, sc, 1).refusal.find("not the scenario's first server"), std::string::npos);
  // A device's HMAC (nonce + id) does not pass as a server's (nonce + "server:" + id).
  PeerRegistration forged{"other", "127.0.0.1:1", hmac_sha256_hex(secret, nonce + "other")};
  EXPECT_FALSE(check_peer_registration(forged, nonce, secret, sc, 0).accepted());
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
  EXPECT_NE(check_cloud_registration(edge("edge", secret, "edge:"), nonce, secret, sc, 0).refusal.find("does not have this server (edge) as its cloud"),
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
  HandshakeGate gate(2);
  EXPECT_TRUE(gate.try_enter());
  EXPECT_TRUE(gate.try_enter());
  EXPECT_FALSE(gate.try_enter());  // a third at once is refused
  gate.leave();
  EXPECT_TRUE(gate.try_enter());
  std::atomic<bool> waited{false};
  std::thread waiter([&] {
    gate.wait_idle();
    waited = true;
  });
  gate.leave();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(waited);  // one still running
  gate.leave();
  waiter.join();
  EXPECT_TRUE(waited);
}
