//===- DiskCache.cpp - Compiled kernels in a per-user folder --------------===//
//
// Entry layout (native byte order; a cache belongs to one machine):
//   char     magic[8]         "DDTCKRN1"
//   uint32   format version   kCacheFormatVersion
//   uint32   meta bytes
//   uint64   payload bytes
//   uint64   key.lo, key.hi
//   uint64   hash.lo, hash.hi  of meta followed by payload
//   meta, payload
//===----------------------------------------------------------------------===//

#include "DiskCache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ddtc::rt {

namespace {

constexpr char kMagic[8] = {'D', 'D', 'T', 'C', 'K', 'R', 'N', '1'};
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + 16 + 16;
/// Entries are cubins of a few pieces of kernel code; anything larger is
/// not ours.
constexpr uint64_t kMaxEntryBytes = uint64_t(256) << 20;

std::string errnoText() { return std::strerror(errno); }

std::string modeText(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

/// Creates `path` and its missing parents with mode 0700.
bool makeDirs(const std::string &path, std::string &why) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0)
    return true;
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0 &&
      !makeDirs(path.substr(0, slash), why))
    return false;
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    why = "cannot create " + path + ": " + errnoText();
    return false;
  }
  return true;
}

bool readAll(int fd, char *p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool writeAll(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t r = write(fd, p, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

template <typename T> void put(std::string &s, T v) {
  s.append(reinterpret_cast<const char *>(&v), sizeof v);
}
template <typename T> T get(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

Hash128 contentHash(const char *meta, size_t metaBytes, const char *payload,
                    size_t payloadBytes) {
  return Hasher().add(meta, metaBytes).add(payload, payloadBytes).finish();
}

} // namespace

DiskCache::DiskCache(const std::string &dir) : dir_(dir) {
  if (dir_.empty()) {
    reason_ = "no cache folder (set DDTC_CACHE_DIR, XDG_CACHE_HOME or HOME)";
    return;
  }
  while (dir_.size() > 1 && dir_.back() == '/')
    dir_.pop_back();
  if (!makeDirs(dir_, reason_))
    return;
  struct stat st;
  if (stat(dir_.c_str(), &st) != 0) {
    reason_ = "cannot use " + dir_ + ": " + errnoText();
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    reason_ = dir_ + " is not a folder";
    return;
  }
  if (st.st_uid != geteuid()) {
    reason_ = dir_ + " belongs to user " + std::to_string(st.st_uid) +
              ", not to the current user " + std::to_string(geteuid()) +
              "; its kernels are not trusted";
    return;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    reason_ = dir_ + " may be written by other users (mode " +
              modeText(st.st_mode) + "); its kernels are not trusted (chmod "
              "700 it to use it)";
    return;
  }
  if (access(dir_.c_str(), R_OK | W_OK | X_OK) != 0) {
    reason_ = "cannot read and write " + dir_ + ": " + errnoText();
    return;
  }
  usable_ = true;
}

std::string DiskCache::entryPath(const Hash128 &key) const {
  return dir_ + "/" + key.hex() + ".ddtck";
}

int DiskCache::openTrusted(const std::string &path, std::string &why) const {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT)
      why = "cannot open " + path + ": " + errnoText();
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0)
    why = "cannot stat " + path + ": " + errnoText();
  else if (!S_ISREG(st.st_mode))
    why = path + " is not a regular file";
  else if (st.st_uid != geteuid())
    why = path + " belongs to user " + std::to_string(st.st_uid) +
          ", not to the current user";
  else if (st.st_mode & (S_IWGRP | S_IWOTH))
    why = path + " may be written by other users (mode " +
          modeText(st.st_mode) + ")";
  else
    return fd;
  close(fd);
  return -1;
}

DiskCache::Lookup DiskCache::load(const Hash128 &key, std::string &payload,
                                  std::string &why) const {
  if (!usable_)
    return Lookup::Missing;
  std::string path = entryPath(key);
  why.clear();
  int fd = openTrusted(path, why);
  if (fd < 0)
    return why.empty() ? Lookup::Missing : Lookup::Rejected;
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st;
  if (fstat(fd, &st) != 0) {
    why = "cannot stat " + path + ": " + errnoText();
    return Lookup::Rejected;
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < kHeaderBytes || size > kMaxEntryBytes) {
    why = path + " has " + std::to_string(size) + " bytes: truncated or not "
          "a ddtc cache entry";
    return Lookup::Rejected;
  }
  std::string data(size, '\0');
  if (!readAll(fd, &data[0], size)) {
    why = "cannot read " + path + ": " + errnoText();
    return Lookup::Rejected;
  }
  const char *p = data.data();
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0) {
    why = path + " is not a ddtc cache entry (bad magic)";
    return Lookup::Rejected;
  }
  uint32_t version = get<uint32_t>(p + 8);
  uint32_t metaBytes = get<uint32_t>(p + 12);
  uint64_t payloadBytes = get<uint64_t>(p + 16);
  Hash128 storedKey{get<uint64_t>(p + 24), get<uint64_t>(p + 32)};
  Hash128 storedHash{get<uint64_t>(p + 40), get<uint64_t>(p + 48)};
  if (version != kCacheFormatVersion) {
    why = path + " has cache format " + std::to_string(version) +
          ", expected " + std::to_string(kCacheFormatVersion);
    return Lookup::Rejected;
  }
  if (payloadBytes > kMaxEntryBytes ||
      kHeaderBytes + metaBytes + payloadBytes != size) {
    why = path + " is truncated or padded: its header announces " +
          std::to_string(kHeaderBytes + metaBytes + payloadBytes) +
          " bytes, the file has " + std::to_string(size);
    return Lookup::Rejected;
  }
  if (storedKey != key) {
    why = path + " holds the entry of another key";
    return Lookup::Rejected;
  }
  const char *meta = p + kHeaderBytes;
  const char *body = meta + metaBytes;
  if (contentHash(meta, metaBytes, body, payloadBytes) != storedHash) {
    why = path + " is corrupt (its content does not match its hash)";
    return Lookup::Rejected;
  }
  // Moved out of the file's bytes rather than copied: no second buffer.
  data.erase(0, static_cast<size_t>(body - p));
  payload.swap(data);
  return Lookup::Hit;
}

