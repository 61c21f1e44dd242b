//===- YaksaTypeTest.cpp - The Yaksa adapter against a fake Yaksa ---------===//
//
// The type translation, the loader's errors and the watchdog, without Yaksa:
// a fake of the few yaksa_* functions records every call, hands out handles
// and counts the live ones, so a leak or a wrong argument shows.
//===----------------------------------------------------------------------===//

#include "YaksaType.h"
#include "Watchdog.h"
#include "YaksaApi.h"

#include "ddtc/Core/SpecParser.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace ddtc;
using yaksa::Type;

struct Fake {
  std::vector<std::string> calls;
  std::set<Type> live;
  Type next = 1000;
  /// The constructor that fails (by the name recorded), if any.
  std::string failing;
  uintptr_t size = 0;
  intptr_t lb = 0, extent = 0;
};
Fake fake;

std::string list(intptr_t n, const intptr_t *v) {
  std::ostringstream os;
  os << "[";
  for (intptr_t i = 0; i < n; ++i)
    os << (i ? "," : "") << v[i];
  os << "]";
  return os.str();
}

int made(const std::string &call, Type *out) {
  std::string name = call.substr(0, call.find('('));
  fake.calls.push_back(call);
  if (name == fake.failing)
    return yaksa::kErrNotSupported;
  *out = fake.next++;
  fake.live.insert(*out);
  return yaksa::kSuccess;
}

std::string s(long long v) { return std::to_string(v); }

yaksa::Api fakeApi() {
  yaksa::Api a;
  a.type_create_contig = [](intptr_t count, Type old, yaksa::Info, Type *out) {
    return made("contig(" + s(count) + "," + s(old) + ")", out);
  };
  a.type_create_vector = [](intptr_t count, intptr_t bl, intptr_t stride,
                            Type old, yaksa::Info, Type *out) {
    return made("vector(" + s(count) + "," + s(bl) + "," + s(stride) + "," +
                    s(old) + ")",
                out);
  };
  a.type_create_hvector = [](intptr_t count, intptr_t bl, intptr_t stride,
                             Type old, yaksa::Info, Type *out) {
    return made("hvector(" + s(count) + "," + s(bl) + "," + s(stride) + "," +
                    s(old) + ")",
                out);
  };
  a.type_create_indexed = [](intptr_t n, const intptr_t *bl, const intptr_t *d,
                             Type old, yaksa::Info, Type *out) {
    return made("indexed(" + s(n) + "," + list(n, bl) + "," + list(n, d) + "," +
                    s(old) + ")",
                out);
  };
  a.type_create_hindexed = [](intptr_t n, const intptr_t *bl, const intptr_t *d,
                              Type old, yaksa::Info, Type *out) {
    return made("hindexed(" + s(n) + "," + list(n, bl) + "," + list(n, d) +
                    "," + s(old) + ")",
                out);
  };
  a.type_create_indexed_block = [](intptr_t n, intptr_t bl, const intptr_t *d,
                                   Type old, yaksa::Info, Type *out) {
    return made("indexed_block(" + s(n) + "," + s(bl) + "," + list(n, d) + "," +
                    s(old) + ")",
                out);
  };
  a.type_create_hindexed_block = [](intptr_t n, intptr_t bl, const intptr_t *d,
                                    Type old, yaksa::Info, Type *out) {
    return made("hindexed_block(" + s(n) + "," + s(bl) + "," + list(n, d) +
                    "," + s(old) + ")",
                out);
  };
  a.type_create_struct = [](intptr_t n, const intptr_t *bl, const intptr_t *d,
                            const Type *types, yaksa::Info, Type *out) {
    std::vector<intptr_t> t(types, types + n);
    return made("struct(" + s(n) + "," + list(n, bl) + "," + list(n, d) + "," +
                    list(n, t.data()) + ")",
                out);
  };
  a.type_create_subarray = [](int nd, const intptr_t *sizes,
                              const intptr_t *sub, const intptr_t *starts,
                              int order, Type old, yaksa::Info, Type *out) {
    return made("subarray(" + s(nd) + "," + list(nd, sizes) + "," +
                    list(nd, sub) + "," + list(nd, starts) + "," +
                    (order == yaksa::kOrderC ? "C" : "F") + "," + s(old) + ")",
                out);
  };
  a.type_create_resized = [](Type old, intptr_t lb, intptr_t extent,
                             yaksa::Info, Type *out) {
    return made("resized(" + s(old) + "," + s(lb) + "," + s(extent) + ")", out);
  };
  a.type_create_dup = [](Type old, yaksa::Info, Type *out) {
    return made("dup(" + s(old) + ")", out);
  };
  a.type_free = [](Type t) {
    fake.calls.push_back("free(" + s(t) + ")");
    EXPECT_EQ(fake.live.erase(t), 1u) << "freed " << t << ", not live";
    return yaksa::kSuccess;
  };
  a.type_get_size = [](Type, uintptr_t *size) {
    *size = fake.size;
    return yaksa::kSuccess;
  };
  a.type_get_extent = [](Type, intptr_t *lb, intptr_t *extent) {
    *lb = fake.lb;
    *extent = fake.extent;
    return yaksa::kSuccess;
  };
  return a;
}

