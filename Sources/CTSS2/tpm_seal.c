// Sealing a key-file's wrapping key to a TPM through tpm2-tss's ESAPI: the TSS marshals every
// command; this file only fills in the templates and keeps the handles tidy. It is C because
// the TPM's structures are deeply nested unions that Swift imports as tuples.
#include "tpm_seal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_tctildr.h>

#include "sealkit_library.h"

/* tpm2-tss is opened on the first TPM call (CLibraryLoader), not linked: a command that uses no TPM does not
 * load it (start-up time). These are the functions this file calls, with the TSS headers' types. */
static const char *const esys_names[] = {
    "Esys_Initialize", "Esys_Finalize", "Esys_Free", "Esys_FlushContext", "Esys_TR_SetAuth", "Esys_TR_GetName",
    "Esys_TRSess_SetAttributes", "Esys_StartAuthSession", "Esys_CreatePrimary", "Esys_Create", "Esys_Load",
    "Esys_Unseal", "Esys_GetCapability",
};
static const char *const tctildr_names[] = {"Tss2_TctiLdr_Initialize", "Tss2_TctiLdr_Finalize"};
static const char *const mu_names[] = {
    "Tss2_MU_TPM2B_PUBLIC_Marshal", "Tss2_MU_TPM2B_PUBLIC_Unmarshal", "Tss2_MU_TPM2B_PRIVATE_Marshal",
    "Tss2_MU_TPM2B_PRIVATE_Unmarshal",
};
#define COUNT(names) (sizeof names / sizeof names[0])
static void *esys_addresses[COUNT(esys_names)], *tctildr_addresses[COUNT(tctildr_names)], *mu_addresses[COUNT(mu_names)];
static sealkit_library esys = {"libtss2-esys.so.0", "libtss2-esys-3.0.2-0", esys_names, esys_addresses, COUNT(esys_names), 0, 0, {0}};
static sealkit_library tctildr = {"libtss2-tctildr.so.0", "libtss2-tctildr0", tctildr_names, tctildr_addresses, COUNT(tctildr_names), 0, 0, {0}};
static sealkit_library mu = {"libtss2-mu.so.0", "libtss2-mu0", mu_names, mu_addresses, COUNT(mu_names), 0, 0, {0}};
#define CALL(addresses, index, function) ((__typeof__(function) *)addresses[index])
#define Esys_Initialize CALL(esys_addresses, 0, Esys_Initialize)
#define Esys_Finalize CALL(esys_addresses, 1, Esys_Finalize)
#define Esys_Free CALL(esys_addresses, 2, Esys_Free)
#define Esys_FlushContext CALL(esys_addresses, 3, Esys_FlushContext)
#define Esys_TR_SetAuth CALL(esys_addresses, 4, Esys_TR_SetAuth)
#define Esys_TR_GetName CALL(esys_addresses, 5, Esys_TR_GetName)
#define Esys_TRSess_SetAttributes CALL(esys_addresses, 6, Esys_TRSess_SetAttributes)
#define Esys_StartAuthSession CALL(esys_addresses, 7, Esys_StartAuthSession)
#define Esys_CreatePrimary CALL(esys_addresses, 8, Esys_CreatePrimary)
#define Esys_Create CALL(esys_addresses, 9, Esys_Create)
#define Esys_Load CALL(esys_addresses, 10, Esys_Load)
#define Esys_Unseal CALL(esys_addresses, 11, Esys_Unseal)
#define Esys_GetCapability CALL(esys_addresses, 12, Esys_GetCapability)
#define Tss2_TctiLdr_Initialize CALL(tctildr_addresses, 0, Tss2_TctiLdr_Initialize)
#define Tss2_TctiLdr_Finalize CALL(tctildr_addresses, 1, Tss2_TctiLdr_Finalize)
#define Tss2_MU_TPM2B_PUBLIC_Marshal CALL(mu_addresses, 0, Tss2_MU_TPM2B_PUBLIC_Marshal)
#define Tss2_MU_TPM2B_PUBLIC_Unmarshal CALL(mu_addresses, 1, Tss2_MU_TPM2B_PUBLIC_Unmarshal)
#define Tss2_MU_TPM2B_PRIVATE_Marshal CALL(mu_addresses, 2, Tss2_MU_TPM2B_PRIVATE_Marshal)
#define Tss2_MU_TPM2B_PRIVATE_Unmarshal CALL(mu_addresses, 3, Tss2_MU_TPM2B_PRIVATE_Unmarshal)

