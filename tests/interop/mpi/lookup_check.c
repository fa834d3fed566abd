/*
 * Names that no one publishes, as a second job looking for a first one meets them: a lookup
 * must fail at once (MPI_ERR_NAME), and an accept whose peer never comes must end at its
 * exchange's timeout (Open MPI looks the peer's port up with PMIX_WAIT and PMIX_TIMEOUT, which
 * OMPI_MCA_pmix_base_exchange_timeout sets) with an error, not hang. Prints "ok <step>" or
 * "FAIL <step>".
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    char port[MPI_MAX_PORT_NAME];
    MPI_Comm other;
    int failed = 0, class;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rc = MPI_Lookup_name("no-one-published-this", MPI_INFO_NULL, port);
    MPI_Error_class(rc, &class);
    if (MPI_ERR_NAME == class) {
        printf("ok lookup of an unpublished name fails\n");
    } else {
        printf("FAIL lookup of an unpublished name: %d\n", rc);
        failed = 1;
    }
    fflush(stdout);
    MPI_Open_port(MPI_INFO_NULL, port);
    rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &other);
    if (MPI_SUCCESS != rc) {
        printf("ok accept with no peer ends\n");
    } else {
        printf("FAIL accept with no peer succeeded\n");
        failed = 1;
    }
    fflush(stdout);
    MPI_Finalize();
    return failed;
}
