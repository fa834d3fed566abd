/*
 * A rank lost mid-job: rank 1 dies of SIGSEGV right after PMIx_Init, without finalizing;
 * every other rank sleeps for SLEEP_S seconds (first argument, 30 by default), then says
 * "ok slept" and finalizes. A server that tells its host of the lost connection lets the
 * resource manager end the step long before the survivors wake (Slurm's mpi/pmix plugin
 * cancels it from the event handler it registers); one that does not leaves them sleeping.
 */
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    pmix_proc_t me;
    unsigned int sleep_s = 30;
    pmix_status_t rc;

    if (argc > 1) {
        sleep_s = (unsigned int) strtoul(argv[1], NULL, 10);
    }
    rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("FAIL init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("ok init rank %u\n", me.rank);
    fflush(stdout);
    if (1 == me.rank) {
        raise(SIGSEGV);
    }
    sleep(sleep_s);
    printf("ok slept rank %u\n", me.rank);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}
