/* An MPI program for the interoperability tests: Open MPI launched directly over a PMIx
 * server (this project's `pmixrun`, or tests/interop/c/host.c), without mpirun.
 *
 * Every rank: MPI_Init; rank and size (checked against CHECK_EXPECTED_SIZE when set, which
 * catches a process that fell back to running as a singleton); MPI_Allreduce of the ranks
 * (sum must be n(n-1)/2); a ring of MPI_Sendrecv passing each rank to its right neighbour
 * (what arrives must be the left neighbour's rank); MPI_Barrier; MPI_Finalize. It prints
 * `ok mpi rank R of N` on success, `FAIL mpi ...` lines otherwise, and exits nonzero on
 * failure.
 *
 * Debian's Open MPI 4.1 (ORTE) runs a process as a singleton (rank 0 of 1, never contacting
 * the PMIx server) unless a schizo component claims the launch: its "orte" component calls
 * every app without an mpirun daemon a singleton and forces OMPI_MCA_ess=singleton, so
 * OMPI_MCA_ess=pmi alone does not help. Either FLUX_JOB_ID=<anything> (schizo "flux"; it
 * also sets binding policy none and externally-bound) or OMPI_MCA_schizo=^orte (no
 * component claims the launch, ess "pmi" wins) makes it direct-launch over the PMIx server
 * named by PMIX_NAMESPACE and PMIX_SERVER_URI*. The server's job information must provide
 * PMIX_JOB_SIZE and PMIX_MAX_PROCS (UINT32, job level) and PMIX_LOCAL_RANK and
 * PMIX_NODE_RANK (UINT16, per process), or MPI_Init fails; see tests/interop/README.md.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank = -1, size = -1, failures = 0;

    if (MPI_SUCCESS != MPI_Init(&argc, &argv)) {
        printf("FAIL mpi: MPI_Init failed\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const char *expected = getenv("CHECK_EXPECTED_SIZE");
    if (NULL != expected && size != atoi(expected)) {
        printf("FAIL mpi rank %d: size %d, expected %s (started as a singleton?)\n", rank, size,
               expected);
        failures++;
    }

    long mine = rank, sum = -1;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    long want = (long) size * (size - 1) / 2;
    if (sum != want) {
        printf("FAIL mpi rank %d: allreduce sum %ld, expected %ld\n", rank, sum, want);
        failures++;
    }

    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int sent = rank, got = -1;
    MPI_Sendrecv(&sent, 1, MPI_INT, right, 17, &got, 1, MPI_INT, left, 17, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (got != left) {
        printf("FAIL mpi rank %d: ring received %d, expected %d\n", rank, got, left);
        failures++;
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == failures) {
        printf("ok mpi rank %d of %d\n", rank, size);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0 == failures ? 0 : 1;
}
