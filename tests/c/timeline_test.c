/* Exercises the sync core through the C ABI exactly as an engine would:
 * push snapshots, tick once per frame, read transforms; plus the sender
 * filter, the log sink, error codes and the panic boundary.
 * Valid C99 and C++17 (the test suite compiles it as both). */
#include "netsync.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed = 0;
static int failed = 0;

#define CHECK(cond, ...)                                 \
    do {                                                 \
        if (cond) {                                      \
            passed++;                                    \
        } else {                                         \
            failed++;                                    \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);  \
            printf(__VA_ARGS__);                         \
            printf("\n");                                \
        }                                                \
    } while (0)

static int log_calls = 0;
static char last_log[256];

static void on_log(void *user_data, uint32_t level, const char *target, const char *message) {
    int *counter = (int *)user_data;
    (void)level;
    (void)target;
    (*counter)++;
    strncpy(last_log, message, sizeof last_log - 1);
    last_log[sizeof last_log - 1] = '\0';
}

static NetsyncSample moving_sample(uint64_t id, double t, float vx) {
    NetsyncSample s;
    memset(&s, 0, sizeof s);
    s.entity_id = id;
    s.position.x = (float)(vx * t);
    s.rotation.w = 1.0f;
    s.linear_velocity.x = vx;
    s.flags = NETSYNC_SAMPLE_HAS_VELOCITY;
    return s;
}

static void test_version_and_strings(void) {
    uint32_t v = netsync_abi_version();
    CHECK((v >> 16) == NETSYNC_ABI_VERSION_MAJOR, "abi major %u", v >> 16);
    CHECK(strcmp(netsync_result_str(NETSYNC_OK), "NETSYNC_OK") == 0, "result_str ok");
    CHECK(strcmp(netsync_result_str(NETSYNC_ERR_PANIC), "NETSYNC_ERR_PANIC") == 0, "result_str panic");
    CHECK(strcmp(netsync_result_str(12345), "NETSYNC_UNKNOWN") == 0, "result_str unknown");
}

static void test_timeline(void) {
    NetsyncTimelineConfig config;
    NetsyncTimeline *tl = NULL;
    NetsyncTransform out[4];
    size_t count = 0;
    int i;
    CHECK(netsync_timeline_config_default(&config) == NETSYNC_OK, "config default");
    CHECK(config.mode == NETSYNC_MODE_ADAPTIVE, "default mode adaptive");
    config.mode = NETSYNC_MODE_FIXED;
    config.fixed_delay = 0.1;
    CHECK(netsync_timeline_new(&config, &tl) == NETSYNC_OK && tl != NULL, "timeline new");

    /* 20 Hz snapshots of two entities at 30 ms latency, 60 fps ticks. */
    for (i = 0; i < 100; i++) {
        double st = i * 0.05;
        NetsyncSample samples[2];
        samples[0] = moving_sample(1, st, 2.0f);
        samples[1] = moving_sample(2, st, -1.0f);
        CHECK(netsync_timeline_push(tl, st + 0.03, st, samples, 2) == NETSYNC_OK, "push %d", i);
        CHECK(netsync_timeline_tick(tl, st + 0.03, out, 4, &count) == NETSYNC_OK, "tick %d", i);
    }
    CHECK(count == 2, "two entities, got %zu", count);
    {
        double render = 0;
        int k;
        CHECK(netsync_timeline_render_time(tl, NETSYNC_MODE_FIXED, &render) == NETSYNC_OK, "render time");
        for (k = 0; k < 2; k++) {
            float v = out[k].entity_id == 1 ? 2.0f : -1.0f;
            float expected = (float)(v * render);
            CHECK(fabsf(out[k].position.x - expected) < 1e-3f, "entity %llu at %f, expected %f",
                  (unsigned long long)out[k].entity_id, out[k].position.x, expected);
            CHECK(fabsf(out[k].rotation.w - 1.0f) < 1e-6f, "rotation kept");
        }
        /* Fixed 100 ms behind the freshest data (30 ms late): 4.98 - 0.03 - 0.1. */
        CHECK(fabs(render - (99 * 0.05 - 0.1)) < 0.01, "render time %f", render);
    }
    {
        NetsyncTimelineStats stats;
        CHECK(netsync_timeline_stats(tl, &stats) == NETSYNC_OK, "stats");
        CHECK(stats.entities == 2 && stats.frames == 100, "stats counts");
        CHECK(fabs(stats.clock_offset + 0.03) < 1e-6, "clock offset %f", stats.clock_offset);
    }

    /* Too small a buffer: error, needed count written, nothing else. */
    count = 0;
    CHECK(netsync_timeline_tick(tl, 6.0, out, 1, &count) == NETSYNC_ERR_BUFFER_TOO_SMALL, "too small");
    CHECK(count == 2, "needed count %zu", count);

    /* Bad input gets codes and messages. */
    CHECK(netsync_timeline_tick(tl, 6.0, NULL, 4, &count) == NETSYNC_ERR_NULL_POINTER, "null out");
    CHECK(strlen(netsync_last_error()) > 0, "last error set");
    CHECK(netsync_timeline_tick(tl, 4.0, out, 4, &count) == NETSYNC_ERR_INVALID_ARGUMENT, "time backwards");
    CHECK(strstr(netsync_last_error(), "backwards") != NULL, "message names the problem: %s", netsync_last_error());
    {
        NetsyncSample bad = moving_sample(3, 5.0, 1.0f);
        bad.position.y = NAN;
        CHECK(netsync_timeline_push(tl, 7.0, 5.0, &bad, 1) == NETSYNC_ERR_INVALID_ARGUMENT, "nan sample");
        bad = moving_sample(3, 5.0, 1.0f);
        bad.rotation.w = 0.0f;
        CHECK(netsync_timeline_push(tl, 7.0, 5.0, &bad, 1) == NETSYNC_ERR_INVALID_ARGUMENT, "zero quaternion");
    }
    CHECK(netsync_timeline_push(tl, 7.0, 5.0, NULL, 3) == NETSYNC_ERR_NULL_POINTER, "null samples");
    CHECK(netsync_timeline_push(tl, 7.0, 5.0, NULL, 0) == NETSYNC_OK, "heartbeat with no samples");
    CHECK(netsync_timeline_remove(tl, 99) == NETSYNC_ERR_UNKNOWN_ENTITY, "unknown entity");
    CHECK(netsync_timeline_set_entity_mode(tl, 1, 77) == NETSYNC_ERR_INVALID_ARGUMENT, "bad mode");
    CHECK(netsync_timeline_set_entity_mode(tl, 1, NETSYNC_MODE_PREDICTED) == NETSYNC_OK, "entity mode");
    CHECK(netsync_timeline_remove(tl, 2) == NETSYNC_OK, "remove");
    CHECK(netsync_timeline_entity_count(tl, &count) == NETSYNC_OK && count == 1, "count after remove");

    netsync_timeline_free(tl);
    CHECK(netsync_timeline_tick(tl, 8.0, out, 4, &count) == NETSYNC_ERR_INVALID_HANDLE, "use after free");
    netsync_timeline_free(tl); /* double free is a no-op */
    netsync_timeline_free(NULL);

    config.literal_frames = 1;
    tl = NULL;
    CHECK(netsync_timeline_new(&config, &tl) == NETSYNC_ERR_INVALID_ARGUMENT && tl == NULL, "bad config");
    CHECK(strstr(netsync_last_error(), "literal_frames") != NULL, "config error names the field");
}

