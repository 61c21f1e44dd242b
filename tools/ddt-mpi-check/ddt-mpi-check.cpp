//===- ddt-mpi-check.cpp - Differential test against a real MPI -----------===//
//
// Checks the reference semantics (layout figures, pack order, unpack) and the
// MPI bridge (export, import) against the MPI library we link, for random
// datatypes or for the bindings of a spec file.
//===----------------------------------------------------------------------===//

#include "ddtc/Core/Constructors.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Core/Typemap.h"
#include "ddtc/MPI/MPIBridge.h"
#include "ddtc/Testing/CheckerOptions.h"
#include "ddtc/Testing/KernelCheck.h"
#include "ddtc/Testing/RandomDatatype.h"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace ddtc;

namespace {

const char *kHelp = R"(usage:
  ddt-mpi-check --random N [--seed S] [--first I] [--max-depth D] [-v]
  ddt-mpi-check FILE.ddt [--count N] [-t NAME] [-v]

Checks ddtc's reference semantics and MPI bridge against the MPI library it is
linked with. For each datatype, at 1 instance and at a count > 1:
  - exports the tree to an MPI handle and commits it;
  - compares MPI_Type_size, MPI_Type_get_extent and MPI_Type_get_true_extent
    with ddtc's layout figures;
  - packs a patterned buffer with MPI_Pack into a poisoned buffer and
    compares it, guard bytes included, with referencePack's bytes;
  - unpacks with MPI_Unpack and referenceUnpack into identically poisoned
    buffers and compares the whole buffers (guard bytes included), so writes
    outside the type's bytes are caught; neither may change its input;
  - imports the committed handle with importMPIDatatype and compares the tree
    with the original.
A mismatch prints the type as a spec expression, the count, the first
differing byte and a command line that replays the case, then the smallest
type found by simplifying it that still fails the same way.
The last line is "P passed, F failed"; the exit status is 0 only when
nothing failed.

options:
  --random N       check N random datatypes (cases FIRST .. FIRST+N-1)
  --seed S         seed of the random cases (default: drawn; printed first)
  --first I        index of the first random case (default 0); with
                   --random 1 this replays a single case
  --max-depth D    constructor nesting of random types, 0-5 (default 5)
  --count N        the count > 1 checked for spec bindings (default 3)
  -t NAME          check only the binding NAME of the spec file
  --max-span B     refuse spec types whose buffer exceeds B bytes
                   (default 1073741824)
  --no-shrink      do not search for a smaller failing type
  --include-known-mpi-defects
                   also generate random types that the linked MPI is known
                   to mishandle (see below); by default they are left out
  -v               print every case
  --help           this text
  --version        the ddtc version

known defects of Open MPI 4.1 (random types leave them out unless
--include-known-mpi-defects is given; spec files are always checked fully):
  - an hvector stride of exactly -1 byte (or a vector stride of -1 extent of
    a 1-byte type) is taken as "the old type's extent": MPI_Pack reads the
    blocks forwards;
  - a darray of an old type of size 0 is rejected with MPI_ERR_TYPE;
  - a struct member of size 0 whose bounds reach beyond the data of the
    others, as in struct([1, 1], [0, 2], [char, contiguous(0, char)]),
    makes MPI_Pack step count > 1 instances by the size of the data instead
    of the extent MPI_Type_get_extent reports.

environment:
  DDTC_BREAK_REFERENCE=1  flips one byte of every non-empty reference pack
                          result before comparing, to show that the
                          comparison can fail (every type with data must
                          then fail).
)";

struct Options : CheckerOptions {
  bool breakReference = false;
  bool shrink = true;
  bool keepKnownDefects = false;
};

std::string mpiError(int rc) {
  char text[MPI_MAX_ERROR_STRING + 1] = {0};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, static_cast<size_t>(std::max(len, 0)));
}

