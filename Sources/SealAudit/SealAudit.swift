// SealAudit
