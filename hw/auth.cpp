#include "hw/auth.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/input_error.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace coinfer::hw {

namespace {
std::string to_hex(const unsigned char* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s.push_back(digits[p[i] >> 4]);
    s.push_back(digits[p[i] & 15]);
  }
  return s;
}
}  // namespace

std::string random_nonce_hex(int bytes) {
  std::string raw(static_cast<size_t>(bytes), '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), bytes) != 1) throw std::runtime_error("no random bytes from OpenSSL");
  return to_hex(reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
}

std::string hmac_sha256_hex(const std::string& key, const std::string& message) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()), message.size(), md, &len))
    throw std::runtime_error("HMAC-SHA256 failed");
  return to_hex(md, len);
}

bool constant_time_equal(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

void check_secret_file_permissions(const std::string& file) {
  struct stat st {};
  const SourceLocation where{file, 0, 0};
  if (::stat(file.c_str(), &st) != 0) throw InputError(where, "--secret-file", "cannot read the secret file: " + std::string(std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) throw InputError(where, "--secret-file", "the secret file is not a regular file");
  if (st.st_uid != ::geteuid())
    throw InputError(where, "--secret-file", "the secret file belongs to another user (uid " + std::to_string(st.st_uid) + ")");
  if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw InputError(where, "--secret-file", std::string("the secret file has mode ") + mode + ": group or others may read or change it (chmod 600)");
  }
}

std::string load_secret(const std::string& file) {
  std::string secret;
  if (!file.empty()) {
    std::ifstream in(file);
    if (!in) throw std::runtime_error(file + ": cannot read the secret file (--secret-file)");
    std::stringstream ss;
    ss << in.rdbuf();
    secret = ss.str();
    while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
    if (secret.empty()) throw std::runtime_error(file + ": the secret file is empty (--secret-file)");
    return secret;
  }
  if (const char* env = std::getenv("COINFER_SECRET")) secret = env;
  if (secret.empty()) throw std::runtime_error("no shared secret: pass --secret-file FILE or set COINFER_SECRET");
  return secret;
}

}  // namespace coinfer::hw
