#!/bin/sh
# Rebuild the two PDFs in docs/ from their HTML sources in src/: runs the shared ../../build_pdfs.sh.
# Run: sh src/build_pdfs.sh   (from anywhere; needs chromium on the PATH, e.g. /usr/bin/chromium)
# Then check the text layer, e.g.: pdftotext docs/community-orchard/volunteer-handbook-2018.pdf - | head
here=$(dirname "$0")
exec sh "$here/../../build_pdfs.sh" "$here/.." volunteer-handbook-2018:community-orchard staff-handbook-2019:kayak-hire
