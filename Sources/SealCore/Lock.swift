#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutual-exclusion lock for the package's shared state. It stands in for Foundation's `NSLock`
/// so that no module needs all of Foundation: `sealkit` links only FoundationEssentials, which
/// starts several milliseconds sooner (docs/performance.md).
///
/// New code uses `Synchronization.Mutex`, which keeps the guarded state inside the lock and so
/// states in the type system what this class's users had to promise with `@unchecked Sendable`.
///
/// `@unchecked Sendable`: the mutex is the synchronization; its pointer never changes.
package final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` holding the lock.
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