bool DiskCache::store(const Hash128 &key, const std::string &meta,
                      const std::string &payload, std::string &why) const {
  if (!usable_) {
    why = reason_;
    return false;
  }
  std::string header(kMagic, sizeof kMagic);
  put<uint32_t>(header, kCacheFormatVersion);
  put<uint32_t>(header, static_cast<uint32_t>(meta.size()));
  put<uint64_t>(header, payload.size());
  put<uint64_t>(header, key.lo);
  put<uint64_t>(header, key.hi);
  Hash128 h = contentHash(meta.data(), meta.size(), payload.data(),
                          payload.size());
  put<uint64_t>(header, h.lo);
  put<uint64_t>(header, h.hi);

  std::string body = meta;
  body += payload;
  return writeFile(entryPath(key), header, body, why);
}

bool DiskCache::writeFile(const std::string &path, const std::string &head,
                          const std::string &body, std::string &why) const {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkstemp(&tmp[0]); // mode 0600
  if (fd < 0) {
    why = "cannot create a file in " + dir_ + ": " + errnoText();
    return false;
  }
  bool ok = writeAll(fd, head.data(), head.size()) &&
            writeAll(fd, body.data(), body.size());
  if (!ok)
    why = "cannot write " + tmp + ": " + errnoText();
  if (close(fd) != 0 && ok) {
    why = "cannot write " + tmp + ": " + errnoText();
    ok = false;
  }
  if (ok && rename(tmp.c_str(), path.c_str()) != 0) {
    why = "cannot rename " + tmp + " to " + path + ": " + errnoText();
    ok = false;
  }
  if (!ok)
    unlink(tmp.c_str());
  return ok;
}

bool DiskCache::readNote(const std::string &name, std::string &text) const {
  if (!usable_)
    return false;
  std::string why;
  int fd = openTrusted(dir_ + "/" + name, why);
  if (fd < 0)
    return false;
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  if (n < 0)
    return false;
  text.assign(buf, static_cast<size_t>(n));
  return true;
}

bool DiskCache::writeNote(const std::string &name,
                          const std::string &text) const {
  std::string why;
  return usable_ && writeFile(dir_ + "/" + name, text, "", why);
}

} // namespace ddtc::rt
