// SealProfile