/// Replaces each primitive by the one importMPIDatatype returns for its
/// handle, since MPI gives some names one handle (MPI_LONG_LONG is
/// MPI_LONG_LONG_INT).
class PrimitiveCanonicalizer {
public:
  TypeRef canonical(const TypeRef &t) {
    if (t->kind() == Kind::Primitive) {
      Primitive p = t->args().primitive;
      auto it = primitives_.find(p);
      if (it == primitives_.end()) {
        std::string error;
        TypeRef imported = importMPIDatatype(getMPIPrimitive(p), error);
        it = primitives_.emplace(p, imported ? imported : t).first;
      }
      return it->second;
    }
    auto done = nodes_.find(t.get());
    if (done != nodes_.end())
      return done->second;
    TypeArgs args = t->args();
    bool changed = false;
    for (TypeRef &c : args.children) {
      TypeRef n = canonical(c);
      changed |= n != c;
      c = n;
    }
    TypeRef result = t;
    if (changed) {
      std::string error;
      TypeRef rebuilt = Datatype::create(std::move(args), error);
      if (rebuilt)
        result = rebuilt;
    }
    nodes_.emplace(t.get(), result);
    return result;
  }

private:
  std::map<Primitive, TypeRef> primitives_;
  std::map<const Datatype *, TypeRef> nodes_;
};

class Checker {
public:
  explicit Checker(const Options &opts) : opts_(opts) {}

  /// Checks one type at 1 and at `count` instances. Returns "" when all
  /// checks pass, else a description of the first mismatch.
  std::string check(const TypeRef &type, int64_t count);

private:
  std::string checkFigures(const Datatype &type, MPI_Datatype handle);
  std::string checkPackUnpack(const Datatype &type, int64_t count,
                              MPI_Datatype handle);
  std::string checkImport(const TypeRef &type, MPI_Datatype handle);

  const Options &opts_;
};

std::string Checker::check(const TypeRef &type, int64_t count) {
  MPI_Datatype handle = MPI_DATATYPE_NULL;
  bool named = false;
  std::string error;
  if (!exportMPIDatatype(*type, handle, named, error))
    return "export to MPI failed: " + error;
  std::string result;
  if (!named) {
    int rc = MPI_Type_commit(&handle);
    if (rc != MPI_SUCCESS)
      result = "MPI_Type_commit failed: " + mpiError(rc);
  }
  if (result.empty())
    result = checkFigures(*type, handle);
  if (result.empty())
    result = checkPackUnpack(*type, 1, handle);
  if (result.empty() && count != 1)
    result = checkPackUnpack(*type, count, handle);
  if (result.empty())
    result = checkImport(type, handle);
  if (!named)
    MPI_Type_free(&handle);
  return result;
}

std::string Checker::checkFigures(const Datatype &type, MPI_Datatype handle) {
  const LayoutInfo &l = type.layout();
  MPI_Count size = 0, lb = 0, extent = 0, trueLb = 0, trueExtent = 0;
  int rc = MPI_Type_size_x(handle, &size);
  if (rc == MPI_SUCCESS)
    rc = MPI_Type_get_extent_x(handle, &lb, &extent);
  if (rc == MPI_SUCCESS)
    rc = MPI_Type_get_true_extent_x(handle, &trueLb, &trueExtent);
  if (rc != MPI_SUCCESS)
    return "MPI layout query failed: " + mpiError(rc);
  std::ostringstream os;
  auto cmp = [&](const char *what, int64_t ours, int64_t mpi) {
    if (ours != mpi)
      os << (os.tellp() > 0 ? "; " : "") << what << ": reference " << ours
         << ", MPI " << mpi;
  };
  cmp("size", l.size, size);
  cmp("lb", l.lb, lb);
  cmp("extent", l.extent, extent);
  // The true bounds of a type without data are a convention of each
  // implementation (Open MPI reports a true lb of PTRDIFF_MAX): not compared.
  if (l.size > 0) {
    cmp("true lb", l.trueLb, trueLb);
    cmp("true extent", l.trueExtent, trueExtent);
  }
  std::string diff = os.str();
  return diff.empty() ? "" : "layout figures differ: " + diff;
}