/* The three libraries, each opened once: the loader's line for the first that cannot be, or NULL. */
static const char *tss_missing(void) {
    sealkit_library *libraries[] = {&tctildr, &mu, &esys};
    for (size_t index = 0; index < 3; index++) {
        if (sealkit_library_load(libraries[index]) != 0) return libraries[index]->error;
    }
    return NULL;
}

static int load_tss(void) { return tss_missing() == NULL ? 0 : -1; }

const char *sealkit_tpm_library_error(void) {
    const char *missing = tss_missing();
    return missing != NULL ? missing : "";
}

struct tpm {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *esys;
    ESYS_TR primary;
    ESYS_TR session;
    ESYS_TR object;
};

static void close_tpm(struct tpm *tpm) {
    // Loaded objects outlive the process in the TPM (it has few slots): flush on every path.
    if (tpm->object != ESYS_TR_NONE) Esys_FlushContext(tpm->esys, tpm->object);
    if (tpm->session != ESYS_TR_NONE) Esys_FlushContext(tpm->esys, tpm->session);
    if (tpm->primary != ESYS_TR_NONE) Esys_FlushContext(tpm->esys, tpm->primary);
    if (tpm->esys) Esys_Finalize(&tpm->esys);
    if (tpm->tcti) Tss2_TctiLdr_Finalize(&tpm->tcti);
}

/// A status for a response code: the TPM's own format-1 and warning codes, with the
/// parameter, handle or session number masked off.
static int status_for(TSS2_RC rc, uint32_t *tpm_rc) {
    *tpm_rc = rc;
    if ((rc & TSS2_RC_LAYER_MASK) != TSS2_TPM_RC_LAYER) {
        // The TSS's own layers: a TCTI that cannot talk to the TPM.
        TSS2_RC base = rc & ~TSS2_RC_LAYER_MASK;
        if ((rc & TSS2_RC_LAYER_MASK) == TSS2_TCTI_RC_LAYER || base == TSS2_BASE_RC_IO_ERROR || base == TSS2_BASE_RC_NO_CONNECTION
            || base == TSS2_BASE_RC_TRY_AGAIN)
            return SEALKIT_TPM_UNAVAILABLE;
        return SEALKIT_TPM_FAILED;
    }
    if (rc & TPM2_RC_FMT1) {
        TSS2_RC code = rc & (TPM2_RC_FMT1 | 0x3F);
        if (code == TPM2_RC_AUTH_FAIL || code == TPM2_RC_BAD_AUTH) return SEALKIT_TPM_WRONG_PIN;
        if (code == TPM2_RC_INTEGRITY || code == TPM2_RC_SIZE || code == TPM2_RC_VALUE || code == TPM2_RC_KEY_SIZE
            || code == TPM2_RC_BINDING)
            return SEALKIT_TPM_DAMAGED;
        return SEALKIT_TPM_FAILED;
    }
    if ((rc & 0xFFF) == TPM2_RC_LOCKOUT) return SEALKIT_TPM_LOCKOUT;
    if ((rc & 0xFFF) == TPM2_RC_OBJECT_MEMORY || (rc & 0xFFF) == TPM2_RC_SESSION_MEMORY) return SEALKIT_TPM_FULL;
    return SEALKIT_TPM_FAILED;
}

/// Connects, re-creates the storage primary key (ECC P-256, AES-128-CFB, the TCG's storage key
/// template: deterministic, so the same TPM always makes the same key and nothing stays loaded),
/// and starts an HMAC session salted with that key, encrypting the first parameter each way.
static int connect_tpm(const char *tcti, struct tpm *tpm, uint32_t *tpm_rc) {
    memset(tpm, 0, sizeof *tpm);
    tpm->primary = tpm->session = tpm->object = ESYS_TR_NONE;
    TSS2_RC rc = Tss2_TctiLdr_Initialize(tcti, &tpm->tcti);
    if (rc != TSS2_RC_SUCCESS) { *tpm_rc = rc; return SEALKIT_TPM_UNAVAILABLE; }
    rc = Esys_Initialize(&tpm->esys, tpm->tcti, NULL);
    if (rc != TSS2_RC_SUCCESS) { *tpm_rc = rc; return SEALKIT_TPM_UNAVAILABLE; }
    return SEALKIT_TPM_OK;
}

