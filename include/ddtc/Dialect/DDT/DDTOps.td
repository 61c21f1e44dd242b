//===- DDTOps.td - Ops of the ddt dialect ------------------*- tablegen -*-===//
//
// One op per MPI type constructor. Arguments are written in the order of the
// MPI C binding, old type(s) last, as in the .ddt spec language.
//===----------------------------------------------------------------------===//

#ifndef DDT_OPS_TD
#define DDT_OPS_TD

include "ddtc/Dialect/DDT/DDTDialect.td"
include "ddtc/Dialect/DDT/DDTInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class DDT_Op<string mnemonic, list<Trait> traits = []>
    : Op<DDT_Dialect, mnemonic, traits>;

/// A type constructor: pure, produces one datatype.
class DDT_ConstructorOp<string mnemonic>
    : DDT_Op<mnemonic, [Pure,
        DeclareOpInterfaceMethods<DDT_ConstructorOpInterface>]> {
  let results = (outs DDT_DatatypeType:$result);
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

def DDT_DefineOp : DDT_Op<"define", [Symbol, IsolatedFromAbove, SingleBlock,
                                     NoRegionArguments]> {
  let summary = "a named datatype";
  let description = [{
    Gives a name to the datatype its body yields. The body holds the
    constructor ops of the definition; an earlier definition it builds on is
    named by a `ddt.ref`, not copied, so the IR grows with the spec.

    ```mlir
    ddt.define @col {
      %0 = ddt.primitive MPI_DOUBLE
      %1 = ddt.vector 3, 2, 5, %0
      ddt.yield %1
    }
    ddt.define @cols {
      %0 = ddt.ref @col
      %1 = ddt.contiguous 4, %0
      ddt.yield %1
    }
    ```

    Each constructor op checks its own arguments; the definition checks the
    layout of its tree (built once, in body order), reporting an overflow on
    the op where it appears. A tree that reaches another definition through a
    `ddt.ref` is checked where the reference is resolved (`ddt-normalize`,
    ddtc).
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The datatype the body yields, or null once the definition is
    /// normalized (its body ends with a ddt.layout).
    ::mlir::Value getYieldedType();
  }];
}

def DDT_RefOp : DDT_Op<"ref", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the datatype an earlier definition names";
  let description = [{
    Uses the datatype of the `ddt.define` named `name` as an old type. The
    definition must come earlier in the same module (so references never form
    a cycle) and still be made of constructor ops.

    ```mlir
    %0 = ddt.ref @col
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs DDT_DatatypeType:$result);
  let assemblyFormat = "$name attr-dict";
}

def DDT_YieldOp : DDT_Op<"yield", [Pure, Terminator,
                                   HasParent<"DefineOp">]> {
  let summary = "the datatype a definition names";
  let description = [{
    Ends a definition written with constructor ops. After `ddt-normalize`
    a definition ends with a `ddt.layout` instead.
  }];
  let arguments = (ins DDT_DatatypeType:$datatype);
  let assemblyFormat = "$datatype attr-dict";
}

//===----------------------------------------------------------------------===//
// Constructors
//===----------------------------------------------------------------------===//

def DDT_PrimitiveOp : DDT_ConstructorOp<"primitive"> {
  let summary = "a predefined MPI datatype";
  let description = [{
    A named type of the MPI C binding, written by its MPI name
    (`MPI_DOUBLE`, `MPI_DOUBLE_INT`, ...); C spellings are accepted when
    parsing a single word (`double`, `int64_t`).
  }];
  let arguments = (ins StrAttr:$name);
  let assemblyFormat = "custom<PrimitiveName>($name) attr-dict";
}

def DDT_ContiguousOp : DDT_ConstructorOp<"contiguous"> {
  let summary = "MPI_Type_contiguous";
  let arguments = (ins I64Attr:$count, DDT_DatatypeType:$oldtype);
  let assemblyFormat = "$count `,` $oldtype attr-dict";
}

def DDT_VectorOp : DDT_ConstructorOp<"vector"> {
  let summary = "MPI_Type_vector: stride in extents of the old type";
  let arguments = (ins I64Attr:$count, I64Attr:$blocklen, I64Attr:$stride,
                       DDT_DatatypeType:$oldtype);
  let assemblyFormat =
      "$count `,` $blocklen `,` $stride `,` $oldtype attr-dict";
}

def DDT_HVectorOp : DDT_ConstructorOp<"hvector"> {
  let summary = "MPI_Type_create_hvector: stride in bytes";
  let arguments = (ins I64Attr:$count, I64Attr:$blocklen, I64Attr:$stride,
                       DDT_DatatypeType:$oldtype);
  let assemblyFormat =
      "$count `,` $blocklen `,` $stride `,` $oldtype attr-dict";
}

def DDT_IndexedOp : DDT_ConstructorOp<"indexed"> {
  let summary = "MPI_Type_indexed: displacements in extents of the old type";
  let arguments = (ins DenseI64ArrayAttr:$blocklens, DenseI64ArrayAttr:$displs,
                       DDT_DatatypeType:$oldtype);
  let assemblyFormat = "$blocklens `,` $displs `,` $oldtype attr-dict";
}

def DDT_HIndexedOp : DDT_ConstructorOp<"hindexed"> {
  let summary = "MPI_Type_create_hindexed: displacements in bytes";
  let arguments = (ins DenseI64ArrayAttr:$blocklens, DenseI64ArrayAttr:$displs,
                       DDT_DatatypeType:$oldtype);
  let assemblyFormat = "$blocklens `,` $displs `,` $oldtype attr-dict";
}

def DDT_IndexedBlockOp : DDT_ConstructorOp<"indexed_block"> {
  let summary = "MPI_Type_create_indexed_block: displacements in extents";
  let arguments = (ins I64Attr:$blocklen, DenseI64ArrayAttr:$displs,
                       DDT_DatatypeType:$oldtype);
  let assemblyFormat = "$blocklen `,` $displs `,` $oldtype attr-dict";
}

def DDT_HIndexedBlockOp : DDT_ConstructorOp<"hindexed_block"> {
  let summary = "MPI_Type_create_hindexed_block: displacements in bytes";
  let arguments = (ins I64Attr:$blocklen, DenseI64ArrayAttr:$displs,
                       DDT_DatatypeType:$oldtype);
  let assemblyFormat = "$blocklen `,` $displs `,` $oldtype attr-dict";
}

def DDT_StructOp : DDT_ConstructorOp<"struct"> {
  let summary = "MPI_Type_create_struct: displacements in bytes";
  let arguments = (ins DenseI64ArrayAttr:$blocklens, DenseI64ArrayAttr:$displs,
                       Variadic<DDT_DatatypeType>:$types);
  let assemblyFormat =
      "$blocklens `,` $displs `,` `(` $types `)` attr-dict";
}

def DDT_SubarrayOp : DDT_ConstructorOp<"subarray"> {
  let summary = "MPI_Type_create_subarray";
  let description = [{
    `order` is `C` (last dimension fastest) or `Fortran` (first fastest).
  }];
  let arguments = (ins DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$subsizes,
                       DenseI64ArrayAttr:$starts, DDT_OrderAttr:$order,
                       DDT_DatatypeType:$oldtype);
  let assemblyFormat = [{
    $sizes `,` $subsizes `,` $starts `,` custom<ArrayOrder>($order) `,`
    $oldtype attr-dict
  }];
}

def DDT_DarrayOp : DDT_ConstructorOp<"darray"> {
  let summary = "MPI_Type_create_darray";
  let description = [{
    Arguments: the number of processes, this process's rank, the global
    sizes, the distribution of each dimension (`block`, `cyclic`, `none`),
    its distribution argument (an integer or `default`), the process grid
    (row-major, as MPI defines it) and the array order (`C` or `Fortran`).
  }];
  let arguments = (ins I64Attr:$size, I64Attr:$rank, DenseI64ArrayAttr:$gsizes,
                       DDT_DistributionArrayAttr:$distribs,
                       DenseI64ArrayAttr:$dargs, DenseI64ArrayAttr:$psizes,
                       DDT_OrderAttr:$order,
                       DDT_DatatypeType:$oldtype);
  let assemblyFormat = [{
    $size `,` $rank `,` $gsizes `,` custom<Distributions>($distribs) `,`
    custom<Dargs>($dargs) `,` $psizes `,` custom<ArrayOrder>($order) `,`
    $oldtype attr-dict
  }];
}

def DDT_ResizedOp : DDT_ConstructorOp<"resized"> {
  let summary = "MPI_Type_create_resized";
  let arguments = (ins I64Attr:$lb, I64Attr:$extent, DDT_DatatypeType:$oldtype);
  let assemblyFormat = "$lb `,` $extent `,` $oldtype attr-dict";
}

def DDT_DupOp : DDT_ConstructorOp<"dup"> {
  let summary = "MPI_Type_dup";
  let arguments = (ins DDT_DatatypeType:$oldtype);
  let assemblyFormat = "$oldtype attr-dict";
}

//===----------------------------------------------------------------------===//
// Canonical layout and kernel plan
//===----------------------------------------------------------------------===//

def DDT_LayoutOp : DDT_Op<"layout", [Terminator, HasParent<"DefineOp">,
                                     SingleBlock, NoTerminator,
                                     NoRegionArguments]> {
  let summary = "the canonical layout of a definition, and its kernel plan";
  let description = [{
    The normalized form of a datatype: `size`, `lb` and `extent` of one
    instance (instance i starts at i * extent) and the `ddt.segment` ops of
    its packed stream, in pack order. The planning passes add the kernel
    plan as attributes:

    - `width` (alignment prologues): bytes per access, 1 to 16;
    - `needs_byte_path`: some chunks straddle runs or start unaligned;
    - `family` (stair balancing): `#ddt.family<strided>` or
      `#ddt.family<units>`;
    - `unit_bytes` and `units`: the work units of one instance, as
      quadruples (packed position, source offset, length, wide);
    - `tile_dim` (transpose tiles): the dimension of the single segment
      that the strided kernels pair with the innermost one in shared-memory
      tiles.

    ```mlir
    ddt.define @col {
      ddt.layout size 48, lb 0, extent 96 {
        ddt.segment at 0 dims [3] strides [40] runs [0] lengths [16]
      }
    }
    ```
  }];
  let arguments = (ins I64Attr:$size, I64Attr:$lb, I64Attr:$extent,
                       OptionalAttr<I64Attr>:$width,
                       OptionalAttr<BoolAttr>:$needs_byte_path,
                       OptionalAttr<DDT_KernelFamilyAttr>:$family,
                       OptionalAttr<I64Attr>:$unit_bytes,
                       OptionalAttr<DenseI64ArrayAttr>:$units,
                       OptionalAttr<I64Attr>:$tile_dim);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `size` $size `,` `lb` $lb `,` `extent` $extent attr-dict-with-keyword
    $body
  }];
  let hasVerifier = 1;
}

def DDT_SegmentOp : DDT_Op<"segment", [HasParent<"LayoutOp">]> {
  let summary = "a strided nest of a run table";
  let description = [{
    For every index of the nest (`counts`/`strides` in bytes, outermost
    first, the last varying fastest), the runs `runs`/`lengths`, shifted by
    `at` plus the index times the strides, in order. One run: a strided
    nest; several: a table repeated at every nest point.
  }];
  let arguments = (ins I64Attr:$offset, DenseI64ArrayAttr:$counts,
                       DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$run_offsets,
                       DenseI64ArrayAttr:$run_lengths);
  let assemblyFormat = [{
    `at` $offset `dims` $counts `strides` $strides `runs` $run_offsets
    `lengths` $run_lengths attr-dict
  }];
  let hasVerifier = 1;
}

#endif // DDT_OPS_TD
