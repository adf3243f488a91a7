#include "zxing_read.h"

#include <cerrno>
#include <cstdio>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <type_traits>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include <ZXing/ReadBarcode.h>

#include "sealkit_library.h"

namespace {

// zxing-cpp (libZXing.so.2) is opened with dlopen, not linked: a command that reads no image does not load
// it. Of its API only two functions are out of line, the rest is inline in its headers; they are
// resolved by their Itanium C++ ABI names, the mangling of exactly the declarations the static_asserts below
// check (a header that declares them otherwise fails the build). A member function is called as a function
// whose first argument is `this`, as the ABI passes it.
using ReadBarcodesFunction = ZXing::Results (*)(const ZXing::ImageView &, const ZXing::DecodeHints &);
using BytesFunction = const ZXing::ByteArray &(*)(const ZXing::Result *);
static_assert(std::is_same_v<decltype(static_cast<ReadBarcodesFunction>(&ZXing::ReadBarcodes)), ReadBarcodesFunction>,
              "ZXing::ReadBarcodes(const ImageView &, const DecodeHints &) -> Results");
using BytesMember = const ZXing::ByteArray &(ZXing::Result::*)() const;
static_assert(std::is_same_v<decltype(static_cast<BytesMember>(&ZXing::Result::bytes)), BytesMember>,
              "const ByteArray &ZXing::Result::bytes() const");
const char *const zxingNames[] = {
    "_ZN5ZXing12ReadBarcodesERKNS_9ImageViewERKNS_11DecodeHintsE",  // ZXing::ReadBarcodes(ImageView const&, DecodeHints const&)
    "_ZNK5ZXing6Result5bytesEv",                                    // ZXing::Result::bytes() const
};
void *zxingAddresses[2];
sealkit_library zxing = {"libZXing.so.2", "libzxing2", zxingNames, zxingAddresses, 2, 0, 0, {0}};

ZXing::Results readBarcodes(const ZXing::ImageView &image, const ZXing::DecodeHints &hints) {
    return reinterpret_cast<ReadBarcodesFunction>(zxingAddresses[0])(image, hints);
}

const ZXing::ByteArray &bytesOf(const ZXing::Result &result) {
    return reinterpret_cast<BytesFunction>(zxingAddresses[1])(&result);
}

// One code on the pipe: its length, its bounding box, then its bytes; a length of kEnd ends the list.
struct Header {
    uint32_t count;
    int32_t left;
    int32_t top;
    int32_t right;
    int32_t bottom;
};
constexpr uint32_t kEnd = 0xFFFFFFFF;
// A QR code holds at most 2,953 bytes; anything longer on the pipe is not a code.
constexpr uint32_t kMaxCodeBytes = 4096;

bool writeAll(int fd, const void *data, size_t size) {
    auto bytes = static_cast<const uint8_t *>(data);
    while (size > 0) {
        ssize_t written = write(fd, bytes, size);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return false;
        bytes += written;
        size -= static_cast<size_t>(written);
    }
    return true;
}

// Writes every valid code zxing-cpp finds in `image`, counting `found`; false when it cannot, or when the
// codes are more than `capacity` in all (the helper then ends without its end mark: no whole reading).
bool writeCodes(int fd, const ZXing::ImageView &image, size_t capacity, size_t &found) {
    ZXing::DecodeHints hints;
    hints.setFormats(ZXing::BarcodeFormat::QRCode);
    hints.setTryHarder(true);
    hints.setTryRotate(true);
    hints.setTryDownscale(true);
    for (const auto &result : readBarcodes(image, hints)) {
        if (!result.isValid()) continue;
        // More codes than the answer holds: the first ones alone are not the image's reading.
        if (found == capacity) return false;
        const auto &bytes = bytesOf(result);
        if (bytes.size() > kMaxCodeBytes) continue;
        // The bounding box of the four corners, whatever way up the code is.
        const auto &position = result.position();
        Header header{static_cast<uint32_t>(bytes.size()), position[0].x, position[0].y, position[0].x, position[0].y};
        for (int corner = 1; corner < 4; corner++) {
            header.left = std::min(header.left, position[corner].x);
            header.top = std::min(header.top, position[corner].y);
            header.right = std::max(header.right, position[corner].x);
            header.bottom = std::max(header.bottom, position[corner].y);
        }
        if (!writeAll(fd, &header, sizeof header) || !writeAll(fd, bytes.data(), bytes.size())) return false;
        found += 1;
    }
    return true;
}

// The helper's request on its stdin (a memfd): this header, then width × height pixels.
struct Request {
    uint32_t magic;
    int32_t width;
    int32_t height;
    uint32_t capacity;
    int32_t budgetMilliseconds;
    int32_t inverted;
};
constexpr uint32_t kRequestMagic = 0x53515A31;  // "SQZ1"
// How the helper is told apart from an ordinary start of the same executable.
constexpr const char *kHelperName = "sealkit-zxing-reader";
constexpr const char *kHelperArgument = "--sealkit-zxing-reader-v1";

bool readAll(int fd, void *data, size_t size) {
    auto bytes = static_cast<uint8_t *>(data);
    while (size > 0) {
        ssize_t got = read(fd, bytes, size);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        bytes += got;
        size -= static_cast<size_t>(got);
    }
    return true;
}

// The helper: a fresh image of the host's executable (posix_spawn of /proc/self/exe), stopped here
// before the host's own main runs. It reads the request on stdin, decodes the image, then its negative
// (zxing-cpp 1.4 reads dark-on-light only), writes every code to stdout, ends the list, and leaves.
[[noreturn]] void serveHelper() {
    // Gone with the parent, and gone anyway soon after its budget: nothing outlives the scan.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (sealkit_library_load(&zxing) != 0) _exit(1);
    Request request{};
    if (!readAll(0, &request, sizeof request) || request.magic != kRequestMagic) _exit(1);
    if (request.width <= 0 || request.height <= 0 || request.capacity == 0 || request.capacity > 1024
        || request.budgetMilliseconds < 0 || request.budgetMilliseconds > 600000
        || static_cast<long long>(request.width) * request.height > SEALKIT_ZXING_MAXIMUM_PIXELS)
        _exit(1);
    // The budget is CPU time (the parent stops the helper once it has spent it): the kernel's limit is a
    // second past it, the alarm two seconds past the wall-clock bound.
    rlimit cpu{};
    cpu.rlim_cur = static_cast<rlim_t>(request.budgetMilliseconds / 1000 + 2);
    cpu.rlim_max = cpu.rlim_cur + 1;
    setrlimit(RLIMIT_CPU, &cpu);
    alarm(static_cast<unsigned>(request.budgetMilliseconds / 1000 * SEALKIT_ZXING_WALL_FACTOR + 2));
    size_t capacity = request.capacity, found = 0;
    try {
        std::vector<uint8_t> pixels(static_cast<size_t>(request.width) * static_cast<size_t>(request.height));
        if (!readAll(0, pixels.data(), pixels.size())) _exit(1);
        if (!writeCodes(1, ZXing::ImageView(pixels.data(), request.width, request.height, ZXing::ImageFormat::Lum), capacity, found))
            _exit(1);
        if (request.inverted != 0) {
            for (auto &pixel : pixels) pixel = static_cast<uint8_t>(255 - pixel);
            if (!writeCodes(1, ZXing::ImageView(pixels.data(), request.width, request.height, ZXing::ImageFormat::Lum), capacity, found))
                _exit(1);
        }
    } catch (...) {
        _exit(1);
    }
    Header end{kEnd, 0, 0, 0, 0};
    _exit(writeAll(1, &end, sizeof end) ? 0 : 1);
}

// Runs when the executable is loaded, before its main (glibc gives constructors argc and argv): the
// helper's start serves the request and exits, any other start goes on as if this were not here.
__attribute__((constructor, used)) void startHelperIfAsked(int argc, char **argv, char **) {
    if (argc == 2 && argv != nullptr && argv[0] != nullptr && argv[1] != nullptr && std::strcmp(argv[0], kHelperName) == 0
        && std::strcmp(argv[1], kHelperArgument) == 0)
        serveHelper();
}

long long nowMilliseconds() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<long long>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

// The CPU time the helper has used, in milliseconds, or -1 when it cannot be read (it has ended).
long long helperCPUMilliseconds(pid_t pid) {
    clockid_t clock;
    timespec used{};
    if (clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &used) != 0) return -1;
    return static_cast<long long>(used.tv_sec) * 1000 + used.tv_nsec / 1000000;
}

