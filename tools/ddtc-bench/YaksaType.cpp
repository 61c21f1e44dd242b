//===- YaksaType.cpp - ddtc datatype trees as Yaksa types -----------------===//

#include "YaksaType.h"

#include <vector>

namespace ddtc::yaksa {

std::optional<Type> builtinFor(Primitive p) {
  switch (p) {
  case Primitive::Char:
  case Primitive::Character:
    return builtin::Char;
  case Primitive::SignedChar:
    return builtin::SignedChar;
  case Primitive::UnsignedChar:
    return builtin::UnsignedChar;
  case Primitive::Byte:
  case Primitive::Packed:
    return builtin::Byte;
  case Primitive::WChar:
    return builtin::WChar;
  case Primitive::Short:
    return builtin::Short;
  case Primitive::UnsignedShort:
    return builtin::UnsignedShort;
  case Primitive::Int:
  case Primitive::Integer:
    return builtin::Int;
  case Primitive::Unsigned:
    return builtin::Unsigned;
  case Primitive::Long:
  case Primitive::Aint:
  case Primitive::Offset:
  case Primitive::Count:
    return builtin::Long;
  case Primitive::UnsignedLong:
    return builtin::UnsignedLong;
  case Primitive::LongLongInt:
  case Primitive::LongLong:
    return builtin::LongLong;
  case Primitive::UnsignedLongLong:
    return builtin::UnsignedLongLong;
  case Primitive::Float:
  case Primitive::Real:
    return builtin::Float;
  case Primitive::Double:
  case Primitive::DoublePrecision:
    return builtin::Double;
  case Primitive::CBool:
  case Primitive::CxxBool:
    return builtin::Bool;
  case Primitive::Int8:
    return builtin::Int8;
  case Primitive::Int16:
    return builtin::Int16;
  case Primitive::Int32:
    return builtin::Int32;
  case Primitive::Int64:
    return builtin::Int64;
  case Primitive::UInt8:
    return builtin::UInt8;
  case Primitive::UInt16:
    return builtin::UInt16;
  case Primitive::UInt32:
    return builtin::UInt32;
  case Primitive::UInt64:
    return builtin::UInt64;
  case Primitive::CComplex:
  case Primitive::CFloatComplex:
  case Primitive::CxxFloatComplex:
  case Primitive::Complex:
    return builtin::CComplex;
  case Primitive::CDoubleComplex:
  case Primitive::CxxDoubleComplex:
  case Primitive::DoubleComplex:
    return builtin::CDoubleComplex;
  case Primitive::FloatInt:
    return builtin::FloatInt;
  case Primitive::DoubleInt:
    return builtin::DoubleInt;
  case Primitive::LongInt:
    return builtin::LongInt;
  case Primitive::TwoInt:
    return builtin::TwoInt;
  case Primitive::ShortInt:
    return builtin::ShortInt;
  default:
    // long double and its pairs: Yaksa's GPU backends compute them as
    // double, so they are not the same type; the Fortran pairs have no
    // builtin.
    return std::nullopt;
  }
}

namespace {

std::vector<intptr_t> toIntptr(const std::vector<int64_t> &v) {
  return std::vector<intptr_t>(v.begin(), v.end());
}

bool build(const Api &api, const Datatype &type, Built &out,
           std::string &error);

/// Builds every child of `type` into `kids`; on failure frees those built.
bool buildChildren(const Api &api, const Datatype &type,
                   std::vector<Built> &kids, std::string &error) {
  for (size_t i = 0; i < type.numChildren(); ++i) {
    Built kid;
    if (!build(api, *type.child(i), kid, error)) {
      for (Built &k : kids)
        freeType(api, k);
      kids.clear();
      return false;
    }
    kids.push_back(kid);
  }
  return true;
}

bool build(const Api &api, const Datatype &type, Built &built,
           std::string &error) {
  const TypeArgs &a = type.args();
  if (type.kind() == Kind::Primitive) {
    std::optional<Type> t = builtinFor(a.primitive);
    if (!t) {
      error = std::string("Yaksa has no builtin type for ") +
              getPrimitiveInfo(a.primitive).mpiName;
      return false;
    }
    built = {*t, false};
    return true;
  }
  if (type.kind() == Kind::Darray) {
    error = "Yaksa has no darray constructor";
    return false;
  }
  std::vector<Built> kids;
  if (!buildChildren(api, type, kids, error))
    return false;
  std::vector<Type> kidTypes;
  for (const Built &k : kids)
    kidTypes.push_back(k.type);
  const Type old = kids.empty() ? kTypeNull : kids[0].type;
  Type out = kTypeNull;
  const intptr_t n = (intptr_t)a.displs.size();
  std::vector<intptr_t> lens = toIntptr(a.blocklens),
                        displs = toIntptr(a.displs);
  int rc = kSuccess;
  const char *call = getKindName(type.kind());
  switch (type.kind()) {
  case Kind::Contiguous:
    rc = api.type_create_contig(a.count, old, nullptr, &out);
    break;
  case Kind::Vector:
    rc = api.type_create_vector(a.count, a.blocklen, a.stride, old, nullptr,
                                &out);
    break;
  case Kind::HVector:
    rc = api.type_create_hvector(a.count, a.blocklen, a.stride, old, nullptr,
                                 &out);
    break;
  case Kind::Indexed:
    rc = api.type_create_indexed(n, lens.data(), displs.data(), old, nullptr,
                                 &out);
    break;
  case Kind::HIndexed:
    rc = api.type_create_hindexed(n, lens.data(), displs.data(), old, nullptr,
                                  &out);
    break;
  case Kind::IndexedBlock:
    rc = api.type_create_indexed_block(n, a.blocklen, displs.data(), old,
                                       nullptr, &out);
    break;
  case Kind::HIndexedBlock:
    rc = api.type_create_hindexed_block(n, a.blocklen, displs.data(), old,
                                        nullptr, &out);
    break;
  case Kind::Struct:
    rc = api.type_create_struct(n, lens.data(), displs.data(), kidTypes.data(),
                                nullptr, &out);
    break;
  case Kind::Subarray: {
    std::vector<intptr_t> sizes = toIntptr(a.sizes),
                          subsizes = toIntptr(a.subsizes),
                          starts = toIntptr(a.starts);
    rc = api.type_create_subarray(
        (int)sizes.size(), sizes.data(), subsizes.data(), starts.data(),
        a.order == Order::C ? kOrderC : kOrderFortran, old, nullptr, &out);
    break;
  }
  case Kind::Resized:
    rc = api.type_create_resized(old, a.lb, a.extent, nullptr, &out);
    break;
  case Kind::Dup:
    rc = api.type_create_dup(old, nullptr, &out);
    break;
  default:
    error = std::string("Yaksa has no ") + call + " constructor";
    rc = -1;
    break;
  }
  // The new type holds references to its children: drop ours.
  for (Built &k : kids)
    freeType(api, k);
  if (rc != kSuccess) {
    if (error.empty())
      error = std::string("yaksa_type_create for ") + call + " failed (" +
              (rc == kErrNotSupported ? "not supported"
                                      : "error " + std::to_string(rc)) +
              ")";
    return false;
  }
  built = {out, true};
  return true;
}

} // namespace

bool buildType(const Api &api, const Datatype &type, Built &out,
               std::string &error) {
  out = Built();
  error.clear();
  return build(api, type, out, error);
}

void freeType(const Api &api, Built &type) {
  if (type.owned && type.type != kTypeNull)
    api.type_free(type.type);
  type = Built();
}

bool checkLayout(const Api &api, const Datatype &type, Type built,
                 std::string &error) {
  uintptr_t size = 0;
  intptr_t lb = 0, extent = 0;
  if (api.type_get_size(built, &size) != kSuccess ||
      api.type_get_extent(built, &lb, &extent) != kSuccess) {
    error = "Yaksa cannot report the size or extent of the type";
    return false;
  }
  const LayoutInfo &l = type.layout();
  if ((int64_t)size != l.size || (int64_t)lb != l.lb ||
      (int64_t)extent != l.extent) {
    error = "Yaksa's type differs: size " + std::to_string(size) + ", lb " +
            std::to_string(lb) + ", extent " + std::to_string(extent) +
            " where ddtc has " + std::to_string(l.size) + ", " +
            std::to_string(l.lb) + ", " + std::to_string(l.extent);
    return false;
  }
  return true;
}

} // namespace ddtc::yaksa
