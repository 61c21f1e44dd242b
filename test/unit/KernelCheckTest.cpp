//===- KernelCheckTest.cpp - The pack/unpack checking harness -------------===//
//
// The harness must pass an implementation that agrees with the reference and
// name the first byte of one that does not: a byte not written, a byte
// written outside the range or outside the instances, an input changed.
//===----------------------------------------------------------------------===//

#include "ddtc/Testing/KernelCheck.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Core/Typemap.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace ddtc;

namespace {

TypeRef parse(const std::string &expr) {
  SpecFile spec;
  std::string error;
  EXPECT_TRUE(parseSpec("t = " + expr + "\n", "test", spec, error)) << error;
  return spec.bindings.back().type;
}

/// The reference itself, as an implementation: what a correct kernel does.
KernelRunner reference(const Datatype &type, int64_t count) {
  return [&type, count](const KernelCall &call, KernelBuffers &b) {
    int64_t total = packedSize(type, count);
    std::vector<uint8_t> stream(static_cast<size_t>(total));
    if (call.pack) {
      referencePack(type, count, b.origin(), stream.data());
      std::memcpy(b.packed(), stream.data() + call.lo,
                  static_cast<size_t>(call.hi - call.lo));
    } else {
      std::memcpy(stream.data() + call.lo, b.packed(),
                  static_cast<size_t>(call.hi - call.lo));
      referenceUnpackRange(type, count, stream.data(), call.lo, call.hi,
                           b.origin());
    }
    return std::string();
  };
}

TEST(KernelCheck, ReferencePassesEveryRangeAndShift) {
  TypeRef t = parse("resized(-8, 40, struct([3, 1], [1, 20], [char, double]))");
  for (bool random : {false, true}) {
    std::mt19937_64 rng(3);
    KernelCheckOptions options;
    options.random = random ? &rng : nullptr;
    KernelChecker checker(*t, 3, options);
    ASSERT_EQ(checker.error(), "");
    ASSERT_EQ(checker.packedBytes(), 33);
    for (bool pack : {true, false})
      for (int64_t lo : {0, 5, 33})
        for (int64_t shift : {0, 1, 13}) {
          KernelCall call;
          call.pack = pack;
          call.lo = lo;
          call.hi = 33;
          call.originShift = shift;
          call.packedShift = 15 - shift;
          EXPECT_EQ(checker.check(call, reference(*t, 3)), "");
        }
  }
}

TEST(KernelCheck, PackFaultsAreNamed) {
  TypeRef t = parse("vector(3, 2, 5, int)");
  KernelChecker checker(*t, 1);
  KernelCall call;
  call.hi = checker.packedBytes();
  auto withFault = [&](std::function<void(KernelBuffers &)> fault) {
    return [&, fault](const KernelCall &c, KernelBuffers &b) {
      std::string r = reference(*t, 1)(c, b);
      fault(b);
      return r;
    };
  };
  EXPECT_EQ(checker
                .check(call, withFault([](KernelBuffers &b) {
                         static_cast<uint8_t *>(b.packed())[4] ^= 1;
                       }))
                .rfind("packed byte 4 is ", 0),
            0u);
  EXPECT_EQ(checker.check(call, withFault([](KernelBuffers &b) {
                            static_cast<uint8_t *>(b.packed())[24] = 0;
                          })),
            "pack wrote outside [0, 24), at packed byte 24");
  EXPECT_EQ(checker.check(call, withFault([](KernelBuffers &b) {
                            static_cast<uint8_t *>(b.origin())[8] ^= 1;
                          })),
            "pack wrote into its source, at origin offset 8");
  EXPECT_EQ(checker.check(call,
                          [](const KernelCall &, KernelBuffers &) {
                            return std::string("launch failed");
                          }),
            "launch failed");
}

TEST(KernelCheck, UnpackFaultsAreNamed) {
  TypeRef t = parse("vector(3, 2, 5, int)");
  KernelChecker checker(*t, 1);
  KernelCall call;
  call.pack = false;
  call.lo = 4;
  call.hi = 20;
  auto withFault = [&](std::function<void(KernelBuffers &)> fault) {
    return [&, fault](const KernelCall &c, KernelBuffers &b) {
      std::string r = reference(*t, 1)(c, b);
      fault(b);
      return r;
    };
  };
  // Bytes 8-11 of the origin lie in the gap between blocks.
  EXPECT_NE(checker
                .check(call, withFault([](KernelBuffers &b) {
                         static_cast<uint8_t *>(b.origin())[8] = 0;
                       }))
                .find("unpacked byte at origin offset 8 is 0x00, the reference "
                      "has 0x"),
            std::string::npos);
  // Byte 0 is outside the range [4, 20): unpack must leave it alone.
  EXPECT_NE(checker
                .check(call, withFault([](KernelBuffers &b) {
                         static_cast<uint8_t *>(b.origin())[0] = 0;
                       }))
                .find("(untouched)"),
            std::string::npos);
  EXPECT_EQ(checker.check(call, withFault([](KernelBuffers &b) {
                            static_cast<uint8_t *>(b.packed())[1] ^= 1;
                          })),
            "unpack wrote into its packed input, at packed byte 5");
}

TEST(KernelCheck, SourceAtAPageEdge) {
  TypeRef t = parse("resized(-8, 40, struct([3, 1], [1, 20], [char, double]))");
  KernelChecker checker(*t, 3);
  for (SourceEdge edge : {SourceEdge::EndsAtPage, SourceEdge::StartsAtPage})
    for (bool pack : {true, false})
      for (int64_t lo : {0, 5, 33}) {
        KernelCall call;
        call.pack = pack;
        call.lo = lo;
        call.hi = 33;
        call.originShift = 3;
        call.sourceEdge = edge;
        EXPECT_EQ(checker.check(call, reference(*t, 3)), "");
      }
}

TEST(KernelCheck, ReadableBytesAreTheSourceSpan) {
  // Touched origin bytes [0, 48); packed bytes [4, 20) for the unpack.
  TypeRef t = parse("vector(3, 2, 5, int)");
  KernelChecker checker(*t, 1);
  KernelCall call;
  call.hi = checker.packedBytes();
  call.originShift = 5;
  auto readable = [&](int64_t first, int64_t end) {
    return [&, first, end](const KernelCall &c, KernelBuffers &b) {
      const uint8_t *zero = c.pack ? static_cast<const uint8_t *>(b.origin())
                                   : static_cast<const uint8_t *>(b.packed()) -
                                         c.lo;
      EXPECT_EQ(b.readBegin - zero, first);
      EXPECT_EQ(b.readEnd - zero, end);
      EXPECT_LE(b.sourceBuffer, b.readBegin);
      EXPECT_LE(b.readEnd, b.sourceBuffer + b.sourceBytes);
      return reference(*t, 1)(c, b);
    };
  };
  EXPECT_EQ(checker.check(call, readable(0, 48)), "");
  call.pack = false;
  call.lo = 4;
  call.hi = 20;
  EXPECT_EQ(checker.check(call, readable(4, 20)), "");

  KernelBuffers b;
  int64_t origin[8] = {}, packed[8] = {};
  b.originBuffer = reinterpret_cast<uint8_t *>(origin);
  b.packedBuffer = reinterpret_cast<uint8_t *>(packed);
  b.packedAt = 2;
  b.readBegin = b.packedBuffer + 2;
  b.readEnd = b.packedBuffer + 18;
  EXPECT_EQ(b.describeStrayRead(call, b.packedBuffer, 16),
            "unpack read packed bytes [2, 18), outside its input [4, 20)");
  call.pack = true;
  b.readBegin = b.originBuffer;
  b.readEnd = b.originBuffer + 48;
  EXPECT_EQ(b.describeStrayRead(call, b.originBuffer + 40, 16),
            "pack read origin offsets [40, 56), outside the bytes the type "
            "touches [0, 48)");
}

TEST(KernelCheckDeathTest, LoadsPastTheSourceAtAPageFault) {
  TypeRef t = parse("vector(3, 2, 5, int)");
  KernelChecker checker(*t, 1);
  KernelCall call;
  call.hi = checker.packedBytes();
  auto readAt = [&](int64_t fromEnd) {
    return [&, fromEnd](const KernelCall &c, KernelBuffers &b) {
      volatile uint8_t x = fromEnd >= 0 ? b.readEnd[fromEnd] : b.readBegin[-1];
      (void)x;
      return reference(*t, 1)(c, b);
    };
  };
  for (bool pack : {true, false}) {
    call.pack = pack;
    call.sourceEdge = SourceEdge::EndsAtPage;
    EXPECT_EQ(checker.check(call, readAt(-1)), "");
    EXPECT_DEATH(checker.check(call, readAt(0)), "");
    call.sourceEdge = SourceEdge::StartsAtPage;
    EXPECT_EQ(checker.check(call, readAt(0)), "");
    EXPECT_DEATH(checker.check(call, readAt(-1)), "");
  }
}

TEST(KernelCheck, BreakingTheReferenceIsCaught) {
  TypeRef t = parse("contiguous(4, double)");
  KernelCheckOptions options;
  options.breakReference = true;
  KernelChecker checker(*t, 2, options);
  KernelCall call;
  call.hi = checker.packedBytes();
  EXPECT_EQ(checker.check(call, reference(*t, 2)).rfind("packed byte 32 ", 0),
            0u);
}

TEST(KernelCheck, OversizedTypesAreRefused) {
  TypeRef t = parse("contiguous(1000, double)");
  KernelCheckOptions options;
  options.maxSpan = 4096;
  KernelChecker checker(*t, 1, options);
  EXPECT_EQ(checker.error(), "the buffers (from offset 0 to 8000, 8000 bytes "
                             "packed) exceed the limit of 4096 bytes");
  EXPECT_EQ(checker.check(KernelCall{}, reference(*t, 1)), checker.error());
}

} // namespace
