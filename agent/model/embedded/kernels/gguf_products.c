/* Matrix products on a GGUF's quantised blocks, for the embedded engine's steps of a few rows.
 *
 * out[r * ldo + i] = sum_k x[r * K + k] * W[row(i), k] for output columns i in [first, last), where W is a
 * GGUF tensor of `K` columns stored as blocks of 32 along k (the file's own bytes, memory-mapped):
 *   Q4_1 (20 bytes): fp16 d, fp16 m, 16 bytes q; w[j] = d * (q[j] & 15) + m, w[16 + j] = d * (q[j] >> 4) + m
 *   Q8_0 (34 bytes): fp16 d, 32 int8 q;         w[j] = d * q[j]
 * row(i) = rows[i] when `rows` is given (a permutation of the tensor's rows), else i.
 * A weight is formed exactly as the fp32 conversion of the same file forms it (d * q is exact in fp32, so
 * a fused multiply-add rounds like the separate product and sum), so these products differ from an fp32
 * GEMM on the converted weights only by the order of the sums.
 *
 * Built once per machine with `cc -O3 -march=native` (build.py); the AVX-512 path is used where the
 * compiler targets it, a plain loop (vectorised by the compiler for the target) elsewhere.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#if defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>
#endif

#define Q4_1_BYTES 20
#define Q8_0_BYTES 34

static inline float half_to_float(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
#if defined(__F16C__)
    return _cvtsh_ss(h);
#else
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff, bits;
    if (exponent == 0x1f) {
        bits = sign | 0x7f800000 | (mantissa << 13);
    } else if (exponent != 0) {
        bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
        bits = sign;
    } else {  /* subnormal half: normalise */
        exponent = 113;
        while (!(mantissa & 0x400)) { mantissa <<= 1; exponent--; }
        bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
#endif
}

#if defined(__AVX512F__)
/* Rows in groups of up to 4: each block's 32 weights are formed once, in two registers, for the group. */
#define GROUP(TYPE, R, LOAD)                                                                              \
    static void TYPE##_rows##R(const float *x, int K, const uint8_t *data, const int32_t *rows, float *out, \
                               int ldo, int first, int last) {                                            \
        const int nb = K / 32;                                                                            \
        for (int i = first; i < last; i++) {                                                              \
            const uint8_t *row = data + (int64_t)(rows ? rows[i] : i) * nb * TYPE##_BYTES_;               \
            __m512 acc[R];                                                                                \
            for (int r = 0; r < R; r++) acc[r] = _mm512_setzero_ps();                                     \
            for (int b = 0; b < nb; b++) {                                                                \
                __m512 lo, hi;                                                                            \
                LOAD(row + b * TYPE##_BYTES_, lo, hi);                                                    \
                for (int r = 0; r < R; r++) {                                                             \
                    const float *xr = x + (int64_t)r * K + b * 32;                                        \
                    acc[r] = _mm512_fmadd_ps(lo, _mm512_loadu_ps(xr), acc[r]);                            \
                    acc[r] = _mm512_fmadd_ps(hi, _mm512_loadu_ps(xr + 16), acc[r]);                       \
                }                                                                                         \
            }                                                                                             \
            for (int r = 0; r < R; r++) out[(int64_t)r * ldo + i] = _mm512_reduce_add_ps(acc[r]);        \
        }                                                                                                 \
    }

#define q4_1_BYTES_ Q4_1_BYTES
#define q8_0_BYTES_ Q8_0_BYTES
#define LOAD_Q4_1(block, lo, hi)                                                                          \
    do {                                                                                                  \
        __m512 d_ = _mm512_set1_ps(half_to_float(block)), m_ = _mm512_set1_ps(half_to_float((block) + 2)); \
        __m512i q_ = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)((block) + 4)));              \
        lo = _mm512_fmadd_ps(d_, _mm512_cvtepi32_ps(_mm512_and_si512(q_, _mm512_set1_epi32(15))), m_);   \
        hi = _mm512_fmadd_ps(d_, _mm512_cvtepi32_ps(_mm512_srli_epi32(q_, 4)), m_);                      \
    } while (0)
#define LOAD_Q8_0(block, lo, hi)                                                                          \
    do {                                                                                                  \
        __m512 d_ = _mm512_set1_ps(half_to_float(block));                                                 \
        lo = _mm512_mul_ps(d_, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(                                   \
                                   _mm_loadu_si128((const __m128i *)((block) + 2)))));                    \
        hi = _mm512_mul_ps(d_, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(                                   \
                                   _mm_loadu_si128((const __m128i *)((block) + 18)))));                   \
    } while (0)

