/* Interoperability check of a PMIx client built against OpenPMIx.
 *
 * Run under any PMIx server (this project's `pmixrun`, or tests/interop/c/host.c which embeds
 * OpenPMIx's server). Every rank walks the same steps and prints one line per step,
 *   ok <step> [details]      or      FAIL <step>: <reason>
 * plus one `info ...` line with the job-level values it read. The exit status is 0 only if
 * every step passed.
 *
 * Steps: init; job, node and process information (sizes, local peers, local and node ranks,
 * node id, hostname); put of a global and a local key, commit; fence collecting data; get of
 * every rank's global key and every local peer's local key; get of a missing key with
 * PMIX_IMMEDIATE (must fail); publish by rank 0, lookup with PMIX_WAIT by the others,
 * unpublish; `--fences K` more barriers; finalize. With `--no-publish-upcall` (a host
 * without the publish upcalls, as Slurm's), publish and lookup must answer
 * PMIX_ERR_NOT_SUPPORTED instead.
 *
 * Environment: CHECK_EXPECTED_SIZE=N makes the job size a checked value.
 */
#include <pmix.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
static pmix_proc_t me;

static void ok(const char *step, const char *detail)
{
    if (NULL != detail && '\0' != detail[0]) {
        printf("ok %s %s\n", step, detail);
    } else {
        printf("ok %s\n", step);
    }
    fflush(stdout);
}

static void fail(const char *step, const char *reason)
{
    printf("FAIL %s: %s\n", step, reason);
    fflush(stdout);
    failures++;
}

static void fail_rc(const char *step, const char *what, pmix_status_t rc)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s returned %s (%d)", what, PMIx_Error_string(rc), (int) rc);
    fail(step, buf);
}

/* Any integer-typed value as a long; false if the value is not an integer. */
static bool value_to_long(const pmix_value_t *v, long *out)
{
    switch (v->type) {
    case PMIX_INT8:
        *out = v->data.int8;
        return true;
    case PMIX_INT16:
        *out = v->data.int16;
        return true;
    case PMIX_INT32:
        *out = v->data.int32;
        return true;
    case PMIX_INT64:
        *out = (long) v->data.int64;
        return true;
    case PMIX_INT:
        *out = v->data.integer;
        return true;
    case PMIX_UINT8:
        *out = v->data.uint8;
        return true;
    case PMIX_UINT16:
        *out = v->data.uint16;
        return true;
    case PMIX_UINT32:
        *out = (long) v->data.uint32;
        return true;
    case PMIX_UINT64:
        *out = (long) v->data.uint64;
        return true;
    case PMIX_UINT:
        *out = (long) v->data.uint;
        return true;
    case PMIX_SIZE:
        *out = (long) v->data.size;
        return true;
    case PMIX_PID:
        *out = (long) v->data.pid;
        return true;
    case PMIX_PROC_RANK:
        *out = (long) v->data.rank;
        return true;
    default:
        return false;
    }
}

/* Get an integer; on failure print FAIL (when step != NULL) and return false. */
static bool get_long(const char *step, const pmix_proc_t *proc, const char *key, long *out)
{
    pmix_value_t *val = NULL;
    char buf[512];
    pmix_status_t rc = PMIx_Get(proc, key, NULL, 0, &val);
    if (PMIX_SUCCESS != rc || NULL == val) {
        if (NULL != step) {
            snprintf(buf, sizeof buf, "PMIx_Get(%s)", key);
            fail_rc(step, buf, rc);
        }
        return false;
    }
    bool good = value_to_long(val, out);
    if (!good && NULL != step) {
        snprintf(buf, sizeof buf, "%s has non-integer type %s", key,
                 PMIx_Data_type_string(val->type));
        fail(step, buf);
    }
    PMIX_VALUE_RELEASE(val);
    return good;
}

