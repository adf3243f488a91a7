/*
 * The C peer for Scripts/bench: SealKit's field pipeline written directly against
 * libsodium, with no wrapper at all. crypto_secretbox_easy with a fresh
 * randombytes_buf nonce, then libsodium's own (constant-time) base64; the reverse
 * to decrypt. Like SealKit's encrypt/decrypt, every call returns a newly allocated
 * result (and frees it); scratch space for the binary box is reused.
 *
 *   sealbench ops SIZE KEYFILE        time encrypt and decrypt of a SIZE-byte value;
 *                                     prints one JSON line per operation
 *   sealbench lines KEYFILE           encrypt each stdin line to one stdout line,
 *                                     like `sealkit encrypt --lines`
 *
 * KEYFILE holds the key as standard base64 on its first line.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARMUP_NS 200000000.0
#define REP_NS 250000000.0
#define REPS 7
#define VARIANT sodium_base64_VARIANT_ORIGINAL

static unsigned char key[crypto_secretbox_KEYBYTES];

static void die(const char *message) {
    fprintf(stderr, "sealbench: %s\n", message);
    exit(2);
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void read_key(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open the key file");
    char text[128];
    if (!fgets(text, sizeof text, f)) die("cannot read the key file");
    fclose(f);
    size_t length = 0;
    if (sodium_base642bin(key, sizeof key, text, strcspn(text, "\r\n"), NULL, &length, NULL, VARIANT) != 0
        || length != sizeof key)
        die("the key file does not hold a base64 32-byte key");
}

/* Scratch for the binary box, grown as needed and reused. */
static unsigned char *box;
static size_t box_capacity;

static void ensure_box(size_t size) {
    if (size <= box_capacity) return;
    box = realloc(box, size);
    if (!box) die("out of memory");
    box_capacity = size;
}

/* Encrypts `length` bytes; returns a new NUL-terminated base64 string of `*text_length` chars. */
static char *encrypt_value(const unsigned char *plaintext, size_t length, size_t *text_length) {
    size_t sealed = crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES + length;
    ensure_box(sealed);
    randombytes_buf(box, crypto_secretbox_NONCEBYTES);
    crypto_secretbox_easy(box + crypto_secretbox_NONCEBYTES, plaintext, length, box, key);
    size_t capacity = sodium_base64_ENCODED_LEN(sealed, VARIANT);
    char *text = malloc(capacity);
    if (!text) die("out of memory");
    sodium_bin2base64(text, capacity, box, sealed, VARIANT);
    *text_length = capacity - 1;
    return text;
}

/* Decrypts base64 text; returns new plaintext bytes (NUL-terminated) or NULL. */
static unsigned char *decrypt_value(const char *text, size_t text_length, size_t *length) {
    size_t capacity = text_length / 4 * 3 + 3;
    ensure_box(capacity);
    size_t sealed = 0;
    if (sodium_base642bin(box, capacity, text, text_length, NULL, &sealed, NULL, VARIANT) != 0) return NULL;
    if (sealed < crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES) return NULL;
    size_t plain = sealed - crypto_secretbox_NONCEBYTES - crypto_secretbox_MACBYTES;
    unsigned char *out = malloc(plain + 1);
    if (!out) die("out of memory");
    if (crypto_secretbox_open_easy(out, box + crypto_secretbox_NONCEBYTES, sealed - crypto_secretbox_NONCEBYTES, box,
                                   key) != 0) {
        free(out);
        return NULL;
    }
    out[plain] = 0;
    *length = plain;
    return out;
}

static volatile size_t sink;

static double run_encrypt(const unsigned char *plaintext, size_t size, long iterations) {
    double start = now_ns();
    for (long i = 0; i < iterations; i++) {
        size_t n;
        char *text = encrypt_value(plaintext, size, &n);
        sink += (unsigned char)text[n - 1];
        free(text);
    }
    return now_ns() - start;
}

static double run_decrypt(const char *text, size_t text_length, long iterations) {
    double start = now_ns();
    for (long i = 0; i < iterations; i++) {
        size_t n;
        unsigned char *plain = decrypt_value(text, text_length, &n);
        if (!plain) die("decryption failed");
        sink += n;
        free(plain);
    }
    return now_ns() - start;
}

/* Warm up for WARMUP_NS, size repetitions to REP_NS each, print every repetition's ns/op. */
#define MEASURE(NAME, SIZE, CALL)                                                                    \
    do {                                                                                             \
        long warm = 0;                                                                               \
        double spent = 0;                                                                            \
        while (spent < WARMUP_NS) { spent += CALL(1); warm++; }                                     \
        long iterations = (long)(warm * (REP_NS / spent));                                           \
        if (iterations < 3) iterations = 3;                                                          \
        printf("{\"peer\":\"c\",\"bench\":\"%s\",\"size\":%zu,\"iterations\":%ld,\"ns_per_op\":[", NAME, \
               (size_t)(SIZE), iterations);                                                          \
        for (int r = 0; r < REPS; r++) printf("%s%.1f", r ? "," : "", CALL(iterations) / iterations); \
        printf("]}\n");                                                                              \
        fflush(stdout);                                                                              \
    } while (0)

static void ops(size_t size) {
    unsigned char *plaintext = malloc(size);
    if (!plaintext) die("out of memory");
    for (size_t i = 0; i < size; i++) plaintext[i] = (unsigned char)('a' + i % 26);
    size_t text_length;
    char *text = encrypt_value(plaintext, size, &text_length);
#define ENC(N) run_encrypt(plaintext, size, (N))
#define DEC(N) run_decrypt(text, text_length, (N))
    MEASURE("encrypt", size, ENC);
    MEASURE("decrypt", size, DEC);
    free(text);
    free(plaintext);
}

/* Line mode: one read buffer, output through stdio in large blocks. */
static void lines(void) {
    static char out_buffer[1 << 20];
    setvbuf(stdout, out_buffer, _IOFBF, sizeof out_buffer);
    char *line = NULL;
    size_t capacity = 0;
    ssize_t count;
    while ((count = getline(&line, &capacity, stdin)) > 0) {
        if (line[count - 1] == '\n') count--;
        size_t n;
        char *text = encrypt_value((const unsigned char *)line, (size_t)count, &n);
        text[n] = '\n';
        if (fwrite(text, 1, n + 1, stdout) != n + 1) die("cannot write the output");
        free(text);
    }
    free(line);
    if (fflush(stdout) != 0) die("cannot write the output");
}

int main(int argc, char **argv) {
    if (sodium_init() < 0) die("libsodium could not initialise");
    if (argc == 4 && strcmp(argv[1], "ops") == 0) {
        read_key(argv[3]);
        ops((size_t)strtoull(argv[2], NULL, 10));
    } else if (argc == 3 && strcmp(argv[1], "lines") == 0) {
        read_key(argv[2]);
        lines();
    } else {
        die("usage: sealbench ops SIZE KEYFILE | sealbench lines KEYFILE");
    }
    return 0;
}
