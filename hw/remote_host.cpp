#include "hw/remote_host.hpp"

#include "core/log.hpp"
#include "core/text_util.hpp"

namespace coinfer::hw {

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string shell_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + shell_quote(w);
  return out;
}

std::string RemoteHost::describe() const {
  return (host_.user.empty() ? "" : host_.user + "@") + host_.address + (host_.ssh_port == 22 ? "" : ":" + std::to_string(host_.ssh_port));
}

std::vector<std::string> RemoteHost::ssh_argv(const std::string& remote_command) const {
  std::vector<std::string> a = {"ssh", "-T",
                                "-o",  "BatchMode=yes",
                                "-o",  "ConnectTimeout=5",
                                "-o",  "ServerAliveInterval=1",
                                "-o",  "ServerAliveCountMax=5",
                                "-o",  "StrictHostKeyChecking=accept-new",
                                "-o",  "LogLevel=ERROR",
                                "-o",  "ControlMaster=no",
                                "-o",  "GSSAPIAuthentication=no",
                                "-p",  std::to_string(host_.ssh_port)};
  if (!host_.key.empty()) a.insert(a.end(), {"-i", host_.key, "-o", "IdentitiesOnly=yes"});
  if (!host_.known_hosts.empty()) a.insert(a.end(), {"-o", "UserKnownHostsFile=" + host_.known_hosts});
  if (!host_.user.empty()) a.insert(a.end(), {"-l", host_.user});
  a.insert(a.end(), {"--", host_.address, remote_command});
  return a;
}

ChildResult RemoteHost::run(const std::string& remote_command, double timeout_s, const std::string& stdin_file) const {
  ChildSpec spec;
  spec.argv = ssh_argv(remote_command);
  spec.stdin_file = stdin_file;
  spec.capture_stdout = true;
  spec.capture_stderr = true;
  log::debug("testbed", host_.name + " (" + describe() + "): " + remote_command);
  return run_child(spec, timeout_s);
}

ChildResult RemoteHost::run_to_file(const std::string& remote_command, const std::string& out_file, double timeout_s) const {
  ChildSpec spec;
  spec.argv = ssh_argv(remote_command);
  spec.stdout_file = out_file;
  spec.capture_stderr = true;
  log::debug("testbed", host_.name + " (" + describe() + "): " + remote_command + " > " + out_file);
  return run_child(spec, timeout_s);
}

Child RemoteHost::start(const std::string& remote_command, const std::string& out_file, const std::string& err_file) const {
  ChildSpec spec;
  spec.argv = ssh_argv(remote_command);
  spec.stdout_file = out_file;
  spec.stderr_file = err_file;
  spec.own_process_group = true;
  log::debug("testbed", host_.name + " (" + describe() + "): " + remote_command + " > " + out_file);
  return Child::start(spec);
}

std::string RemoteHost::ssh_failure(const ChildResult& r) {
  if (r.timed_out) return "ssh did not finish in time";
  if (r.status != 255) return "";
  std::string err = r.err;
  while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
  return err.empty() ? "ssh failed (exit 255)" : err;
}

}  // namespace coinfer::hw
