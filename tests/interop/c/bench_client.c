/* Core-operation timings of a PMIx client, for `cargo xtask bench core`.
 *
 * Every rank runs the same loop; rank 0 prints one line of averages in microseconds:
 *   result get_job_us=.. first_peer_us=.. get_peer_us=.. commit1_us=.. commit1000_us=.. fence_us=..
 * It links OpenPMIx's client library, so the same binary measures OpenPMIx clients on
 * OpenPMIx's server (under tests/interop/c/host.c) and on this project's server (pmixrun).
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int fail(const char *what, pmix_status_t rc)
{
    printf("FAIL %s: %s\n", what, PMIx_Error_string(rc));
    return 1;
}

static int put_commit(int first, int count, double *avg)
{
    pmix_value_t val;
    char key[64];
    double t0 = now_us();
    for (int i = first; i < first + count; i++) {
        snprintf(key, sizeof key, "bench.k%d", i);
        val.type = PMIX_UINT32;
        val.data.uint32 = (uint32_t) i;
        pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &val);
        if (PMIX_SUCCESS != rc) {
            return fail("put", rc);
        }
        rc = PMIx_Commit();
        if (PMIX_SUCCESS != rc) {
            return fail("commit", rc);
        }
    }
    *avg = (now_us() - t0) / count;
    return 0;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 1000;
    pmix_proc_t me, wild, peer;
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        return fail("init", rc);
    }
    PMIX_PROC_LOAD(&wild, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    if (PMIX_SUCCESS != rc) {
        return fail("job size", rc);
    }
    uint32_t n = v->data.uint32;
    PMIX_VALUE_RELEASE(v);

    double t0 = now_us();
    for (int i = 0; i < iters; i++) {
        rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
        if (PMIX_SUCCESS != rc) {
            return fail("get job", rc);
        }
        PMIX_VALUE_RELEASE(v);
    }
    double get_job = (now_us() - t0) / iters;

    double commit1, commit1000, dummy;
    if (put_commit(0, 100, &commit1)) {
        return 1;
    }
    if (put_commit(100, 1000, &dummy)) {
        return 1;
    }
    if (put_commit(1100, 100, &commit1000)) {
        return 1;
    }

    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    int fences = iters / 5 > 0 ? iters / 5 : 1;
    t0 = now_us();
    for (int i = 0; i < fences; i++) {
        rc = PMIx_Fence(NULL, 0, &collect, 1);
        if (PMIX_SUCCESS != rc) {
            return fail("fence", rc);
        }
    }
    double fence = (now_us() - t0) / fences;

    /* The first get of a peer's key may fetch the peer's data from the server; the gets
     * after it are the ones a cache can answer. */
    PMIX_PROC_LOAD(&peer, me.nspace, (me.rank + 1) % n);
    t0 = now_us();
    rc = PMIx_Get(&peer, "bench.k0", NULL, 0, &v);
    if (PMIX_SUCCESS != rc) {
        return fail("first get peer", rc);
    }
    PMIX_VALUE_RELEASE(v);
    double first_peer = now_us() - t0;
    t0 = now_us();
    for (int i = 0; i < iters; i++) {
        rc = PMIx_Get(&peer, "bench.k0", NULL, 0, &v);
        if (PMIX_SUCCESS != rc) {
            return fail("get peer", rc);
        }
        PMIX_VALUE_RELEASE(v);
    }
    double get_peer = (now_us() - t0) / iters;

    rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (0 == me.rank) {
        printf("result get_job_us=%.3f first_peer_us=%.3f get_peer_us=%.3f commit1_us=%.3f "
               "commit1000_us=%.3f fence_us=%.3f\n",
               get_job, first_peer, get_peer, commit1, commit1000, fence);
    }
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}
