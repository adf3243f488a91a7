// The fixture auditor: findings over ciphertext fixtures and exported profiles, as text, JSON or SARIF.
@_exported import SealAudit
@_exported import SealKit
