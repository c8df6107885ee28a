#!/bin/sh
# Rebuild the two PDFs in docs/ from their HTML sources in src/ (headless Chromium).
# Run: sh src/build_pdfs.sh   (from anywhere; needs chromium, e.g. /usr/bin/chromium)
set -e
cd "$(dirname "$0")/.."
for pair in "hirers-guide:village-hall" "sailing-instructions:sailing"; do
  name=${pair%%:*}; world=${pair#*:}
  chromium --headless --disable-gpu --no-sandbox --no-pdf-header-footer \
    --print-to-pdf="docs/$world/$name.pdf" "src/$name.html" 2>/dev/null
done
