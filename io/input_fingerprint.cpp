#include "io/input_fingerprint.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <stdexcept>
#include <vector>

#include "io/data_root.hpp"

namespace fs = std::filesystem;

namespace coinfer {

namespace {

class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1) throw std::runtime_error("SHA-256 unavailable");
  }
  void add(const char* data, size_t n) {
    if (EVP_DigestUpdate(ctx_.get(), data, n) != 1) throw std::runtime_error("SHA-256 failed");
  }
  void add(const std::string& s) {
    add(s.data(), s.size());
    add("\n", 1);  // a separator: ("ab","c") and ("a","bc") differ
  }
  std::string hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(ctx_.get(), md, &n) != 1) throw std::runtime_error("SHA-256 failed");
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < n; ++i) {
      out += digits[md[i] >> 4];
      out += digits[md[i] & 15];
    }
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
};

bool add_file(Sha256& h, const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) h.add(buf.data(), static_cast<size_t>(in.gcount()));
  }
  return !in.bad();
}

bool is_data_file(const fs::path& p) {
  static const std::set<std::string> code = {".cpp", ".hpp", ".h", ".cc", ".md", ".py", ".pyc"};
  return code.count(p.extension().string()) == 0;
}

}  // namespace

std::string sha256_hex(const std::string& bytes) {
  Sha256 h;
  h.add(bytes.data(), bytes.size());
  return h.hex();
}

const std::string& ContentDigests::of(const std::string& path) {
  auto it = done_.find(path);
  if (it != done_.end()) return it->second;
  std::error_code ec;
  std::string digest = "missing";
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (fs::recursive_directory_iterator i(path, fs::directory_options::skip_permission_denied, ec), end; !ec && i != end; i.increment(ec))
      if (i->is_regular_file(ec) && is_data_file(i->path())) files.push_back(i->path());
    std::sort(files.begin(), files.end());
    Sha256 h;
    bool ok = true;
    for (const fs::path& f : files) {
      h.add(fs::relative(f, path, ec).string());
      ok = add_file(h, f) && ok;
      h.add("", 0);
    }
    if (ok && !ec) digest = h.hex();
  } else {
    Sha256 h;
    if (add_file(h, path)) digest = h.hex();
  }
  return done_.emplace(path, digest).first->second;
}

std::string input_fingerprint(const Scenario& s, const LutSet& luts, ContentDigests& files, const std::string& version_tag) {
  Sha256 h;
  h.add(version_tag);
  h.add(s.resolved_yaml);
  std::vector<std::string> paths;
  for (const DataFileOrigin& f : run_data_files(s, luts)) paths.push_back(f.path);
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  for (const std::string& p : paths) {
    h.add(p);
    h.add(files.of(p));
  }
  return h.hex();
}

}  // namespace coinfer