static int open_tpm(const char *tcti, struct tpm *tpm, TPM2B_NAME **name, uint32_t *tpm_rc) {
    int status = connect_tpm(tcti, tpm, tpm_rc);
    if (status != SEALKIT_TPM_OK) return status;
    TSS2_RC rc;

    TPM2B_SENSITIVE_CREATE sensitive = {0};
    TPM2B_PUBLIC template = {
        .publicArea = {
            .type = TPM2_ALG_ECC,
            .nameAlg = TPM2_ALG_SHA256,
            .objectAttributes = TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_FIXEDTPM
                | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_NODA,
            .parameters.eccDetail = {
                .symmetric = {.algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB},
                .scheme = {.scheme = TPM2_ALG_NULL},
                .curveID = TPM2_ECC_NIST_P256,
                .kdf = {.scheme = TPM2_ALG_NULL},
            },
        },
    };
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION pcrs = {0};
    rc = Esys_CreatePrimary(tpm->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template,
                            &outside, &pcrs, &tpm->primary, NULL, NULL, NULL, NULL);
    if (rc != TSS2_RC_SUCCESS) return status_for(rc, tpm_rc);
    rc = Esys_TR_GetName(tpm->esys, tpm->primary, name);
    if (rc != TSS2_RC_SUCCESS) return status_for(rc, tpm_rc);

    TPMT_SYM_DEF symmetric = {.algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB};
    rc = Esys_StartAuthSession(tpm->esys, tpm->primary, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL,
                               TPM2_SE_HMAC, &symmetric, TPM2_ALG_SHA256, &tpm->session);
    if (rc != TSS2_RC_SUCCESS) return status_for(rc, tpm_rc);
    rc = Esys_TRSess_SetAttributes(tpm->esys, tpm->session,
                                   TPMA_SESSION_DECRYPT | TPMA_SESSION_ENCRYPT | TPMA_SESSION_CONTINUESESSION, 0xFF);
    if (rc != TSS2_RC_SUCCESS) return status_for(rc, tpm_rc);
    return SEALKIT_TPM_OK;
}

static int set_pin(TPM2B_AUTH *auth, const uint8_t *pin, size_t pin_len) {
    memset(auth, 0, sizeof *auth);
    if (pin_len > sizeof auth->buffer) return 0;
    auth->size = (UINT16)pin_len;
    if (pin_len) memcpy(auth->buffer, pin, pin_len);
    return 1;
}

static int seal_now(const char *tcti, const uint8_t *pin, size_t pin_len, const uint8_t *data, size_t data_len,
                    uint8_t *blob, size_t *blob_len, uint8_t *name, size_t *name_len, uint32_t *tpm_rc) {
    *tpm_rc = 0;
    struct tpm tpm;
    TPM2B_NAME *primary_name = NULL;
    TPM2B_PUBLIC *public = NULL;
    TPM2B_PRIVATE *private = NULL;
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    int status = open_tpm(tcti, &tpm, &primary_name, tpm_rc);
    if (status != SEALKIT_TPM_OK) goto done;
    if (data_len > sizeof sensitive.sensitive.data.buffer || !set_pin(&sensitive.sensitive.userAuth, pin, pin_len)
        || primary_name->size > *name_len) {
        status = SEALKIT_TPM_FAILED;
        goto done;
    }
    sensitive.sensitive.data.size = (UINT16)data_len;
    memcpy(sensitive.sensitive.data.buffer, data, data_len);
    // A sealed data object: no sign or decrypt use, opened only by TPM2_Unseal with the PIN. Without a PIN
    // there is nothing to guess, so the object is kept out of the dictionary-attack lockout (noDA): wrong PINs
    // for other keys must not lock it too.
    TPM2B_PUBLIC template = {
        .publicArea = {
            .type = TPM2_ALG_KEYEDHASH,
            .nameAlg = TPM2_ALG_SHA256,
            .objectAttributes = TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT
                | (pin_len == 0 ? TPMA_OBJECT_NODA : 0),
            .parameters.keyedHashDetail.scheme = {.scheme = TPM2_ALG_NULL},
        },
    };
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION pcrs = {0};
    TSS2_RC rc = Esys_Create(tpm.esys, tpm.primary, tpm.session, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outside,
                             &pcrs, &private, &public, NULL, NULL, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        status = status_for(rc, tpm_rc);
        goto done;
    }
    size_t offset = 0;
    rc = Tss2_MU_TPM2B_PUBLIC_Marshal(public, blob, *blob_len, &offset);
    if (rc == TSS2_RC_SUCCESS) rc = Tss2_MU_TPM2B_PRIVATE_Marshal(private, blob, *blob_len, &offset);
    if (rc != TSS2_RC_SUCCESS) {
        status = SEALKIT_TPM_FAILED;
        *tpm_rc = rc;
        goto done;
    }
    *blob_len = offset;
    memcpy(name, primary_name->name, primary_name->size);
    *name_len = primary_name->size;
done:
    explicit_bzero(&sensitive, sizeof sensitive);
    Esys_Free(primary_name);
    Esys_Free(public);
    Esys_Free(private);
    close_tpm(&tpm);
    return status;
}

