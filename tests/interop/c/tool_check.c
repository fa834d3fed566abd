/* Interoperability check of a PMIx *tool* built against OpenPMIx.
 *
 * Run as a process of a job under `pmixrun` (it reads the job's namespace and the server's
 * URI from the environment the launcher gave it), it then forgets that it is a client and
 * attaches to the same server as a self-started tool, the way a debugger or `pquery` does:
 *
 *   tool_check uri    connects with PMIX_SERVER_URI
 *   tool_check pid    connects with PMIX_SERVER_PIDINFO = the launcher's pid, which makes
 *                     OpenPMIx look for the launcher's rendezvous file
 *
 * Steps: tool init (the server must assign an identifier, as the tool brings none); get of
 * the job's size by namespace; get of a key nobody has (must fail); tool finalize. Prints
 *   ok <step> [details]      or      FAIL <step>: <reason>
 * and exits 0 only if every step passed. CHECK_EXPECTED_SIZE=N is the expected job size.
 */
#include <pmix_tool.h>
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

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "uri";
    const char *env_ns = getenv("PMIX_NAMESPACE");
    const char *env_uri = getenv("PMIX_SERVER_URI41");
    const char *env_size = getenv("CHECK_EXPECTED_SIZE");
    if (NULL == env_ns || NULL == env_uri) {
        printf("FAIL setup: run me under a PMIx launcher (PMIX_NAMESPACE, PMIX_SERVER_URI41)\n");
        return 1;
    }
    char job_ns[PMIX_MAX_NSLEN + 1];
    char uri[1024];
    snprintf(job_ns, sizeof job_ns, "%s", env_ns);
    snprintf(uri, sizeof uri, "%s", env_uri);
    /* A tool started by hand has none of the client's variables. */
    unsetenv("PMIX_NAMESPACE");
    unsetenv("PMIX_RANK");
    unsetenv("PMIX_SERVER_URI41");
    unsetenv("PMIX_SERVER_URI4");
    unsetenv("PMIX_SERVER_URI3");
    unsetenv("PMIX_SERVER_URI21");
    unsetenv("PMIX_SERVER_URI2");

    pmix_info_t info[2];
    size_t ninfo = 0;
    pid_t server_pid = getppid();
    if (0 == strcmp(mode, "pid")) {
        PMIX_INFO_LOAD(&info[ninfo], PMIX_SERVER_PIDINFO, &server_pid, PMIX_PID);
    } else {
        PMIX_INFO_LOAD(&info[ninfo], PMIX_SERVER_URI, uri, PMIX_STRING);
    }
    ninfo++;
    uint32_t retries = 10;
    PMIX_INFO_LOAD(&info[ninfo], PMIX_CONNECT_MAX_RETRIES, &retries, PMIX_UINT32);
    ninfo++;

    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, info, ninfo);
    if (PMIX_SUCCESS != rc) {
        fail("tool_init", "PMIx_tool_init", rc);
        return 1;
    }
    if ('\0' == me.nspace[0] || 0 == strcmp(me.nspace, job_ns)) {
        printf("FAIL tool_init: assigned namespace '%s' is not a tool's own\n", me.nspace);
        failures++;
    } else {
        printf("ok tool_init %s:%u (%s)\n", me.nspace, me.rank, mode);
    }

    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, job_ns, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val);
    if (PMIX_SUCCESS != rc) {
        fail("get_job_size", "PMIx_Get(PMIX_JOB_SIZE)", rc);
    } else if (PMIX_UINT32 != val->type) {
        printf("FAIL get_job_size: type %s\n", PMIx_Data_type_string(val->type));
        failures++;
    } else if (NULL != env_size && (uint32_t) atoi(env_size) != val->data.uint32) {
        printf("FAIL get_job_size: %u, expected %s\n", val->data.uint32, env_size);
        failures++;
    } else {
        printf("ok get_job_size %u\n", val->data.uint32);
    }
    if (NULL != val) {
        PMIX_VALUE_RELEASE(val);
        val = NULL;
    }

    pmix_info_t imm;
    PMIX_INFO_LOAD(&imm, PMIX_IMMEDIATE, NULL, PMIX_BOOL);
    rc = PMIx_Get(&job, "tool.check.nobody.has.this", &imm, 1, &val);
    if (PMIX_SUCCESS == rc) {
        printf("FAIL get_missing: found a key nobody put\n");
        failures++;
        PMIX_VALUE_RELEASE(val);
    } else {
        printf("ok get_missing %s\n", PMIx_Error_string(rc));
    }

    rc = PMIx_tool_finalize();
    if (PMIX_SUCCESS != rc) {
        fail("tool_finalize", "PMIx_tool_finalize", rc);
    } else {
        printf("ok tool_finalize\n");
    }
    fflush(stdout);
    return failures > 0 ? 1 : 0;
}
