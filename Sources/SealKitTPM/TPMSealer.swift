import CTSS2
import SealKit

#if canImport(Glibc)
import Glibc
#endif

/// Seals key files' wrapping keys to a TPM 2.0 through tpm2-tss's ESAPI (the `CTSS2` target fills in
/// the TPM's templates; the TSS marshals every command).
///
/// Each call connects to the TPM, re-creates the owner hierarchy's storage primary key from a fixed
/// template (ECC P-256: the same TPM always makes the same key, so nothing persistent is needed), starts
/// an HMAC session salted with that key and encrypting the sealed data and the PIN-bound command's
/// parameters, does its one job, and flushes every handle it loaded, whatever happened.
package struct TPMSealer: TPMKeySealer {
    /// The TCTI string handed to `Tss2_TctiLdr_Initialize`, such as `device:/dev/tpmrm0` or
    /// `swtpm:host=127.0.0.1,port=2321`.
    package let tcti: String

    /// The longest a TPM call may take, connecting included: a TPM endpoint that accepts and never answers
    /// must not hang the caller.
    package let timeout: Duration

    /// The TPM when none is named: the kernel's resource manager.
    package static let defaultTCTI = "device:/dev/tpmrm0"

    /// The time limit of a TPM call when none is given: long enough for a slow TPM's primary key.
    package static let defaultTimeout = Duration.seconds(30)

    /// The TCTIs tpm2-tss documents by name, which `Tss2_TctiLdr_Initialize` finds as libtss2-tcti-NAME.so:
    /// a TCTI is a shared library loaded into the process, so a name that is a path (or any other name, such as
    /// `cmd`, which runs a command) would be code the environment chooses.
    package static let tctiNames: Set<String> = ["device", "swtpm", "mssim", "tabrmd"]

    /// Whether `tcti` is `NAME` or `NAME:CONFIGURATION` with a name from `tctiNames`.
    package static func isNamedTCTI(_ tcti: String) -> Bool {
        let name = tcti.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return tctiNames.contains(name) && !tcti.utf8.contains(0)
    }

    /// Why `tcti` must not be opened, when it is the device TCTI naming something other than a character
    /// device: tpm2-tss opens the path read-write and writes TPM commands to it, so a regular file (or a
    /// link to one) would be overwritten. Nil when it may be opened (a path that does not exist is the
    /// TPM's absence, which opening reports).
    package static func deviceProblem(_ tcti: String) -> String? {
        let parts = tcti.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == "device", !parts[1].isEmpty else { return nil }
        let path = String(parts[1])
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        guard status.st_mode & S_IFMT == S_IFCHR else { return "\(path) is not a character device" }
        return nil
    }

    /// The longest PIN: a sealed object's authorization value is at most its name algorithm's digest (SHA-256).
    package static let maximumPINByteCount = 32

    /// A sealer for the TPM at `tcti`, each call bounded by `timeout`.
    package init(tcti: String = defaultTCTI, timeout: Duration = defaultTimeout) {
        self.tcti = tcti
        self.timeout = timeout
    }

    /// The time limit in milliseconds, at least 1 ms and at most a day.
    private var timeoutMilliseconds: UInt32 {
        let (seconds, attoseconds) = timeout.components
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        guard !milliseconds.overflow else { return 86_400_000 }
        return UInt32(clamping: max(1, min(86_400_000, milliseconds.partialValue + attoseconds / 1_000_000_000_000_000)))
    }

    private func checkTCTI() throws(KeystoreError) {
        guard Self.isNamedTCTI(tcti) else {
            throw .tpmUnavailable(tcti: tcti, detail: "not a TCTI tpm2-tss names: use device, swtpm, mssim or tabrmd, such as device:/dev/tpmrm0")
        }
        if let problem = Self.deviceProblem(tcti) { throw .tpmUnavailable(tcti: tcti, detail: problem) }
    }

    package func lockoutState() throws(KeystoreError) -> TPMLockoutState {
        try checkTCTI()
        var failures: UInt32 = 0, maximum: UInt32 = 0, interval: UInt32 = 0, recovery: UInt32 = 0, code: UInt32 = 0
        let status = sealkit_tpm_lockout(tcti, timeoutMilliseconds, &failures, &maximum, &interval, &recovery, &code)
        guard status == Int32(SEALKIT_TPM_OK.rawValue) else { throw error(status, code: code, id: nil, hasPIN: true) }
        return TPMLockoutState(failures: Int(failures), maximum: Int(maximum), interval: Int(interval))
    }

    package func seal(_ key: SymmetricKey, pin: Passphrase?) throws(KeystoreError) -> TPMSealedKey {
        var blob = [UInt8](repeating: 0, count: Int(SEALKIT_TPM_BLOB_MAX))
        var blobCount = blob.count
        var name = [UInt8](repeating: 0, count: Int(SEALKIT_TPM_NAME_MAX))
        var nameCount = name.count
        var code: UInt32 = 0
        try checkTCTI()
        try checkPIN(pin)
        let milliseconds = timeoutMilliseconds
        let status = withPIN(pin) { pinBytes in
            key.storage.withUnsafeBytes { keyBytes in
                sealkit_tpm_seal(
                    tcti, milliseconds, pinBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), pinBytes.count,
                    keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), keyBytes.count, &blob, &blobCount, &name, &nameCount,
                    &code)
            }
        }
        guard status == Int32(SEALKIT_TPM_OK.rawValue) else { throw error(status, code: code, id: nil, hasPIN: pin != nil) }
        return TPMSealedKey(hasPIN: pin != nil, primaryName: Array(name[..<nameCount]), blob: Array(blob[..<blobCount]))
    }

    package func unseal(_ sealed: TPMSealedKey, pin: Passphrase?, id: KeyID) throws(KeystoreError) -> SymmetricKey {
        try checkTCTI()
        if sealed.hasPIN, let pin, pin.storage.count > Self.maximumPINByteCount { throw .wrongPIN(id) }
        let milliseconds = timeoutMilliseconds
        var code: UInt32 = 0
        var status: Int32 = 0
        let storage: SecureBytes
        do {
            // The unsealed key goes straight into guarded memory; the shim zeroes the TSS's copy.
            storage = try SecureBytes.allocate(count: SymmetricKey.byteCount) { out in
                status = withPIN(sealed.hasPIN ? pin : nil) { pinBytes in
                    sealkit_tpm_unseal(
                        tcti, milliseconds, pinBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), pinBytes.count, sealed.blob, sealed.blob.count,
                        sealed.primaryName, sealed.primaryName.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count,
                        &code)
                }
            }
        } catch {
            throw .outOfMemory(String(describing: error))
        }
        guard status == Int32(SEALKIT_TPM_OK.rawValue) else { throw error(status, code: code, id: id, hasPIN: sealed.hasPIN) }
        return SymmetricKey(storage: storage)
    }

    private func checkPIN(_ pin: Passphrase?) throws(KeystoreError) {
        guard let pin, pin.storage.count > Self.maximumPINByteCount else { return }
        throw .pinTooLong(limit: Self.maximumPINByteCount)
    }

    private func withPIN<R>(_ pin: Passphrase?, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard let pin else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return pin.storage.withUnsafeBytes(body)
    }

    private func error(_ status: Int32, code: UInt32, id: KeyID?, hasPIN: Bool) -> KeystoreError {
        let hex = "TSS2 response code 0x" + String(code, radix: 16)
        switch UInt32(status) {
        case SEALKIT_TPM_UNAVAILABLE.rawValue: return .tpmUnavailable(tcti: tcti, detail: code == 0 ? "no answer" : hex)
        case SEALKIT_TPM_NO_LIBRARY.rawValue: return .libraryUnavailable("cannot use the TPM: " + String(cString: sealkit_tpm_library_error()))
        case SEALKIT_TPM_WRONG_PIN.rawValue: return id.map { .wrongPIN($0) } ?? .tpmFailed(hex)
        case SEALKIT_TPM_LOCKOUT.rawValue: return id.map { .tpmLockout($0, hasPIN: hasPIN) } ?? .tpmFailed(hex)
        case SEALKIT_TPM_TIMEOUT.rawValue:
            let (seconds, attoseconds) = timeout.components
            return .tpmTimedOut(tcti: tcti, seconds: Int(clamping: seconds + (attoseconds > 0 ? 1 : 0)))
        case SEALKIT_TPM_OTHER_TPM.rawValue: return id.map { .sealedToAnotherTPM($0) } ?? .tpmFailed(hex)
        case SEALKIT_TPM_FULL.rawValue:
            return .tpmUnavailable(
                tcti: tcti,
                detail: "it has no free slot: a process killed while using it left objects loaded, which only a TPM reached "
                    + "without the kernel's resource manager keeps; flush them (tpm2_flushcontext -t -s) or restart it")
        case SEALKIT_TPM_DAMAGED.rawValue:
            return .damagedKeyFile(path: "", reason: "its TPM object does not load or does not hold a key (\(hex))")
        default: return .tpmFailed(hex)
        }
    }
}