static int unseal_now(const char *tcti, const uint8_t *pin, size_t pin_len, const uint8_t *blob, size_t blob_len,
                      const uint8_t *name, size_t name_len, uint8_t *out, size_t out_len, uint32_t *tpm_rc) {
    *tpm_rc = 0;
    TPM2B_PUBLIC public = {0};
    TPM2B_PRIVATE private = {0};
    size_t offset = 0;
    if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(blob, blob_len, &offset, &public) != TSS2_RC_SUCCESS
        || Tss2_MU_TPM2B_PRIVATE_Unmarshal(blob, blob_len, &offset, &private) != TSS2_RC_SUCCESS || offset != blob_len)
        return SEALKIT_TPM_DAMAGED;
    struct tpm tpm;
    TPM2B_NAME *primary_name = NULL;
    TPM2B_SENSITIVE_DATA *data = NULL;
    TPM2B_AUTH auth;
    int status = open_tpm(tcti, &tpm, &primary_name, tpm_rc);
    if (status != SEALKIT_TPM_OK) goto done;
    // A primary key of another name: this TPM's storage seed is not the one the key was sealed under.
    if (primary_name->size != name_len || memcmp(primary_name->name, name, name_len) != 0) {
        status = SEALKIT_TPM_OTHER_TPM;
        goto done;
    }
    TSS2_RC rc = Esys_Load(tpm.esys, tpm.primary, tpm.session, ESYS_TR_NONE, ESYS_TR_NONE, &private, &public, &tpm.object);
    if (rc != TSS2_RC_SUCCESS) {
        status = status_for(rc, tpm_rc);
        // A blob that does not load under the right primary key was changed.
        if (status == SEALKIT_TPM_FAILED || status == SEALKIT_TPM_WRONG_PIN) status = SEALKIT_TPM_DAMAGED;
        goto done;
    }
    if (!set_pin(&auth, pin, pin_len)) {
        status = SEALKIT_TPM_WRONG_PIN;
        goto done;
    }
    rc = Esys_TR_SetAuth(tpm.esys, tpm.object, &auth);
    explicit_bzero(&auth, sizeof auth);
    if (rc != TSS2_RC_SUCCESS) {
        status = status_for(rc, tpm_rc);
        goto done;
    }
    rc = Esys_Unseal(tpm.esys, tpm.object, tpm.session, ESYS_TR_NONE, ESYS_TR_NONE, &data);
    if (rc != TSS2_RC_SUCCESS) {
        status = status_for(rc, tpm_rc);
        goto done;
    }
    if (data->size != out_len) {
        status = SEALKIT_TPM_DAMAGED;
        goto done;
    }
    memcpy(out, data->buffer, out_len);
done:
    if (data) explicit_bzero(data, sizeof *data);
    Esys_Free(data);
    Esys_Free(primary_name);
    if (tpm.object != ESYS_TR_NONE) {
        // The object's copy of the PIN in the ESAPI context.
        TPM2B_AUTH empty = {0};
        Esys_TR_SetAuth(tpm.esys, tpm.object, &empty);
    }
    close_tpm(&tpm);
    return status;
}

/// The TPM's dictionary-attack counters: failedTries, maxTries, recoveryTime (the lockout interval) and
/// lockoutRecovery, in that order (TPM2_PT_LOCKOUT_COUNTER .. TPM2_PT_LOCKOUT_RECOVERY).
static int lockout_now(const char *tcti, uint32_t counters[4], uint32_t *tpm_rc) {
    *tpm_rc = 0;
    struct tpm tpm;
    TPMS_CAPABILITY_DATA *data = NULL;
    int status = connect_tpm(tcti, &tpm, tpm_rc);
    if (status != SEALKIT_TPM_OK) goto done;
    TPMI_YES_NO more = 0;
    TSS2_RC rc = Esys_GetCapability(tpm.esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES,
                                    TPM2_PT_LOCKOUT_COUNTER, 4, &more, &data);
    if (rc != TSS2_RC_SUCCESS) {
        status = status_for(rc, tpm_rc);
        goto done;
    }
    int found = 0;
    for (UINT32 index = 0; index < data->data.tpmProperties.count && index < TPM2_MAX_TPM_PROPERTIES; index++) {
        TPMS_TAGGED_PROPERTY property = data->data.tpmProperties.tpmProperty[index];
        if (property.property >= TPM2_PT_LOCKOUT_COUNTER && property.property <= TPM2_PT_LOCKOUT_RECOVERY) {
            counters[property.property - TPM2_PT_LOCKOUT_COUNTER] = property.value;
            found |= 1 << (property.property - TPM2_PT_LOCKOUT_COUNTER);
        }
    }
    if ((found & 3) != 3) status = SEALKIT_TPM_FAILED;
done:
    Esys_Free(data);
    close_tpm(&tpm);
    return status;
}

