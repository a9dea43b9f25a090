#!/bin/sh
# Regenerates every fixture in this folder. Needs Debian's `netpbm` (pnmtopng, built on libpng)
# and `imagemagick` (ImageMagick 6 Q16, which also decodes PNG through libpng):
#   apt-get install -y netpbm imagemagick
# The tests never run this script; they only read the files it wrote.
set -eu
cd "$(dirname "$0")"
IM=/usr/bin/convert-im6.q16     # the real ImageMagick binary (not a wrapper called `convert`)
NODATE="-define png:exclude-chunks=date,time"   # keep the output reproducible
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# Source pictures: a 37×29 crop of ImageMagick's built-in photo "rose:" (odd size on purpose),
# its greyscale version, an alpha ramp, and quantised versions for palette images.
$IM rose: -crop 37x29+12+9 +repage ppm:"$T/rose.ppm"
ppmtopgm "$T/rose.ppm" > "$T/gray.pgm"
$IM -size 37x29 gradient:white-black -depth 8 pgm:"$T/alpha.pgm"
pnmquant 200 "$T/rose.ppm" > "$T/q200.ppm" 2>/dev/null
pnmquant 12 "$T/rose.ppm" > "$T/q12.ppm" 2>/dev/null
pnmquant 4 "$T/rose.ppm" > "$T/q4.ppm" 2>/dev/null

# --- pnmtopng (libpng) ---
pnmtopng "$T/gray.pgm" > gray8.png                                      # colour type 0, 8 bit
pamdepth 1 "$T/gray.pgm" | pnmtopng > gray1.png                          # 0, 1 bit
pamdepth 3 "$T/gray.pgm" | pnmtopng > gray2.png                          # 0, 2 bit
pamdepth 15 "$T/gray.pgm" | pnmtopng > gray4.png                         # 0, 4 bit
pnmtopng -transparent =rgb:65/65/65 "$T/gray.pgm" > gray8-trns.png      # 0 + tRNS key (grey 101, 41 pixels)
pnmtopng "$T/rose.ppm" > rgb8.png                                        # 2, 8 bit, adaptive filters
pnmtopng -transparent =rgb:dc/38/2f "$T/rose.ppm" > rgb8-trns.png       # 2 + tRNS key (2 pixels)
pnmtopng -alpha="$T/alpha.pgm" "$T/gray.pgm" > gray-alpha8.png           # 4, 8 bit
pnmtopng -alpha="$T/alpha.pgm" "$T/rose.ppm" > rgba8.png                 # 6, 8 bit
pnmtopng "$T/q200.ppm" > palette8.png                                    # 3, 8 bit
pnmtopng "$T/q12.ppm" > palette4.png                                     # 3, 4 bit
pnmtopng "$T/q4.ppm" > palette2.png                                      # 3, 2 bit
pnmtopng -alpha="$T/alpha.pgm" "$T/q12.ppm" > palette8-trns.png         # 3, 8 bit + tRNS alpha
for f in nofilter sub up avg paeth; do                                   # one filter type each
    pnmtopng -$f "$T/rose.ppm" > filter-$f.png
done
pnmtopng -interlace -alpha="$T/alpha.pgm" "$T/rose.ppm" > interlaced-rgba8.png   # Adam7
pnmtopng -interlace "$T/q12.ppm" > interlaced-palette4.png
pamdepth 1 "$T/gray.pgm" | pnmtopng -interlace > interlaced-gray1.png
pamcut -width 3 -height 2 "$T/rose.ppm" | pnmtopng -interlace > interlaced-tiny.png  # empty passes

# --- ImageMagick (16-bit images with genuine 16-bit values, via blur in Q16) ---
$IM "$T/gray.pgm" -depth 16 -blur 0x0.7 -define png:color-type=0 -define png:bit-depth=16 $NODATE gray16.png
$IM "$T/rose.ppm" -depth 16 -blur 0x0.7 -define png:color-type=2 -define png:bit-depth=16 $NODATE rgb16.png
$IM "$T/rose.ppm" "$T/alpha.pgm" -alpha off -compose copy_opacity -composite -depth 16 -blur 0x0.7 \
    -define png:color-type=6 -define png:bit-depth=16 $NODATE rgba16.png

# Expected pixels: ImageMagick decodes each PNG and writes raw RGBA (no header): 8 bits per
# sample for the 8-bit and smaller fixtures, and for the 16-bit ones the exact 16-bit samples,
# big-endian (ImageMagick's own 16→8 reduction truncates colour but rounds alpha, so the tests
# apply the PNG spec's rounding, round(v × 255 / 65535), to the tool's 16-bit output instead).
rm -f ./*.rgba ./*.rgba16
for f in *.png; do
    case "$f" in
    *16.png) $IM "$f" -depth 16 -endian MSB rgba:"${f%.png}.rgba16" ;;
    *)       $IM "$f" -depth 8 rgba:"${f%.png}.rgba" ;;
    esac
done
