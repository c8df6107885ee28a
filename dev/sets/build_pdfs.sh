#!/bin/sh
# Rebuild a userdocs set's PDFs in docs/ from their HTML sources in src/ (headless Chromium).
# Run: sh dev/sets/build_pdfs.sh SET_DIR [NAME:WORLD ...]
#   NAME:WORLD prints SET_DIR/src/NAME.html to SET_DIR/docs/WORLD/NAME.pdf. With no pairs given, every
#   src/NAME.html that has a docs/<world>/NAME.pdf is rebuilt in place. Each set's src/build_pdfs.sh
#   calls this with its own pairs.
# Needs chromium on the PATH (e.g. /usr/bin/chromium). Then check the text layer, e.g.:
#   pdftotext SET_DIR/docs/WORLD/NAME.pdf - | head
set -e
[ -d "${1:-}" ] || { echo "usage: sh build_pdfs.sh SET_DIR [NAME:WORLD ...]" >&2; exit 2; }
cd "$1"
shift
if [ $# -eq 0 ]; then
  for source in src/*.html; do
    name=$(basename "$source" .html)
    for pdf in docs/*/"$name.pdf"; do
      if [ -f "$pdf" ]; then set -- "$@" "$name:$(basename "$(dirname "$pdf")")"; fi
    done
  done
  [ $# -gt 0 ] || { echo "no docs/<world>/NAME.pdf matches a src/NAME.html; give NAME:WORLD pairs" >&2; exit 2; }
fi
profile=$(mktemp -d)                      # throwaway browser profile, removed at the end
trap 'rm -rf "$profile"' EXIT
for pair in "$@"; do
  name=${pair%%:*}; world=${pair#*:}
  [ -f "src/$name.html" ] || { echo "missing src/$name.html" >&2; exit 1; }
  [ -d "docs/$world" ] || { echo "missing docs/$world/" >&2; exit 1; }
  chromium --headless --disable-gpu --no-sandbox --no-pdf-header-footer \
    --user-data-dir="$profile" \
    --print-to-pdf="docs/$world/$name.pdf" "file://$PWD/src/$name.html" 2>/dev/null
  echo "built docs/$world/$name.pdf"
done
