// SealTransfer
