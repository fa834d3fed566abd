/* A minimal resource-manager host embedding OpenPMIx's *server*, for interoperability tests.
 *
 *   host -n N [--] PROGRAM [ARGS...]
 *
 * It starts OpenPMIx's server library, registers one job ("hostjob") of N processes on this
 * node with complete job, node, application and process information, forks N copies of
 * PROGRAM with the environment PMIx_server_setup_fork gives them (their stdout and stderr are
 * inherited), and exits with the worst exit status of the children (128+signal for a child
 * killed by a signal). A child that connected but exited without PMIx_Finalize, or a call of
 * PMIx_Abort, also fails the run. HOST_TIMEOUT (seconds, default 60) bounds the run: on
 * expiry every child is killed and the host exits 124. One summary line goes to stderr.
 *
 * Host upcalls implemented: client_connected, client_finalized, abort, fence_nb (every
 * process is local, so the data the server hands up is handed straight back), publish,
 * lookup (PMIX_WAIT requests are parked until the keys appear or PMIX_TIMEOUT expires) and
 * unpublish over an in-memory table. Ranges and persistence are ignored: there is one job.
 *
 * OpenPMIx 4.2 behaviours this host relies on or works around:
 *  - PMIX_MCA_gds=hash is set before PMIx_server_init, so clients use the hash store and
 *    receive the job information in their connect reply instead of through the ds21/ds12
 *    shared-memory segments (which the Rust client does not implement).
 *  - client_connected is called with a NULL callback: the host must answer
 *    PMIX_OPERATION_SUCCEEDED (or PMIX_SUCCESS) and never call back.
 *  - A fence whose participants are all local is completed by the server itself (MCA
 *    parameter pmix_server_fence_localonly_opt, default true): fence_nb is never called
 *    here unless the host runs with PMIX_MCA_pmix_server_fence_localonly_opt=0 in its
 *    environment (set it to exercise this upcall; both paths pass). The data buffer handed to fence_nb becomes the host's: it is
 *    given back to the modex callback and freed by the release function, which takes a lock
 *    the host holds while it calls the callback (as Slurm's plugin does): the server must
 *    call the release function after the callback returned.
 *  - PMIX_JOB_SIZE and friends must be PMIX_UINT32 (the hash store reads data.uint32);
 *    the first element of a PMIX_PROC_DATA array must be PMIX_RANK of type PMIX_PROC_RANK.
 *  - PMIx_generate_regex returns "pmix[host]" text for one short host name but may return
 *    a binary zlib "blob:" form (embedded NULs) for longer lists, so the maps are loaded as
 *    PMIX_REGEX through PMIx_Info_load (which copies either form), never as strings.
 *  - Lone node-level keys (PMIX_HOSTNAME, PMIX_NODEID, PMIX_LOCAL_SIZE, PMIX_LOCAL_PEERS,
 *    ...) are filed under this node, and the server sends them to clients only inside a
 *    PMIX_NODE_INFO_ARRAY entry (whose first element is PMIX_HOSTNAME), never as job
 *    keys; a client must answer {nspace, WILDCARD} gets of them from its own node's array.
 *  - The server adds PMIX_USERID (and clients may add PMIX_RANGE, PMIX_PERSISTENCE, ...) to
 *    the info of publish/lookup/unpublish: those directive keys are not published data.
 *  - The client library does not enforce PMIX_TIMEOUT on PMIx_Lookup; the host does.
 *  - Callbacks into the server are safe from any thread (OpenPMIx thread-shifts them); the
 *    host's tables are shared by the server's progress thread and the main loop, so they are
 *    guarded by one mutex, and callbacks are made with it released.
 */
#define _GNU_SOURCE
#include <pmix.h>
#include <pmix_server.h>

#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

extern char **environ;

