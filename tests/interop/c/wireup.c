/*
 * A job's wire-up, as an MPI library does it at init: PMIx_Init, a put of one key, commit, a
 * fence that collects the data, and a get of every rank's key (each value checked). Each
 * rank prints "ok wireup rank R of N" or "FAIL ...". The first rank on each node
 * (PMIX_LOCAL_RANK 0) then prints what its parent, the process that hosts the node's PMIx
 * server (Slurm's slurmstepd), holds in memory:
 *   server node=NAME hwm_kb=PEAK rss_kb=NOW
 * read from /proc before anyone finalizes, for `cargo xtask bench slurm`.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *what, pmix_status_t rc)
{
    printf("FAIL %s: %s\n", what, PMIx_Error_string(rc));
    return 1;
}

/* The value of a "Name:   123 kB" line of /proc/PID/status, or -1. */
static long status_kb(pid_t pid, const char *name)
{
    char path[64], line[256];
    long kb = -1;
    size_t len = strlen(name);
    snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return -1;
    }
    while (NULL != fgets(line, sizeof line, f)) {
        if (0 == strncmp(line, name, len) && ':' == line[len]) {
            kb = strtol(line + len + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

int main(void)
{
    pmix_proc_t me, proc;
    pmix_value_t val, *got = NULL;
    pmix_info_t collect;
    char key_value[64];
    bool yes = true;
    uint32_t size;
    pmix_status_t rc;

    if (PMIX_SUCCESS != (rc = PMIx_Init(&me, NULL, 0))) {
        return fail("init", rc);
    }
    PMIX_LOAD_PROCID(&proc, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIX_SUCCESS != (rc = PMIx_Get(&proc, PMIX_JOB_SIZE, NULL, 0, &got))) {
        return fail("get job size", rc);
    }
    size = got->data.uint32;
    PMIX_VALUE_RELEASE(got);

    snprintf(key_value, sizeof key_value, "address-of-rank-%u", me.rank);
    val.type = PMIX_STRING;
    val.data.string = key_value;
    if (PMIX_SUCCESS != (rc = PMIx_Put(PMIX_GLOBAL, "wireup.addr", &val))) {
        return fail("put", rc);
    }
    if (PMIX_SUCCESS != (rc = PMIx_Commit())) {
        return fail("commit", rc);
    }
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if (PMIX_SUCCESS != (rc = PMIx_Fence(NULL, 0, &collect, 1))) {
        return fail("fence", rc);
    }
    PMIX_INFO_DESTRUCT(&collect);
    for (uint32_t r = 0; r < size; r++) {
        char want[64];
        PMIX_LOAD_PROCID(&proc, me.nspace, r);
        if (PMIX_SUCCESS != (rc = PMIx_Get(&proc, "wireup.addr", NULL, 0, &got))) {
            return fail("get of a peer's key", rc);
        }
        snprintf(want, sizeof want, "address-of-rank-%u", r);
        if (PMIX_STRING != got->type || 0 != strcmp(got->data.string, want)) {
            printf("FAIL rank %u's key is not what it put\n", r);
            return 1;
        }
        PMIX_VALUE_RELEASE(got);
    }
    printf("ok wireup rank %u of %u\n", me.rank, size);

    PMIX_LOAD_PROCID(&proc, me.nspace, me.rank);
    if (PMIX_SUCCESS == PMIx_Get(&proc, PMIX_LOCAL_RANK, NULL, 0, &got)) {
        if (0 == got->data.uint16) {
            char host[256] = "";
            gethostname(host, sizeof host - 1);
            printf("server node=%s hwm_kb=%ld rss_kb=%ld\n", host, status_kb(getppid(), "VmHWM"),
                   status_kb(getppid(), "VmRSS"));
        }
        PMIX_VALUE_RELEASE(got);
    }
    fflush(stdout);
    /* The node's first rank has read its server's memory before the node's ranks finalize. */
    PMIx_Fence(NULL, 0, NULL, 0);
    PMIx_Finalize(NULL, 0);
    return 0;
}