GROUP(q4_1, 1, LOAD_Q4_1) GROUP(q4_1, 2, LOAD_Q4_1) GROUP(q4_1, 3, LOAD_Q4_1) GROUP(q4_1, 4, LOAD_Q4_1)
GROUP(q8_0, 1, LOAD_Q8_0) GROUP(q8_0, 2, LOAD_Q8_0) GROUP(q8_0, 3, LOAD_Q8_0) GROUP(q8_0, 4, LOAD_Q8_0)

#define DISPATCH(TYPE)                                                                                    \
    int r = 0;                                                                                            \
    for (; r + 4 <= R; r += 4) TYPE##_rows4(x + (int64_t)r * K, K, data, rows, out + (int64_t)r * ldo, ldo, first, last); \
    switch (R - r) {                                                                                      \
    case 3: TYPE##_rows3(x + (int64_t)r * K, K, data, rows, out + (int64_t)r * ldo, ldo, first, last); break; \
    case 2: TYPE##_rows2(x + (int64_t)r * K, K, data, rows, out + (int64_t)r * ldo, ldo, first, last); break; \
    case 1: TYPE##_rows1(x + (int64_t)r * K, K, data, rows, out + (int64_t)r * ldo, ldo, first, last); break; \
    }

static void q4_1_range(const float *x, int R, int K, const uint8_t *data, const int32_t *rows, float *out, int ldo,
                       int first, int last) {
    DISPATCH(q4_1)
}

static void q8_0_range(const float *x, int R, int K, const uint8_t *data, const int32_t *rows, float *out, int ldo,
                       int first, int last) {
    DISPATCH(q8_0)
}

#else
/* The 32 weights of block `b` in `w`. */
static inline void q4_1_block(const uint8_t *block, float *w) {
    float d = half_to_float(block), m = half_to_float(block + 2);
    const uint8_t *q = block + 4;
    for (int j = 0; j < 16; j++) {
        w[j] = d * (float)(q[j] & 15) + m;
        w[16 + j] = d * (float)(q[j] >> 4) + m;
    }
}

static inline void q8_0_block(const uint8_t *block, float *w) {
    float d = half_to_float(block);
    const int8_t *q = (const int8_t *)(block + 2);
    for (int j = 0; j < 32; j++) w[j] = d * (float)q[j];
}

/* Portable: each block's weights formed once into a small buffer, then a dot product per row. */
#define PLAIN(TYPE, BYTES)                                                                                \
    static void TYPE##_range(const float *x, int R, int K, const uint8_t *data, const int32_t *rows, float *out, \
                             int ldo, int first, int last) {                                              \
        const int nb = K / 32;                                                                            \
        for (int i = first; i < last; i++) {                                                              \
            const uint8_t *row = data + (int64_t)(rows ? rows[i] : i) * nb * BYTES;                       \
            for (int r = 0; r < R; r++) out[(int64_t)r * ldo + i] = 0.0f;                                 \
            for (int b = 0; b < nb; b++) {                                                                \
                float w[32];                                                                              \
                TYPE##_block(row + b * BYTES, w);                                                         \
                for (int r = 0; r < R; r++) {                                                             \
                    const float *xr = x + (int64_t)r * K + b * 32;                                        \
                    float s = 0.0f;                                                                       \
                    for (int j = 0; j < 32; j++) s += w[j] * xr[j];                                       \
                    out[(int64_t)r * ldo + i] += s;                                                       \
                }                                                                                         \
            }                                                                                             \
        }                                                                                                 \
    }
PLAIN(q4_1, Q4_1_BYTES)
PLAIN(q8_0, Q8_0_BYTES)
#endif

/* Two threads: the caller and a helper thread take chunks of the output columns from a shared counter, so a
 * helper that starts late (woken from sleep, or its core busy) leaves more chunks to the caller instead of
 * making it wait. The helper spins between the products of a forward pass (they come every few hundred
 * microseconds; waking a sleeping thread costs tens) and sleeps after SPIN_NS without work, so it holds no
 * core between passes. */
typedef void (*range_fn)(const float *, int, int, const uint8_t *, const int32_t *, float *, int, int, int);

#define SPIN_NS 200000L
#define SPLIT_MIN_WEIGHTS 65536 /* smaller products are not worth handing over */
#ifndef CHUNKS
#define CHUNKS 4 /* per product: a few, so a late helper leaves some to the caller */
#endif