#define NSPACE "hostjob"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------- per-process bookkeeping (guarded by lock) ---------- */
static int nprocs = 0;
static pid_t *pids = NULL;
static bool *exited = NULL;
static int *statuses = NULL;
static bool *connected = NULL;
static bool *finalized = NULL;
static int nfinalized = 0;
static bool aborted = false;
static int abort_status = 0;
static char abort_msg[512];
static int abort_rank = -1;

/* ---------- the published-data table (guarded by lock) ---------- */
typedef struct pub_entry {
    struct pub_entry *next;
    pmix_proc_t owner;
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_value_t value;
} pub_entry_t;

typedef struct parked_lookup {
    struct parked_lookup *next;
    char **keys; /* NULL-terminated copies */
    double deadline; /* < 0: none */
    pmix_lookup_cbfunc_t cbfunc;
    void *cbdata;
} parked_lookup_t;

static pub_entry_t *published = NULL;
static parked_lookup_t *parked = NULL;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void die(const char *what, pmix_status_t rc)
{
    fprintf(stderr, "host: %s failed: %s (%d)\n", what, PMIx_Error_string(rc), (int) rc);
    exit(1);
}

/* ---------- a one-shot latch for asynchronous server calls ---------- */
typedef struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    bool done;
    pmix_status_t status;
} latch_t;

static void latch_init(latch_t *l)
{
    pthread_mutex_init(&l->m, NULL);
    pthread_cond_init(&l->c, NULL);
    l->done = false;
    l->status = PMIX_SUCCESS;
}

static void latch_release(pmix_status_t status, void *cbdata)
{
    latch_t *l = cbdata;
    pthread_mutex_lock(&l->m);
    l->status = status;
    l->done = true;
    pthread_cond_broadcast(&l->c);
    pthread_mutex_unlock(&l->m);
}

static pmix_status_t latch_wait(latch_t *l)
{
    pthread_mutex_lock(&l->m);
    while (!l->done) {
        pthread_cond_wait(&l->c, &l->m);
    }
    pthread_mutex_unlock(&l->m);
    pthread_mutex_destroy(&l->m);
    pthread_cond_destroy(&l->c);
    return l->status;
}

static bool in_job(const pmix_proc_t *proc)
{
    return PMIX_CHECK_NSPACE(proc->nspace, NSPACE) && proc->rank < (pmix_rank_t) nprocs;
}

/* ---------- upcalls ---------- */

static pmix_status_t up_client_connected(const pmix_proc_t *proc, void *server_object,
                                         pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void) server_object;
    pthread_mutex_lock(&lock);
    if (in_job(proc)) {
        connected[proc->rank] = true;
    }
    pthread_mutex_unlock(&lock);
    /* OpenPMIx 4.2 passes no callback here; completing inline is the only answer. */
    if (NULL != cbfunc) {
        cbfunc(PMIX_SUCCESS, cbdata);
        return PMIX_SUCCESS;
    }
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t up_client_finalized(const pmix_proc_t *proc, void *server_object,
                                         pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void) server_object;
    pthread_mutex_lock(&lock);
    if (in_job(proc) && !finalized[proc->rank]) {
        finalized[proc->rank] = true;
        nfinalized++;
    }
    pthread_mutex_unlock(&lock);
    if (NULL != cbfunc) {
        cbfunc(PMIX_SUCCESS, cbdata);
        return PMIX_SUCCESS;
    }
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t up_abort(const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t np,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void) server_object;
    (void) procs;
    (void) np;
    pthread_mutex_lock(&lock);
    if (!aborted) {
        aborted = true;
        abort_status = status;
        abort_rank = (int) proc->rank;
        snprintf(abort_msg, sizeof abort_msg, "%s", NULL == msg ? "" : msg);
    }
    pthread_mutex_unlock(&lock);
    /* The main loop kills every child once it sees the abort; reply first so the caller is
     * released. */
    if (NULL != cbfunc) {
        cbfunc(PMIX_SUCCESS, cbdata);
        return PMIX_SUCCESS;
    }
    return PMIX_OPERATION_SUCCEEDED;
}

