#!/bin/sh
# Rebuild the two PDFs in docs/ from their HTML sources in src/ (headless Chromium).
# Run: sh src/build_pdfs.sh   (from anywhere; needs chromium on the PATH, e.g. /usr/bin/chromium)
# Then check the text layer, e.g.: pdftotext docs/bakery/staff-handbook-2022.pdf - | head
set -e
cd "$(dirname "$0")/.."
profile=$(mktemp -d)                      # throwaway browser profile, removed at the end
trap 'rm -rf "$profile"' EXIT
for pair in "staff-handbook-2022:bakery" "first-letter-to-parents:school-trip"; do
  name=${pair%%:*}; world=${pair#*:}
  [ -f "src/$name.html" ] || { echo "missing src/$name.html" >&2; exit 1; }
  chromium --headless --disable-gpu --no-sandbox --no-pdf-header-footer \
    --user-data-dir="$profile" \
    --print-to-pdf="docs/$world/$name.pdf" "file://$PWD/src/$name.html" 2>/dev/null
  echo "built docs/$world/$name.pdf"
done
