/*
 * Two jobs that meet through a name server: run once with "accept" (publishes a port under
 * a name, accepts, sends 42, disconnects, unpublishes) and once with "connect" (looks the
 * name up until it is there, connects, receives, disconnects). Each mpirun is started with
 * --ompi-server naming the same ompi-server. Prints "ok <side>" or "FAIL <side>: ...".
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define NAME "pmix-rs-connect-check"

int main(int argc, char **argv)
{
    char port[MPI_MAX_PORT_NAME];
    MPI_Comm other;
    int value = 0, rc;

    MPI_Init(&argc, &argv);
    if (argc > 1 && 0 == strcmp(argv[1], "accept")) {
        MPI_Open_port(MPI_INFO_NULL, port);
        rc = MPI_Publish_name(NAME, MPI_INFO_NULL, port);
        if (MPI_SUCCESS != rc) {
            printf("FAIL accept: publish %d\n", rc);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other);
        value = 42;
        MPI_Send(&value, 1, MPI_INT, 0, 0, other);
        MPI_Comm_disconnect(&other);
        MPI_Unpublish_name(NAME, MPI_INFO_NULL, port);
        MPI_Close_port(port);
        printf("ok accept\n");
    } else {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        /* The other job may not have published yet. */
        while (MPI_SUCCESS != MPI_Lookup_name(NAME, MPI_INFO_NULL, port)) {
        }
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other);
        MPI_Recv(&value, 1, MPI_INT, 0, 0, other, MPI_STATUS_IGNORE);
        MPI_Comm_disconnect(&other);
        if (42 == value) {
            printf("ok connect\n");
        } else {
            printf("FAIL connect: received %d\n", value);
        }
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