std::string Checker::checkPackUnpack(const Datatype &type, int64_t count,
                                     MPI_Datatype handle) {
  std::string prefix = "count " + std::to_string(count) + ": ";
  KernelCheckOptions options;
  options.maxSpan = opts_.maxSpan;
  options.breakReference = opts_.breakReference;
  KernelChecker checker(type, count, options);
  if (!checker.error().empty())
    return prefix + checker.error() + " (--max-span)";
  const int64_t bytes = checker.packedBytes();
  if (count > std::numeric_limits<int>::max() ||
      bytes > std::numeric_limits<int>::max())
    return prefix + "too large for MPI_Pack's int arguments";
  const int n = static_cast<int>(count), size = static_cast<int>(bytes);

  // MPI packs and unpacks the whole stream; the harness compares with the
  // reference, guard bytes included.
  auto runMPI = [&](const KernelCall &call, KernelBuffers &b) -> std::string {
    int position = 0;
    int rc = call.pack ? MPI_Pack(b.origin(), n, handle, b.packed(), size,
                                  &position, MPI_COMM_SELF)
                       : MPI_Unpack(b.packed(), size, &position, b.origin(), n,
                                    handle, MPI_COMM_SELF);
    const char *fn = call.pack ? "MPI_Pack" : "MPI_Unpack";
    if (rc != MPI_SUCCESS)
      return std::string(fn) + " failed: " + mpiError(rc);
    if (position != size)
      return std::string(fn) + (call.pack ? " wrote " : " read ") +
             std::to_string(position) + " bytes, the reference " +
             (call.pack ? "packs " : "unpacks ") + std::to_string(bytes);
    return "";
  };
  for (bool pack : {true, false}) {
    KernelCall call;
    call.pack = pack;
    call.hi = bytes;
    std::string result = checker.check(call, runMPI);
    if (!result.empty())
      return prefix + result;
  }
  return "";
}

std::string Checker::checkImport(const TypeRef &type, MPI_Datatype handle) {
  std::string error;
  TypeRef imported = importMPIDatatype(handle, error);
  if (!imported)
    return "import from MPI failed: " + error;
  // Node identities are only stable while the tree lives: one
  // canonicalizer per tree.
  PrimitiveCanonicalizer canon;
  TypeRef expected = canon.canonical(type);
  if (!equalTrees(*expected, *imported))
    return "import from MPI gives a different tree: " +
           printSpecExpr(*imported);
  return "";
}

/// The kind of a mismatch, so that shrinking keeps the failure it started
/// from: which layout figures differ, or which check failed.
std::string failureCategory(const std::string &result) {
  std::string r = result;
  if (r.compare(0, 6, "count ") == 0) {
    size_t colon = r.find(": ");
    if (colon != std::string::npos)
      r = r.substr(colon + 2);
  }
  const std::string layout = "layout figures differ: ";
  if (r.compare(0, layout.size(), layout) == 0) {
    std::string names = "layout";
    size_t pos = layout.size();
    while (pos < r.size()) {
      size_t colon = r.find(':', pos);
      if (colon == std::string::npos)
        break;
      names += "," + r.substr(pos, colon - pos);
      size_t next = r.find("; ", colon);
      if (next == std::string::npos)
        break;
      pos = next + 2;
    }
    return names;
  }
  for (const char *prefix :
       {"packed byte", "pack wrote", "unpacked byte", "unpack wrote",
        "MPI_Pack", "MPI_Unpack", "import from MPI failed",
        "import from MPI gives", "export to MPI", "MPI_Type_commit",
        "the buffers", "too large"})
    if (r.compare(0, std::strlen(prefix), prefix) == 0)
      return prefix;
  return r.substr(0, 24);
}