/* Every TPM call runs on a thread of its own while the caller waits at most its deadline: tpm2-tss's socket
 * TCTIs block in recv() whatever timeout ESYS is given, and a TCP connect can wait for minutes. At the deadline
 * the caller returns SEALKIT_TPM_TIMEOUT and leaves the thread the job, which holds its own copies of every
 * input and output: nothing the caller owns is touched afterwards, and the thread zeroes and frees the job
 * whenever the TPM (or the connection's end) lets it finish. */
enum job_kind { JOB_SEAL, JOB_UNSEAL, JOB_LOCKOUT };

struct job {
    pthread_mutex_t lock;
    pthread_cond_t finished_signal;
    int references;
    int finished;
    enum job_kind kind;
    char *tcti;
    uint8_t pin[64];
    size_t pin_len;
    uint8_t data[128];
    size_t data_len;
    uint8_t blob[SEALKIT_TPM_BLOB_MAX];
    size_t blob_len;
    uint8_t name[SEALKIT_TPM_NAME_MAX];
    size_t name_len;
    uint8_t out[128];
    size_t out_len;
    uint32_t counters[4];
    int status;
    uint32_t tpm_rc;
};

static void release_job(struct job *job) {
    pthread_mutex_lock(&job->lock);
    int left = --job->references;
    pthread_mutex_unlock(&job->lock);
    if (left > 0) return;
    pthread_mutex_destroy(&job->lock);
    pthread_cond_destroy(&job->finished_signal);
    free(job->tcti);
    explicit_bzero(job, sizeof *job);
    free(job);
}

static void *run_job(void *argument) {
    struct job *job = argument;
    switch (job->kind) {
    case JOB_SEAL:
        job->status = seal_now(job->tcti, job->pin, job->pin_len, job->data, job->data_len, job->blob, &job->blob_len, job->name,
                               &job->name_len, &job->tpm_rc);
        break;
    case JOB_UNSEAL:
        job->status = unseal_now(job->tcti, job->pin, job->pin_len, job->blob, job->blob_len, job->name, job->name_len, job->out,
                                 job->out_len, &job->tpm_rc);
        break;
    case JOB_LOCKOUT:
        job->status = lockout_now(job->tcti, job->counters, &job->tpm_rc);
        break;
    }
    explicit_bzero(job->pin, sizeof job->pin);
    explicit_bzero(job->data, sizeof job->data);
    pthread_mutex_lock(&job->lock);
    job->finished = 1;
    pthread_cond_signal(&job->finished_signal);
    pthread_mutex_unlock(&job->lock);
    release_job(job);
    return NULL;
}

static struct job *new_job(enum job_kind kind, const char *tcti) {
    struct job *job = calloc(1, sizeof *job);
    if (job == NULL) return NULL;
    job->tcti = strdup(tcti);
    pthread_condattr_t attributes;
    if (job->tcti == NULL || pthread_condattr_init(&attributes) != 0) {
        free(job->tcti);
        free(job);
        return NULL;
    }
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&job->finished_signal, &attributes);
    pthread_condattr_destroy(&attributes);
    pthread_mutex_init(&job->lock, NULL);
    job->kind = kind;
    job->references = 1;
    return job;
}

