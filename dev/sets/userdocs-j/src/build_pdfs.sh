#!/bin/sh
# Rebuild the two PDFs in docs/ from their HTML sources in src/: runs the shared ../../build_pdfs.sh.
# Run: sh src/build_pdfs.sh   (from anywhere; needs chromium on the PATH, e.g. /usr/bin/chromium)
# Then check the text layer, e.g.: pdftotext docs/agility-club/club-handbook-2019.pdf - | head
here=$(dirname "$0")
exec sh "$here/../../build_pdfs.sh" "$here/.." club-handbook-2019:agility-club office-manual-2019:tax-practice