/// One-step simplifications of a tree, bigger steps first.
class Simplifier {
public:
  std::vector<TypeRef> of(const TypeRef &t) {
    std::vector<TypeRef> out;
    if (t->kind() == Kind::Primitive) {
      if (t->args().primitive != Primitive::Char)
        out.push_back(Datatype::primitive(Primitive::Char));
      return out;
    }
    // Replace the node by one of its children or by a primitive.
    for (const TypeRef &c : t->args().children)
      out.push_back(c);
    out.push_back(Datatype::primitive(Primitive::Int));
    out.push_back(Datatype::primitive(Primitive::Char));
    // Edit the node's own arguments.
    for (TypeArgs &a : argumentEdits(t->args()))
      add(out, std::move(a));
    // Simplify one child in place.
    const TypeArgs &args = t->args();
    for (size_t i = 0; i < args.children.size(); ++i) {
      if (i > 0 && args.children[i] == args.children[i - 1])
        continue;
      for (TypeRef &c : of(args.children[i])) {
        TypeArgs a = args;
        a.children[i] = c;
        add(out, std::move(a));
      }
    }
    return out;
  }

private:
  static void add(std::vector<TypeRef> &out, TypeArgs a) {
    std::string error;
    if (TypeRef t = Datatype::create(std::move(a), error))
      out.push_back(std::move(t));
  }

  /// Smaller magnitudes for one number.
  static std::vector<int64_t> smaller(int64_t v) {
    std::vector<int64_t> out;
    for (int64_t c : {int64_t(0), int64_t(1), v / 2, v > 0 ? v - 1 : v + 1})
      if (c != v && (c < 0 ? -c : c) < (v < 0 ? -v : v) &&
          std::find(out.begin(), out.end(), c) == out.end())
        out.push_back(c);
    return out;
  }

  /// Smaller arguments of one node, from the constructor's signature:
  /// fewer blocks (or dimensions) first, then smaller numbers.
  static std::vector<TypeArgs> argumentEdits(const TypeArgs &args) {
    std::vector<TypeArgs> out;
    const ConstructorSignature *sig = getConstructor(args.kind);
    if (!sig)
      return out;
    auto isList = [](ArgSyntax s) {
      return s == ArgSyntax::IntList || s == ArgSyntax::DistribList ||
             s == ArgSyntax::DargList || s == ArgSyntax::TypeList;
    };
    // The first list holds one entry per block (or dimension); drop entry i
    // of every list of that length.
    for (const ConstructorArgument &arg : sig->arguments) {
      if (!isList(arg.syntax))
        continue;
      size_t n = arg.syntax == ArgSyntax::IntList
                     ? (args.*getIntListMember(arg.field)).size()
                     : 0;
      for (size_t i = 0; i < n; ++i)
        out.push_back(dropEntry(args, n, i));
      break;
    }
    for (const ConstructorArgument &arg : sig->arguments) {
      switch (arg.syntax) {
      case ArgSyntax::Int: {
        int64_t TypeArgs::*field = getIntMember(arg.field);
        for (int64_t v : smaller(args.*field)) {
          TypeArgs a = args;
          a.*field = v;
          out.push_back(std::move(a));
        }
        break;
      }
      case ArgSyntax::IntList: {
        std::vector<int64_t> TypeArgs::*field = getIntListMember(arg.field);
        for (size_t i = 0; i < (args.*field).size(); ++i)
          for (int64_t v : smaller((args.*field)[i])) {
            TypeArgs a = args;
            (a.*field)[i] = v;
            out.push_back(std::move(a));
          }
        break;
      }
      case ArgSyntax::DargList:
        for (size_t i = 0; i < args.dargs.size(); ++i) {
          if (args.dargs[i] == kDefaultDarg)
            continue;
          TypeArgs a = args;
          a.dargs[i] = kDefaultDarg;
          out.push_back(std::move(a));
        }
        break;
      case ArgSyntax::DistribList:
      case ArgSyntax::Order:
      case ArgSyntax::Type:
      case ArgSyntax::TypeList:
        break; // old types shrink on their own (Simplifier::of)
      }
    }
    // A subarray whose array is just large enough for its window.
    if (args.kind == Kind::Subarray)
      for (size_t i = 0; i < args.sizes.size(); ++i) {
        TypeArgs a = args;
        a.sizes[i] = a.subsizes[i] + a.starts[i];
        if (a.sizes[i] != args.sizes[i])
          out.push_back(std::move(a));
      }
    return out;
  }

