/*
 * MPI dynamic processes as applications use them, for the launcher's termination events:
 *
 *   spawn_check thrice   the parent job spawns two children three times in a row; each time
 *                        the children send their rank to the parent over the intercommunicator,
 *                        disconnect and exit normally;
 *   spawn_check outlive  the parent job spawns two children that finalize and exit at once,
 *                        then waits and keeps working (allreduces) after they are gone.
 *
 * A launcher that raises a child's orderly exit as an error to the parent's default event
 * handler gets the parent aborted (Open MPI's default handler aborts on any event it sees).
 * Prints "ok <step>" per step from rank 0 of the parent job, "FAIL <step>" on a failure.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int child(MPI_Comm parent, const char *mode)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (0 == strcmp(mode, "thrice")) {
        MPI_Send(&rank, 1, MPI_INT, 0, 7, parent);
        MPI_Comm_disconnect(&parent);
    }
    MPI_Finalize();
    return 0;
}

/* Spawn two children of this program in `mode`; 0 on success. */
static int spawn(const char *self, const char *mode, MPI_Comm *children)
{
    char *args[] = {(char *) mode, NULL};
    int errcodes[2];
    int rc = MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, children, errcodes);
    return MPI_SUCCESS == rc && MPI_SUCCESS == errcodes[0] && MPI_SUCCESS == errcodes[1] ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Comm parent, children;
    int rank, failed = 0;
    const char *mode = argc > 1 ? argv[1] : "thrice";

    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (MPI_COMM_NULL != parent) {
        return child(parent, mode);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (0 == strcmp(mode, "thrice")) {
        for (int round = 1; round <= 3; round++) {
            if (spawn(argv[0], mode, &children)) {
                failed = 1;
                break;
            }
            if (0 == rank) {
                int sum = 0;
                for (int i = 0; i < 2; i++) {
                    int r;
                    MPI_Recv(&r, 1, MPI_INT, MPI_ANY_SOURCE, 7, children, MPI_STATUS_IGNORE);
                    sum += r + 1;
                }
                if (3 != sum) {
                    failed = 1;
                }
            }
            MPI_Comm_disconnect(&children);
            MPI_Barrier(MPI_COMM_WORLD);
            if (0 == rank) {
                printf("%s spawn %d\n", failed ? "FAIL" : "ok", round);
            }
        }
    } else {
        if (spawn(argv[0], mode, &children)) {
            failed = 1;
        } else {
            MPI_Comm_free(&children);
        }
        /* The children are gone by now: the parent works on. */
        sleep(2);
        for (int i = 0; i < 100; i++) {
            int one = 1, total = 0, size;
            MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            MPI_Comm_size(MPI_COMM_WORLD, &size);
            failed |= total != size;
        }
        if (0 == rank) {
            printf("%s worked on after the children ended\n", failed ? "FAIL" : "ok");
        }
    }
    fflush(stdout);
    MPI_Finalize();
    return failed;
}
