import Foundation
import SealKit
import Testing

/// Keys as a keystore hands them out: a current key made at a fixed time, behind it `retired` older keys, each
/// retired a day before the next was and made a day before it was retired. The times are fixed so that a test
/// that compares what it sent with what arrived compares them too.
public func history(_ id: String, retired: Int = 0) throws -> KeyHistory {
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    var versions = [KeyHistory.Version(key: .generate(), created: now, retired: nil)]
    for index in 0..<retired {
        let at = now - Double(86_400 * (index + 1))
        versions.append(.init(key: .generate(), created: at - 86_400, retired: at))
    }
    return try KeyHistory(id: KeyID(id), versions: versions)
}

/// Records an issue at the caller unless `a` and `b` hold the same ids with the same keys and times, in order.
public func expectSameKeys(_ a: [KeyHistory], _ b: [KeyHistory], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(a.map(\.id) == b.map(\.id), sourceLocation: sourceLocation)
    for (x, y) in zip(a, b) {
        #expect(x.versions.count == y.versions.count, sourceLocation: sourceLocation)
        for (v, w) in zip(x.versions, y.versions) {
            #expect(v.key == w.key && v.created == w.created && v.retired == w.retired, sourceLocation: sourceLocation)
        }
    }
}
