#include "zxing_read.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ZXing/ReadBarcode.h>

namespace {

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

// Writes every valid code zxing-cpp finds in `image` (at most `capacity` in all, counting `found`).
bool writeCodes(int fd, const ZXing::ImageView &image, size_t capacity, size_t &found) {
    ZXing::DecodeHints hints;
    hints.setFormats(ZXing::BarcodeFormat::QRCode);
    hints.setTryHarder(true);
    hints.setTryRotate(true);
    hints.setTryDownscale(true);
    for (const auto &result : ZXing::ReadBarcodes(image, hints)) {
        if (!result.isValid() || found == capacity) continue;
        const auto &bytes = result.bytes();
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

// The child: decode the image, then its negative (zxing-cpp 1.4 reads dark-on-light only), write
// every code to the pipe, end the list, and leave without running any of the parent's exit handlers.
[[noreturn]] void decodeInChild(int fd, const uint8_t *pixels, int width, int height, size_t capacity, int budgetMilliseconds,
                                bool inverted) {
    // Only the pipe stays open (as descriptor 3) besides the standard three: a copy of some other
    // pipe's writing end here would keep its reader waiting for this child to exit.
    if (fd != 3 && dup2(fd, 3) != 3) _exit(1);
    fd = 3;
    if (close_range(4, ~0U, 0) != 0) {
        for (int other = 4; other < 1024; other++) close(other);
    }
    // Gone with the parent, and gone anyway a second after its budget: nothing outlives the scan.
    // (The forking thread may block signals, as dispatch's threads do: the child unblocks its alarm.)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGALRM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    sigset_t alarmOnly;
    sigemptyset(&alarmOnly);
    sigaddset(&alarmOnly, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &alarmOnly, nullptr);
    alarm(static_cast<unsigned>(budgetMilliseconds / 1000 + 2));
    try {
        size_t found = 0;
        if (!writeCodes(fd, ZXing::ImageView(pixels, width, height, ZXing::ImageFormat::Lum), capacity, found)) _exit(1);
        if (inverted) {
            std::vector<uint8_t> negative(pixels, pixels + static_cast<size_t>(width) * static_cast<size_t>(height));
            for (auto &pixel : negative) pixel = static_cast<uint8_t>(255 - pixel);
            if (!writeCodes(fd, ZXing::ImageView(negative.data(), width, height, ZXing::ImageFormat::Lum), capacity, found)) _exit(1);
        }
    } catch (...) {
        _exit(1);
    }
    Header end{kEnd, 0, 0, 0, 0};
    _exit(writeAll(fd, &end, sizeof end) ? 0 : 1);
}

long long nowMilliseconds() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<long long>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
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

// The parent: read the child's answer until the list ends, the pipe closes or the budget runs out
// (another thread's fork may hold the pipe open, so the end mark, not the end of file, says done).
// Returns false when the budget ran out.
bool readAnswer(int fd, std::vector<uint8_t> &answer, size_t limit, long long deadline) {
    uint8_t chunk[16384];
    for (;;) {
        long long left = deadline - nowMilliseconds();
        if (left <= 0) return false;
        pollfd poller{fd, POLLIN, 0};
        int ready = poll(&poller, 1, static_cast<int>(left));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return false;
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return false;
        if (got == 0) return true;  // end of file: the child has finished (or died; the parser tells)
        if (answer.size() + static_cast<size_t>(got) > limit) return true;  // not a list: the parser refuses it
        answer.insert(answer.end(), chunk, chunk + got);
        if (isWhole(answer)) return true;
    }
}

}  // namespace

extern "C" int sealkit_zxing_start(const uint8_t *pixels, int width, int height, size_t capacity, int budget_milliseconds,
                                   int inverted_too, sealkit_zxing_job *job) {
    job->pid = -1;
    job->fd = -1;
    job->deadline = 0;
    if (pixels == nullptr || width <= 0 || height <= 0 || capacity == 0) return 0;
    int pipes[2];
    if (pipe2(pipes, O_CLOEXEC) != 0) return -1;
    job->deadline = nowMilliseconds() + budget_milliseconds;
    pid_t child = fork();
    if (child < 0) {
        close(pipes[0]);
        close(pipes[1]);
        return -1;
    }
    if (child == 0) {
        close(pipes[0]);
        decodeInChild(pipes[1], pixels, width, height, capacity, budget_milliseconds, inverted_too != 0);
    }
    close(pipes[1]);
    job->pid = child;
    job->fd = pipes[0];
    return 0;
}

extern "C" void sealkit_zxing_cancel(sealkit_zxing_job *job) {
    if (job->fd >= 0) close(job->fd);
    // The child is a zombie until it is waited for, so the pid cannot have been reused: killing it
    // is safe whether it finished or not.
    if (job->pid > 0) {
        kill(job->pid, SIGKILL);
        int status = 0;
        while (waitpid(job->pid, &status, 0) < 0 && errno == EINTR) {}
    }
    job->fd = -1;
    job->pid = -1;
}

extern "C" long sealkit_zxing_finish(sealkit_zxing_job *job, sealkit_zxing_code *codes, size_t capacity) {
    if (job->pid <= 0) {  // nothing to do, or no child: nothing found
        sealkit_zxing_cancel(job);
        return 0;
    }
    std::vector<uint8_t> answer;
    bool finished = readAnswer(job->fd, answer, capacity * (sizeof(Header) + kMaxCodeBytes) + sizeof(Header), job->deadline);
    sealkit_zxing_cancel(job);
    if (!finished) return SEALKIT_ZXING_OUT_OF_TIME;

    // The child read hostile pixels: its answer is parsed as carefully as any input.
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
    if (!ended) {
        for (size_t index = 0; index < found; index++) std::free(codes[index].bytes);
        return 0;
    }
    return static_cast<long>(found);
}