/* Held while the modex callback runs and taken by its release function, as Slurm's mpi/pmix
 * collectives do: a server that called the release function inside the callback would wait
 * for this lock forever. */
static pthread_mutex_t fence_lock = PTHREAD_MUTEX_INITIALIZER;

static void release_fence_data(void *cbdata)
{
    pthread_mutex_lock(&fence_lock);
    free(cbdata);
    pthread_mutex_unlock(&fence_lock);
}

static pmix_status_t up_fence_nb(const pmix_proc_t procs[], size_t np, const pmix_info_t info[],
                                 size_t ninfo, char *data, size_t ndata,
                                 pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    (void) procs;
    (void) np;
    (void) info;
    (void) ninfo;
    /* One node: the collective is complete as soon as the local server asks for it, and
     * the collected data is exactly what it contributed. The buffer is now ours. */
    if (NULL != cbfunc) {
        pthread_mutex_lock(&fence_lock);
        cbfunc(PMIX_SUCCESS, data, ndata, cbdata, release_fence_data, data);
        pthread_mutex_unlock(&fence_lock);
    } else {
        free(data);
    }
    return PMIX_SUCCESS;
}

/* Keys the server or the client library adds to publish/lookup/unpublish as directives. */
static bool is_directive(const char *key)
{
    static const char *const directives[] = {
        PMIX_RANGE,   PMIX_PERSISTENCE, PMIX_USERID, PMIX_GRPID,
        PMIX_TIMEOUT, PMIX_WAIT,        PMIX_ACCESS_PERMISSIONS, NULL,
    };
    for (int i = 0; NULL != directives[i]; i++) {
        if (0 == strncmp(key, directives[i], PMIX_MAX_KEYLEN)) {
            return true;
        }
    }
    return false;
}

static pub_entry_t *find_published(const char *key)
{
    for (pub_entry_t *e = published; NULL != e; e = e->next) {
        if (0 == strncmp(e->key, key, PMIX_MAX_KEYLEN)) {
            return e;
        }
    }
    return NULL;
}

/* With lock held: if every key is published, build the answer. */
static bool try_resolve(char **keys, pmix_pdata_t **out, size_t *nout)
{
    size_t n = 0;
    while (NULL != keys[n]) {
        if (NULL == find_published(keys[n])) {
            return false;
        }
        n++;
    }
    pmix_pdata_t *pd = NULL;
    if (n > 0) {
        PMIX_PDATA_CREATE(pd, n);
        for (size_t i = 0; i < n; i++) {
            pub_entry_t *e = find_published(keys[i]);
            PMIX_LOAD_PROCID(&pd[i].proc, e->owner.nspace, e->owner.rank);
            PMIX_LOAD_KEY(pd[i].key, e->key);
            PMIx_Value_xfer(&pd[i].value, &e->value);
        }
    }
    *out = pd;
    *nout = n;
    return true;
}

static void free_keys(char **keys)
{
    if (NULL == keys) {
        return;
    }
    for (size_t i = 0; NULL != keys[i]; i++) {
        free(keys[i]);
    }
    free(keys);
}

typedef struct ready {
    struct ready *next;
    pmix_lookup_cbfunc_t cbfunc;
    void *cbdata;
    pmix_status_t status;
    pmix_pdata_t *pd;
    size_t npd;
} ready_t;

/* With lock held: move every parked lookup that can now be answered (or has expired, when
 * now >= 0) onto *ready. */
static void collect_parked(double now, ready_t **ready)
{
    parked_lookup_t **pp = &parked;
    while (NULL != *pp) {
        parked_lookup_t *pl = *pp;
        pmix_pdata_t *pd = NULL;
        size_t npd = 0;
        pmix_status_t status;
        if (try_resolve(pl->keys, &pd, &npd)) {
            status = PMIX_SUCCESS;
        } else if (now >= 0 && pl->deadline >= 0 && now >= pl->deadline) {
            status = PMIX_ERR_TIMEOUT;
        } else {
            pp = &pl->next;
            continue;
        }
        ready_t *r = calloc(1, sizeof *r);
        r->cbfunc = pl->cbfunc;
        r->cbdata = pl->cbdata;
        r->status = status;
        r->pd = pd;
        r->npd = npd;
        r->next = *ready;
        *ready = r;
        *pp = pl->next;
        free_keys(pl->keys);
        free(pl);
    }
}

