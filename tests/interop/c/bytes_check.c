/* Strings are bytes: a C string in another encoding than UTF-8 crosses PMIx unchanged.
 *
 * Run under a PMIx launcher. Each rank puts two PMIX_STRING values that are not UTF-8: a
 * short Latin-1 one ("café" with 0xE9, its rank, and bytes that no UTF-8 reader accepts) and
 * a long one of 6000 such bytes (OpenPMIx's client compresses strings over 4096 bytes on
 * put), commits, fences with the data collected, and gets both of every rank's, which must
 * come back byte for byte as PMIX_STRING. Locally it also packs and unpacks the short one
 * with PMIx_Data_pack/unpack and copies it with PMIx_Data_copy. The strings inside structs
 * are bytes too: each rank puts a PMIX_ENVAR whose name and value are Latin-1 and gets every
 * rank's back, and packs and unpacks a pmix_app_t whose command, argv, environment and
 * working directory are. Prints
 *   ok <step> [details]      or      FAIL <step>: <reason>
 * and exits 0 only if every step passed.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LONG_LEN 6000

static int failures = 0;

static void fail(const char *step, const char *what)
{
    printf("FAIL %s: %s\n", step, what);
    fflush(stdout);
    failures++;
}

static void fail_rc(const char *step, const char *call, pmix_status_t rc)
{
    char what[256];
    snprintf(what, sizeof what, "%s returned %s (%d)", call, PMIx_Error_string(rc), (int) rc);
    fail(step, what);
}

static void short_text(char *out, size_t room, pmix_rank_t rank)
{
    snprintf(out, room, "caf\xe9 rank %u \xff\x80\xc3(", (unsigned) rank);
}

static void long_text(char *out, pmix_rank_t rank)
{
    for (size_t i = 0; i < LONG_LEN; i++) {
        /* Bytes 0x80..0xFF, never NUL, different for each rank. */
        out[i] = (char) (0x80 + ((i * 7 + rank) % 0x80));
    }
    out[LONG_LEN] = '\0';
}

/* The value must be a PMIX_STRING holding exactly `want`. */
static void same_string(const char *step, const pmix_value_t *v, const char *want)
{
    char what[256];
    if (NULL == v) {
        fail(step, "no value");
    } else if (PMIX_STRING != v->type) {
        snprintf(what, sizeof what, "type %s instead of PMIX_STRING",
                 PMIx_Data_type_string(v->type));
        fail(step, what);
    } else if (NULL == v->data.string) {
        fail(step, "NULL string");
    } else if (strlen(v->data.string) != strlen(want)) {
        snprintf(what, sizeof what, "%zu bytes instead of %zu", strlen(v->data.string),
                 strlen(want));
        fail(step, what);
    } else if (0 != memcmp(v->data.string, want, strlen(want))) {
        size_t at = 0;
        while (v->data.string[at] == want[at]) {
            at++;
        }
        snprintf(what, sizeof what, "byte %zu is 0x%02x instead of 0x%02x", at,
                 (unsigned char) v->data.string[at], (unsigned char) want[at]);
        fail(step, what);
    }
}

static void envar_text(char *name, char *value, size_t room, pmix_rank_t rank)
{
    snprintf(name, room, "CAF\xc9_%u", (unsigned) rank);
    snprintf(value, room, "/home/\xe9t\xe9/%u", (unsigned) rank);
}

/* Both strings must be set and equal. */
static int same(const char *a, const char *b)
{
    return NULL != a && NULL != b && 0 == strcmp(a, b);
}

static void pack_app(void)
{
    char cmd[] = "/opt/caf\xe9/bin/run";
    char arg[] = "--na\xefve=\xff\x80";
    char env[] = "CAF\xc9=cr\xe8me";
    char cwd[] = "/tmp/\xe9t\xe9";
    char *argv[] = {cmd, arg, NULL};
    char *envv[] = {env, NULL};
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = cmd;
    app.argv = argv;
    app.env = envv;
    app.cwd = cwd;
    app.maxprocs = 2;
    pmix_data_buffer_t buf;
    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    pmix_status_t rc = PMIx_Data_pack(NULL, &buf, &app, 1, PMIX_APP);
    if (PMIX_SUCCESS != rc) {
        fail_rc("app pack", "PMIx_Data_pack(PMIX_APP)", rc);
        PMIX_DATA_BUFFER_DESTRUCT(&buf);
        return;
    }
    pmix_app_t *out;
    PMIX_APP_CREATE(out, 1);
    int32_t n = 1;
    rc = PMIx_Data_unpack(NULL, &buf, out, &n, PMIX_APP);
    if (PMIX_SUCCESS != rc) {
        fail_rc("app unpack", "PMIx_Data_unpack(PMIX_APP)", rc);
    } else if (!same(out->cmd, cmd) || NULL == out->argv || !same(out->argv[0], cmd)
               || !same(out->argv[1], arg) || NULL != out->argv[2] || NULL == out->env
               || !same(out->env[0], env) || !same(out->cwd, cwd) || 2 != out->maxprocs) {
        fail("app unpack", "the unpacked app's strings differ from the packed ones");
    } else {
        printf("ok app pack and unpack keep its strings' bytes\n");
    }
    PMIX_APP_FREE(out, 1);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
}