// Whether the helper's budget has run out at its deadline: it has had its CPU time, or the wall-clock
// bound has come. Otherwise the deadline moves on by the CPU time it has left (a loaded machine gave it
// less than the time that passed), and it reads on.
bool outOfTime(sealkit_zxing_job *job) {
    long long now = nowMilliseconds();
    if (now >= job->cutoff) return true;
    long long used = helperCPUMilliseconds(job->pid);
    if (used < 0 || used >= job->budget) return true;
    job->deadline = std::min(job->cutoff, now + std::max<long long>(job->budget - used, 20));
    return false;
}

// Whether `answer` is a whole list: codes, then the end mark.
bool isWhole(const std::vector<uint8_t> &answer) {
    size_t offset = 0;
    while (offset + sizeof(Header) <= answer.size()) {
        Header header;
        std::memcpy(&header, answer.data() + offset, sizeof header);
        offset += sizeof header;
        if (header.count == kEnd) return true;
        if (header.count > kMaxCodeBytes) return false;
        offset += header.count;
    }
    return false;
}

// Reads what the helper has written so far, waiting up to `wait` milliseconds (0: not at all) and never
// past the deadline: 1 once the answer is whole (or cannot grow: end of file, or longer than any list),
// 0 while more may come, SEALKIT_ZXING_OUT_OF_TIME once the budget has run out. What the helper has
// already written is always read first: a caller that comes back late (its own zbar reading took long)
// still gets a finished helper's answer. (Another thread's spawn may hold the pipe open for a moment, so
// the end mark, not the end of file, says done.)
int readSome(sealkit_zxing_job *job, int wait) {
    auto &answer = *static_cast<std::vector<uint8_t> *>(job->answer);
    uint8_t chunk[16384];
    for (;;) {
        long long left = job->deadline - nowMilliseconds();
        pollfd poller{job->fd, POLLIN, 0};
        int ready = poll(&poller, 1, static_cast<int>(std::clamp<long long>(left, 0, wait)));
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) return 1;
        if (ready == 0) {
            // Nothing more yet: at the deadline the budget decides; before it, more may come.
            if (nowMilliseconds() >= job->deadline && outOfTime(job)) return static_cast<int>(SEALKIT_ZXING_OUT_OF_TIME);
            return 0;
        }
        ssize_t got = read(job->fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return 1;  // end of file: the helper has finished (or died; the parser tells)
        if (answer.size() + static_cast<size_t>(got) > job->limit) return 1;  // not a list: the parser refuses it
        answer.insert(answer.end(), chunk, chunk + got);
        if (isWhole(answer)) return 1;
    }
}

}  // namespace

