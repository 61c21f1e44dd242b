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

#endif // DDT_DIALECT_TD
