//===- DDTDialect.td - The ddt dialect ---------------------*- tablegen -*-===//
//
// MPI derived datatypes as IR: one op per MPI type constructor.
//===----------------------------------------------------------------------===//

#ifndef DDT_DIALECT_TD
#define DDT_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def DDT_Dialect : Dialect {
  let name = "ddt";
  let cppNamespace = "::ddtc::ddt";
  let summary = "MPI derived datatypes";
  let description = [{
    The `ddt` dialect writes an MPI datatype as the constructor calls that
    build it, one op per MPI constructor, with the arguments of the MPI C
    binding in its order. A named datatype is a `ddt.define` symbol whose body
    computes the type and yields it:

    ```mlir
    ddt.define @col {
      %0 = ddt.primitive MPI_DOUBLE
      %1 = ddt.vector 3, 2, 5, %0
      ddt.yield %1
    }
    ```

    Verifiers apply the MPI rules to every constructor and reject layouts
    whose sizes or extents overflow 64-bit byte offsets.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
}

class DDT_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<DDT_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def DDT_DatatypeType : DDT_Type<"Datatype", "datatype"> {
  let summary = "an MPI datatype";
  let description = [{
    The value a type constructor op produces and consumes: a datatype handle.
  }];
}

//===----------------------------------------------------------------------===//
// Enum attributes
//===----------------------------------------------------------------------===//

/// An attribute holding a value of one of the core library's enums, printed
/// by the core library's name function, so the values and their names have
/// one home (lib/Core).
class DDT_CoreEnumAttr<string name, string attrMnemonic, string enumType>
    : AttrDef<DDT_Dialect, name> {
  let mnemonic = attrMnemonic;
  let parameters = (ins enumType:$value);
  let hasCustomAssemblyFormat = 1;
  let returnType = enumType;
  let convertFromStorage = "$_self.getValue()";
  let constBuilderCall =
      "::ddtc::ddt::" # name # "Attr::get($_builder.getContext(), $0)";
}

def DDT_KernelFamilyAttr
    : DDT_CoreEnumAttr<"KernelFamily", "family", "::ddtc::KernelFamily"> {
  let summary = "a kernel family: strided or units";
}

def DDT_OrderAttr : DDT_CoreEnumAttr<"Order", "order", "::ddtc::Order"> {
  let summary = "an array order: C or Fortran";
}

def DDT_DistributionAttr
    : DDT_CoreEnumAttr<"Distribution", "distribution",
                       "::ddtc::Distribution"> {
  let summary = "how darray distributes a dimension: block, cyclic or none";
}

def DDT_DistributionArrayAttr
    : TypedArrayAttrBase<DDT_DistributionAttr, "darray distributions">;

#endif // DDT_DIALECT_TD