/* Get a string (malloc'd copy); on failure print FAIL and return NULL. */
static char *get_string(const char *step, const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *val = NULL;
    char buf[512];
    char *out = NULL;
    pmix_status_t rc = PMIx_Get(proc, key, NULL, 0, &val);
    if (PMIX_SUCCESS != rc || NULL == val) {
        snprintf(buf, sizeof buf, "PMIx_Get(%s)", key);
        fail_rc(step, buf, rc);
        return NULL;
    }
    if (PMIX_STRING == val->type && NULL != val->data.string) {
        out = strdup(val->data.string);
    } else {
        snprintf(buf, sizeof buf, "%s has type %s, expected a string", key,
                 PMIx_Data_type_string(val->type));
        fail(step, buf);
    }
    PMIX_VALUE_RELEASE(val);
    return out;
}

/* Parse a comma-separated list of ranks; returns the count, or -1 on a malformed list. */
static int parse_ranks(const char *list, long *ranks, int max)
{
    int n = 0;
    const char *p = list;
    while ('\0' != *p) {
        char *end;
        long r = strtol(p, &end, 10);
        if (end == p || n >= max) {
            return -1;
        }
        ranks[n++] = r;
        p = end;
        if (',' == *p) {
            p++;
        } else if ('\0' != *p) {
            return -1;
        }
    }
    return n;
}