extern "C" int sealkit_zxing_load(char *error, size_t error_size) {
    if (sealkit_library_load(&zxing) == 0) return 0;
    if (error != nullptr && error_size > 0) std::snprintf(error, error_size, "%s", zxing.error);
    return -1;
}

extern "C" int sealkit_zxing_start(const uint8_t *pixels, int width, int height, size_t capacity, int budget_milliseconds,
                                   int inverted_too, sealkit_zxing_job *job) {
    *job = sealkit_zxing_job{-1, -1, 0, nullptr, 0, 0, 0, 0};
    if (pixels == nullptr || width <= 0 || height <= 0 || capacity == 0) return 0;
    // From here on, a job that does not start finishes as failed, not as an image without codes.
    job->state = static_cast<int>(SEALKIT_ZXING_FAILED);
    if (static_cast<long long>(width) * height > SEALKIT_ZXING_MAXIMUM_PIXELS) return -1;
    // The request: a memory file the helper reads as its stdin, so nothing here waits on the helper
    // to take the pixels, and no write can raise SIGPIPE in the host.
    int image = memfd_create("sealkit-zxing-request", MFD_CLOEXEC);
    if (image < 0) return -1;
    Request request{kRequestMagic, width, height, static_cast<uint32_t>(capacity), budget_milliseconds, inverted_too != 0};
    bool written = writeAll(image, &request, sizeof request)
        && writeAll(image, pixels, static_cast<size_t>(width) * static_cast<size_t>(height)) && lseek(image, 0, SEEK_SET) == 0;
    int pipes[2] = {-1, -1};
    if (!written || pipe2(pipes, O_CLOEXEC) != 0) {
        close(image);
        return -1;
    }
    // The helper gets the request as stdin, the pipe's writing end as stdout, /dev/null as stderr, and
    // nothing else of the host's; every signal at its default and none blocked.
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, image, 0);
    posix_spawn_file_actions_adddup2(&actions, pipes[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawnattr_init(&attributes);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    char name[] = "sealkit-zxing-reader", argument[] = "--sealkit-zxing-reader-v1";
    char *arguments[] = {name, argument, nullptr};
    pid_t child = -1;
    job->budget = budget_milliseconds;
    job->deadline = nowMilliseconds() + budget_milliseconds;
    job->cutoff = nowMilliseconds() + static_cast<long long>(budget_milliseconds) * SEALKIT_ZXING_WALL_FACTOR;
    int spawned = posix_spawn(&child, "/proc/self/exe", &actions, &attributes, arguments, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    close(image);
    close(pipes[1]);
    if (spawned != 0) {
        close(pipes[0]);
        return -1;
    }
    job->pid = child;
    job->fd = pipes[0];
    job->limit = capacity * (sizeof(Header) + kMaxCodeBytes) + sizeof(Header);
    try {
        job->answer = new std::vector<uint8_t>();
    } catch (...) {
        sealkit_zxing_cancel(job);
        job->state = static_cast<int>(SEALKIT_ZXING_FAILED);
        return -1;
    }
    job->state = 0;
    return 0;
}

extern "C" int sealkit_zxing_poll(sealkit_zxing_job *job) {
    if (job->pid <= 0 || job->answer == nullptr || job->state != 0) return job->state != 0 ? job->state : 1;
    job->state = readSome(job, 0);
    return job->state;
}

extern "C" void sealkit_zxing_cancel(sealkit_zxing_job *job) {
    if (job->fd >= 0) close(job->fd);
    // The helper is a zombie until it is waited for, so the pid cannot have been reused: killing it
    // is safe whether it finished or not, and reaping a killed process does not wait on its work.
    if (job->pid > 0) {
        kill(job->pid, SIGKILL);
        int status = 0;
        while (waitpid(job->pid, &status, 0) < 0 && errno == EINTR) {}
    }
    delete static_cast<std::vector<uint8_t> *>(job->answer);
    *job = sealkit_zxing_job{-1, -1, 0, nullptr, 0, 0, 0, 0};
}

extern "C" long sealkit_zxing_finish(sealkit_zxing_job *job, sealkit_zxing_code *codes, size_t capacity) {
    if (job->pid <= 0 || job->answer == nullptr) {  // nothing to do (nothing found), or no helper (failed)
        long answer = job->state == static_cast<int>(SEALKIT_ZXING_FAILED) ? SEALKIT_ZXING_FAILED : 0;
        sealkit_zxing_cancel(job);
        return answer;
    }
    while (job->state == 0) job->state = readSome(job, 1000);
    bool finished = job->state == 1;
    std::vector<uint8_t> answer = std::move(*static_cast<std::vector<uint8_t> *>(job->answer));
    sealkit_zxing_cancel(job);
    if (!finished) return SEALKIT_ZXING_OUT_OF_TIME;

    // The helper read hostile pixels: its answer is parsed as carefully as any input.
    size_t found = 0, offset = 0;
    bool ended = false;
    while (offset + sizeof(Header) <= answer.size()) {
        Header header;
        std::memcpy(&header, answer.data() + offset, sizeof header);
        offset += sizeof header;
        if (header.count == kEnd) {
            ended = offset == answer.size();
            break;
        }
        if (header.count > kMaxCodeBytes || header.count > answer.size() - offset || found == capacity) break;
        auto copy = static_cast<uint8_t *>(std::malloc(header.count > 0 ? header.count : 1));
        if (copy == nullptr) break;
        std::memcpy(copy, answer.data() + offset, header.count);
        offset += header.count;
        codes[found++] = sealkit_zxing_code{copy, header.count, header.left, header.top, header.right, header.bottom};
    }
    if (!ended) {  // the helper crashed, threw or was killed part way: no whole reading
        for (size_t index = 0; index < found; index++) std::free(codes[index].bytes);
        return SEALKIT_ZXING_FAILED;
    }
    return static_cast<long>(found);
}