/* Without lock: answer the collected lookups. */
static void answer_ready(ready_t *ready)
{
    while (NULL != ready) {
        ready_t *r = ready;
        ready = r->next;
        r->cbfunc(r->status, r->pd, r->npd, r->cbdata);
        if (NULL != r->pd) {
            PMIX_PDATA_FREE(r->pd, r->npd);
        }
        free(r);
    }
}

static pmix_status_t up_publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_status_t status = PMIX_SUCCESS;
    ready_t *ready = NULL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ninfo; i++) {
        if (is_directive(info[i].key)) {
            continue;
        }
        if (NULL != find_published(info[i].key)) {
            status = PMIX_ERR_DUPLICATE_KEY;
            continue;
        }
        pub_entry_t *e = calloc(1, sizeof *e);
        PMIX_LOAD_PROCID(&e->owner, proc->nspace, proc->rank);
        PMIX_LOAD_KEY(e->key, info[i].key);
        PMIx_Value_xfer(&e->value, &info[i].value);
        e->next = published;
        published = e;
    }
    collect_parked(-1, &ready);
    pthread_mutex_unlock(&lock);
    answer_ready(ready);
    if (NULL != cbfunc) {
        cbfunc(status, cbdata);
        return PMIX_SUCCESS;
    }
    return PMIX_SUCCESS == status ? PMIX_OPERATION_SUCCEEDED : status;
}

static pmix_status_t up_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                               size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    bool wait = false;
    double timeout = -1;
    pmix_pdata_t *pd = NULL;
    size_t npd = 0;
    (void) proc;

    if (NULL == cbfunc) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_WAIT)) {
            wait = PMIX_INFO_TRUE(&info[i]);
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT)) {
            long t = 0;
            switch (info[i].value.type) {
            case PMIX_INT:
                t = info[i].value.data.integer;
                break;
            case PMIX_INT32:
                t = info[i].value.data.int32;
                break;
            case PMIX_UINT32:
                t = (long) info[i].value.data.uint32;
                break;
            case PMIX_UINT:
                t = (long) info[i].value.data.uint;
                break;
            default:
                break;
            }
            if (t > 0) {
                timeout = (double) t;
            }
        }
    }
    pthread_mutex_lock(&lock);
    if (NULL != keys && try_resolve(keys, &pd, &npd)) {
        pthread_mutex_unlock(&lock);
        cbfunc(PMIX_SUCCESS, pd, npd, cbdata);
        if (NULL != pd) {
            PMIX_PDATA_FREE(pd, npd);
        }
        return PMIX_SUCCESS;
    }
    if (!wait || NULL == keys) {
        pthread_mutex_unlock(&lock);
        cbfunc(PMIX_ERR_NOT_FOUND, NULL, 0, cbdata);
        return PMIX_SUCCESS;
    }
    /* Park it: the server frees keys and info once we call back, so keep copies. */
    parked_lookup_t *pl = calloc(1, sizeof *pl);
    size_t n = 0;
    while (NULL != keys[n]) {
        n++;
    }
    pl->keys = calloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        pl->keys[i] = strdup(keys[i]);
    }
    pl->deadline = timeout > 0 ? now_s() + timeout : -1;
    pl->cbfunc = cbfunc;
    pl->cbdata = cbdata;
    pl->next = parked;
    parked = pl;
    pthread_mutex_unlock(&lock);
    return PMIX_SUCCESS;
}

