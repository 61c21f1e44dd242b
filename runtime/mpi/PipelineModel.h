//===- PipelineModel.h - The time of a pipelined IPC message ---*- C++ -*-===//
//
// The model's figures and its formula, apart from where the figures come
// from (Model.cpp), so that tests and the calibration's fit use the one
// formula the layer chooses fragments by.
//===----------------------------------------------------------------------===//

#ifndef DDTC_MPI_PIPELINEMODEL_H
#define DDTC_MPI_PIPELINEMODEL_H

#include "FragmentSchedule.h"

#include <string>

namespace ddtc::mpi {

/// The figures of the IPC pipeline's model: fixed cost of a message, the
/// hosts' and the GPUs' cost per fragment, the rate of the move between the
/// GPUs and of the local pack/unpack kernels. From DDTC_MPI_IPC_START_US,
/// _ALPHA_US, _GAP_US, _LINK_GBPS, _LOCAL_GBPS, else from the calibration
/// file of this GPU, driver and host (ddtc-mpi-calibrate), else defaults
/// fitted on two H200s (Model.cpp).
struct ModelFigures {
  double startUs = 10.0;
  double alphaUs = 9.5;
  double gapUs = 4.75;
  double linkGBps = 370.0;
  double localGBps = 1400.0;
  /// Messages up to DDTC_MPI_EAGER_LIMIT: the eager protocol's fixed cost
  /// and rate, and the one-way time of a small message through IPC (only a
  /// calibration sets it: without one, such messages stay eager).
  double eagerStartUs = 0.0;
  double eagerGBps = 4.0;
  double ipcSmallUs = 1e9;
  std::string source = "defaults";
};

/// What a type's kernels move in memory per packed byte (each >= 1): its
/// pack's reads (estimateReadAmplification of its layout) and its unpack's
/// writes (estimateWriteAmplification: a sector written in part makes the
/// memory read its line first). A type of whole sectors and long runs moves
/// one byte each way.
struct KernelTraffic {
  double read = 1.0;
  double write = 1.0;
};

/// The predicted one-way time, in microseconds, of a message cut into
/// `schedule` whose type's kernels move `traffic` (PipelineModel.cpp gives
/// the formula).
double pipelineUs(const ModelFigures &m, const FragmentSchedule &schedule,
                  const KernelTraffic &traffic);

/// The predicted one-way time, in microseconds, of a pulled message cut
/// into `schedule`: the receiver moves each fragment from the sender's
/// buffer in one kernel, reading every sector the type touches over the
/// link (PipelineModel.cpp gives the formula).
double pullUs(const ModelFigures &m, const FragmentSchedule &schedule,
              const KernelTraffic &traffic);

} // namespace ddtc::mpi

#endif // DDTC_MPI_PIPELINEMODEL_H
