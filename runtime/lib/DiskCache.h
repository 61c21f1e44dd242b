//===- DiskCache.h - Compiled kernels in a per-user folder ------*- C++ -*-===//
//
// One file per kernel, named by the hash of its cache key. The folder is
// created with mode 0700 and used only when the current user owns it and no
// one else may write to it; an entry is trusted only when it is a regular
// file of the current user that no one else may write, its header names the
// expected key and the hash of its payload matches. Entries are written to a
// temporary file that is then renamed, so readers never see half an entry.
//===----------------------------------------------------------------------===//

#ifndef DDTC_RUNTIME_DISKCACHE_H
#define DDTC_RUNTIME_DISKCACHE_H

#include "ddtc/Core/Hash.h"

#include <string>

namespace ddtc::rt {

/// Bump when the entry layout or the meaning of keys changes (2: a kernel
/// entry's payload holds the pack's and the unpack's cubin, joinImages).
constexpr uint32_t kCacheFormatVersion = 2;

class DiskCache {
public:
  /// Creates `dir` (and missing parents, mode 0700) when needed and checks
  /// it. An empty `dir` gives an unusable cache.
  explicit DiskCache(const std::string &dir);

  /// Whether entries are read and written; when not, reason() says why.
  bool usable() const { return usable_; }
  const std::string &reason() const { return reason_; }
  const std::string &dir() const { return dir_; }

  enum class Lookup {
    Hit,
    Missing,
    /// Present but not trusted (corrupt, truncated, foreign, wrong mode):
    /// `why` says which; the caller recompiles and stores over it.
    Rejected,
  };
  Lookup load(const Hash128 &key, std::string &payload, std::string &why) const;

  /// Writes an entry; `meta` is a readable description kept in the header
  /// (what was compiled, for whom). Returns false and sets `why` on failure.
  bool store(const Hash128 &key, const std::string &meta,
             const std::string &payload, std::string &why) const;

  /// The file that holds the entry of `key`.
  std::string entryPath(const Hash128 &key) const;

  /// A small text file of the folder (not an entry), read only when it
  /// passes the same ownership and mode checks as entries.
  bool readNote(const std::string &name, std::string &text) const;
  /// Writes it through a temporary file and a rename.
  bool writeNote(const std::string &name, const std::string &text) const;

private:
  /// Opens `path` for reading if it is a regular file of the current user
  /// that no one else may write; sets `why` otherwise (or -1 and ENOENT).
  int openTrusted(const std::string &path, std::string &why) const;
  bool writeFile(const std::string &path, const std::string &head,
                 const std::string &body, std::string &why) const;

  std::string dir_;
  bool usable_ = false;
  std::string reason_;
};

} // namespace ddtc::rt

#endif // DDTC_RUNTIME_DISKCACHE_H
