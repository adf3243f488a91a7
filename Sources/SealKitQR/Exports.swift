// QR codes out (libqrencode, libpng) and in (zbar and zxing-cpp, over libpng and libjpeg-turbo), on top of SealKit.
@_exported import SealKit
@_exported import SealQR
@_exported import SealScan