static pmix_status_t up_unpublish(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                  size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_status_t status = PMIX_SUCCESS;
    (void) info;
    (void) ninfo;
    pthread_mutex_lock(&lock);
    if (NULL == keys) {
        /* everything this process published */
        pub_entry_t **pp = &published;
        while (NULL != *pp) {
            pub_entry_t *e = *pp;
            if (PMIX_CHECK_PROCID(&e->owner, proc)) {
                *pp = e->next;
                PMIx_Value_destruct(&e->value);
                free(e);
            } else {
                pp = &e->next;
            }
        }
    } else {
        for (size_t k = 0; NULL != keys[k]; k++) {
            bool found = false;
            pub_entry_t **pp = &published;
            while (NULL != *pp) {
                pub_entry_t *e = *pp;
                if (0 == strncmp(e->key, keys[k], PMIX_MAX_KEYLEN)) {
                    *pp = e->next;
                    PMIx_Value_destruct(&e->value);
                    free(e);
                    found = true;
                } else {
                    pp = &e->next;
                }
            }
            if (!found) {
                status = PMIX_ERR_NOT_FOUND;
            }
        }
    }
    pthread_mutex_unlock(&lock);
    if (NULL != cbfunc) {
        cbfunc(status, cbdata);
        return PMIX_SUCCESS;
    }
    return PMIX_SUCCESS == status ? PMIX_OPERATION_SUCCEEDED : status;
}

static pmix_server_module_t module = {
    .client_connected = up_client_connected,
    .client_finalized = up_client_finalized,
    .abort = up_abort,
    .fence_nb = up_fence_nb,
    .publish = up_publish,
    .lookup = up_lookup,
    .unpublish = up_unpublish,
};

/* ---------- job registration ---------- */

static void load_u32(pmix_info_t *info, const char *key, uint32_t v)
{
    PMIx_Info_load(info, key, &v, PMIX_UINT32);
}

static void load_u16(pmix_info_t *info, const char *key, uint16_t v)
{
    PMIx_Info_load(info, key, &v, PMIX_UINT16);
}

static void load_rank(pmix_info_t *info, const char *key, pmix_rank_t v)
{
    PMIx_Info_load(info, key, &v, PMIX_PROC_RANK);
}

