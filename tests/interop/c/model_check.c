/* Two runtimes in one process declare their programming models (v5.0 §4.3.2.2, §B.3.2).
 *
 * Built against OpenPMIx's headers, run under a PMIx server. The first "runtime" calls
 * PMIx_Init with PMIX_PROGRAMMING_MODEL "MPI" (and a library name), then registers a handler
 * for PMIX_MODEL_DECLARED: it must hear its own declaration, which the library kept for it.
 * The second calls PMIx_Init again with "OpenMP": the first handler hears that at once.
 * The second runtime's handler, registered after both, must hear both (in either order:
 * each event walks a chain of its own). A default handler
 * hears none (the declaration is PMIX_EVENT_NON_DEFAULT). Each step prints
 *   ok <step> [details]      or      FAIL <step>: <reason>
 * and the exit status is 0 only if every step passed.
 */
#include <pmix.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* What each handler heard: a string of the models, comma-separated, in arrival order. */
static char heard_by_mpi[256], heard_by_openmp[256];
static int heard_by_default = 0;

static void ok(const char *step, const char *detail)
{
    printf("ok %s %s\n", step, detail);
    fflush(stdout);
}

static void fail(const char *step, const char *reason)
{
    printf("FAIL %s: %s\n", step, reason);
    fflush(stdout);
    failures++;
}

static void note(char *heard, const pmix_info_t *info, size_t ninfo)
{
    const char *model = "?";
    for (size_t n = 0; n < ninfo; n++) {
        if (PMIX_CHECK_KEY(&info[n], PMIX_PROGRAMMING_MODEL) && PMIX_STRING == info[n].value.type) {
            model = info[n].value.data.string;
        }
    }
    pthread_mutex_lock(&lock);
    if ('\0' != heard[0]) {
        strncat(heard, ",", 255 - strlen(heard));
    }
    strncat(heard, model, 255 - strlen(heard));
    pthread_mutex_unlock(&lock);
}

static void on_mpi(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t *results, size_t nresults,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id, (void) status, (void) source, (void) results, (void) nresults;
    note(heard_by_mpi, info, ninfo);
    if (NULL != cbfunc) {
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    }
}

static void on_openmp(size_t id, pmix_status_t status, const pmix_proc_t *source,
                      pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                      pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id, (void) status, (void) source, (void) results, (void) nresults;
    note(heard_by_openmp, info, ninfo);
    if (NULL != cbfunc) {
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    }
}

static void on_default(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id, (void) source, (void) info, (void) ninfo, (void) results, (void) nresults;
    if (PMIX_MODEL_DECLARED == status) {
        pthread_mutex_lock(&lock);
        heard_by_default++;
        pthread_mutex_unlock(&lock);
    }
    if (NULL != cbfunc) {
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    }
}

/* Wait (up to about 10 s, in counted sleeps) until `heard` reads `want`, or `or_else`
 * when not NULL (events each walk their own chain: their order is not promised). */
static void expect_heard(const char *step, const char *heard, const char *want,
                         const char *or_else)
{
    char now[256];
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&lock);
        strcpy(now, heard);
        pthread_mutex_unlock(&lock);
        if (0 == strcmp(now, want) || (NULL != or_else && 0 == strcmp(now, or_else))) {
            ok(step, want);
            return;
        }
        usleep(10000);
    }
    char reason[600];
    snprintf(reason, sizeof reason, "heard \"%s\", expected \"%s\"", now, want);
    fail(step, reason);
}

static pmix_status_t init_as(const char *model, const char *library, pmix_proc_t *me)
{
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_PROGRAMMING_MODEL, model, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_MODEL_LIBRARY_NAME, library, PMIX_STRING);
    pmix_status_t rc = PMIx_Init(me, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    return rc;
}

static void register_for(const char *step, pmix_status_t *codes, size_t ncodes,
                         pmix_notification_fn_t handler)
{
    pmix_status_t rc = PMIx_Register_event_handler(codes, ncodes, NULL, 0, handler, NULL, NULL);
    if (rc < 0) {
        char reason[128];
        snprintf(reason, sizeof reason, "PMIx_Register_event_handler: %s", PMIx_Error_string(rc));
        fail(step, reason);
    }
}

int main(void)
{
    pmix_proc_t me;
    pmix_status_t declared = PMIX_MODEL_DECLARED;
    if (PMIX_SUCCESS != init_as("MPI", "FooMPI", &me)) {
        fail("init", "the first PMIx_Init failed");
        return 1;
    }
    register_for("register-default", NULL, 0, on_default);
    register_for("register-mpi", &declared, 1, on_mpi);
    expect_heard("own-declaration", heard_by_mpi, "MPI", NULL);

    if (PMIX_SUCCESS != init_as("OpenMP", "FooOMP", &me)) {
        fail("second-init", "the second PMIx_Init failed");
        return 1;
    }
    expect_heard("second-declaration", heard_by_mpi, "MPI,OpenMP", NULL);
    register_for("register-openmp", &declared, 1, on_openmp);
    expect_heard("both-declarations", heard_by_openmp, "MPI,OpenMP", "OpenMP,MPI");

    pthread_mutex_lock(&lock);
    int defaults = heard_by_default;
    pthread_mutex_unlock(&lock);
    if (0 == defaults) {
        ok("default-handler", "heard none");
    } else {
        fail("default-handler", "a default handler heard a model declaration");
    }
    PMIx_Finalize(NULL, 0);
    PMIx_Finalize(NULL, 0);
    return failures ? 1 : 0;
}
