#include "core/server_loop.hpp"

#include <cstdio>

namespace coinfer {

namespace {
ServerLoopTrace::Sink g_sink;
}  // namespace

void ServerLoopTrace::set_sink(Sink sink) {
  g_sink = std::move(sink);
  on_ = static_cast<bool>(g_sink);
}

void ServerLoopTrace::write(int server, const std::string& line) {
  if (on_) g_sink(server, line);
}

std::string ServerLoopTrace::time(double t_s) {
  char buf[40];
  std::snprintf(buf, sizeof buf, " @%.17g", t_s);
  return buf;
}

}  // namespace coinfer