static void pack_and_copy(const char *text)
{
    pmix_data_buffer_t buf;
    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    char *in = (char *) text;
    pmix_status_t rc = PMIx_Data_pack(NULL, &buf, &in, 1, PMIX_STRING);
    if (PMIX_SUCCESS != rc) {
        fail_rc("data pack", "PMIx_Data_pack", rc);
        PMIX_DATA_BUFFER_DESTRUCT(&buf);
        return;
    }
    char *out = NULL;
    int32_t n = 1;
    rc = PMIx_Data_unpack(NULL, &buf, &out, &n, PMIX_STRING);
    if (PMIX_SUCCESS != rc) {
        fail_rc("data unpack", "PMIx_Data_unpack", rc);
    } else if (NULL == out || 0 != strcmp(out, text)) {
        fail("data unpack", "the unpacked string differs from the packed one");
    } else {
        printf("ok data pack and unpack keep %zu bytes\n", strlen(out));
    }
    free(out);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);

    char *copy = NULL;
    rc = PMIx_Data_copy((void **) &copy, (void *) text, PMIX_STRING);
    if (PMIX_SUCCESS != rc) {
        fail_rc("data copy", "PMIx_Data_copy", rc);
    } else if (NULL == copy || 0 != strcmp(copy, text)) {
        fail("data copy", "the copy differs from the original");
    } else {
        printf("ok data copy keeps the bytes\n");
    }
    free(copy);
}

int main(void)
{
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fail_rc("init", "PMIx_Init", rc);
        return 1;
    }
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *size_v = NULL;
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &size_v);
    if (PMIX_SUCCESS != rc || NULL == size_v) {
        fail_rc("job size", "PMIx_Get(PMIX_JOB_SIZE)", rc);
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    uint32_t size = size_v->data.uint32;
    PMIX_VALUE_RELEASE(size_v);
    printf("ok rank %u runs on %s\n", (unsigned) me.rank, PMIx_Get_version());

    char mine[64];
    short_text(mine, sizeof mine, me.rank);
    static char mine_long[LONG_LEN + 1];
    long_text(mine_long, me.rank);
    pack_and_copy(mine);

    pack_app();

    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, mine, PMIX_STRING);
    rc = PMIx_Put(PMIX_GLOBAL, "bytes.short", &v);
    PMIX_VALUE_DESTRUCT(&v);
    if (PMIX_SUCCESS == rc) {
        char name[64], value[64];
        envar_text(name, value, sizeof name, me.rank);
        pmix_envar_t envar = {.envar = name, .value = value, .separator = ':'};
        PMIX_VALUE_LOAD(&v, &envar, PMIX_ENVAR);
        rc = PMIx_Put(PMIX_GLOBAL, "bytes.envar", &v);
        PMIX_VALUE_DESTRUCT(&v);
    }
    if (PMIX_SUCCESS == rc) {
        PMIX_VALUE_LOAD(&v, mine_long, PMIX_STRING);
        rc = PMIx_Put(PMIX_GLOBAL, "bytes.long", &v);
        PMIX_VALUE_DESTRUCT(&v);
    }
    if (PMIX_SUCCESS == rc) {
        rc = PMIx_Commit();
    }
    if (PMIX_SUCCESS != rc) {
        fail_rc("put", "PMIx_Put/PMIx_Commit", rc);
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(&job, 1, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    if (PMIX_SUCCESS != rc) {
        fail_rc("fence", "PMIx_Fence", rc);
        PMIx_Finalize(NULL, 0);
        return 1;
    }

    for (uint32_t r = 0; r < size; r++) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        char want[64];
        short_text(want, sizeof want, r);
        static char want_long[LONG_LEN + 1];
        long_text(want_long, r);
        const char *keys[2] = {"bytes.short", "bytes.long"};
        const char *wants[2] = {want, want_long};
        for (int k = 0; k < 2; k++) {
            char step[64];
            snprintf(step, sizeof step, "get %s of rank %u", keys[k], (unsigned) r);
            pmix_value_t *got = NULL;
            rc = PMIx_Get(&peer, keys[k], NULL, 0, &got);
            if (PMIX_SUCCESS != rc) {
                fail_rc(step, "PMIx_Get", rc);
                continue;
            }
            int before = failures;
            same_string(step, got, wants[k]);
            if (before == failures) {
                printf("ok %s: %zu bytes as put\n", step, strlen(wants[k]));
            }
            PMIX_VALUE_RELEASE(got);
        }
        char step[64], name[64], value[64];
        snprintf(step, sizeof step, "get bytes.envar of rank %u", (unsigned) r);
        envar_text(name, value, sizeof name, r);
        pmix_value_t *got = NULL;
        rc = PMIx_Get(&peer, "bytes.envar", NULL, 0, &got);
        if (PMIX_SUCCESS != rc) {
            fail_rc(step, "PMIx_Get", rc);
        } else if (PMIX_ENVAR != got->type || !same(got->data.envar.envar, name)
                   || !same(got->data.envar.value, value) || ':' != got->data.envar.separator) {
            fail(step, "not the PMIX_ENVAR as put");
        } else {
            printf("ok %s: name and value as put\n", step);
        }
        if (NULL != got) {
            PMIX_VALUE_RELEASE(got);
        }
    }

    rc = PMIx_Finalize(NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fail_rc("finalize", "PMIx_Finalize", rc);
    }
    fflush(stdout);
    return failures ? 1 : 0;
}