class YaksaTypeTest : public ::testing::Test {
protected:
  void SetUp() override { fake = Fake(); }

  TypeRef parse(const std::string &text) {
    SpecFile spec;
    std::string error;
    EXPECT_TRUE(parseSpec(text, "test", spec, error)) << error;
    const SpecBinding *b = spec.find("t");
    return b ? b->type : nullptr;
  }

  /// Builds t of `text`, frees it, and returns the calls made.
  std::vector<std::string> calls(const std::string &text) {
    TypeRef t = parse(text);
    yaksa::Built built;
    std::string error;
    EXPECT_TRUE(yaksa::buildType(api, *t, built, error)) << error;
    EXPECT_TRUE(built.owned);
    EXPECT_EQ(fake.live, std::set<Type>{built.type})
        << "intermediate types left alive";
    yaksa::freeType(api, built);
    EXPECT_TRUE(fake.live.empty());
    fake.calls.pop_back(); // the final free
    return fake.calls;
  }

  yaksa::Api api = fakeApi();
};

using Calls = std::vector<std::string>;

TEST_F(YaksaTypeTest, ParticlesStruct) {
  EXPECT_EQ(calls("p = struct([3, 3, 1, 1], [0, 24, 36, 40], [double, float, "
                  "int, char])\nt = contiguous(5, resized(0, 48, p))"),
            (Calls{"struct(4,[3,3,1,1],[0,24,36,40],[46,45,14,2])",
                   "resized(1000,0,48)", "free(1000)", "contig(5,1001)",
                   "free(1001)"}));
}

TEST_F(YaksaTypeTest, TransposeNestsThreeDeep) {
  EXPECT_EQ(calls("t = contiguous(4, resized(0, 8, vector(4, 1, 4, double)))"),
            (Calls{"vector(4,1,4,46)", "resized(1000,0,8)", "free(1000)",
                   "contig(4,1001)", "free(1001)"}));
}

TEST_F(YaksaTypeTest, EveryConstructorKeepsItsArguments) {
  EXPECT_EQ(calls("t = hvector(10, 16, 36, char)"),
            (Calls{"hvector(10,16,36,2)"}));
  fake = Fake();
  EXPECT_EQ(calls("t = indexed([3, 2, 1], [0, 4, 8], double)"),
            (Calls{"indexed(3,[3,2,1],[0,4,8],46)"}));
  fake = Fake();
  EXPECT_EQ(calls("t = hindexed([8, 24], [0, 40], byte)"),
            (Calls{"hindexed(2,[8,24],[0,40],38)"}));
  fake = Fake();
  EXPECT_EQ(calls("t = indexed_block(2, [0, 5, 9], int)"),
            (Calls{"indexed_block(3,2,[0,5,9],14)"}));
  fake = Fake();
  EXPECT_EQ(calls("t = hindexed_block(3, [4, 40], short)"),
            (Calls{"hindexed_block(2,3,[4,40],16)"}));
  fake = Fake();
  EXPECT_EQ(
      calls("t = subarray([512, 512, 512], [510, 1, 510], [1, 510, 1], C, "
            "double)"),
      (Calls{"subarray(3,[512,512,512],[510,1,510],[1,510,1],C,46)"}));
  fake = Fake();
  EXPECT_EQ(calls("t = subarray([8, 6], [2, 3], [1, 2], Fortran, float)"),
            (Calls{"subarray(2,[8,6],[2,3],[1,2],F,45)"}));
  fake = Fake();
  EXPECT_EQ(calls("t = dup(vector(3, 2, 4, int32_t))"),
            (Calls{"vector(3,2,4,8)", "dup(1000)", "free(1000)"}));
}

TEST_F(YaksaTypeTest, DarrayIsRefusedByName) {
  TypeRef t = parse("t = contiguous(2, darray(4, 1, [8, 8], [block, none], "
                    "[default, default], [4, 1], C, double))");
  yaksa::Built built;
  std::string error;
  EXPECT_FALSE(yaksa::buildType(api, *t, built, error));
  EXPECT_EQ(error, "Yaksa has no darray constructor");
  EXPECT_TRUE(fake.live.empty());
  EXPECT_FALSE(built.owned);
}

