#!/usr/bin/env bash
# make-sounds.sh - synthesise the UI cues shipped with cued.
#
# Every cue is an ORIGINAL sound synthesised here from plain sine waves with
# sox, and encoded with lame (CBR, with the LAME/Info tag so that decoders
# know the encoder delay and padding and can play the cue gaplessly).
# The results are released under CC0 1.0 (see README.md in this directory).
#
# Requirements: bash, sox, lame, mpg123, awk (Debian: apt-get install -y sox lame mpg123)
#
# Usage: sounds/make-sounds.sh        (from any directory; rewrites the .mp3 files)
#
# The output is deterministic: sox `synth` has no randomness, sox runs with -D
# (no dither) and lame is deterministic for a given input, so re-running this
# script reproduces the committed files byte for byte (same sox/lame versions).
set -euo pipefail

SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
OUT_DIR="$SCRIPT_DIR"
RATE=48000

for tool in sox lame mpg123 awk; do
    command -v "$tool" >/dev/null 2>&1 || { echo "make-sounds.sh: '$tool' not found" >&2; exit 1; }
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cued-sounds.XXXXXX")"
trap 'rm -rf -- "$WORK"' EXIT

# Samples for a duration in milliseconds at $RATE.
ms() { echo $(( $1 * RATE / 1000 )); }

# note OUT.wav MS FREQ FADE_IN_MS FADE_OUT_MS [TYPE]
#   One sine note of exactly MS milliseconds, as 32-bit float mono WAV.
#   The attack is a short quarter-sine fade in; the release is a fade out of
#   type TYPE (sox fade types: l = logarithmic, i.e. an exponential decay to
#   -100 dB; q = quarter sine; h = half sine; t = linear). Ends at zero.
#   FREQ may be a sox sweep such as 1800-2200.
note() {
    local out=$1 len_ms=$2 freq=$3 in_ms=$4 out_ms=$5 type=${6:-l}
    local n; n=$(ms "$len_ms")
    sox -D -r "$RATE" -c 1 -n -e floating-point -b 32 "$out" \
        synth "${n}s" sine "$freq" vol 0.5 \
        fade q "$(ms "$in_ms")s" \
        fade "$type" 0 "${n}s" "$(ms "$out_ms")s"
}

# finish NAME INPUT.wav...
#   Concatenate the parts, add a 1 ms safety fade at both ends, normalise to a
#   -3 dBFS peak, write 16-bit PCM without dither, and encode with lame
#   (CBR 128 kbit/s, 48 kHz, mono; the LAME/Info tag is written because -t is
#   NOT given).
finish() {
    local name=$1; shift
    local wav="$WORK/$name.wav"
    sox -D "$@" -r "$RATE" -c 1 -e signed-integer -b 16 "$wav" \
        fade h 48s -0 48s \
        gain -n -3
    lame --quiet --noreplaygain -m m -b 128 --resample 48 "$wav" "$OUT_DIR/$name.mp3"
}

# --- pico: a bright 2 kHz blip, 100 ms, 2 ms attack, exponential decay -------
note "$WORK/pico-1.wav" 100 2000 2 98 l
finish pico "$WORK/pico-1.wav"

# --- page-next: rising fifth C6 -> G6, 2 x 60 ms = 120 ms ----------------------
note "$WORK/next-1.wav" 60 1046.50 3 30 q
note "$WORK/next-2.wav" 60 1567.98 3 57 l
finish page-next "$WORK/next-1.wav" "$WORK/next-2.wav"

# --- page-prev: the mirror, falling G6 -> C6, 120 ms ---------------------------
note "$WORK/prev-1.wav" 60 1567.98 3 30 q
note "$WORK/prev-2.wav" 60 1046.50 3 57 l
finish page-prev "$WORK/prev-1.wav" "$WORK/prev-2.wav"

# --- wrap: fast rising arpeggio C6 E6 G6 C7 with a ringing top, 270 ms ---------
note "$WORK/wrap-1.wav" 55 1046.50 3 25 q
note "$WORK/wrap-2.wav" 55 1318.51 3 25 q
note "$WORK/wrap-3.wav" 55 1567.98 3 25 q
note "$WORK/wrap-4.wav" 105 2093.00 3 102 l
finish wrap "$WORK/wrap-1.wav" "$WORK/wrap-2.wav" "$WORK/wrap-3.wav" "$WORK/wrap-4.wav"

# --- tick: a very short, soft 1.2 kHz tick, 30 ms -------------------------------
note "$WORK/tick-1.wav" 30 1200 1 29 l
finish tick "$WORK/tick-1.wav"

# --- verification ---------------------------------------------------------------
# Decode each cue with mpg123 (gapless on, the default) and check that
#  * the peak stays below 0.9 of full scale (no MP3 overshoot clipping), and
#  * the decoded length equals the synthesised length (i.e. the Info tag's
#    delay/padding is honoured) and is within 2 ms of the intended duration.
declare -A INTENDED_MS=([pico]=100 [page-next]=120 [page-prev]=120 [wrap]=270 [tick]=30)
status=0
printf '%-10s %8s %8s %9s %8s %9s\n' cue bytes rate samples ms peak
for name in pico page-next page-prev wrap tick; do
    mp3="$OUT_DIR/$name.mp3"
    dec="$WORK/$name.decoded.wav"
    mpg123 -q -w "$dec" "$mp3"
    src_samples=$(sox --i -s "$WORK/$name.wav")
    samples=$(sox --i -s "$dec")
    rate=$(sox --i -r "$dec")
    peak=$(sox "$dec" -n stat 2>&1 | awk '
        /^Maximum amplitude/ {mx=$3} /^Minimum amplitude/ {mn=$3}
        END {if (mn < 0) mn = -mn; printf "%.4f", (mx > mn ? mx : mn)}')
    bytes=$(wc -c < "$mp3")
    dur_ms=$(awk -v s="$samples" -v r="$rate" 'BEGIN {printf "%.1f", s * 1000 / r}')
    printf '%-10s %8d %8d %9d %8s %9s\n' "$name" "$bytes" "$rate" "$samples" "$dur_ms" "$peak"
    if ! head -c 512 "$mp3" | grep -aq -e Info -e Xing; then
        echo "  FAIL: $name.mp3 has no Info/Xing (LAME) tag" >&2; status=1
    fi
    if [[ $rate -ne $RATE ]]; then
        echo "  FAIL: $name decodes at $rate Hz, expected $RATE" >&2; status=1
    fi
    if [[ $samples -ne $src_samples ]]; then
        echo "  FAIL: $name decodes to $samples samples, synthesised $src_samples" >&2; status=1
    fi
    if ! awk -v s="$samples" -v r="$rate" -v want="${INTENDED_MS[$name]}" \
            'BEGIN {d = s * 1000 / r - want; exit !(d < 2 && d > -2)}'; then
        echo "  FAIL: $name is $dur_ms ms, intended ${INTENDED_MS[$name]} ms" >&2; status=1
    fi
    if ! awk -v p="$peak" 'BEGIN {exit !(p < 0.9)}'; then
        echo "  FAIL: $name peak $peak >= 0.9" >&2; status=1
    fi
done
exit "$status"