/// Runs `job` for at most `timeout_ms` milliseconds: its status, or SEALKIT_TPM_TIMEOUT (the job then left to
/// its thread). The caller keeps its reference either way and releases it.
static int run_bounded(struct job *job, uint32_t timeout_ms) {
    // The TSS logs to stderr by default; SealKit says what went wrong in one line of its own. Set here, on the
    // caller's thread, before any thread of ours reads the environment.
    setenv("TSS2_LOG", "all+NONE", 0);
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0) return SEALKIT_TPM_FAILED;
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    job->references = 2;
    if (pthread_create(&thread, &attributes, run_job, job) != 0) {
        job->references = 1;
        pthread_attr_destroy(&attributes);
        return SEALKIT_TPM_FAILED;
    }
    pthread_attr_destroy(&attributes);
    pthread_mutex_lock(&job->lock);
    int waited = 0;
    while (!job->finished && waited != ETIMEDOUT) waited = pthread_cond_timedwait(&job->finished_signal, &job->lock, &deadline);
    int status = job->finished ? job->status : SEALKIT_TPM_TIMEOUT;
    pthread_mutex_unlock(&job->lock);
    return status;
}

int sealkit_tpm_seal(const char *tcti, uint32_t timeout_ms, const uint8_t *pin, size_t pin_len, const uint8_t *data,
                     size_t data_len, uint8_t *blob, size_t *blob_len, uint8_t *name, size_t *name_len, uint32_t *tpm_rc) {
    *tpm_rc = 0;
    if (load_tss() != 0) return SEALKIT_TPM_NO_LIBRARY;
    struct job *job = new_job(JOB_SEAL, tcti);
    if (job == NULL) return SEALKIT_TPM_FAILED;
    int status = SEALKIT_TPM_FAILED;
    if (pin_len <= sizeof job->pin && data_len <= sizeof job->data) {
        if (pin_len) memcpy(job->pin, pin, pin_len);
        job->pin_len = pin_len;
        memcpy(job->data, data, data_len);
        job->data_len = data_len;
        job->blob_len = sizeof job->blob;
        job->name_len = sizeof job->name;
        status = run_bounded(job, timeout_ms);
        if (status == SEALKIT_TPM_OK && (job->blob_len > *blob_len || job->name_len > *name_len)) status = SEALKIT_TPM_FAILED;
        if (status == SEALKIT_TPM_OK) {
            memcpy(blob, job->blob, job->blob_len);
            *blob_len = job->blob_len;
            memcpy(name, job->name, job->name_len);
            *name_len = job->name_len;
        }
        if (status != SEALKIT_TPM_TIMEOUT) *tpm_rc = job->tpm_rc;
    }
    release_job(job);
    return status;
}

int sealkit_tpm_unseal(const char *tcti, uint32_t timeout_ms, const uint8_t *pin, size_t pin_len, const uint8_t *blob,
                       size_t blob_len, const uint8_t *name, size_t name_len, uint8_t *out, size_t out_len, uint32_t *tpm_rc) {
    *tpm_rc = 0;
    if (load_tss() != 0) return SEALKIT_TPM_NO_LIBRARY;
    struct job *job = new_job(JOB_UNSEAL, tcti);
    if (job == NULL) return SEALKIT_TPM_FAILED;
    int status = SEALKIT_TPM_FAILED;
    if (pin_len > sizeof job->pin) {
        status = SEALKIT_TPM_WRONG_PIN;
    } else if (blob_len > sizeof job->blob || name_len > sizeof job->name || out_len > sizeof job->out) {
        status = SEALKIT_TPM_DAMAGED;
    } else {
        if (pin_len) memcpy(job->pin, pin, pin_len);
        job->pin_len = pin_len;
        memcpy(job->blob, blob, blob_len);
        job->blob_len = blob_len;
        memcpy(job->name, name, name_len);
        job->name_len = name_len;
        job->out_len = out_len;
        status = run_bounded(job, timeout_ms);
        if (status == SEALKIT_TPM_OK) memcpy(out, job->out, out_len);
        if (status != SEALKIT_TPM_TIMEOUT) *tpm_rc = job->tpm_rc;
    }
    release_job(job);
    return status;
}

int sealkit_tpm_lockout(const char *tcti, uint32_t timeout_ms, uint32_t *failures, uint32_t *maximum, uint32_t *interval,
                        uint32_t *recovery, uint32_t *tpm_rc) {
    *tpm_rc = 0;
    if (load_tss() != 0) return SEALKIT_TPM_NO_LIBRARY;
    struct job *job = new_job(JOB_LOCKOUT, tcti);
    if (job == NULL) return SEALKIT_TPM_FAILED;
    int status = run_bounded(job, timeout_ms);
    if (status == SEALKIT_TPM_OK) {
        *failures = job->counters[0];
        *maximum = job->counters[1];
        *interval = job->counters[2];
        *recovery = job->counters[3];
    }
    if (status != SEALKIT_TPM_TIMEOUT) *tpm_rc = job->tpm_rc;
    release_job(job);
    return status;
}
