import Foundation

/// Waits with a deadline, so that what never happens fails a test at the deadline instead of hanging the run.
public enum Waits {
    /// Every element of `stream` until it finished; nil when it did not finish within `limit`.
    public static func all<Element: Sendable>(_ stream: AsyncStream<Element>, within limit: Duration = .seconds(60)) async -> [Element]? {
        await racing(limit) {
            var seen: [Element] = []
            for await element in stream { seen.append(element) }
            return Task.isCancelled ? nil : seen
        }
    }

    /// The first `count` elements of `stream`; nil when it finished before or they did not all come within `limit`.
    public static func first<Element: Sendable>(
        _ count: Int, of stream: AsyncStream<Element>, within limit: Duration = .seconds(30)
    ) async -> [Element]? {
        await racing(limit) {
            var seen: [Element] = []
            for await element in stream {
                seen.append(element)
                if seen.count == count { return seen }
            }
            return nil
        }
    }

    /// What `wait` returns, or nil when `limit` passes first (`wait` is then cancelled).
    private static func racing<T: Sendable>(_ limit: Duration, _ wait: @escaping @Sendable () async -> T?) async -> T? {
        await withTaskGroup(of: T?.self) { group in
            group.addTask(operation: wait)
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Runs a blocking wait on a thread of its own, off Swift concurrency's cooperative pool, which has as many
    /// threads as cores: an async test that blocks one of them while the task it tests needs one can starve it.
    public static func offThePool<T: Sendable>(_ wait: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: wait()) }
        }
    }

    /// Polls `condition` every `interval` until it holds or `timeout` seconds passed; whether it held. Where a
    /// test waits for another process to reach a state it can observe, this waits as long as that takes and no
    /// longer, where a fixed sleep is either too short on a loaded machine or wasted on an idle one.
    @discardableResult
    public static func until(timeout: TimeInterval, every interval: TimeInterval = 0.01, _ condition: () -> Bool) -> Bool {
        let deadline = Date() + timeout
        while !condition() {
            guard Date() < deadline else { return false }
            Thread.sleep(forTimeInterval: interval)
        }
        return true
    }
}
