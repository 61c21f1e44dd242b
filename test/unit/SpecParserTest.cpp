//===- SpecParserTest.cpp - The .ddt spec language ------------------------===//
//
// Parsing every constructor, names, comments and errors (exact positions and
// messages), and printing types back as expressions that parse to equal trees.
//===----------------------------------------------------------------------===//

#include "ddtc/Core/SpecParser.h"

#include <gtest/gtest.h>

#include <limits>

using namespace ddtc;

namespace {

SpecFile parseOk(const std::string &text) {
  SpecFile file;
  std::string error;
  EXPECT_TRUE(parseSpec(text, "test.ddt", file, error)) << error;
  EXPECT_EQ(error, "");
  return file;
}

/// The type of the last binding of `text`.
TypeRef lastType(const std::string &text) {
  SpecFile file = parseOk(text);
  if (file.bindings.empty()) {
    ADD_FAILURE() << "no bindings in: " << text;
    return nullptr;
  }
  return file.bindings.back().type;
}

/// The type of the expression `expr`.
TypeRef exprType(const std::string &expr) { return lastType("t = " + expr); }

/// The whole error of a spec that must not parse.
std::string parseError(const std::string &text) {
  SpecFile file;
  std::string error;
  EXPECT_FALSE(parseSpec(text, "test.ddt", file, error))
      << "parsed but should not: " << text;
  return error;
}

/// "LINE:COL: error: MESSAGE", the first line of the error without the file
/// name.
std::string errorHead(const std::string &text) {
  std::string error = parseError(text);
  const std::string prefix = "test.ddt:";
  if (error.compare(0, prefix.size(), prefix) != 0)
    return "bad prefix: " + error;
  return error.substr(prefix.size(), error.find('\n') - prefix.size());
}

bool isPrimitive(const TypeRef &t, Primitive p) {
  return t && t->kind() == Kind::Primitive && t->args().primitive == p;
}

using Ints = std::vector<int64_t>;

//===----------------------------------------------------------------------===//
// Constructors
//===----------------------------------------------------------------------===//

TEST(SpecParser, Contiguous) {
  TypeRef t = exprType("contiguous(4, double)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), Kind::Contiguous);
  EXPECT_EQ(t->args().count, 4);
  ASSERT_EQ(t->numChildren(), 1u);
  EXPECT_TRUE(isPrimitive(t->child(), Primitive::Double));
  EXPECT_EQ(t->layout().size, 32);
}

TEST(SpecParser, Vector) {
  TypeRef t = exprType("vector(3, 2, 5, double)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), Kind::Vector);
  EXPECT_EQ(t->args().count, 3);
  EXPECT_EQ(t->args().blocklen, 2);
  EXPECT_EQ(t->args().stride, 5);
  EXPECT_TRUE(isPrimitive(t->child(), Primitive::Double));
  EXPECT_EQ(t->layout().size, 48);
  EXPECT_EQ(t->layout().extent, 96);
}

TEST(SpecParser, HVector) {
  TypeRef t = exprType("hvector(4, 1, -24, int)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), Kind::HVector);
  EXPECT_EQ(t->args().count, 4);
  EXPECT_EQ(t->args().blocklen, 1);
  EXPECT_EQ(t->args().stride, -24);
  EXPECT_TRUE(isPrimitive(t->child(), Primitive::Int));
}

TEST(SpecParser, Indexed) {
  TypeRef t = exprType("indexed([3, 2, 1], [0, 4, 8], float)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), Kind::Indexed);
  EXPECT_EQ(t->args().blocklens, (Ints{3, 2, 1}));
  EXPECT_EQ(t->args().displs, (Ints{0, 4, 8}));
  EXPECT_TRUE(isPrimitive(t->child(), Primitive::Float));
  EXPECT_EQ(t->layout().size, 24);
}

TEST(SpecParser, HIndexed) {
  TypeRef t = exprType("hindexed([1, 2], [16, 0], MPI_SHORT)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), Kind::HIndexed);
  EXPECT_EQ(t->args().blocklens, (Ints{1, 2}));
  EXPECT_EQ(t->args().displs, (Ints{16, 0}));
  EXPECT_TRUE(isPrimitive(t->child(), Primitive::Short));
}

TEST(SpecParser, IndexedBlock) {
  TypeRef t = exprType("indexed_block(2, [7, 1, 4], char)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), Kind::IndexedBlock);
  EXPECT_EQ(t->args().blocklen, 2);
  EXPECT_EQ(t->args().displs, (Ints{7, 1, 4}));
  EXPECT_TRUE(isPrimitive(t->child(), Primitive::Char));
}

TEST(SpecParser, HIndexedBlock) {
  TypeRef t = exprType("hindexed_block(3, [0, 100], int64_t)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), Kind::HIndexedBlock);
  EXPECT_EQ(t->args().blocklen, 3);
  EXPECT_EQ(t->args().displs, (Ints{0, 100}));
  EXPECT_TRUE(isPrimitive(t->child(), Primitive::Int64));
}

TEST(SpecParser, Struct) {
  TypeRef t = exprType("struct([1, 2, 1], [0, 8, 16], [double, int, char])");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), Kind::Struct);
  EXPECT_EQ(t->args().blocklens, (Ints{1, 2, 1}));
  EXPECT_EQ(t->args().displs, (Ints{0, 8, 16}));
  ASSERT_EQ(t->numChildren(), 3u);
  EXPECT_TRUE(isPrimitive(t->child(0), Primitive::Double));
  EXPECT_TRUE(isPrimitive(t->child(1), Primitive::Int));
  EXPECT_TRUE(isPrimitive(t->child(2), Primitive::Char));
  EXPECT_EQ(t->layout().size, 17);
}

TEST(SpecParser, EmptyStructAndIndexed) {
  TypeRef s = exprType("struct([], [], [])");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind(), Kind::Struct);
  EXPECT_EQ(s->numChildren(), 0u);
  EXPECT_EQ(s->layout().size, 0);
  TypeRef i = exprType("indexed([], [], int)");
  ASSERT_TRUE(i);
  EXPECT_TRUE(i->args().blocklens.empty());
  EXPECT_TRUE(i->args().displs.empty());
  TypeRef b = exprType("hindexed_block(4, [ ], int)");
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->args().displs.empty());
}

TEST(SpecParser, Subarray) {
  TypeRef t = exprType("subarray([512, 512, 512], [1, 510, 510], [1, 1, 1], "
                       "C, double)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), Kind::Subarray);
  EXPECT_EQ(t->args().sizes, (Ints{512, 512, 512}));
  EXPECT_EQ(t->args().subsizes, (Ints{1, 510, 510}));
  EXPECT_EQ(t->args().starts, (Ints{1, 1, 1}));
  EXPECT_EQ(t->args().order, Order::C);
  EXPECT_TRUE(isPrimitive(t->child(), Primitive::Double));

  TypeRef f = exprType("subarray([4], [2], [1], Fortran, int)");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->args().order, Order::Fortran);
  EXPECT_EQ(f->args().sizes, (Ints{4}));
}

TEST(SpecParser, Darray) {
  TypeRef t = exprType("darray(4, 3, [8, 9], [block, cyclic], [default, 2], "
                       "[2, 2], Fortran, int)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), Kind::Darray);
  EXPECT_EQ(t->args().commSize, 4);
  EXPECT_EQ(t->args().rank, 3);
  EXPECT_EQ(t->args().sizes, (Ints{8, 9}));
  EXPECT_EQ(t->args().distribs,
            (std::vector<Distribution>{Distribution::Block,
                                       Distribution::Cyclic}));
  EXPECT_EQ(t->args().dargs, (Ints{kDefaultDarg, 2}));
  EXPECT_EQ(t->args().psizes, (Ints{2, 2}));
  EXPECT_EQ(t->args().order, Order::Fortran);
  EXPECT_TRUE(isPrimitive(t->child(), Primitive::Int));

  TypeRef n = exprType("darray(1, 0, [5], [none], [default], [1], C, char)");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->args().distribs,
            (std::vector<Distribution>{Distribution::None}));
  EXPECT_EQ(n->args().order, Order::C);
}

TEST(SpecParser, Resized) {
  TypeRef t = exprType("resized(-8, 24, double)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), Kind::Resized);
  EXPECT_EQ(t->args().lb, -8);
  EXPECT_EQ(t->args().extent, 24);
  EXPECT_EQ(t->layout().lb, -8);
  EXPECT_EQ(t->layout().extent, 24);
}

TEST(SpecParser, Dup) {
  TypeRef t = exprType("dup(MPI_DOUBLE_INT)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), Kind::Dup);
  ASSERT_EQ(t->numChildren(), 1u);
  EXPECT_TRUE(isPrimitive(t->child(), Primitive::DoubleInt));
}

TEST(SpecParser, PrimitiveBinding) {
  EXPECT_TRUE(isPrimitive(exprType("double"), Primitive::Double));
  EXPECT_TRUE(isPrimitive(exprType("MPI_2INT"), Primitive::TwoInt));
  EXPECT_TRUE(isPrimitive(exprType("MPI_LONG_LONG_INT"),
                          Primitive::LongLongInt));
  EXPECT_TRUE(isPrimitive(exprType("byte"), Primitive::Byte));
  EXPECT_TRUE(isPrimitive(exprType("_Bool"), Primitive::CBool));
}

TEST(SpecParser, EveryMpiNameParses) {
  for (const PrimitiveInfo &info : allPrimitives()) {
    TypeRef t = exprType(std::string("contiguous(2, ") + info.mpiName + ")");
    ASSERT_TRUE(t) << info.mpiName;
    EXPECT_TRUE(isPrimitive(t->child(), info.id)) << info.mpiName;
  }
}

//===----------------------------------------------------------------------===//
// Names, comments, layout of the file
//===----------------------------------------------------------------------===//

TEST(SpecParser, MultiWordCTypes) {
  EXPECT_TRUE(isPrimitive(exprType("unsigned long long"),
                          Primitive::UnsignedLongLong));
  EXPECT_TRUE(isPrimitive(exprType("long double"), Primitive::LongDouble));
  EXPECT_TRUE(isPrimitive(exprType("signed char"), Primitive::SignedChar));
  EXPECT_TRUE(isPrimitive(exprType("double _Complex"),
                          Primitive::CDoubleComplex));
  EXPECT_TRUE(isPrimitive(exprType("long double _Complex"),
                          Primitive::CLongDoubleComplex));
  EXPECT_TRUE(isPrimitive(exprType("unsigned   int"), Primitive::Unsigned));
  EXPECT_TRUE(isPrimitive(exprType("unsigned"), Primitive::Unsigned));
  EXPECT_TRUE(isPrimitive(exprType("long"), Primitive::Long));
  EXPECT_TRUE(isPrimitive(exprType("long long"), Primitive::LongLong));

  TypeRef v = exprType("vector(2, 1, 2, unsigned long long)");
  ASSERT_TRUE(v);
  EXPECT_TRUE(isPrimitive(v->child(), Primitive::UnsignedLongLong));

  TypeRef s = exprType(
      "struct([1, 1, 1], [0, 16, 32], [long double, unsigned\tshort, "
      "float _Complex])");
  ASSERT_TRUE(s);
  ASSERT_EQ(s->numChildren(), 3u);
  EXPECT_TRUE(isPrimitive(s->child(0), Primitive::LongDouble));
  EXPECT_TRUE(isPrimitive(s->child(1), Primitive::UnsignedShort));
  EXPECT_TRUE(isPrimitive(s->child(2), Primitive::CFloatComplex));
}

TEST(SpecParser, CommentsAndBlankLines) {
  SpecFile f = parseOk("# a halo exchange\n"
                       "\n"
                       "   \t\n"
                       "col = vector(3, 2, 5, double) # three columns\n"
                       "  # indented comment\n"
                       "\tface=subarray([4,4],[1,4],[0,0],C,int)#tight\n"
                       "\n");
  ASSERT_EQ(f.bindings.size(), 2u);
  EXPECT_EQ(f.bindings[0].name, "col");
  EXPECT_EQ(f.bindings[0].line, 4u);
  EXPECT_EQ(f.bindings[0].column, 1u);
  EXPECT_EQ(f.bindings[0].type->kind(), Kind::Vector);
  EXPECT_EQ(f.bindings[1].name, "face");
  EXPECT_EQ(f.bindings[1].line, 6u);
  EXPECT_EQ(f.bindings[1].column, 2u);
  EXPECT_EQ(f.bindings[1].type->kind(), Kind::Subarray);
}

TEST(SpecParser, EmptyAndCommentOnlyFiles) {
  EXPECT_TRUE(parseOk("").bindings.empty());
  EXPECT_TRUE(parseOk("\n\n").bindings.empty());
  EXPECT_TRUE(parseOk("# nothing here").bindings.empty());
}

TEST(SpecParser, CrLfAndNoFinalNewline) {
  SpecFile f = parseOk("a = int\r\nb = contiguous(2, a)\r\nc = dup(b)");
  ASSERT_EQ(f.bindings.size(), 3u);
  EXPECT_EQ(f.bindings[2].line, 3u);
  EXPECT_EQ(f.bindings[2].type->kind(), Kind::Dup);
}

TEST(SpecParser, NestedCalls) {
  TypeRef t = exprType("vector(2, 1, 3, contiguous(4, double))");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), Kind::Vector);
  ASSERT_EQ(t->child()->kind(), Kind::Contiguous);
  EXPECT_EQ(t->child()->args().count, 4);
  EXPECT_TRUE(isPrimitive(t->child()->child(), Primitive::Double));
  EXPECT_EQ(t->layout().size, 64);

  TypeRef s = exprType("struct([1, 1], [0, 64], [resized(0, 16, "
                       "contiguous(1, int)), vector(2, 1, 2, "
                       "struct([1], [4], [char]))])");
  ASSERT_TRUE(s);
  ASSERT_EQ(s->numChildren(), 2u);
  EXPECT_EQ(s->child(0)->kind(), Kind::Resized);
  EXPECT_EQ(s->child(0)->child()->kind(), Kind::Contiguous);
  EXPECT_EQ(s->child(1)->kind(), Kind::Vector);
  EXPECT_EQ(s->child(1)->child()->kind(), Kind::Struct);
  EXPECT_EQ(s->child(1)->child()->args().displs, (Ints{4}));
}

TEST(SpecParser, EarlierBindingsAreShared) {
  SpecFile f = parseOk("rec = struct([1, 2, 1], [0, 8, 16], [double, int, "
                       "char])\n"
                       "rrec = resized(0, 24, rec)\n"
                       "pair = struct([1, 1], [0, 24], [rrec, rrec])\n"
                       "alias = pair\n");
  ASSERT_EQ(f.bindings.size(), 4u);
  const TypeRef &rec = f.bindings[0].type;
  const TypeRef &rrec = f.bindings[1].type;
  const TypeRef &pair = f.bindings[2].type;
  EXPECT_EQ(rrec->child().get(), rec.get());
  EXPECT_EQ(pair->child(0).get(), rrec.get());
  EXPECT_EQ(pair->child(1).get(), rrec.get());
  EXPECT_EQ(f.bindings[3].type.get(), pair.get());
  EXPECT_EQ(pair->layout().extent, 48);
}

TEST(SpecParser, Find) {
  SpecFile f = parseOk("a = int\n\nb = vector(1, 1, 1, a)\n");
  const SpecBinding *b = f.find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->name, "b");
  EXPECT_EQ(b->line, 3u);
  EXPECT_EQ(b->column, 1u);
  EXPECT_EQ(b->type->kind(), Kind::Vector);
  const SpecBinding *a = f.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->line, 1u);
  EXPECT_EQ(f.find("c"), nullptr);
  EXPECT_EQ(f.find(""), nullptr);
  EXPECT_EQ(f.find("int"), nullptr);
}

TEST(SpecParser, IdentifiersWithDigitsAndUnderscores) {
  SpecFile f = parseOk("_x1 = int\nY_2z = contiguous(3, _x1)\n");
  ASSERT_NE(f.find("Y_2z"), nullptr);
  EXPECT_EQ(f.find("Y_2z")->type->child().get(), f.find("_x1")->type.get());
}

TEST(SpecParser, IntegerLiterals) {
  TypeRef t = exprType("resized(+7, -9223372036854775807, byte)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->args().lb, 7);
  EXPECT_EQ(t->args().extent, -9223372036854775807LL);
  TypeRef m = exprType("hvector(1, 1, -9223372036854775808, byte)");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->args().stride, std::numeric_limits<int64_t>::min());
  TypeRef x = exprType("hvector(1, 1, 9223372036854775807, byte)");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->args().stride, std::numeric_limits<int64_t>::max());
  TypeRef z = exprType("contiguous(007, byte)");
  ASSERT_TRUE(z);
  EXPECT_EQ(z->args().count, 7);
}

TEST(SpecParser, OutputIsClearedFirst) {
  SpecFile f = parseOk("a = int\n");
  std::string error;
  ASSERT_TRUE(parseSpec("b = double\n", "x.ddt", f, error)) << error;
  ASSERT_EQ(f.bindings.size(), 1u);
  EXPECT_EQ(f.bindings[0].name, "b");
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(SpecParserErrors, FullFormat) {
  EXPECT_EQ(parseError("a = int\n"
                       "col = vector(3, 2 5, double)\n"),
            "test.ddt:2:19: error: expected ',' after the blocklen of vector\n"
            "col = vector(3, 2 5, double)\n"
            "                  ^");
  EXPECT_EQ(parseError("t = vector(3, 2, 5)"),
            "test.ddt:1:19: error: vector takes 4 arguments (count, blocklen, "
            "stride, type), got 3\n"
            "t = vector(3, 2, 5)\n"
            "                  ^");
}

TEST(SpecParserErrors, FileNameIsUsed) {
  SpecFile f;
  std::string error;
  ASSERT_FALSE(parseSpec("x = nope", "dir/my file.ddt", f, error));
  EXPECT_EQ(error.substr(0, error.find(' ', 4)), "dir/my");
  EXPECT_EQ(error.rfind("dir/my file.ddt:1:5: error: unknown type 'nope'", 0),
            0u)
      << error;
}

TEST(SpecParserErrors, CaretKeepsTabs) {
  EXPECT_EQ(parseError("\tt =\tfoo\n"),
            "test.ddt:1:6: error: unknown type 'foo' (expected a primitive "
            "type name, a constructor call, or an earlier binding)\n"
            "\tt =\tfoo\n"
            "\t   \t^");
}

TEST(SpecParserErrors, CaretAtEndOfLine) {
  EXPECT_EQ(parseError("t = contiguous(2, int"),
            "test.ddt:1:22: error: expected ')' after the type of contiguous\n"
            "t = contiguous(2, int\n"
            "                     ^");
}

struct ErrorCase {
  const char *text;
  const char *head; ///< "LINE:COL: error: MESSAGE"
};

TEST(SpecParserErrors, Messages) {
  const ErrorCase cases[] = {
      // Line structure.
      {"3 = int", "1:1: error: expected a binding 'NAME = TYPE' at the start "
                  "of the line"},
      {"= int", "1:1: error: expected a binding 'NAME = TYPE' at the start "
                "of the line"},
      {"t int", "1:3: error: expected '=' after the binding name 't'"},
      {"t", "1:2: error: expected '=' after the binding name 't'"},
      {"t =", "1:4: error: expected a type (a primitive type name, a "
              "constructor call, or an earlier binding) for the binding 't'"},
      {"t = int int2", "1:5: error: unknown type 'int int2' (expected a "
                       "primitive type name, a constructor call, or an "
                       "earlier binding)"},
      {"t = dup(int) x = int", "1:14: error: expected end of line after the "
                               "type of 't' (one binding per line)"},
      {"t = dup(int))", "1:13: error: expected end of line after the type of "
                        "'t' (one binding per line)"},
      {"t = int; u = int", "1:8: error: unexpected character ';'"},
      {"t = dup(int) @", "1:14: error: unexpected character '@'"},
      // Names.
      {"a = int\na = double", "2:1: error: redefinition of 'a' (first "
                              "defined at line 1)"},
      {"double = int", "1:1: error: 'double' is a primitive type name and "
                       "cannot be a binding name"},
      {"MPI_INT = int", "1:1: error: 'MPI_INT' is a primitive type name and "
                        "cannot be a binding name"},
      {"vector = int", "1:1: error: 'vector' is a constructor name and "
                       "cannot be a binding name"},
      {"t = doubel", "1:5: error: unknown type 'doubel' (expected a "
                     "primitive type name, a constructor call, or an "
                     "earlier binding)"},
      {"t = later\nlater = int", "1:5: error: unknown type 'later' (expected "
                                 "a primitive type name, a constructor call, "
                                 "or an earlier binding)"},
      {"t = t", "1:5: error: unknown type 't' (expected a primitive type "
                "name, a constructor call, or an earlier binding)"},
      {"column = int\nt = dup(colum)",
       "2:9: error: unknown type 'colum' (expected a primitive type name, a "
       "constructor call, or an earlier binding); did you mean 'column'?"},
      {"t = unsigned long long long", "1:5: error: unknown type 'unsigned "
                                      "long long long' (expected a primitive "
                                      "type name, a constructor call, or an "
                                      "earlier binding)"},
      {"t = vectr(1, 1, 1, int)", "1:5: error: unknown constructor 'vectr'; "
                                  "did you mean 'vector'?"},
      {"t = frobnicate(1)", "1:5: error: unknown constructor 'frobnicate'"},
      {"t = double(2)", "1:11: error: unexpected '(' after 'double', which "
                        "is a type, not a constructor"},
      {"t = vector", "1:11: error: expected '(' after the constructor name "
                     "'vector'"},
      {"t = contiguous [2, int]", "1:16: error: expected '(' after the "
                                  "constructor name 'contiguous'"},
      // Arity.
      {"t = vector()", "1:12: error: vector takes 4 arguments (count, "
                       "blocklen, stride, type), got 0"},
      {"t = vector(1, 2, 3, int, 5)", "1:24: error: vector takes 4 arguments "
                                      "(count, blocklen, stride, type), got "
                                      "5"},
      {"t = vector(1, 2, 3, int, [5, 6], dup(x), 7)",
       "1:24: error: vector takes 4 arguments (count, blocklen, stride, "
       "type), got 7"},
      {"t = dup(int, int)", "1:12: error: dup takes 1 argument (type), got "
                            "2"},
      {"t = dup(int, int", "1:12: error: dup takes 1 argument (type), got "
                           "more than 1"},
      {"t = dup()", "1:9: error: dup takes 1 argument (type), got 0"},
      {"t = darray(4, 0, [8], [block], [default], [4], C)",
       "1:49: error: darray takes 8 arguments (size, rank, gsizes, "
       "distribs, dargs, psizes, order, type), got 7"},
      {"t = struct([1], [0])", "1:20: error: struct takes 3 arguments "
                               "(blocklens, displs, types), got 2"},
      // An argument missing or extra in the middle is reported as a count
      // when an argument is then rejected at its first token.
      {"t = vector(3, 2, double)", "1:24: error: vector takes 4 arguments "
                                   "(count, blocklen, stride, type), got 3"},
      {"t = subarray([4], [2], [1], int)",
       "1:32: error: subarray takes 5 arguments (sizes, subsizes, starts, "
       "order, type), got 4"},
      {"t = vector(3, [1], 2, 5, int)", "1:24: error: vector takes 4 "
                                        "arguments (count, blocklen, stride, "
                                        "type), got 5"},
      {"t = vector(3, contiguous(-1, int), double)",
       "1:42: error: vector takes 4 arguments (count, blocklen, stride, "
       "type), got 3"},
      // An error inside a nested call is its own, whatever the outer count.
      {"t = vector(3, 2, 1, contiguous(-1, int), x)",
       "1:21: error: contiguous: count must be non-negative, got -1"},
      {"t = vector(3, 2, double, int)", "1:18: error: expected an integer "
                                        "for the stride of vector"},
      {"t = vector(3, 2, @, int", "1:18: error: unexpected character '@'"},
      // Separators and argument syntax.
      {"t = vector(3 2, 5, int)", "1:14: error: expected ',' after the "
                                  "count of vector"},
      {"t = vector(3, , 5, int)", "1:15: error: expected an integer for the "
                                  "blocklen of vector"},
      {"t = vector(3, 2, 5, 7)", "1:21: error: expected a type (a primitive "
                                 "type name, a constructor call, or an "
                                 "earlier binding) for the type of vector"},
      {"t = vector(x, 2, 5, int)", "1:12: error: expected an integer for the "
                                   "count of vector"},
      {"t = contiguous(2, int", "1:22: error: expected ')' after the type of "
                                "contiguous"},
      {"t = contiguous(2, int]", "1:22: error: expected ')' after the type "
                                 "of contiguous"},
      {"t = indexed(1, [0], int)", "1:13: error: expected '[' to start the "
                                   "blocklens of indexed"},
      {"t = indexed([1 2], [0], int)", "1:16: error: expected ',' or ']' in "
                                       "the blocklens of indexed"},
      {"t = indexed([1, ], [0], int)", "1:17: error: expected an integer in "
                                       "the blocklens of indexed"},
      {"t = indexed([1], [0, x], int)", "1:22: error: expected an integer in "
                                        "the displs of indexed"},
      {"t = hindexed_block(2, [0, 8)", "1:28: error: expected ',' or ']' in "
                                       "the displs of hindexed_block"},
      {"t = struct([1], [0], [3])", "1:23: error: expected a type (a "
                                    "primitive type name, a constructor "
                                    "call, or an earlier binding) in the "
                                    "types of struct"},
      {"t = struct([1], [0], int)", "1:22: error: expected '[' to start the "
                                    "types of struct"},
      {"t = struct([1, 1], [0, 8], [int double])",
       "1:29: error: unknown type 'int double' (expected a primitive type "
       "name, a constructor call, or an earlier binding)"},
      {"t = struct([1, 1], [0, 8], [int; double])",
       "1:32: error: unexpected character ';'"},
      {"t = subarray([4], [2], [1], c, int)", "1:29: error: expected 'C' or "
                                              "'Fortran' for the order of "
                                              "subarray"},
      {"t = subarray([4], [2], [1], 0, int)", "1:29: error: expected 'C' or "
                                              "'Fortran' for the order of "
                                              "subarray"},
      {"t = darray(4, 0, [8], [blk], [default], [4], C, int)",
       "1:24: error: expected 'block', 'cyclic' or 'none' in the distribs "
       "of darray"},
      {"t = darray(4, 0, [8], [block], [dflt], [4], C, int)",
       "1:33: error: expected an integer or 'default' in the dargs of "
       "darray"},
      {"t = darray(4, 0, [8], [block], [default], [4], Fortan, int)",
       "1:48: error: expected 'C' or 'Fortran' for the order of darray"},
      // Integer literals.
      {"t = contiguous(9223372036854775808, int)",
       "1:16: error: integer literal does not fit in 64 bits"},
      {"t = hvector(1, 1, -9223372036854775809, int)",
       "1:19: error: integer literal does not fit in 64 bits"},
      {"t = indexed([1], [99999999999999999999999], int)",
       "1:19: error: integer literal does not fit in 64 bits"},
      {"t = contiguous(0x10, int)", "1:16: error: invalid integer literal "
                                    "'0x10' (integers are decimal)"},
      {"t = contiguous(12abc, int)", "1:16: error: invalid integer literal "
                                     "'12abc' (integers are decimal)"},
      {"t = contiguous(- 1, int)", "1:16: error: expected digits after '-'"},
      {"t = contiguous(1.5, int)", "1:17: error: unexpected character '.'"},
      // A later line is only reached when the earlier ones are valid.
      {"a = int\n\n# c\nb = contiguous(2, a)\nc = vector(1, 1, 1, b, b)",
       "5:22: error: vector takes 4 arguments (count, blocklen, stride, "
       "type), got 5"},
  };
  for (const ErrorCase &c : cases)
    EXPECT_EQ(errorHead(c.text), c.head) << "spec: " << c.text;
}

TEST(SpecParserErrors, CreateRejectsArguments) {
  // Messages come from checkArguments/create, prefixed with the constructor
  // and placed at the constructor's name.
  EXPECT_EQ(errorHead("t = contiguous(-1, int)"),
            "1:5: error: contiguous: count must be non-negative, got -1");
  EXPECT_EQ(errorHead("t = dup(vector(2, -3, 1, int))"),
            "1:9: error: vector: blocklen must be non-negative, got -3");
  EXPECT_EQ(errorHead("t = indexed([1, 2], [0], int)"),
            "1:5: error: indexed: blocklens has 2 entries but displs has 1");
  EXPECT_EQ(errorHead("t = struct([1, 1], [0, 8], [int])"),
            "1:5: error: struct: blocklens has 2 entries but types has 1");
  EXPECT_EQ(errorHead("t = subarray([4], [5], [0], C, int)"),
            "1:5: error: subarray: subsizes[0] = 5 exceeds sizes[0] = 4");
  EXPECT_EQ(errorHead("t = darray(4, 4, [8], [block], [default], [4], C, "
                      "int)"),
            "1:5: error: darray: rank must be in [0, size) = [0, 4), got 4");
  EXPECT_EQ(errorHead("t = resized(9223372036854775807, 1, int)"),
            "1:5: error: resized: lb + extent overflows 64-bit byte offsets");

  // The message of create, whatever it says, follows "kind: ".
  TypeArgs args;
  args.kind = Kind::Contiguous;
  args.count = -5;
  args.children = {Datatype::primitive(Primitive::Int)};
  std::string createError;
  ASSERT_FALSE(Datatype::create(args, createError));
  EXPECT_EQ(errorHead("a = int\nt = contiguous(-5, a)"),
            "2:5: error: contiguous: " + createError);
}

TEST(SpecParserErrors, StopsAtFirstError) {
  std::string error = parseError("t = vector(1 1, 1, x)\nu = ???");
  EXPECT_EQ(error.find("u = ???"), std::string::npos) << error;
  EXPECT_EQ(error.find("error:"), error.rfind("error:")) << error;
}

TEST(SpecParserErrors, NestingLimit) {
  std::string deep;
  for (int i = 0; i < 1200; ++i)
    deep += "dup(";
  deep += "int";
  for (int i = 0; i < 1200; ++i)
    deep += ")";
  std::string head = errorHead("t = " + deep);
  EXPECT_EQ(head, "1:4005: error: type expression nested more than 1000 "
                  "levels deep");
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

/// Prints `expr`'s type, checks the text, and checks that it parses back to
/// an equal tree.
void expectPrints(const std::string &expr, const std::string &printed) {
  TypeRef t = exprType(expr);
  ASSERT_TRUE(t) << expr;
  std::string text = printSpecExpr(*t);
  EXPECT_EQ(text, printed);
  TypeRef back = exprType(text);
  ASSERT_TRUE(back) << text;
  EXPECT_TRUE(equalTrees(*t, *back)) << text;
}

TEST(SpecPrinter, EveryConstructor) {
  expectPrints("double", "MPI_DOUBLE");
  expectPrints("unsigned long long", "MPI_UNSIGNED_LONG_LONG");
  expectPrints("contiguous(4, double)", "contiguous(4, MPI_DOUBLE)");
  expectPrints("vector(3, 2, 5, double)", "vector(3, 2, 5, MPI_DOUBLE)");
  expectPrints("hvector(3, 2, -40, int)", "hvector(3, 2, -40, MPI_INT)");
  expectPrints("indexed([3,2,1],[0,4,8],float)",
               "indexed([3, 2, 1], [0, 4, 8], MPI_FLOAT)");
  expectPrints("hindexed([1],[-16],char)", "hindexed([1], [-16], MPI_CHAR)");
  expectPrints("indexed_block(2,[7,1,4],signed char)",
               "indexed_block(2, [7, 1, 4], MPI_SIGNED_CHAR)");
  expectPrints("hindexed_block(3,[0,100],int64_t)",
               "hindexed_block(3, [0, 100], MPI_INT64_T)");
  expectPrints("struct([1,2],[0,8],[double,int])",
               "struct([1, 2], [0, 8], [MPI_DOUBLE, MPI_INT])");
  expectPrints("subarray([4],[2],[1],Fortran,int)",
               "subarray([4], [2], [1], Fortran, MPI_INT)");
  expectPrints("subarray([6,5],[2,3],[1,2],C,long double)",
               "subarray([6, 5], [2, 3], [1, 2], C, MPI_LONG_DOUBLE)");
  expectPrints("darray(4,1,[8,8],[block,cyclic],[default,2],[2,2],C,int)",
               "darray(4, 1, [8, 8], [block, cyclic], [default, 2], [2, 2], "
               "C, MPI_INT)");
  expectPrints("darray(2,0,[5,3],[none,block],[default,3],[1,2],Fortran,"
               "float)",
               "darray(2, 0, [5, 3], [none, block], [default, 3], [1, 2], "
               "Fortran, MPI_FLOAT)");
  expectPrints("resized(-8, 24, double)", "resized(-8, 24, MPI_DOUBLE)");
  expectPrints("dup(MPI_2INT)", "dup(MPI_2INT)");
}

TEST(SpecPrinter, EmptyLists) {
  expectPrints("struct([],[],[])", "struct([], [], [])");
  expectPrints("indexed([],[],int)", "indexed([], [], MPI_INT)");
  expectPrints("hindexed_block(1,[],int)", "hindexed_block(1, [], MPI_INT)");
}

TEST(SpecPrinter, ExtremeIntegers) {
  expectPrints("hvector(1, 1, -9223372036854775808, byte)",
               "hvector(1, 1, -9223372036854775808, MPI_BYTE)");
  expectPrints("hvector(0, 0, 9223372036854775807, byte)",
               "hvector(0, 0, 9223372036854775807, MPI_BYTE)");
}

TEST(SpecPrinter, Nested) {
  expectPrints("vector(2, 1, 3, contiguous(4, double))",
               "vector(2, 1, 3, contiguous(4, MPI_DOUBLE))");
  expectPrints("struct([1, 1], [0, 64], [resized(0, 16, contiguous(1, int)),"
               " vector(2, 1, 2, struct([1], [4], [char]))])",
               "struct([1, 1], [0, 64], [resized(0, 16, contiguous(1, "
               "MPI_INT)), vector(2, 1, 2, struct([1], [4], [MPI_CHAR]))])");
  expectPrints("hvector(2, 1, 4096, subarray([8, 8], [2, 2], [3, 3], C, "
               "dup(resized(0, 16, MPI_DOUBLE_INT))))",
               "hvector(2, 1, 4096, subarray([8, 8], [2, 2], [3, 3], C, "
               "dup(resized(0, 16, MPI_DOUBLE_INT))))");
}

TEST(SpecPrinter, SharedBindingsAreExpanded) {
  SpecFile f = parseOk("rec = struct([1, 1], [0, 8], [double, int])\n"
                       "pair = struct([1, 1], [0, 16], [rec, rec])\n");
  std::string text = printSpecExpr(*f.find("pair")->type);
  EXPECT_EQ(text, "struct([1, 1], [0, 16], [struct([1, 1], [0, 8], "
                  "[MPI_DOUBLE, MPI_INT]), struct([1, 1], [0, 8], "
                  "[MPI_DOUBLE, MPI_INT])])");
  TypeRef back = exprType(text);
  ASSERT_TRUE(back);
  EXPECT_TRUE(equalTrees(*f.find("pair")->type, *back));
}

TEST(SpecPrinter, DeepNestingRoundTrips) {
  // 500 levels alternating constructors, built directly with create.
  std::string error;
  TypeRef t = Datatype::primitive(Primitive::Int);
  for (int i = 0; i < 500; ++i) {
    switch (i % 4) {
    case 0:
      t = Datatype::contiguous(1, t, error);
      break;
    case 1:
      t = Datatype::resized(0, t->layout().extent, t, error);
      break;
    case 2: {
      TypeArgs a;
      a.kind = Kind::Dup;
      a.children = {t};
      t = Datatype::create(a, error);
      break;
    }
    case 3: {
      TypeArgs a;
      a.kind = Kind::Struct;
      a.blocklens = {1};
      a.displs = {0};
      a.children = {t};
      t = Datatype::create(a, error);
      break;
    }
    }
    ASSERT_TRUE(t) << error;
  }
  std::string text = printSpecExpr(*t);
  EXPECT_EQ(text.rfind("struct([1], [0], [dup(resized(0, 4, contiguous(1, ",
                       0),
            0u);
  TypeRef back = exprType(text);
  ASSERT_TRUE(back);
  EXPECT_TRUE(equalTrees(*t, *back));
}

TEST(SpecPrinter, DifferentTreesPrintDifferently) {
  // Guards the round-trip tests against a printer that drops arguments.
  EXPECT_NE(printSpecExpr(*exprType("vector(3, 2, 5, int)")),
            printSpecExpr(*exprType("vector(3, 2, 6, int)")));
  EXPECT_NE(printSpecExpr(*exprType("subarray([4],[2],[1],C,int)")),
            printSpecExpr(*exprType("subarray([4],[2],[1],Fortran,int)")));
  EXPECT_FALSE(equalTrees(*exprType("dup(int)"), *exprType("int")));
}

} // namespace