static void register_job(const char *hostname, const char *tmpdir)
{
    size_t len = (size_t) nprocs * 12 + 1;
    char *ranks = calloc(len, 1);
    for (int r = 0; r < nprocs; r++) {
        size_t used = strlen(ranks);
        snprintf(ranks + used, len - used, "%s%d", 0 == r ? "" : ",", r);
    }
    char *node_regex = NULL, *proc_regex = NULL;
    pmix_status_t rc = PMIx_generate_regex(hostname, &node_regex);
    if (PMIX_SUCCESS != rc) {
        die("PMIx_generate_regex", rc);
    }
    rc = PMIx_generate_ppn(ranks, &proc_regex);
    if (PMIX_SUCCESS != rc) {
        die("PMIx_generate_ppn", rc);
    }

    const size_t njob = 20;
    size_t ninfo = njob + (size_t) nprocs;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, ninfo);
    size_t i = 0;
    uint32_t n = (uint32_t) nprocs;
    bool no = false;
    /* job realm */
    load_u32(&info[i++], PMIX_JOB_SIZE, n);
    load_u32(&info[i++], PMIX_UNIV_SIZE, n);
    load_u32(&info[i++], PMIX_MAX_PROCS, n);
    load_u32(&info[i++], PMIX_JOB_NUM_APPS, 1);
    load_u32(&info[i++], PMIX_NUM_NODES, 1);
    PMIx_Info_load(&info[i++], PMIX_JOBID, NSPACE, PMIX_STRING);
    PMIx_Info_load(&info[i++], PMIX_SPAWNED, &no, PMIX_BOOL);
    PMIx_Info_load(&info[i++], PMIX_NODE_MAP, node_regex, PMIX_REGEX);
    PMIx_Info_load(&info[i++], PMIX_PROC_MAP, proc_regex, PMIX_REGEX);
    /* session directories (Open MPI puts its own under PMIX_TMPDIR): inside the private
     * directory, which the host removes at exit */
    bool yes = true;
    PMIx_Info_load(&info[i++], PMIX_TMPDIR, tmpdir, PMIX_STRING);
    PMIx_Info_load(&info[i++], PMIX_TDIR_RMCLEAN, &yes, PMIX_BOOL);
    /* node realm (this node) */
    PMIx_Info_load(&info[i++], PMIX_HOSTNAME, hostname, PMIX_STRING);
    load_u32(&info[i++], PMIX_NODEID, 0);
    load_u32(&info[i++], PMIX_NODE_SIZE, n);
    load_u32(&info[i++], PMIX_LOCAL_SIZE, n);
    PMIx_Info_load(&info[i++], PMIX_LOCAL_PEERS, ranks, PMIX_STRING);
    load_rank(&info[i++], PMIX_LOCALLDR, 0);
    /* application realm (app 0) */
    load_u32(&info[i++], PMIX_APPNUM, 0);
    load_u32(&info[i++], PMIX_APP_SIZE, n);
    load_rank(&info[i++], PMIX_APPLDR, 0);
    if (i != njob) {
        fprintf(stderr, "host: internal error: %zu job keys, expected %zu\n", i, njob);
        exit(1);
    }
    /* process realm: one PMIX_PROC_DATA array per rank, PMIX_RANK first */
    for (int r = 0; r < nprocs; r++) {
        pmix_data_array_t *arr;
        const size_t nper = 9;
        PMIX_DATA_ARRAY_CREATE(arr, nper, PMIX_INFO);
        pmix_info_t *pi = arr->array;
        size_t j = 0;
        load_rank(&pi[j++], PMIX_RANK, (pmix_rank_t) r);
        load_rank(&pi[j++], PMIX_GLOBAL_RANK, (pmix_rank_t) r);
        load_rank(&pi[j++], PMIX_APP_RANK, (pmix_rank_t) r);
        load_u16(&pi[j++], PMIX_LOCAL_RANK, (uint16_t) r);
        load_u16(&pi[j++], PMIX_NODE_RANK, (uint16_t) r);
        load_u32(&pi[j++], PMIX_APPNUM, 0);
        PMIx_Info_load(&pi[j++], PMIX_HOSTNAME, hostname, PMIX_STRING);
        load_u32(&pi[j++], PMIX_NODEID, 0);
        pmix_proc_t self;
        PMIX_LOAD_PROCID(&self, NSPACE, (pmix_rank_t) r);
        PMIx_Info_load(&pi[j++], PMIX_PROCID, &self, PMIX_PROC);
        if (j != nper) {
            fprintf(stderr, "host: internal error: %zu proc keys, expected %zu\n", j, nper);
            exit(1);
        }
        PMIX_LOAD_KEY(info[i].key, PMIX_PROC_DATA);
        info[i].value.type = PMIX_DATA_ARRAY;
        info[i].value.data.darray = arr; /* owned by info[] from here */
        i++;
    }

    pmix_nspace_t nspace;
    PMIX_LOAD_NSPACE(nspace, NSPACE);
    latch_t l;
    latch_init(&l);
    rc = PMIx_server_register_nspace(nspace, (int) n, info, ninfo, latch_release, &l);
    if (PMIX_SUCCESS != rc) {
        die("PMIx_server_register_nspace", rc);
    }
    rc = latch_wait(&l);
    if (PMIX_SUCCESS != rc) {
        die("registering the namespace", rc);
    }
    PMIX_INFO_FREE(info, ninfo);
    free(node_regex);
    free(proc_regex);
    free(ranks);
}

/* ---------- children ---------- */

static char **copy_environ(void)
{
    size_t n = 0;
    while (NULL != environ[n]) {
        n++;
    }
    char **env = calloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        env[i] = strdup(environ[i]);
    }
    return env;
}

static void free_env(char **env)
{
    for (size_t i = 0; NULL != env[i]; i++) {
        free(env[i]);
    }
    free(env);
}

