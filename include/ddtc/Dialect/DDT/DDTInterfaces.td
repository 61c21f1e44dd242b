//===- DDTInterfaces.td - Interfaces of the ddt dialect ----*- tablegen -*-===//

#ifndef DDT_INTERFACES_TD
#define DDT_INTERFACES_TD

include "mlir/IR/OpBase.td"

def DDT_ConstructorOpInterface : OpInterface<"ConstructorOpInterface"> {
  let cppNamespace = "::ddtc::ddt";
  let description = [{
    An op that calls one MPI type constructor. It describes its arguments as
    a `ddtc::TypeArgs` (without the old types) so the MPI rules, the layout
    figures and the conversion to a datatype tree are written once, in ddtc's
    core library, for every constructor.
  }];
  let methods = [
    InterfaceMethod<"Fills the constructor and its arguments, not the old "
                    "types.", "void", "getTypeArgs",
                    (ins "::ddtc::TypeArgs &":$args)>,
  ];
  let verify = [{ return ::ddtc::ddt::verifyConstructorOp($_op); }];
}

#endif // DDT_INTERFACES_TD
