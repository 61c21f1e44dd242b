//===- MPIPrimitives.cpp - The MPI handles of the predefined types --------===//
//
// Maps every Primitive of Primitives.def to the handle of the MPI library we
// are built against, and back.
//===----------------------------------------------------------------------===//

#include "MPIPrimitives.h"

#include "ddtc/MPI/MPIBridge.h"

#include <utility>
#include <vector>

using namespace ddtc;

MPI_Datatype ddtc::getMPIPrimitive(Primitive p) {
  // Handles are macros in every MPI implementation we know, so a type this
  // MPI lacks is detected with #ifdef and reported as MPI_DATATYPE_NULL.
  switch (p) {
#define CASE(ID, HANDLE)                                                       \
  case Primitive::ID:                                                          \
    return HANDLE;
    CASE(Char, MPI_CHAR)
    CASE(SignedChar, MPI_SIGNED_CHAR)
    CASE(UnsignedChar, MPI_UNSIGNED_CHAR)
    CASE(Byte, MPI_BYTE)
    CASE(Packed, MPI_PACKED)
    CASE(WChar, MPI_WCHAR)
    CASE(Short, MPI_SHORT)
    CASE(UnsignedShort, MPI_UNSIGNED_SHORT)
    CASE(Int, MPI_INT)
    CASE(Unsigned, MPI_UNSIGNED)
    CASE(Long, MPI_LONG)
    CASE(UnsignedLong, MPI_UNSIGNED_LONG)
    CASE(LongLongInt, MPI_LONG_LONG_INT)
    CASE(Float, MPI_FLOAT)
    CASE(Double, MPI_DOUBLE)
    CASE(LongDouble, MPI_LONG_DOUBLE)
    CASE(FloatInt, MPI_FLOAT_INT)
    CASE(DoubleInt, MPI_DOUBLE_INT)
    CASE(LongInt, MPI_LONG_INT)
    CASE(TwoInt, MPI_2INT)
    CASE(ShortInt, MPI_SHORT_INT)
    CASE(LongDoubleInt, MPI_LONG_DOUBLE_INT)
#ifdef MPI_LONG_LONG
    CASE(LongLong, MPI_LONG_LONG)
#endif
#ifdef MPI_UNSIGNED_LONG_LONG
    CASE(UnsignedLongLong, MPI_UNSIGNED_LONG_LONG)
#endif
#ifdef MPI_C_BOOL
    CASE(CBool, MPI_C_BOOL)
#endif
#ifdef MPI_INT8_T
    CASE(Int8, MPI_INT8_T)
    CASE(Int16, MPI_INT16_T)
    CASE(Int32, MPI_INT32_T)
    CASE(Int64, MPI_INT64_T)
    CASE(UInt8, MPI_UINT8_T)
    CASE(UInt16, MPI_UINT16_T)
    CASE(UInt32, MPI_UINT32_T)
    CASE(UInt64, MPI_UINT64_T)
#endif
#ifdef MPI_C_COMPLEX
    CASE(CComplex, MPI_C_COMPLEX)
#endif
#ifdef MPI_C_FLOAT_COMPLEX
    CASE(CFloatComplex, MPI_C_FLOAT_COMPLEX)
    CASE(CDoubleComplex, MPI_C_DOUBLE_COMPLEX)
    CASE(CLongDoubleComplex, MPI_C_LONG_DOUBLE_COMPLEX)
#endif
#ifdef MPI_AINT
    CASE(Aint, MPI_AINT)
    CASE(Offset, MPI_OFFSET)
#endif
#ifdef MPI_COUNT
    CASE(Count, MPI_COUNT)
#endif
#ifdef MPI_CXX_BOOL
    CASE(CxxBool, MPI_CXX_BOOL)
    CASE(CxxFloatComplex, MPI_CXX_FLOAT_COMPLEX)
    CASE(CxxDoubleComplex, MPI_CXX_DOUBLE_COMPLEX)
    CASE(CxxLongDoubleComplex, MPI_CXX_LONG_DOUBLE_COMPLEX)
#endif
    CASE(Character, MPI_CHARACTER)
    CASE(Logical, MPI_LOGICAL)
    CASE(Integer, MPI_INTEGER)
    CASE(Real, MPI_REAL)
    CASE(DoublePrecision, MPI_DOUBLE_PRECISION)
    CASE(Complex, MPI_COMPLEX)
    CASE(DoubleComplex, MPI_DOUBLE_COMPLEX)
    CASE(TwoReal, MPI_2REAL)
    CASE(TwoDoublePrecision, MPI_2DOUBLE_PRECISION)
    CASE(TwoInteger, MPI_2INTEGER)
#undef CASE
  default:
    break;
  }
  return MPI_DATATYPE_NULL;
}

namespace {
/// All primitives in declaration order, for the reverse lookup.
const Primitive kAllPrimitives[] = {
#define DDTC_PRIMITIVE(ID, ...) Primitive::ID,
#include "ddtc/Core/Primitives.def"
};
} // namespace

std::optional<Primitive> mpi_detail::lookupMPIPrimitive(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL)
    return std::nullopt;
  for (Primitive p : kAllPrimitives)
    if (getMPIPrimitive(p) == type)
      return p;
  return std::nullopt;
}

std::string mpi_detail::getCombinerName(int combiner) {
  static const std::pair<int, const char *> kNames[] = {
      {MPI_COMBINER_NAMED, "MPI_COMBINER_NAMED"},
      {MPI_COMBINER_DUP, "MPI_COMBINER_DUP"},
      {MPI_COMBINER_CONTIGUOUS, "MPI_COMBINER_CONTIGUOUS"},
      {MPI_COMBINER_VECTOR, "MPI_COMBINER_VECTOR"},
      {MPI_COMBINER_HVECTOR, "MPI_COMBINER_HVECTOR"},
      {MPI_COMBINER_INDEXED, "MPI_COMBINER_INDEXED"},
      {MPI_COMBINER_HINDEXED, "MPI_COMBINER_HINDEXED"},
      {MPI_COMBINER_INDEXED_BLOCK, "MPI_COMBINER_INDEXED_BLOCK"},
      {MPI_COMBINER_HINDEXED_BLOCK, "MPI_COMBINER_HINDEXED_BLOCK"},
      {MPI_COMBINER_STRUCT, "MPI_COMBINER_STRUCT"},
      {MPI_COMBINER_SUBARRAY, "MPI_COMBINER_SUBARRAY"},
      {MPI_COMBINER_DARRAY, "MPI_COMBINER_DARRAY"},
      {MPI_COMBINER_F90_REAL, "MPI_COMBINER_F90_REAL"},
      {MPI_COMBINER_F90_COMPLEX, "MPI_COMBINER_F90_COMPLEX"},
      {MPI_COMBINER_F90_INTEGER, "MPI_COMBINER_F90_INTEGER"},
      {MPI_COMBINER_RESIZED, "MPI_COMBINER_RESIZED"},
#ifdef MPI_COMBINER_VALUE_INDEX
      {MPI_COMBINER_VALUE_INDEX, "MPI_COMBINER_VALUE_INDEX"},
#endif
  };
  for (const auto &[value, name] : kNames)
    if (value == combiner)
      return name;
  return "MPI combiner " + std::to_string(combiner);
}

std::string mpi_detail::getMPITypeName(MPI_Datatype type) {
  char name[MPI_MAX_OBJECT_NAME + 1] = {0};
  int len = 0;
  if (MPI_Type_get_name(type, name, &len) != MPI_SUCCESS || len <= 0)
    return "";
  return std::string(name, static_cast<size_t>(len));
}
