// SealKit
