/* Interoperability check of credentials for a PMIx client built against OpenPMIx.
 *
 * Run under a PMIx launcher: each rank gets a credential from its server
 * (PMIx_Get_credential), validates it (PMIx_Validate_credential), which must state this
 * user's uid and the rank's own identifier, then validates a copy with one character
 * altered, which must be refused with PMIX_ERR_INVALID_CRED. Prints
 *   ok <step> [details]      or      FAIL <step>: <reason>
 * and exits 0 only if every step passed.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;

static void fail(const char *step, const char *what, pmix_status_t rc)
{
    printf("FAIL %s: %s returned %s (%d)\n", step, what, PMIx_Error_string(rc), (int) rc);
    fflush(stdout);
    failures++;
}

int main(void)
{
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fail("init", "PMIx_Init", rc);
        return 1;
    }
    pmix_byte_object_t cred;
    PMIX_BYTE_OBJECT_CONSTRUCT(&cred);
    rc = PMIx_Get_credential(NULL, 0, &cred);
    if (PMIX_SUCCESS != rc || NULL == cred.bytes || 0 == cred.size) {
        fail("get", "PMIx_Get_credential", rc);
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    printf("ok get credential of %zu bytes\n", cred.size);

    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Validate_credential(&cred, NULL, 0, &results, &nresults);
    if (PMIX_SUCCESS != rc) {
        fail("validate", "PMIx_Validate_credential", rc);
    } else {
        int uid_ok = 0, rank_ok = 0;
        for (size_t i = 0; i < nresults; i++) {
            if (PMIX_CHECK_KEY(&results[i], PMIX_USERID)
                && results[i].value.data.uint32 == (uint32_t) getuid()) {
                uid_ok = 1;
            }
            if (PMIX_CHECK_KEY(&results[i], PMIX_PROCID) && PMIX_PROC == results[i].value.type
                && PMIX_CHECK_PROCID(results[i].value.data.proc, &me)) {
                rank_ok = 1;
            }
        }
        if (uid_ok && rank_ok) {
            printf("ok validated my own credential\n");
        } else {
            printf("FAIL validate: the results do not state my uid and identifier\n");
            failures++;
        }
        PMIX_INFO_FREE(results, nresults);
    }

    pmix_byte_object_t altered;
    altered.size = cred.size;
    altered.bytes = malloc(cred.size);
    memcpy(altered.bytes, cred.bytes, cred.size);
    size_t mid = cred.size / 2;
    altered.bytes[mid] = ('0' == altered.bytes[mid]) ? '1' : '0';
    results = NULL;
    nresults = 0;
    rc = PMIx_Validate_credential(&altered, NULL, 0, &results, &nresults);
    if (PMIX_ERR_INVALID_CRED == rc) {
        printf("ok altered credential refused\n");
    } else {
        fail("altered", "PMIx_Validate_credential of an altered credential", rc);
    }
    if (NULL != results) {
        PMIX_INFO_FREE(results, nresults);
    }
    free(altered.bytes);
    PMIX_BYTE_OBJECT_DESTRUCT(&cred);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return failures ? 1 : 0;
}
