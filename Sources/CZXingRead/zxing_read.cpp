#include "zxing_read.h"

#include <cstdlib>
#include <cstring>
#include <ZXing/ReadBarcode.h>

extern "C" size_t sealkit_zxing_read(const uint8_t *pixels, int width, int height, sealkit_zxing_code *codes, size_t capacity) {
    try {
        ZXing::ImageView image(pixels, width, height, ZXing::ImageFormat::Lum);
        ZXing::DecodeHints hints;
        hints.setFormats(ZXing::BarcodeFormat::QRCode);
        hints.setTryHarder(true);
        hints.setTryRotate(true);
        hints.setTryDownscale(true);
        size_t found = 0;
        for (const auto &result : ZXing::ReadBarcodes(image, hints)) {
            if (!result.isValid() || found == capacity) continue;
            const auto &bytes = result.bytes();
            uint8_t *copy = static_cast<uint8_t *>(std::malloc(bytes.size() > 0 ? bytes.size() : 1));
            if (copy == nullptr) break;
            if (bytes.size() > 0) std::memcpy(copy, bytes.data(), bytes.size());
            auto corner = result.position().topLeft();
            codes[found++] = sealkit_zxing_code{copy, bytes.size(), corner.x, corner.y};
        }
        return found;
    } catch (...) {
        return 0;
    }
}