static void spawn(int rank, char **argv)
{
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, NSPACE, (pmix_rank_t) rank);

    latch_t l;
    latch_init(&l);
    pmix_status_t rc = PMIx_server_register_client(&proc, getuid(), getgid(), NULL, latch_release,
                                                   &l);
    if (PMIX_SUCCESS != rc) {
        die("PMIx_server_register_client", rc);
    }
    rc = latch_wait(&l);
    if (PMIX_SUCCESS != rc) {
        die("registering a client", rc);
    }
    char **env = copy_environ();
    rc = PMIx_server_setup_fork(&proc, &env);
    if (PMIX_SUCCESS != rc) {
        die("PMIx_server_setup_fork", rc);
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("host: fork");
        exit(1);
    }
    if (0 == pid) {
#ifdef __linux__
        /* never outlive the host */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        environ = env;
        execvp(argv[0], argv);
        fprintf(stderr, "host: cannot execute %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    free_env(env);
    pthread_mutex_lock(&lock);
    pids[rank] = pid;
    pthread_mutex_unlock(&lock);
}

static void kill_children(int sig)
{
    pthread_mutex_lock(&lock);
    for (int r = 0; r < nprocs; r++) {
        if (pids[r] > 0 && !exited[r]) {
            kill(pids[r], sig);
        }
    }
    pthread_mutex_unlock(&lock);
}

/* Reap what has exited; returns the number still running. */
static int reap(void)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        pthread_mutex_lock(&lock);
        for (int r = 0; r < nprocs; r++) {
            if (pids[r] == pid) {
                exited[r] = true;
                statuses[r] = status;
            }
        }
        pthread_mutex_unlock(&lock);
    }
    int running = 0;
    pthread_mutex_lock(&lock);
    for (int r = 0; r < nprocs; r++) {
        if (pids[r] > 0 && !exited[r]) {
            running++;
        }
    }
    pthread_mutex_unlock(&lock);
    return running;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void) sb;
    (void) flag;
    (void) ftw;
    remove(path);
    return 0;
}

static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s -n N [--] PROGRAM [ARGS...]\n", prog);
    exit(2);
}