/* `next` packs the job's number of chunks (bits 32-39) with the next chunk to take (bits 0-31): a thread that
 * takes a chunk below the count holds work of the current job, whose fields stay put until every chunk is
 * `done`; one that takes a chunk past it reads nothing (the fields may already be the next job's). */
static struct {
    range_fn fn;
    const float *x;
    const uint8_t *data;
    const int32_t *rows;
    float *out;
    int R, K, ldo, first, last, chunk;
} job;
static atomic_long next;
static atomic_int done;
static atomic_long posted;
static atomic_int sleeping;
static atomic_flag job_taken = ATOMIC_FLAG_INIT; /* one caller at a time shares the helper; others work alone */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static int threads = 1, helper_started;

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Take and compute chunks of the current job until none is left. */
static void take_chunks(void) {
    for (;;) {
        long taken = atomic_fetch_add(&next, 1);
        int chunk = (int)(taken & 0xffffffffL), chunks = (int)((taken >> 32) & 0xff);
        if (chunk >= chunks) return;
        int first = job.first + chunk * job.chunk;
        int last = first + job.chunk < job.last ? first + job.chunk : job.last;
        job.fn(job.x, job.R, job.K, job.data, job.rows, job.out, job.ldo, first, last);
        atomic_fetch_add(&done, 1);
    }
}

static void *helper(void *unused) {
    (void)unused;
    long seen = 0;
    for (;;) {
        long spin_from = now_ns();
        while (atomic_load(&posted) == seen) {
            if (now_ns() - spin_from > SPIN_NS) {
                pthread_mutex_lock(&lock);
                atomic_store(&sleeping, 1);
                while (atomic_load(&posted) == seen) pthread_cond_wait(&wake, &lock);
                atomic_store(&sleeping, 0);
                pthread_mutex_unlock(&lock);
                break;
            }
            relax();
        }
        seen = atomic_load(&posted);
        take_chunks();
    }
    return NULL;
}

/* A forked child has no helper thread: it starts over on one thread. */
static void forget_helper(void) {
    helper_started = 0, threads = 1;
    atomic_flag_clear(&job_taken);
    atomic_store(&posted, 0), atomic_store(&sleeping, 0);
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&wake, NULL);
}

/* How many threads the products use: 1, or 2 (the caller and one helper). Returns the number set. */
int gguf_set_threads(int wanted) {
    static int registered;
    if (!registered) registered = pthread_atfork(NULL, NULL, forget_helper) == 0;
    if (wanted >= 2 && !helper_started) {
        pthread_t thread;
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        helper_started = pthread_create(&thread, &attributes, helper, NULL) == 0;
        pthread_attr_destroy(&attributes);
    }
    threads = (wanted >= 2 && helper_started) ? 2 : 1;
    return threads;
}

static void products(range_fn fn, const float *x, int R, int K, const uint8_t *data, const int32_t *rows, float *out,
                     int ldo, int first, int last) {
    if (threads < 2 || (long)(last - first) * K * R < SPLIT_MIN_WEIGHTS || last - first < 2 * CHUNKS
        || atomic_flag_test_and_set(&job_taken)) {
        fn(x, R, K, data, rows, out, ldo, first, last);
        return;
    }
    job.fn = fn, job.x = x, job.R = R, job.K = K, job.data = data, job.rows = rows, job.out = out, job.ldo = ldo;
    job.first = first, job.last = last;
    job.chunk = (last - first + CHUNKS - 1) / CHUNKS;
    int chunks = (last - first + job.chunk - 1) / job.chunk;
    atomic_store(&done, 0);
    atomic_store(&next, (long)chunks << 32);
    atomic_fetch_add(&posted, 1);
    if (atomic_load(&sleeping)) {
        pthread_mutex_lock(&lock);
        pthread_cond_signal(&wake);
        pthread_mutex_unlock(&lock);
    }
    take_chunks();
    while (atomic_load(&done) != chunks) relax();
    atomic_flag_clear(&job_taken);
}

void q4_1_products(const float *x, int R, int K, const uint8_t *data, const int32_t *rows, float *out, int ldo,
                   int first, int last) {
    products(q4_1_range, x, R, K, data, rows, out, ldo, first, last);
}

void q8_0_products(const float *x, int R, int K, const uint8_t *data, const int32_t *rows, float *out, int ldo,
                   int first, int last) {
    products(q8_0_range, x, R, K, data, rows, out, ldo, first, last);
}