  /// `args` without entry i of each of its lists of length n.
  static TypeArgs dropEntry(const TypeArgs &args, size_t n, size_t i) {
    TypeArgs a = args;
    auto drop = [&](auto &v) {
      if (v.size() == n)
        v.erase(v.begin() + static_cast<long>(i));
    };
    drop(a.blocklens);
    drop(a.displs);
    drop(a.sizes);
    drop(a.subsizes);
    drop(a.starts);
    drop(a.distribs);
    drop(a.dargs);
    if (args.kind == Kind::Struct)
      drop(a.children);
    // A darray keeps its process grid whole: fewer dimensions, fewer
    // processes.
    if (args.kind == Kind::Darray && a.psizes.size() == n) {
      a.commSize /= a.psizes[i];
      a.rank %= a.commSize;
      a.psizes.erase(a.psizes.begin() + static_cast<long>(i));
    }
    return a;
  }
};

/// Greedily simplifies a failing case while it fails the same way.
struct ShrinkResult {
  TypeRef type;
  int64_t count;
  std::string result;
};

ShrinkResult shrinkCase(Checker &checker, TypeRef type, int64_t count,
                        const std::string &result) {
  std::string category = failureCategory(result);
  ShrinkResult best{std::move(type), count, result};
  Simplifier simplifier;
  int budget = 20000;
  auto tryCase = [&](const TypeRef &t, int64_t n) {
    if (budget-- <= 0)
      return false;
    std::string r = checker.check(t, n);
    if (r.empty() || failureCategory(r) != category)
      return false;
    best = {t, n, r};
    return true;
  };
  bool progress = true;
  while (progress && budget > 0) {
    progress = false;
    for (int64_t n : {int64_t(1), int64_t(2)})
      if (n < best.count && tryCase(best.type, n)) {
        progress = true;
        break;
      }
    if (progress)
      continue;
    for (const TypeRef &c : simplifier.of(best.type))
      if (tryCase(c, best.count)) {
        progress = true;
        break;
      }
  }
  return best;
}

bool parseArgs(int argc, char **argv, Options &o, std::string &error) {
  auto own = [&](int &i) {
    std::string a = argv[i];
    if (a == "--include-known-mpi-defects") {
      o.keepKnownDefects = true;
    } else if (a == "--no-shrink") {
      o.shrink = false;
    } else {
      return OptionResult::NotTaken;
    }
    return OptionResult::Taken;
  };
  return parseCheckerArgs(argc, argv, o, kHelp,
                          "ddt-mpi-check (ddtc) " DDTC_VERSION "\n", own,
                          error);
}

void printSmallest(const Options &o, Checker &checker, const TypeRef &type,
                   int64_t count, const std::string &result) {
  if (!o.shrink)
    return;
  ShrinkResult small = shrinkCase(checker, type, count, result);
  std::printf("  smallest failing (count %lld): %s\n    %s\n",
              static_cast<long long>(small.count),
              printSpecExpr(*small.type).c_str(), small.result.c_str());
}

