/*
 * A node lost mid-job. Every rank initializes, registers a default event handler that
 * prints each event it hears, joins a first fence and says "ready rank R on HOST"; then all
 * enter a second fence, during which the test loses one node (its daemons and ranks killed,
 * its network gone): the ranks of that node (the host named by the first argument) never
 * enter the second fence, so that it cannot complete before the loss. What each survivor
 * sees is printed (further arguments are ignored):
 *   event rank R: STATUS (CODE) from NSPACE:RANK
 *   fence rank R: STATUS (CODE)
 * A survivor whose second fence fails finalizes and exits 1; one that never hears is ended
 * by the resource manager.
 */
#include <pmix.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) info;
    (void) ninfo;
    (void) results;
    (void) nresults;
    printf("event rank %u: %s (%d) from %s:%u\n", me.rank, PMIx_Error_string(status), status,
           source->nspace, source->rank);
    fflush(stdout);
    if (NULL != cbfunc) {
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    }
}

int main(int argc, char **argv)
{
    char host[256] = "";
    pmix_value_t val;
    pmix_info_t collect;
    bool yes = true;
    pmix_status_t rc;

    if (PMIX_SUCCESS != (rc = PMIx_Init(&me, NULL, 0))) {
        printf("FAIL init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIx_Register_event_handler(NULL, 0, NULL, 0, on_event, NULL, NULL);
    if (PMIX_SUCCESS != (rc = PMIx_Fence(NULL, 0, NULL, 0))) {
        printf("FAIL first fence: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    gethostname(host, sizeof host - 1);
    printf("ready rank %u on %s\n", me.rank, host);
    fflush(stdout);
    if (argc > 1 && 0 == strcmp(argv[1], host)) {
        sleep(600);
        return 0;
    }
    /* A fence that collects data: Slurm's plugin runs it over its ring through every node
     * (a fence without data goes over its tree). */
    val.type = PMIX_UINT32;
    val.data.uint32 = me.rank;
    PMIx_Put(PMIX_GLOBAL, "node_lost.rank", &val);
    PMIx_Commit();
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &collect, 1);
    printf("fence rank %u: %s (%d)\n", me.rank, PMIx_Error_string(rc), rc);
    fflush(stdout);
    /* Events that come after the answer are printed too. */
    sleep(2);
    PMIx_Finalize(NULL, 0);
    return PMIX_SUCCESS == rc ? 0 : 1;
}
