! Two ranks exchange parts of a 2-d array that lives in device memory, with
! derived datatypes: plain Fortran MPI code (`use mpi`), as an application
! would write it. With libddtc-mpi preloaded (or linked before the MPI
! library) the device buffers are moved by ddtc; its Fortran entry points
! catch the calls that Open MPI's own Fortran bindings would pass straight
! to the MPI library.
!
! The device arrays are Fortran pointers made from the addresses that
! dm_alloc (device_memory.c) returns; the host never reads or writes them:
! they are only passed to MPI and copied with dm_to_device / dm_to_host.
! Every received value is copied back and compared, guard elements
! included; the nonblocking collectives and the file reads and writes also
! check that the layer staged their device buffers; one-sided calls on
! device memory must be refused (MPI_ERR_BUFFER). The file of the MPI I/O
! check is /tmp/ddtc-vector-exchange-<pid>.f90.dat, which rank 0 deletes. Rank 0 prints "vector_exchange (Fortran): N checks passed" when
! every check of both ranks passed; the status is 1 on any mismatch, 77
! when there is no GPU.
program vector_exchange
  use mpi
  use, intrinsic :: iso_c_binding
  implicit none

  interface
    subroutine dm_init() bind(C, name='dm_init')
    end subroutine
    function dm_alloc(bytes) bind(C, name='dm_alloc') result(p)
      import :: c_ptr, c_size_t
      integer(c_size_t), value :: bytes
      type(c_ptr) :: p
    end function
    subroutine dm_free(p) bind(C, name='dm_free')
      import :: c_ptr
      type(c_ptr), value :: p
    end subroutine
    subroutine dm_to_device(dst, src, bytes) bind(C, name='dm_to_device')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: dst, src
      integer(c_size_t), value :: bytes
    end subroutine
    subroutine dm_to_host(dst, src, bytes) bind(C, name='dm_to_host')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: dst, src
      integer(c_size_t), value :: bytes
    end subroutine
    subroutine dm_require_ddtc() bind(C, name='dm_require_ddtc')
    end subroutine
    function getpid() bind(C, name='getpid') result(pid)
      import :: c_int
      integer(c_int) :: pid
    end function
    ! To look up libddtc-mpi's counters without linking to it.
    function dlsym(handle, name) bind(C, name='dlsym') result(p)
      import :: c_ptr, c_funptr, c_char
      type(c_ptr), value :: handle
      character(kind=c_char), intent(in) :: name(*)
      type(c_funptr) :: p
    end function
  end interface

  abstract interface
    function counter() bind(C) result(n)
      import :: c_long_long
      integer(c_long_long) :: n
    end function
  end interface

  integer, parameter :: dp = c_double
  integer(c_size_t), parameter :: word = c_sizeof(1.0_dp)
  ! The array each rank holds (rows x cols, Fortran order), the block of
  ! `width` rows that is sent (strided in memory) and where it arrives.
  integer, parameter :: rows = 48, cols = 64, width = 3
  integer, parameter :: send_row = 5, recv_row = 40, guard = 8, nsum = 1000
  ! Values of the large messages: 512 KiB, above the layer's eager limit.
  integer, parameter :: nlarge = 65536

  integer :: ierr, rank, nproc, other, i, j, k, count, rep
  integer :: passed, failed, totals(2)
  integer :: block, flat, req(2), status(MPI_STATUS_SIZE), made
  integer :: counts(2), displs(2), rcounts(2), rdispls(2), fh, pid
  integer(kind=MPI_OFFSET_KIND) :: offset
  integer(kind=MPI_ADDRESS_KIND) :: window_base
  integer :: win
  integer(c_long_long) :: staged
  character(len=64) :: path
  character(len=16) :: protocol
  real(dp), allocatable, target :: h(:, :), want(:, :), want1(:)
  real(dp), pointer, contiguous :: a(:, :), b(:, :), r(:), s(:)
  type(c_ptr) :: pa, pb, pr, ps

  passed = 0
  failed = 0
  call dm_init()
  call MPI_INIT(ierr)
  call dm_require_ddtc()
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nproc, ierr)
  if (nproc /= 2) then
    if (rank == 0) print '(a,i0,a)', 'vector_exchange: run it on 2 ranks (not ', nproc, ')'
    call MPI_FINALIZE(ierr)
    stop 1
  end if
  other = 1 - rank

  ! This rank's array, on the device.
  allocate (h(rows, cols), want(rows, cols))
  do j = 1, cols
    do i = 1, rows
      h(i, j) = value(rank, i, j)
    end do
  end do
  pa = dm_alloc(word * rows * cols)
  call c_f_pointer(pa, a, [rows, cols])
  call dm_to_device(pa, c_loc(h), word * rows * cols)

  ! A block of `width` rows, and a contiguous type of the same signature.
  call MPI_TYPE_VECTOR(cols, width, rows, MPI_DOUBLE_PRECISION, block, ierr)
  call MPI_TYPE_CONTIGUOUS(width * cols, MPI_DOUBLE_PRECISION, flat, ierr)
  call MPI_TYPE_COMMIT(block, ierr)
  call MPI_TYPE_COMMIT(flat, ierr)

  ! 1. MPI_SENDRECV: the row block arrives as width x cols contiguous values.
  allocate (want1(width * cols + guard))
  want1 = -1.0_dp
  pr = dm_alloc(word * size(want1))
  call c_f_pointer(pr, r, [size(want1)])
  call dm_to_device(pr, c_loc(want1), word * size(want1))
  call MPI_SENDRECV(a(send_row, 1), 1, block, other, 1, r, 1, flat, other, 1, &
                    MPI_COMM_WORLD, status, ierr)
  call put_row_block(want1, 0, other)
  call expect('MPI_SENDRECV row block (vector) into a contiguous type', pr, want1, size(want1))
  call MPI_GET_COUNT(status, flat, count, ierr)
  call report(status(MPI_SOURCE) == other .and. status(MPI_TAG) == 1 .and. count == 1, &
              'MPI_SENDRECV status: source, tag, MPI_GET_COUNT')
  call dm_free(pr)

  ! 2. MPI_ISEND/MPI_IRECV/MPI_WAITALL: the block lands in rows recv_row...
  ! of the receiver's own array; every other element stays.
  want = -2.0_dp
  pb = dm_alloc(word * rows * cols)
  call c_f_pointer(pb, b, [rows, cols])
  call dm_to_device(pb, c_loc(want), word * rows * cols)
  call MPI_IRECV(b(recv_row, 1), 1, block, other, 2, MPI_COMM_WORLD, req(1), ierr)
  call MPI_ISEND(a(send_row, 1), 1, block, other, 2, MPI_COMM_WORLD, req(2), ierr)
  call MPI_WAITALL(2, req, MPI_STATUSES_IGNORE, ierr)
  do j = 1, cols
    do i = 1, width
      want(recv_row + i - 1, j) = value(other, send_row + i - 1, j)
    end do
  end do
  call expect('MPI_ISEND/MPI_IRECV/MPI_WAITALL row block into a row block', pb, want, rows * cols)
  call report(all(req == MPI_REQUEST_NULL), 'MPI_WAITALL (MPI_STATUSES_IGNORE) freed the requests')
  call dm_free(pb)

  ! 3. MPI_ALLREDUCE with MPI_IN_PLACE on device memory.
  deallocate (want1)
  allocate (want1(nsum))
  do k = 1, nsum
    want1(k) = (rank + 1) * k
  end do
  ps = dm_alloc(word * nsum)
  call c_f_pointer(ps, s, [nsum])
  call dm_to_device(ps, c_loc(want1), word * nsum)
  call MPI_ALLREDUCE(MPI_IN_PLACE, s, nsum, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  do k = 1, nsum
    want1(k) = 3 * k
  end do
  call expect('MPI_ALLREDUCE with MPI_IN_PLACE', ps, want1, nsum)
  call dm_free(ps)

  ! 4. Communicators made from Fortran: the layer's own MPI_COMM_DUP and
  ! MPI_COMM_SPLIT give them its private duplicates, so a large device
  ! message on them is pipelined. With DDTC_MPI_PROTOCOL=ipc it must then
  ! arrive through CUDA IPC: eager, as on a communicator without the
  ! duplicates, it would not.
  call get_environment_variable('DDTC_MPI_PROTOCOL', protocol)
  call MPI_COMM_DUP(MPI_COMM_WORLD, made, ierr)
  call exchange_large(made, 'MPI_COMM_DUP')
  call MPI_COMM_FREE(made, ierr)
  call report(made == MPI_COMM_NULL, 'MPI_COMM_FREE of the MPI_COMM_DUP communicator')
  ! Ranks in reverse order, so that the new ranks are not the world's.
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, 7, nproc - rank, made, ierr)
  call exchange_large(made, 'MPI_COMM_SPLIT')
  call MPI_COMM_FREE(made, ierr)
  ! A large device message pending across MPI_BARRIER: rank 0 waits for it
  ! only after the barrier, rank 1 receives it before. Without the layer's
  ! progress thread it moves only because the barrier, called from Fortran,
  ! goes through the layer as well.
  call send_across_barrier()

  ! 5. MPI_NEIGHBOR_ALLGATHER on a periodic ring of the two ranks (both
  ! neighbours are the other rank): the row block arrives twice, each time
  ! as width x cols contiguous values.
  call MPI_CART_CREATE(MPI_COMM_WORLD, 1, [nproc], [.true.], .false., made, ierr)
  deallocate (want1)
  allocate (want1(2 * width * cols + guard))
  want1 = -3.0_dp
  pr = dm_alloc(word * size(want1))
  call c_f_pointer(pr, r, [size(want1)])
  call dm_to_device(pr, c_loc(want1), word * size(want1))
  call MPI_NEIGHBOR_ALLGATHER(a(send_row, 1), 1, block, r, 1, flat, made, ierr)
  call put_row_block(want1, 0, other)
  call put_row_block(want1, width * cols, other)
  call expect('MPI_NEIGHBOR_ALLGATHER of the row block on a ring', pr, want1, size(want1))

  ! 6. MPI_INEIGHBOR_ALLGATHER, the same on the same ring, completed by
  ! MPI_WAIT.
  want1 = -4.0_dp
  call dm_to_device(pr, c_loc(want1), word * size(want1))
  staged = layer_count('ddtc_mpi_staged_buffers')
  call MPI_INEIGHBOR_ALLGATHER(a(send_row, 1), 1, block, r, 1, flat, made, req(1), ierr)
  call MPI_WAIT(req(1), status, ierr)
  call report_staged('MPI_INEIGHBOR_ALLGATHER')
  call put_row_block(want1, 0, other)
  call put_row_block(want1, width * cols, other)
  call expect('MPI_INEIGHBOR_ALLGATHER of the row block on a ring', pr, want1, size(want1))
  call report(req(1) == MPI_REQUEST_NULL, 'MPI_WAIT freed the MPI_INEIGHBOR_ALLGATHER request')
  call dm_free(pr)
  call MPI_COMM_FREE(made, ierr)

  ! 7. MPI_IALLGATHERV: each rank's row block, received as contiguous
  ! values, rank 1's first, with a gap of two values before each block.
  deallocate (want1)
  allocate (want1(2 * width * cols + 4 + guard))
  want1 = -5.0_dp
  pr = dm_alloc(word * size(want1))
  call c_f_pointer(pr, r, [size(want1)])
  call dm_to_device(pr, c_loc(want1), word * size(want1))
  rcounts = width * cols
  rdispls = [width * cols + 4, 2]
  staged = layer_count('ddtc_mpi_staged_buffers')
  call MPI_IALLGATHERV(a(send_row, 1), 1, block, r, rcounts, rdispls, MPI_DOUBLE_PRECISION, &
                       MPI_COMM_WORLD, req(1), ierr)
  call MPI_WAIT(req(1), MPI_STATUS_IGNORE, ierr)
  call report_staged('MPI_IALLGATHERV')
  do rep = 0, 1
    call put_row_block(want1, rdispls(rep + 1), rep)
  end do
  call expect('MPI_IALLGATHERV of the row blocks at displacements', pr, want1, size(want1))

  ! 8. MPI_IALLTOALLV: rank p gets 10 + p values of column p + 1 (from row
  ! 4) of every rank's array; the block from rank q lands at 20 * q + 1.
  want1 = -6.0_dp
  call dm_to_device(pr, c_loc(want1), word * size(want1))
  counts = [10, 11]
  displs = [3, rows + 3]
  rcounts = 10 + rank
  rdispls = [1, 21]
  staged = layer_count('ddtc_mpi_staged_buffers')
  call MPI_IALLTOALLV(a, counts, displs, MPI_DOUBLE_PRECISION, r, rcounts, rdispls, &
                      MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, req(2), ierr)
  call MPI_WAITALL(1, req(2:2), MPI_STATUSES_IGNORE, ierr)
  call report_staged('MPI_IALLTOALLV')
  do rep = 0, 1
    do i = 1, 10 + rank
      want1(rdispls(rep + 1) + i) = value(rep, 3 + i, rank + 1)
    end do
  end do
  call expect('MPI_IALLTOALLV of column pieces at displacements', pr, want1, size(want1))
  call report(req(2) == MPI_REQUEST_NULL, 'MPI_WAITALL freed the MPI_IALLTOALLV request')

  ! 9. MPI_FILE_WRITE_AT_ALL of each rank's row block (strided on the
  ! device) into a shared file, each rank at its own offset, then
  ! MPI_FILE_READ_AT_ALL of the other rank's part into rows recv_row... of
  ! a device array: every other element stays.
  pid = getpid()
  call MPI_BCAST(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  write (path, '(a,i0,a)') '/tmp/ddtc-vector-exchange-', pid, '.f90.dat'
  call MPI_FILE_OPEN(MPI_COMM_WORLD, trim(path), ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
                     MPI_INFO_NULL, fh, ierr)
  call report(ierr == MPI_SUCCESS, 'MPI_FILE_OPEN of ' // trim(path))
  offset = rank * width * cols * word
  staged = layer_count('ddtc_mpi_staged_buffers')
  call MPI_FILE_WRITE_AT_ALL(fh, offset, a(send_row, 1), 1, block, status, ierr)
  call report_staged('MPI_FILE_WRITE_AT_ALL')
  call MPI_GET_COUNT(status, block, count, ierr)
  call report(count == 1, 'MPI_FILE_WRITE_AT_ALL status: MPI_GET_COUNT')
  call MPI_FILE_SYNC(fh, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_FILE_SYNC(fh, ierr)
  ! The two blocks side by side, nothing before or after them.
  call MPI_FILE_GET_SIZE(fh, offset, ierr)
  call report(offset == 2 * width * cols * word, 'MPI_FILE_WRITE_AT_ALL: the file size')
  want = -7.0_dp
  pb = dm_alloc(word * rows * cols)
  call c_f_pointer(pb, b, [rows, cols])
  call dm_to_device(pb, c_loc(want), word * rows * cols)
  offset = other * width * cols * word
  staged = layer_count('ddtc_mpi_staged_buffers')
  call MPI_FILE_READ_AT_ALL(fh, offset, b(recv_row, 1), 1, block, status, ierr)
  call report_staged('MPI_FILE_READ_AT_ALL')
  do j = 1, cols
    do i = 1, width
      want(recv_row + i - 1, j) = value(other, send_row + i - 1, j)
    end do
  end do
  call expect('MPI_FILE_WRITE_AT_ALL/MPI_FILE_READ_AT_ALL row blocks through a file', &
              pb, want, rows * cols)
  ! The same read as a split collective, into the array poisoned again.
  want = -7.0_dp
  call dm_to_device(pb, c_loc(want), word * rows * cols)
  staged = layer_count('ddtc_mpi_staged_buffers')
  call MPI_FILE_READ_AT_ALL_BEGIN(fh, offset, b(recv_row, 1), 1, block, ierr)
  call report_staged('MPI_FILE_READ_AT_ALL_BEGIN')
  call MPI_FILE_READ_AT_ALL_END(fh, b(recv_row, 1), status, ierr)
  call report(ierr == MPI_SUCCESS, 'MPI_FILE_READ_AT_ALL_END')
  do j = 1, cols
    do i = 1, width
      want(recv_row + i - 1, j) = value(other, send_row + i - 1, j)
    end do
  end do
  call expect('MPI_FILE_READ_AT_ALL_BEGIN/_END of a row block', pb, want, rows * cols)
  call dm_free(pb)
  call MPI_FILE_CLOSE(fh, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == 0) call MPI_FILE_DELETE(trim(path), MPI_INFO_NULL, ierr)
  call dm_free(pr)

  ! The sender's array must be as it was.
  call expect('the sent array is unchanged', pa, h, rows * cols)

  ! One-sided calls on device memory are refused with MPI_ERR_BUFFER (the
  ! layer does not move them; the MPI library would read the device
  ! addresses from the host): a window over the device array, a device
  ! origin of MPI_PUT and a device result of MPI_GET into a window of host
  ! memory that the MPI library allocated.
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_WIN_CREATE(a, int(word * rows * cols, MPI_ADDRESS_KIND), int(word), &
                      MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call report(error_class(ierr) == MPI_ERR_BUFFER, 'MPI_WIN_CREATE over device memory is refused')
  call MPI_WIN_ALLOCATE(int(word * 4, MPI_ADDRESS_KIND), int(word), MPI_INFO_NULL, &
                        MPI_COMM_WORLD, window_base, win, ierr)
  call MPI_WIN_SET_ERRHANDLER(win, MPI_ERRORS_RETURN, ierr)
  call MPI_WIN_FENCE(0, win, ierr)
  call MPI_PUT(a, 4, MPI_DOUBLE_PRECISION, other, 0_MPI_ADDRESS_KIND, 4, &
               MPI_DOUBLE_PRECISION, win, ierr)
  call report(error_class(ierr) == MPI_ERR_BUFFER, 'MPI_PUT from device memory is refused')
  call MPI_GET(a, 4, MPI_DOUBLE_PRECISION, other, 0_MPI_ADDRESS_KIND, 4, &
               MPI_DOUBLE_PRECISION, win, ierr)
  call report(error_class(ierr) == MPI_ERR_BUFFER, 'MPI_GET into device memory is refused')
  call MPI_WIN_FENCE(0, win, ierr)
  call MPI_WIN_FREE(win, ierr)
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  call expect('the array is unchanged by the refused one-sided calls', pa, h, rows * cols)

  call MPI_TYPE_FREE(block, ierr)
  call MPI_TYPE_FREE(flat, ierr)
  call dm_free(pa)

  call MPI_ALLREDUCE([passed, failed], totals, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (totals(2) == 0) then
      print '(a,i0,a)', 'vector_exchange (Fortran): ', totals(1), ' checks passed'
    else
      print '(a,i0,a,i0,a)', 'vector_exchange (Fortran): ', totals(2), ' of ', &
        totals(1) + totals(2), ' checks FAILED'
    end if
  end if
  call MPI_FINALIZE(ierr)
  if (totals(2) /= 0) stop 1

contains

  pure real(dp) function value(owner, i, j)
    integer, intent(in) :: owner, i, j
    value = owner * 100000.0_dp + i * 100.0_dp + j + 0.25_dp
  end function

  ! The row block of `owner`'s array (rows send_row..., every column) as
  ! the contiguous type `flat` holds it, into want(at + 1...).
  subroutine put_row_block(want, at, owner)
    real(dp), intent(inout) :: want(:)
    integer, intent(in) :: at, owner
    integer :: i, j, k
    k = at
    do j = 1, cols
      do i = 1, width
        k = k + 1
        want(k) = value(owner, send_row + i - 1, j)
      end do
    end do
  end subroutine

  ! The value of one of libddtc-mpi's counters (ddtc_mpi_ipc_receives...),
  ! -1 without the layer.
  integer(c_long_long) function layer_count(name)
    character(*), intent(in) :: name
    type(c_funptr) :: f
    procedure(counter), pointer :: get
    f = dlsym(c_null_ptr, name // c_null_char)
    layer_count = -1
    if (.not. c_associated(f)) return
    call c_f_procpointer(f, get)
    layer_count = get()
  end function

  ! Both ranks of `c` send each other nlarge device values at once and check
  ! what arrived; with DDTC_MPI_PROTOCOL=ipc, also that both arrived
  ! through CUDA IPC.
  subroutine exchange_large(c, made_by)
    integer, intent(in) :: c
    character(*), intent(in) :: made_by
    real(dp), allocatable, target :: mine(:), theirs(:)
    type(c_ptr) :: psend, precv
    real(dp), pointer, contiguous :: dsend(:), drecv(:)
    integer :: crank, peer, m, reqs(2), err
    integer(c_long_long) :: before, through_ipc, total
    call MPI_COMM_RANK(c, crank, err)
    peer = 1 - crank
    allocate (mine(nlarge), theirs(nlarge))
    do m = 1, nlarge
      mine(m) = crank * 1000000.0_dp + m + 0.5_dp
      theirs(m) = peer * 1000000.0_dp + m + 0.5_dp
    end do
    psend = dm_alloc(word * nlarge)
    precv = dm_alloc(word * nlarge)
    call c_f_pointer(psend, dsend, [nlarge])
    call c_f_pointer(precv, drecv, [nlarge])
    call dm_to_device(psend, c_loc(mine), word * nlarge)
    before = layer_count('ddtc_mpi_ipc_receives')
    call MPI_IRECV(drecv, nlarge, MPI_DOUBLE_PRECISION, peer, 4, c, reqs(1), err)
    call MPI_ISEND(dsend, nlarge, MPI_DOUBLE_PRECISION, peer, 4, c, reqs(2), err)
    call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, err)
    call expect(made_by // ' communicator: a large device message', precv, theirs, nlarge)
    if (protocol == 'ipc') then
      through_ipc = layer_count('ddtc_mpi_ipc_receives') - before
      call MPI_ALLREDUCE(through_ipc, total, 1, MPI_INTEGER8, MPI_SUM, c, err)
      call report(total == 2, made_by // ' communicator: both messages through CUDA IPC')
    end if
    call dm_free(psend)
    call dm_free(precv)
  end subroutine

  subroutine send_across_barrier()
    real(dp), allocatable, target :: values(:), got(:)
    type(c_ptr) :: pdev
    real(dp), pointer, contiguous :: dev(:)
    integer :: m, req, err
    allocate (values(nlarge), got(nlarge))
    do m = 1, nlarge
      values(m) = 3.0_dp * m + 0.25_dp
    end do
    got = -1.0_dp
    pdev = dm_alloc(word * nlarge)
    call c_f_pointer(pdev, dev, [nlarge])
    if (rank == 0) then
      call dm_to_device(pdev, c_loc(values), word * nlarge)
      call MPI_ISEND(dev, nlarge, MPI_DOUBLE_PRECISION, 1, 9, MPI_COMM_WORLD, req, err)
      call MPI_BARRIER(MPI_COMM_WORLD, err)
      call MPI_WAIT(req, MPI_STATUS_IGNORE, err)
      call report(err == MPI_SUCCESS, 'a device send pending across MPI_BARRIER')
    else
      call dm_to_device(pdev, c_loc(got), word * nlarge)
      call MPI_RECV(dev, nlarge, MPI_DOUBLE_PRECISION, 0, 9, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, err)
      call MPI_BARRIER(MPI_COMM_WORLD, err)
      call expect('a device message sent across MPI_BARRIER', pdev, values, nlarge)
    end if
    call dm_free(pdev)
  end subroutine

  ! Since plain MPI could read the fake driver's device memory too: that the
  ! layer staged the device buffers of the call made since `staged` was
  ! taken, so that its Fortran entry point, not the MPI library's, ran.
  subroutine report_staged(call_name)
    character(*), intent(in) :: call_name
    call report(layer_count('ddtc_mpi_staged_buffers') > staged, &
                call_name // ': the layer staged the device buffers')
  end subroutine

  integer function error_class(code)
    integer, intent(in) :: code
    integer :: e
    call MPI_ERROR_CLASS(code, error_class, e)
  end function

  subroutine report(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (ok) then
      print '(a,i0,2a)', 'PASS rank ', rank, ': ', what
      passed = passed + 1
    else
      print '(a,i0,2a)', 'FAIL rank ', rank, ': ', what
      failed = failed + 1
    end if
  end subroutine

  ! Compares n values of device memory with what is expected there.
  subroutine expect(what, device, expected, n)
    character(*), intent(in) :: what
    type(c_ptr), intent(in) :: device
    integer, intent(in) :: n
    real(dp), intent(in) :: expected(*)
    real(dp), allocatable, target :: got(:)
    integer :: bad, first, m
    allocate (got(n))
    call dm_to_host(c_loc(got), device, word * n)
    bad = 0
    first = 0
    do m = 1, n
      if (got(m) /= expected(m)) then
        bad = bad + 1
        if (first == 0) first = m
      end if
    end do
    if (bad == 0) then
      call report(.true., what)
    else
      print '(a,i0,a,i0,a,i0,a,g0,a,g0,a)', 'rank ', rank, ': ', bad, &
        ' values differ, the first at ', first, ' (', got(first), ', expected ', &
        expected(first), ')'
      call report(.false., what)
    end if
  end subroutine

end program