int runRandom(Options &o, Checker &checker) {
  chooseRandomSeed(o);
  RandomDatatypeOptions gen;
  gen.maxDepth = o.maxDepth;
  char version[MPI_MAX_LIBRARY_VERSION_STRING + 1] = {0};
  int len = 0;
  MPI_Get_library_version(version, &len);
  if (!o.keepKnownDefects && std::strstr(version, "Open MPI")) {
    gen.avoidEmptyDarrayOldType = true;
    gen.avoidEmptyStructMember = true;
    gen.avoidStrideMinusOne = true;
    std::printf("note: leaving out constructs Open MPI mishandles (see "
                "--help); --include-known-mpi-defects keeps them\n");
  }
  int64_t passed = 0, failed = 0;
  for (int64_t n = 0; n < o.numRandom; ++n) {
    uint64_t index = o.first + static_cast<uint64_t>(n);
    std::mt19937_64 rng(randomCaseSeed(o.seed, index));
    RandomDatatypeCase c = generateRandomDatatype(rng, gen);
    std::string result = checker.check(c.type, c.count);
    if (result.empty()) {
      ++passed;
      if (o.verbose)
        std::printf("case %llu: ok (count %lld): %s\n",
                    static_cast<unsigned long long>(index),
                    static_cast<long long>(c.count),
                    printSpecExpr(*c.type).c_str());
      continue;
    }
    ++failed;
    std::printf("FAIL case %llu (counts 1 and %lld): %s\n    %s\n  replay: "
                "ddt-mpi-check --random 1 --seed %llu --first %llu "
                "--max-depth %u%s\n",
                static_cast<unsigned long long>(index),
                static_cast<long long>(c.count), printSpecExpr(*c.type).c_str(),
                result.c_str(), static_cast<unsigned long long>(o.seed),
                static_cast<unsigned long long>(index), o.maxDepth,
                o.keepKnownDefects ? " --include-known-mpi-defects" : "");
    printSmallest(o, checker, c.type, c.count, result);
    std::fflush(stdout);
  }
  std::printf("%lld passed, %lld failed\n", static_cast<long long>(passed),
              static_cast<long long>(failed));
  return failed == 0 ? 0 : 1;
}

int runFile(const Options &o, Checker &checker) {
  SpecFile spec;
  std::vector<const SpecBinding *> bindings;
  if (!loadCheckedBindings(o, "ddt-mpi-check", spec, bindings))
    return 2;
  int64_t passed = 0, failed = 0;
  for (const SpecBinding *binding : bindings) {
    const SpecBinding &b = *binding;
    std::string result = checker.check(b.type, o.fileCount);
    if (result.empty()) {
      ++passed;
      if (o.verbose)
        std::printf("%s: ok\n", b.name.c_str());
      continue;
    }
    ++failed;
    std::printf("FAIL %s (%s:%u, counts 1 and %lld): %s\n    %s\n  replay: "
                "ddt-mpi-check %s -t %s --count %lld\n",
                b.name.c_str(), o.file.c_str(), b.line,
                static_cast<long long>(o.fileCount),
                printSpecExpr(*b.type).c_str(), result.c_str(), o.file.c_str(),
                b.name.c_str(), static_cast<long long>(o.fileCount));
    printSmallest(o, checker, b.type, o.fileCount, result);
  }
  std::printf("%lld passed, %lld failed\n", static_cast<long long>(passed),
              static_cast<long long>(failed));
  return failed == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  Options opts;
  std::string error;
  if (!parseArgs(argc, argv, opts, error)) {
    std::fprintf(stderr, "ddt-mpi-check: %s (see --help)\n", error.c_str());
    return 2;
  }
  const char *brk = std::getenv("DDTC_BREAK_REFERENCE");
  opts.breakReference = brk && *brk && std::strcmp(brk, "0") != 0;

  MPI_Init(&argc, &argv);
  // Report MPI errors as return codes; a rejected constructor is a finding.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 0;
  // The checks are local: rank 0 runs them, other ranks only wait.
  if (rank == 0) {
    Checker checker(opts);
    status = opts.random ? runRandom(opts, checker) : runFile(opts, checker);
    std::fflush(stdout);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
