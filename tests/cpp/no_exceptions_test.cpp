// netsync.hpp as an engine that turns off exceptions and RTTI uses it
// (Unreal's default: bEnableExceptions and bUseRTTI false): only the
// try_* calls exist, failures come back as values with the native code
// and message. Built by tests/cpp_programs.rs with -fno-exceptions -fno-rtti.
#include "netsync.hpp"
#include "netsync_unreal_convert.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#if NETSYNC_HPP_EXCEPTIONS
#error "this program must be built without exceptions"
#endif

static int passed = 0;
static int failed = 0;

#define EXPECT(cond, ...)                                    \
    do {                                                     \
        if (cond) {                                          \
            passed++;                                        \
        } else {                                             \
            failed++;                                        \
            std::printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            std::printf(__VA_ARGS__);                        \
            std::printf("\n");                               \
        }                                                    \
    } while (0)

int main() {
    EXPECT(netsync::try_check_abi().ok(), "abi");

    netsync::Result<netsync::Timeline> created = netsync::Timeline::try_create();
    EXPECT(created.ok(), "timeline");
    netsync::Timeline timeline = std::move(created).value();
    const NetsyncSample sample =
        netsync::unreal::sample_to_core(3, netsync::unreal::Vector{100, 0, 0}, netsync::unreal::Quat{0, 0, 0, 1});
    EXPECT(timeline.try_push(0.0, 0.0, netsync::Span<const NetsyncSample>(&sample, 1)).ok(), "push");
    netsync::Result<netsync::Span<const NetsyncTransform>> shown = timeline.try_tick(0.1);
    EXPECT(shown.ok() && shown.value().size() == 1 && shown.value()[0].entity_id == 3, "tick");

    netsync::Result<netsync::Span<const NetsyncTransform>> back = timeline.try_tick(0.05);
    EXPECT(!back.ok() && back.code() == NETSYNC_ERR_INVALID_ARGUMENT, "backwards tick gives %s",
           netsync::result_name(back.code()));
    EXPECT(!back.ok() && back.error().message().find("went backwards") != std::string::npos, "message %s",
           back.ok() ? "" : back.error().message().c_str());

    netsync::Result<netsync::Client> client = netsync::Client::try_connect("no address");
    EXPECT(!client.ok() && client.code() == NETSYNC_ERR_INVALID_ARGUMENT, "connect gives %s",
           netsync::result_name(client.code()));

    netsync::ServerConfig config = netsync::try_default_server_config().value_or(netsync::ServerConfig{});
    config.port = 0;  // a free port
    netsync::Result<netsync::Server> server = netsync::Server::try_start(&config, "127.0.0.1");
    EXPECT(server.ok() && server.value().try_port().value_or(0) != 0, "relay on a free port");

    // Secure mode: a secret, a relay started with it, a token, a client.
    const netsync::Result<netsync::Secret> secret = netsync::try_generate_secret();
    EXPECT(secret.ok(), "secret");
    const netsync::Secret key = secret.value_or(netsync::Secret{});
    netsync::Result<netsync::Server> secure = netsync::Server::try_start_secure(&config, key, "127.0.0.1");
    const uint16_t secure_port = secure.ok() ? secure.value().try_port().value_or(0) : 0;
    EXPECT(secure_port != 0, "secure relay on a free port");
    const netsync::Result<std::vector<uint8_t>> token =
        netsync::try_issue_token(key, 501, "127.0.0.1:" + std::to_string(secure_port), 60);
    EXPECT(token.ok() && token.value().size() == NETSYNC_TOKEN_SIZE, "token");
    const std::vector<uint8_t> token_bytes = token.value_or(std::vector<uint8_t>());
    netsync::Result<netsync::Client> secure_client = netsync::Client::try_connect_secure(token_bytes);
    EXPECT(secure_client.ok(), "secure connect gives %s", netsync::result_name(secure_client.code()));
    const uint8_t short_token[NETSYNC_TOKEN_SIZE - 1] = {};
    netsync::Result<netsync::Client> truncated = netsync::Client::try_connect_secure(short_token);
    EXPECT(!truncated.ok() && truncated.code() == NETSYNC_ERR_INVALID_ARGUMENT &&
               truncated.error().message().find("must be 225 bytes") != std::string::npos,
           "truncated token gives %s", netsync::result_name(truncated.code()));

    config.send_rate = -1.0;
    netsync::Result<netsync::Server> refused = netsync::Server::try_start(&config, "127.0.0.1");
    EXPECT(!refused.ok() && refused.code() == NETSYNC_ERR_INVALID_ARGUMENT, "bad config gives %s",
           netsync::result_name(refused.code()));

    // Recordings: a missing or foreign one is a value with its code and reason.
    const netsync::Result<netsync::Replay> no_file = netsync::Replay::try_open("/nonexistent-dir/none.nsrec");
    EXPECT(!no_file.ok() && no_file.code() == NETSYNC_ERR_IO, "a missing recording gives %s",
           netsync::result_name(no_file.code()));
    const netsync::Result<netsync::Replay> foreign = netsync::Replay::try_open_buffer(netsync::bytes_of("GIF89a, not a recording"));
    EXPECT(!foreign.ok() && foreign.code() == NETSYNC_ERR_INVALID_ARGUMENT &&
               foreign.error().message().find("not a netsync recording") != std::string::npos,
           "a foreign buffer gives %s", netsync::result_name(foreign.code()));

    std::printf("ok: try_* results without exceptions or RTTI: %s\n",
                back.ok() ? "(no error)" : back.error().what());
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