TEST_F(YaksaTypeTest, AFailedChildFreesItsSiblings) {
  // The first field is built, the second has no Yaksa builtin.
  TypeRef t = parse("t = struct([1, 1], [0, 16], [vector(2, 1, 2, int), "
                    "long double])");
  yaksa::Built built;
  std::string error;
  EXPECT_FALSE(yaksa::buildType(api, *t, built, error));
  EXPECT_EQ(error, "Yaksa has no builtin type for MPI_LONG_DOUBLE");
  EXPECT_EQ(fake.calls, (Calls{"vector(2,1,2,14)", "free(1000)"}));
  EXPECT_TRUE(fake.live.empty());
}

TEST_F(YaksaTypeTest, AFailedCallIsReportedAndLeaksNothing) {
  fake.failing = "resized";
  TypeRef t = parse("t = contiguous(3, resized(0, 8, vector(4, 1, 4, float)))");
  yaksa::Built built;
  std::string error;
  EXPECT_FALSE(yaksa::buildType(api, *t, built, error));
  EXPECT_EQ(error, "yaksa_type_create for resized failed (not supported)");
  EXPECT_TRUE(fake.live.empty());
}

TEST_F(YaksaTypeTest, APrimitiveIsABuiltinNeverFreed) {
  TypeRef t = parse("t = double");
  yaksa::Built built;
  std::string error;
  ASSERT_TRUE(yaksa::buildType(api, *t, built, error)) << error;
  EXPECT_EQ(built.type, yaksa::builtin::Double);
  EXPECT_FALSE(built.owned);
  yaksa::freeType(api, built);
  EXPECT_TRUE(fake.calls.empty());
}

TEST_F(YaksaTypeTest, BuiltinsHaveTheSameLayout) {
  EXPECT_EQ(yaksa::builtinFor(Primitive::Char), yaksa::builtin::Char);
  EXPECT_EQ(yaksa::builtinFor(Primitive::Int32), yaksa::builtin::Int32);
  EXPECT_EQ(yaksa::builtinFor(Primitive::DoubleInt), yaksa::builtin::DoubleInt);
  // Yaksa's GPU kernels compute long double as double: not the same type.
  EXPECT_FALSE(yaksa::builtinFor(Primitive::LongDouble).has_value());
  EXPECT_FALSE(yaksa::builtinFor(Primitive::LongDoubleInt).has_value());
}

TEST_F(YaksaTypeTest, CheckLayoutNamesTheDifference) {
  TypeRef t = parse("t = resized(-8, 64, hvector(3, 2, 16, int))");
  std::string error;
  fake.size = 24, fake.lb = -8, fake.extent = 64;
  EXPECT_TRUE(yaksa::checkLayout(api, *t, 1000, error)) << error;
  fake.extent = 40;
  EXPECT_FALSE(yaksa::checkLayout(api, *t, 1000, error));
  EXPECT_EQ(error, "Yaksa's type differs: size 24, lb -8, extent 40 where "
                   "ddtc has 24, -8, 64");
}

TEST(YaksaApiTest, LoadingReportsTheLibrary) {
  yaksa::Api api;
  std::string error;
  EXPECT_FALSE(yaksa::loadApi("/nonexistent/libyaksa.so", api, error));
  EXPECT_NE(error.find("cannot load Yaksa from /nonexistent/libyaksa.so"),
            std::string::npos)
      << error;
  EXPECT_EQ(api.init, nullptr);
}

TEST(YaksaApiTest, LoadingALibraryWithoutYaksaNamesTheMissingFunction) {
  yaksa::Api api;
  std::string error;
  // libc is loaded in every process and has no yaksa_* function.
  EXPECT_FALSE(yaksa::loadApi("libc.so.6", api, error));
  EXPECT_EQ(error, "the Yaksa library has no yaksa_init");
}

TEST(YaksaApiTest, TheOptionWinsOverTheEnvironment) {
  setenv("DDTC_YAKSA_LIB", "/from/env.so", 1);
  EXPECT_EQ(yaksa::libraryPath("/from/option.so"), "/from/option.so");
  EXPECT_EQ(yaksa::libraryPath(""), "/from/env.so");
  unsetenv("DDTC_YAKSA_LIB");
  EXPECT_EQ(yaksa::libraryPath(""), "");
}

TEST(WatchdogTest, ACallInTimeIsLeftAlone) {
  bool fired = false;
  Watchdog w([&](const std::string &) { fired = true; });
  EXPECT_EQ(w.run(5, "quick", [] { return 7; }), 7);
  EXPECT_FALSE(fired);
}

TEST(WatchdogDeathTest, AStuckCallEndsTheProcessWithItsCode) {
  EXPECT_EXIT(
      {
        Watchdog w([](const std::string &what) {
          std::fprintf(stderr, "recorded %s\n", what.c_str());
        });
        w.run(0.2, "stuck pack", [] {
          for (;;)
            pause();
          return 0;
        });
      },
      ::testing::ExitedWithCode(Watchdog::kTimedOutExit),
      "recorded stuck pack");
}

} // namespace
