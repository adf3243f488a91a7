// SealQR
