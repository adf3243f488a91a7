// SealKeystore