static bool barrier(const char *step)
{
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fail_rc(step, "PMIx_Fence", rc);
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    long extra_fences = 0;
    bool no_publish_upcall = false;
    char buf[1024];
    pmix_status_t rc;

    for (int i = 1; i < argc; i++) {
        if (0 == strcmp(argv[i], "--fences") && i + 1 < argc) {
            extra_fences = strtol(argv[++i], NULL, 10);
        } else if (0 == strcmp(argv[i], "--no-publish-upcall")) {
            no_publish_upcall = true;
        } else {
            fprintf(stderr, "usage: %s [--fences K] [--no-publish-upcall]\n", argv[0]);
            return 2;
        }
    }

    /* ---- init ---- */
    rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fail_rc("init", "PMIx_Init", rc);
        return 1;
    }
    snprintf(buf, sizeof buf, "nspace=%s rank=%u", me.nspace, (unsigned) me.rank);
    ok("init", buf);

    /* ---- job, node and process information ---- */
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    long job_size = -1, univ_size = -1, local_size = -1, local_rank = -1, node_rank = -1;
    long nodeid = -1;
    char *hostname = NULL, *peers = NULL;
    int failures_before = failures;

    get_long("job_info", &wild, PMIX_JOB_SIZE, &job_size);
    get_long("job_info", &wild, PMIX_UNIV_SIZE, &univ_size);
    get_long("job_info", &wild, PMIX_LOCAL_SIZE, &local_size);
    peers = get_string("job_info", &wild, PMIX_LOCAL_PEERS);
    /* PMIX_NODEID belongs to the node realm; servers differ in where they answer it, so
     * try the wildcard rank first, then this process, and do not fail without it. */
    if (!get_long(NULL, &wild, PMIX_NODEID, &nodeid) && !get_long(NULL, &me, PMIX_NODEID, &nodeid)) {
        printf("note job_info: PMIX_NODEID is not available\n");
        nodeid = -1;
    }
    hostname = get_string("job_info", &me, PMIX_HOSTNAME);
    get_long("job_info", &me, PMIX_LOCAL_RANK, &local_rank);
    get_long("job_info", &me, PMIX_NODE_RANK, &node_rank);

    printf("info job_size=%ld univ_size=%ld local_size=%ld local_rank=%ld node_rank=%ld "
           "nodeid=%ld hostname=%s peers=%s\n",
           job_size, univ_size, local_size, local_rank, node_rank, nodeid,
           NULL == hostname ? "(none)" : hostname, NULL == peers ? "(none)" : peers);
    fflush(stdout);

    const char *expected = getenv("CHECK_EXPECTED_SIZE");
    if (NULL != expected && job_size != strtol(expected, NULL, 10)) {
        snprintf(buf, sizeof buf, "job size %ld, expected %s", job_size, expected);
        fail("job_info", buf);
    }
    if (job_size < 1 || (long) me.rank >= job_size) {
        snprintf(buf, sizeof buf, "rank %u is outside the job size %ld", (unsigned) me.rank,
                 job_size);
        fail("job_info", buf);
    }
    if (univ_size < job_size) {
        snprintf(buf, sizeof buf, "universe size %ld < job size %ld", univ_size, job_size);
        fail("job_info", buf);
    }
    if (local_size < 1 || local_size > job_size) {
        snprintf(buf, sizeof buf, "local size %ld is not in 1..job size %ld", local_size,
                 job_size);
        fail("job_info", buf);
    }
    if (local_rank < 0 || local_rank >= local_size) {
        snprintf(buf, sizeof buf, "local rank %ld is not below local size %ld", local_rank,
                 local_size);
        fail("job_info", buf);
    }
    if (node_rank < 0 || node_rank >= job_size) {
        snprintf(buf, sizeof buf, "node rank %ld is out of range", node_rank);
        fail("job_info", buf);
    }
    if (NULL != hostname && '\0' == hostname[0]) {
        fail("job_info", "empty hostname");
    }

    /* The local peers, parsed; they drive the local-key checks below. */
    int npeers = 0;
    long *peer_ranks = NULL;
    if (NULL != peers) {
        int max = (int) strlen(peers) + 1;
        peer_ranks = calloc((size_t) max, sizeof(long));
        npeers = parse_ranks(peers, peer_ranks, max);
        bool mine = false;
        for (int i = 0; i < npeers; i++) {
            if (peer_ranks[i] == (long) me.rank) {
                mine = true;
            }
            if (peer_ranks[i] < 0 || peer_ranks[i] >= job_size) {
                snprintf(buf, sizeof buf, "local peer %ld is outside the job", peer_ranks[i]);
                fail("job_info", buf);
            }
        }
        if (npeers < 0) {
            snprintf(buf, sizeof buf, "malformed PMIX_LOCAL_PEERS \"%s\"", peers);
            fail("job_info", buf);
            npeers = 0;
        } else if (!mine) {
            snprintf(buf, sizeof buf, "PMIX_LOCAL_PEERS \"%s\" lacks my rank %u", peers,
                     (unsigned) me.rank);
            fail("job_info", buf);
        } else if (npeers != local_size) {
            snprintf(buf, sizeof buf, "PMIX_LOCAL_PEERS has %d entries, local size is %ld",
                     npeers, local_size);
            fail("job_info", buf);
        }
    }
    if (failures == failures_before) {
        ok("job_info", NULL);
    }
    if (job_size < 1) {
        job_size = 1; /* keep going with the data steps for this rank at least */
    }

    /* ---- put and commit ---- */
    pmix_value_t val;
    char global[128];
    snprintf(global, sizeof global, "global-from-%u", (unsigned) me.rank);
    failures_before = failures;
    PMIx_Value_load(&val, global, PMIX_STRING);
    rc = PMIx_Put(PMIX_GLOBAL, "check.global", &val);
    PMIx_Value_destruct(&val);
    if (PMIX_SUCCESS != rc) {
        fail_rc("put", "PMIx_Put(PMIX_GLOBAL)", rc);
    }
    int32_t local_value = 1000 + (int32_t) me.rank;
    PMIx_Value_load(&val, &local_value, PMIX_INT32);
    rc = PMIx_Put(PMIX_LOCAL, "check.local", &val);
    PMIx_Value_destruct(&val);
    if (PMIX_SUCCESS != rc) {
        fail_rc("put", "PMIx_Put(PMIX_LOCAL)", rc);
    }
    if (failures == failures_before) {
        ok("put", NULL);
    }
    rc = PMIx_Commit();
    if (PMIX_SUCCESS != rc) {
        fail_rc("commit", "PMIx_Commit", rc);
    } else {
        ok("commit", NULL);
    }

    /* ---- fence collecting data ---- */
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_CONSTRUCT(&collect);
    PMIx_Info_load(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    if (PMIX_SUCCESS != rc) {
        fail_rc("fence", "PMIx_Fence(PMIX_COLLECT_DATA)", rc);
    } else {
        ok("fence", NULL);
    }

    /* ---- get every rank's global key and every local peer's local key ---- */
    pmix_info_t tmo;
    int ten = 10;
    PMIX_INFO_CONSTRUCT(&tmo);
    PMIx_Info_load(&tmo, PMIX_TIMEOUT, &ten, PMIX_INT);
    failures_before = failures;
    for (long r = 0; r < job_size; r++) {
        pmix_proc_t peer;
        pmix_value_t *got = NULL;
        char want[128];
        PMIX_LOAD_PROCID(&peer, me.nspace, (pmix_rank_t) r);
        snprintf(want, sizeof want, "global-from-%ld", r);
        rc = PMIx_Get(&peer, "check.global", &tmo, 1, &got);
        if (PMIX_SUCCESS != rc || NULL == got) {
            snprintf(buf, sizeof buf, "PMIx_Get(rank %ld, check.global)", r);
            fail_rc("get_global", buf, rc);
            continue;
        }
        if (PMIX_STRING != got->type || NULL == got->data.string
            || 0 != strcmp(got->data.string, want)) {
            snprintf(buf, sizeof buf, "rank %ld check.global: type %s value \"%s\", expected \"%s\"",
                     r, PMIx_Data_type_string(got->type),
                     PMIX_STRING == got->type && NULL != got->data.string ? got->data.string : "?",
                     want);
            fail("get_global", buf);
        }
        PMIX_VALUE_RELEASE(got);
    }
    if (failures == failures_before) {
        snprintf(buf, sizeof buf, "ranks=%ld", job_size);
        ok("get_global", buf);
    }
    failures_before = failures;
    for (int i = 0; i < npeers; i++) {
        pmix_proc_t peer;
        pmix_value_t *got = NULL;
        long r = peer_ranks[i];
        PMIX_LOAD_PROCID(&peer, me.nspace, (pmix_rank_t) r);
        rc = PMIx_Get(&peer, "check.local", &tmo, 1, &got);
        if (PMIX_SUCCESS != rc || NULL == got) {
            snprintf(buf, sizeof buf, "PMIx_Get(rank %ld, check.local)", r);
            fail_rc("get_local", buf, rc);
            continue;
        }
        if (PMIX_INT32 != got->type || got->data.int32 != 1000 + r) {
            long v = -1;
            value_to_long(got, &v);
            snprintf(buf, sizeof buf, "rank %ld check.local: type %s value %ld, expected INT32 %ld",
                     r, PMIx_Data_type_string(got->type), v, 1000 + r);
            fail("get_local", buf);
        }
        PMIX_VALUE_RELEASE(got);
    }
    if (failures == failures_before) {
        snprintf(buf, sizeof buf, "peers=%d", npeers);
        ok("get_local", buf);
    }
    PMIX_INFO_DESTRUCT(&tmo);

    /* ---- a key nobody put must not be found ---- */
    {
        pmix_info_t dirs[2];
        pmix_proc_t zero;
        pmix_value_t *got = NULL;
        int five = 5;
        PMIX_INFO_CONSTRUCT(&dirs[0]);
        PMIX_INFO_CONSTRUCT(&dirs[1]);
        PMIx_Info_load(&dirs[0], PMIX_IMMEDIATE, &yes, PMIX_BOOL);
        PMIx_Info_load(&dirs[1], PMIX_TIMEOUT, &five, PMIX_INT);
        PMIX_LOAD_PROCID(&zero, me.nspace, 0);
        rc = PMIx_Get(&zero, "check.missing", dirs, 2, &got);
        if (PMIX_SUCCESS == rc) {
            fail("get_missing", "PMIx_Get of a key nobody put succeeded");
            if (NULL != got) {
                PMIX_VALUE_RELEASE(got);
            }
        } else if (PMIX_ERR_NOT_FOUND == rc || PMIX_ERR_TIMEOUT == rc) {
            snprintf(buf, sizeof buf, "status=%s", PMIx_Error_string(rc));
            ok("get_missing", buf);
        } else {
            fail_rc("get_missing", "PMIx_Get(check.missing)", rc);
        }
        PMIX_INFO_DESTRUCT(&dirs[0]);
        PMIX_INFO_DESTRUCT(&dirs[1]);
    }

    /* ---- publish / lookup / unpublish ---- */
    char port[PMIX_MAX_NSLEN + 32];
    snprintf(port, sizeof port, "port-of-%s", me.nspace);
    if (0 == me.rank) {
        pmix_info_t pub;
        PMIX_INFO_CONSTRUCT(&pub);
        PMIx_Info_load(&pub, "check.port", port, PMIX_STRING);
        rc = PMIx_Publish(&pub, 1);
        PMIX_INFO_DESTRUCT(&pub);
        if (no_publish_upcall) {
            if (PMIX_ERR_NOT_SUPPORTED == rc) {
                ok("publish", "note=not-supported-by-server");
            } else {
                fail_rc("publish", "PMIx_Publish (expected NOT-SUPPORTED)", rc);
            }
        } else if (PMIX_SUCCESS != rc) {
            fail_rc("publish", "PMIx_Publish", rc);
        } else {
            ok("publish", NULL);
        }
    }
    if (barrier("publish_barrier")) {
        ok("publish_barrier", NULL);
    }
    if (0 != me.rank) {
        pmix_pdata_t pd;
        pmix_info_t dirs[2];
        PMIX_PDATA_CONSTRUCT(&pd);
        PMIX_LOAD_KEY(pd.key, "check.port");
        PMIX_INFO_CONSTRUCT(&dirs[0]);
        PMIX_INFO_CONSTRUCT(&dirs[1]);
        PMIx_Info_load(&dirs[0], PMIX_WAIT, &yes, PMIX_BOOL);
        PMIx_Info_load(&dirs[1], PMIX_TIMEOUT, &ten, PMIX_INT);
        rc = PMIx_Lookup(&pd, 1, dirs, 2);
        if (no_publish_upcall) {
            if (PMIX_ERR_NOT_SUPPORTED == rc) {
                ok("lookup", "note=not-supported-by-server");
            } else {
                fail_rc("lookup", "PMIx_Lookup (expected NOT-SUPPORTED)", rc);
            }
        } else if (PMIX_SUCCESS != rc) {
            fail_rc("lookup", "PMIx_Lookup(check.port)", rc);
        } else if (PMIX_STRING != pd.value.type || NULL == pd.value.data.string
                   || 0 != strcmp(pd.value.data.string, port)) {
            snprintf(buf, sizeof buf, "check.port: type %s value \"%s\", expected \"%s\"",
                     PMIx_Data_type_string(pd.value.type),
                     PMIX_STRING == pd.value.type && NULL != pd.value.data.string
                         ? pd.value.data.string : "?",
                     port);
            fail("lookup", buf);
        } else {
            snprintf(buf, sizeof buf, "publisher=%s:%u", pd.proc.nspace, (unsigned) pd.proc.rank);
            ok("lookup", buf);
        }
        PMIX_PDATA_DESTRUCT(&pd);
        PMIX_INFO_DESTRUCT(&dirs[0]);
        PMIX_INFO_DESTRUCT(&dirs[1]);
    }
    if (barrier("lookup_barrier")) {
        ok("lookup_barrier", NULL);
    }
    if (0 == me.rank) {
        char key[] = "check.port";
        char *keys[] = {key, NULL};
        rc = PMIx_Unpublish(keys, NULL, 0);
        if (PMIX_SUCCESS == rc) {
            ok("unpublish", NULL);
        } else if (PMIX_ERR_NOT_SUPPORTED == rc) {
            ok("unpublish", "note=not-supported-by-server");
        } else {
            fail_rc("unpublish", "PMIx_Unpublish", rc);
        }
    }

    /* ---- repeated barriers ---- */
    if (extra_fences > 0) {
        long done = 0;
        for (; done < extra_fences; done++) {
            if (!barrier("fences")) {
                break;
            }
        }
        if (done == extra_fences) {
            snprintf(buf, sizeof buf, "count=%ld", extra_fences);
            ok("fences", buf);
        }
    }

    free(peer_ranks);
    free(peers);
    free(hostname);

    /* ---- finalize ---- */
    rc = PMIx_Finalize(NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fail_rc("finalize", "PMIx_Finalize", rc);
    } else {
        ok("finalize", NULL);
    }
    if (0 != failures) {
        printf("FAIL summary: rank %u had %d failure(s)\n", (unsigned) me.rank, failures);
        fflush(stdout);
        return 1;
    }
    return 0;
}
