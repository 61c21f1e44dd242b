//===- Topology.h - The neighbours of a neighbourhood collective -*- C++ -*-===//
//
// Shared by the C entry points (Collectives.cpp) and the Fortran ones
// (FortranBindings.cpp), which size the arrays and buffers of the
// neighbourhood collectives from it.
//===----------------------------------------------------------------------===//

#ifndef DDTC_MPI_TOPOLOGY_H
#define DDTC_MPI_TOPOLOGY_H

#include <mpi.h>

namespace ddtc::mpi {

/// The processes a neighbourhood collective on `comm` receives from (`in`)
/// and sends to (`out`): 2 per dimension of a Cartesian topology
/// (MPI_PROC_NULL neighbours included), this rank's neighbours in a graph,
/// the degrees of a distributed graph; 0 without a topology (the MPI
/// library then reports the error).
inline void neighbourDegrees(MPI_Comm comm, int &in, int &out) {
  in = out = 0;
  int topo = MPI_UNDEFINED;
  PMPI_Topo_test(comm, &topo);
  if (topo == MPI_CART) {
    int dims = 0;
    PMPI_Cartdim_get(comm, &dims);
    in = out = 2 * dims;
  } else if (topo == MPI_GRAPH) {
    int rank = 0, n = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Graph_neighbors_count(comm, rank, &n);
    in = out = n;
  } else if (topo == MPI_DIST_GRAPH) {
    int weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
  }
}

} // namespace ddtc::mpi

#endif // DDTC_MPI_TOPOLOGY_H
