// Importing a product brings SealKit with it, as in 1.0: an app names the product alone.
@_exported import SealKit
