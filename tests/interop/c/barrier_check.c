/*
 * A fence without data holds every rank until all have entered it, on every node. The last
 * rank waits two seconds, creates the file named by the first argument, and only then enters
 * the fence; every other rank enters at once and, when its fence returns, checks that the file
 * exists: "ok the fence held until the last rank entered" or "FAIL ...". A fence that let a
 * rank go before the last one entered fails here (the two seconds only make that likely, not
 * the pass).
 */
#include <pmix.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    pmix_proc_t me, wildcard;
    pmix_value_t *size = NULL;
    pmix_status_t rc;

    if (argc < 2) {
        printf("FAIL usage: barrier_check MARKER\n");
        return 1;
    }
    if (PMIX_SUCCESS != (rc = PMIx_Init(&me, NULL, 0))) {
        printf("FAIL init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_LOAD_PROCID(&wildcard, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIX_SUCCESS != (rc = PMIx_Get(&wildcard, PMIX_JOB_SIZE, NULL, 0, &size))) {
        printf("FAIL get job size: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (me.rank + 1 == size->data.uint32) {
        sleep(2);
        FILE *f = fopen(argv[1], "w");
        if (NULL == f) {
            printf("FAIL cannot create %s\n", argv[1]);
            return 1;
        }
        fclose(f);
    }
    PMIX_VALUE_RELEASE(size);
    if (PMIX_SUCCESS != (rc = PMIx_Fence(NULL, 0, NULL, 0))) {
        printf("FAIL fence: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (0 != access(argv[1], F_OK)) {
        printf("FAIL rank %u left the fence before the last rank entered it\n", me.rank);
        return 1;
    }
    printf("ok the fence held until the last rank entered (rank %u)\n", me.rank);
    PMIx_Finalize(NULL, 0);
    return 0;
}