int main(int argc, char **argv)
{
    int argi = 1;
    while (argi < argc) {
        if (0 == strcmp(argv[argi], "-n") && argi + 1 < argc) {
            nprocs = atoi(argv[argi + 1]);
            argi += 2;
        } else if (0 == strcmp(argv[argi], "--")) {
            argi++;
            break;
        } else if ('-' == argv[argi][0]) {
            usage(argv[0]);
        } else {
            break;
        }
    }
    if (nprocs < 1 || argi >= argc) {
        usage(argv[0]);
    }
    char **child_argv = &argv[argi];

    double timeout = 60;
    const char *t = getenv("HOST_TIMEOUT");
    if (NULL != t && atof(t) > 0) {
        timeout = atof(t);
    }

    pids = calloc((size_t) nprocs, sizeof(pid_t));
    exited = calloc((size_t) nprocs, sizeof(bool));
    statuses = calloc((size_t) nprocs, sizeof(int));
    connected = calloc((size_t) nprocs, sizeof(bool));
    finalized = calloc((size_t) nprocs, sizeof(bool));

    /* A private directory for the server's rendezvous and session files. */
    const char *base = getenv("TMPDIR");
    if (NULL == base || '\0' == base[0]) {
        base = "/tmp";
    }
    char tmpdir[4096];
    snprintf(tmpdir, sizeof tmpdir, "%s/pmixhost.XXXXXX", base);
    if (NULL == mkdtemp(tmpdir)) {
        perror("host: mkdtemp");
        return 1;
    }

    /* Clients must use the hash store (see the header comment). */
    setenv("PMIX_MCA_gds", "hash", 1);

    char hostname[256];
    if (0 != gethostname(hostname, sizeof hostname)) {
        snprintf(hostname, sizeof hostname, "localhost");
    }
    hostname[sizeof hostname - 1] = '\0';

    pmix_info_t sinfo[4];
    pmix_rank_t srank = 0;
    for (int i = 0; i < 4; i++) {
        PMIX_INFO_CONSTRUCT(&sinfo[i]);
    }
    PMIx_Info_load(&sinfo[0], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
    PMIx_Info_load(&sinfo[1], PMIX_SYSTEM_TMPDIR, tmpdir, PMIX_STRING);
    PMIx_Info_load(&sinfo[2], PMIX_SERVER_NSPACE, "hostsrv", PMIX_STRING);
    PMIx_Info_load(&sinfo[3], PMIX_SERVER_RANK, &srank, PMIX_PROC_RANK);
    pmix_status_t rc = PMIx_server_init(&module, sinfo, 4);
    for (int i = 0; i < 4; i++) {
        PMIX_INFO_DESTRUCT(&sinfo[i]);
    }
    if (PMIX_SUCCESS != rc) {
        die("PMIx_server_init", rc);
    }

    register_job(hostname, tmpdir);
    for (int r = 0; r < nprocs; r++) {
        spawn(r, child_argv);
    }

    double deadline = now_s() + timeout;
    bool timed_out = false;
    bool killed_for_abort = false;
    while (reap() > 0) {
        double now = now_s();
        if (now >= deadline) {
            timed_out = true;
            fprintf(stderr, "host: timeout after %g s, killing the job\n", timeout);
            kill_children(SIGKILL);
            while (reap() > 0) {
                usleep(10000);
            }
            break;
        }
        ready_t *ready = NULL;
        pthread_mutex_lock(&lock);
        bool ab = aborted;
        collect_parked(now, &ready);
        pthread_mutex_unlock(&lock);
        answer_ready(ready);
        if (ab && !killed_for_abort) {
            killed_for_abort = true;
            /* give the aborting process a moment to receive its reply */
            usleep(100000);
            kill_children(SIGKILL);
        }
        usleep(10000);
    }

    /* Answer any lookup still parked so the server can release it, then shut down. */
    {
        ready_t *ready = NULL;
        pthread_mutex_lock(&lock);
        for (parked_lookup_t *pl = parked; NULL != pl; pl = pl->next) {
            pl->deadline = 0;
        }
        collect_parked(now_s(), &ready);
        pthread_mutex_unlock(&lock);
        answer_ready(ready);
    }

    int worst = 0;
    int unfinalized = 0, nconnected = 0;
    for (int r = 0; r < nprocs; r++) {
        int code;
        if (WIFEXITED(statuses[r])) {
            code = WEXITSTATUS(statuses[r]);
        } else if (WIFSIGNALED(statuses[r])) {
            code = 128 + WTERMSIG(statuses[r]);
        } else {
            code = 1;
        }
        if (connected[r]) {
            nconnected++;
            if (!finalized[r]) {
                unfinalized++;
                if (!aborted && !timed_out) {
                    fprintf(stderr, "host: rank %d exited without PMIx_Finalize\n", r);
                }
                if (0 == code) {
                    code = 1;
                }
            }
        }
        if (code > worst) {
            worst = code;
        }
    }
    if (aborted) {
        /* the children were killed by us: the abort status is the job's status */
        worst = 0 != (abort_status & 0xff) ? (abort_status & 0xff) : 1;
    }
    if (timed_out) {
        worst = 124;
    }

    rc = PMIx_server_finalize();
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "host: PMIx_server_finalize: %s\n", PMIx_Error_string(rc));
    }
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

    if (aborted) {
        fprintf(stderr, "host: rank %d called PMIx_Abort(%d, \"%s\")\n", abort_rank,
                abort_status, abort_msg);
    }
    fprintf(stderr,
            "host: %d processes, %d connected, %d finalized, %d exited without finalize%s%s, "
            "exit status %d\n",
            nprocs, nconnected, nfinalized, unfinalized, aborted ? ", aborted" : "",
            timed_out ? ", timed out" : "", worst);
    return worst;
}
