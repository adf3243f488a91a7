// SealJSON
