/*
 * Whether Open MPI yields the processor when idle (its `mpi_yield_when_idle`, which an
 * oversubscribed launch turns on) or busy-polls: read through the MPI tool interface and
 * printed by rank 0 as "yield when idle: <0|1>". A launcher that runs more processes than the
 * node has processors for must have it on, or the job crawls.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int provided, index, count, rank, verbosity, bind, scope, value = -1;
    char name[256], desc[256];
    int name_len = sizeof name, desc_len = sizeof desc;
    unsigned char raw[16];
    MPI_Datatype type;
    MPI_T_enum enumtype;
    MPI_T_cvar_handle handle;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    memset(raw, 0, sizeof raw);
    if (MPI_SUCCESS == MPI_T_cvar_get_index("mpi_yield_when_idle", &index)
        && MPI_SUCCESS == MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &type,
                                              &enumtype, desc, &desc_len, &bind, &scope)
        && MPI_SUCCESS == MPI_T_cvar_handle_alloc(index, NULL, &handle, &count)
        && MPI_SUCCESS == MPI_T_cvar_read(handle, raw)) {
        /* A boolean variable: one byte, or an int. */
        if (MPI_C_BOOL == type) {
            value = raw[0] != 0;
        } else {
            int v;
            memcpy(&v, raw, sizeof v);
            value = v != 0;
        }
    }
    if (value < 0) {
        printf("FAIL cannot read mpi_yield_when_idle\n");
    } else if (0 == rank) {
        printf("yield when idle: %d\n", value);
    }
    MPI_T_finalize();
    MPI_Finalize();
    return value < 0;
}