static void test_send_filter(void) {
    NetsyncSendFilter *f = NULL;
    uint32_t decision = 99;
    int sends = 0;
    int i;
    CHECK(netsync_send_filter_new(NULL, &f) == NETSYNC_OK, "filter new");
    for (i = 0; i < 60; i++) {
        double t = i / 60.0;
        NetsyncSample s = moving_sample(5, t, 3.0f);
        CHECK(netsync_send_filter_update(f, t, &s, &decision) == NETSYNC_OK, "update");
        if (decision != NETSYNC_DECISION_SKIP) sends++;
    }
    CHECK(sends == 1, "straight motion sent once, got %d", sends);
    CHECK(netsync_send_filter_forget(f, 5) == NETSYNC_OK, "forget");
    CHECK(netsync_send_filter_forget(f, 5) == NETSYNC_ERR_UNKNOWN_ENTITY, "forget twice");
    {
        /* A timeline handle is not a send filter. */
        NetsyncTimeline *tl = NULL;
        NetsyncSample s = moving_sample(5, 0.0, 3.0f);
        netsync_timeline_new(NULL, &tl);
        CHECK(netsync_send_filter_update((NetsyncSendFilter *)(void *)tl, 0.0, &s, &decision) ==
                  NETSYNC_ERR_INVALID_HANDLE,
              "wrong handle type");
        netsync_timeline_free(tl);
    }
    netsync_send_filter_free(f);
}

static void test_log_and_panic(void) {
    CHECK(netsync_set_log_callback(on_log, &log_calls, NETSYNC_LOG_TRACE) == NETSYNC_OK, "set log");
    CHECK(netsync_log_message(NETSYNC_LOG_INFO, "hello from C") == NETSYNC_OK, "log message");
    CHECK(log_calls >= 1 && strcmp(last_log, "hello from C") == 0, "callback saw '%s'", last_log);
    CHECK(netsync_debug_panic() == NETSYNC_ERR_PANIC, "panic boundary");
    CHECK(strstr(netsync_last_error(), "panic") != NULL, "panic message: %s", netsync_last_error());
    CHECK(strstr(last_log, "panic") != NULL, "panic logged: %s", last_log);
    CHECK(netsync_set_log_callback(NULL, NULL, NETSYNC_LOG_OFF) == NETSYNC_OK, "unset log");
    log_calls = 0;
    netsync_log_message(NETSYNC_LOG_ERROR, "nobody hears this");
    CHECK(log_calls == 0, "no calls after unset");
    CHECK(netsync_set_log_callback(on_log, NULL, 9) == NETSYNC_ERR_INVALID_ARGUMENT, "bad level");
}

int main(void) {
    test_version_and_strings();
    test_timeline();
    test_send_filter();
    test_log_and_panic();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
