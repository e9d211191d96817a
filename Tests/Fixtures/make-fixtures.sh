#!/usr/bin/env bash
# make-fixtures.sh - generate the small MP3 fixtures used by cued's decoder tests.
#
# Requirements: bash, sox, lame, mpg123, python3, opusenc, flac
#   (Debian: apt-get install -y sox lame mpg123 python3 opus-tools flac)
#
# Usage: Tests/Fixtures/make-fixtures.sh   (from any directory; rewrites the fixtures)
#
# Deterministic: sine waves from sox `synth` (no randomness), sox -D (no dither),
# lame is deterministic, tags are written byte by byte by python3, and the
# "random" fixture uses a fixed seed. See README.md for what each file is and
# the numbers measured on Debian 12 (sox 14.4.2, LAME 3.100, mpg123 1.31.2).
# After generating, the script decodes every fixture with mpg123 and fails if
# rate / channels / gapless sample count differ from the expected values.
set -euo pipefail

SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
OUT="$SCRIPT_DIR"

for tool in sox lame mpg123 python3 opusenc flac; do
    command -v "$tool" >/dev/null 2>&1 || { echo "make-fixtures.sh: '$tool' not found" >&2; exit 1; }
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cued-fixtures.XXXXXX")"
trap 'rm -rf -- "$WORK"' EXIT

# tone OUT.wav RATE CHANNELS SAMPLES FREQ [extra sox effects...]
#   A sine of exactly SAMPLES frames, peak 0.5 (-6 dBFS), same signal in every
#   channel, 16-bit PCM, no dither, no fades.
tone() {
    local out=$1 rate=$2 ch=$3 n=$4 freq=$5; shift 5
    sox -D -r "$rate" -c "$ch" -n -e signed-integer -b 16 "$out" \
        synth "${n}s" sine "$freq" vol 0.5 "$@"
}

# --- plain tone fixtures (all with the LAME/Info tag: lame is run without -t) ---
tone "$WORK/44100-stereo.wav" 44100 2 5292 440
lame --quiet --noreplaygain -b 128 --resample 44.1 "$WORK/44100-stereo.wav" "$OUT/tone-44100-stereo.mp3"

tone "$WORK/48000-mono.wav" 48000 1 5760 440
lame --quiet --noreplaygain -m m -b 64 --resample 48 "$WORK/48000-mono.wav" "$OUT/tone-48000-mono.mp3"

# MPEG-2 Layer III. 64 kbit/s so that the first frame (209 bytes) is big enough
# for the Info+LAME tag; at 32 kbit/s (104-byte frames) lame silently omits it.
tone "$WORK/22050-mono.wav" 22050 1 2646 440
lame --quiet --noreplaygain -m m -b 64 --resample 22.05 "$WORK/22050-mono.wav" "$OUT/tone-22050-mono.mp3"

# MPEG-2.5 Layer III. 32 kbit/s (288-byte frames): lame writes the Info tag.
# (At 8 or 16 kbit/s the frame is too small - 72/144 bytes - and lame writes none.)
tone "$WORK/8000-mono.wav" 8000 1 2000 440
lame --quiet --noreplaygain -m m -b 32 --resample 8 "$WORK/8000-mono.wav" "$OUT/tone-8000-mono.mp3"

# MPEG-2.5 stereo. 32 kbit/s (209-byte frames) is the lowest rate with an Info tag.
tone "$WORK/11025-stereo.wav" 11025 2 2205 440
lame --quiet --noreplaygain -b 32 --resample 11.025 "$WORK/11025-stereo.wav" "$OUT/tone-11025-stereo.mp3"

# VBR: the first frame carries a "Xing" tag (with TOC) plus the LAME extension.
tone "$WORK/44100-vbr.wav" 44100 2 22050 440
lame --quiet --noreplaygain -V 2 --resample 44.1 "$WORK/44100-vbr.wav" "$OUT/tone-44100-vbr.mp3"

# No LAME/Info tag at all (-t): decoders cannot know the delay/padding.
lame --quiet --noreplaygain -t -b 128 --resample 44.1 "$WORK/44100-stereo.wav" "$OUT/tone-44100-notag.mp3"

# Channel order: LEFT = 440 Hz sine, RIGHT = digital silence. Plain stereo
# (-m s, not joint/mid-side) so that the right channel decodes to exact zeros.
tone "$WORK/lr.wav" 44100 2 5292 440 remix 1 0
lame --quiet --noreplaygain -m s -b 128 --resample 44.1 "$WORK/lr.wav" "$OUT/stereo-lr-44100.mp3"

# Seamless loop: 480 Hz at 48 kHz = exactly 100 samples per cycle, 4800 samples
# = 48 whole cycles, starting at phase 0.
tone "$WORK/loop.wav" 48000 2 4800 480
lame --quiet --noreplaygain -b 128 --resample 48 "$WORK/loop.wav" "$OUT/loop-48000-stereo.mp3"

# --- loudness (LoudnessNormalizationTests): long enough for whole 400 ms gating blocks ---
# A 1 kHz sine, 1.5 s at 48 kHz, peak 0.1 (-20 dBFS): about -20 LUFS, played in both channels.
# Not `tone` (peak 0.5, 0.12 s): a cue normalised up and down by whole 400 ms blocks.
# 64 kbit/s: at 32 (96-byte frames) lame writes no Info tag, and the cue would not be gapless.
sox -D -r 48000 -c 1 -n -e signed-integer -b 16 "$WORK/sine-1k.wav" synth 72000s sine 1000 vol 0.1
lame --quiet --noreplaygain -m m -b 64 --resample 48 "$WORK/sine-1k.wav" "$OUT/sine-1k-20dbfs-48000.mp3"

# --- tagged variants of tone-44100-stereo.mp3 and the non-audio fixtures -------
# The MPEG audio in the three tagged files is byte-identical to
# tone-44100-stereo.mp3; only the tag bytes are added.
OUT="$OUT" python3 - <<'PY'
import os, random, struct

out = os.environ["OUT"]
def path(name): return os.path.join(out, name)
def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data)

base = open(path("tone-44100-stereo.mp3"), "rb").read()

# ID3v1.1: 128 bytes appended at the very end.
def pad(s, n): return s.encode("latin-1").ljust(n, b"\0")[:n]
id3v1 = (b"TAG" + pad("cued test tone", 30) + pad("cued", 30) + pad("fixtures", 30)
         + b"2024" + pad("id3v1 fixture", 28) + b"\0" + bytes([1]) + bytes([255]))
assert len(id3v1) == 128
write("tone-44100-id3v1.mp3", base + id3v1)

# ID3v2.3: prepended. Two text frames (TIT2, TPE1) + 256 bytes of zero padding.
def v23_text_frame(fid, text):
    body = b"\x00" + text.encode("latin-1")            # encoding 0 = ISO-8859-1
    return fid + struct.pack(">I", len(body)) + b"\x00\x00" + body
frames = v23_text_frame(b"TIT2", "cued test tone") + v23_text_frame(b"TPE1", "cued")
body = frames + b"\x00" * 256
n = len(body)
syncsafe = bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])
id3v2 = b"ID3" + b"\x03\x00" + b"\x00" + syncsafe + body
write("tone-44100-id3v2.mp3", id3v2 + base)

# APEv2: appended. Header + one item (Title=cued) + footer.
# Header/footer: "APETAGEX", version 2000, tag size (items + footer, excluding
# the header), item count, flags, 8 reserved zero bytes (all little-endian).
# Flags: bit 31 = tag contains a header, bit 29 = this block is the header.
item = struct.pack("<II", len(b"cued"), 0) + b"Title\x00" + b"cued"
size = len(item) + 32
def ape_block(flags): return b"APETAGEX" + struct.pack("<IIII", 2000, size, 1, flags) + b"\0" * 8
ape = ape_block(0xA0000000) + item + ape_block(0x80000000)
write("tone-44100-ape.mp3", base + ape)

# Cut in the middle of the third frame (Info frame 417 bytes + frame 418 bytes + 165).
write("truncated.mp3", base[:1000])

# The gapless trim covering all of it: tone-48000-mono.mp3 with its LAME tag's encoder delay and
# padding both set to 4095 samples (the 12-bit fields' most), more than its 7 frames hold.
short = bytearray(open(path("tone-48000-mono.mp3"), "rb").read())
lame = short.find(b"LAME", short.find(b"Info"))
short[lame + 21:lame + 24] = b"\xff\xff\xff"
write("gapless-trims-everything.mp3", bytes(short))

# Not audio at all.
write("not-audio.mp3", b"this is not an mp3\n" * 32)

# Empty file.
write("empty.mp3", b"")

# 4096 deterministic pseudo-random bytes (Mersenne Twister, seed 7).
random.seed(7)
data = bytearray(random.getrandbits(8) for _ in range(4096))
# Must not look like the start of an MP3: no "ID3", no 0xFF sync byte first.
if data[0] == 0xFF or data[:3] == b"ID3":
    data[0] = 0x00
write("random.mp3", bytes(data))
PY

# --- verification ----------------------------------------------------------------
# inspect FILE -> "<tag> <delay> <padding>" from the first MPEG frame after any
# ID3v2 tag: tag is Info / Xing (with LAME extension: +LAME) / none.
inspect() {
    python3 - "$1" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
p = 0
if d[:3] == b"ID3":
    p = 10 + ((d[6] << 21) | (d[7] << 14) | (d[8] << 7) | d[9])
if len(d) < p + 4 or d[p] != 0xFF or (d[p + 1] & 0xE0) != 0xE0:
    print("none - -"); sys.exit()
h = d[p + 1]
mpeg1 = (h >> 3) & 3 == 3
mono = (d[p + 3] >> 6) == 3
side = (17 if mono else 32) if mpeg1 else (9 if mono else 17)
q = p + 4 + side
tag = d[q:q + 4].decode("latin-1")
if tag not in ("Info", "Xing"):
    print("none - -"); sys.exit()
flags = int.from_bytes(d[q + 4:q + 8], "big")
off = q + 8 + 4 * bool(flags & 1) + 4 * bool(flags & 2) + 100 * bool(flags & 4) + 4 * bool(flags & 8)
if d[off:off + 4] != b"LAME":
    print(tag, "- -"); sys.exit()
x = d[off + 21:off + 24]
delay = (x[0] << 4) | (x[1] >> 4)
padding = ((x[1] & 0x0F) << 8) | x[2]
print(tag + "+LAME", delay, padding)
PY
}

# name  rate  channels  gapless-samples (frames per channel)
EXPECT=(
    "tone-44100-stereo.mp3  44100 2 5292"
    "tone-48000-mono.mp3    48000 1 5760"
    "tone-22050-mono.mp3    22050 1 2646"
    "tone-8000-mono.mp3      8000 1 2000"
    "tone-11025-stereo.mp3  11025 2 2205"
    "tone-44100-vbr.mp3     44100 2 22050"
    "tone-44100-id3v1.mp3   44100 2 5292"
    "tone-44100-id3v2.mp3   44100 2 5292"
    "tone-44100-ape.mp3     44100 2 5292"
    "tone-44100-notag.mp3   44100 2 6912"
    "stereo-lr-44100.mp3    44100 2 5292"
    "loop-48000-stereo.mp3  48000 2 4800"
    "sine-1k-20dbfs-48000.mp3 48000 1 72000"
)

status=0
printf '%-24s %6s %6s %3s %8s %8s %-10s %5s %7s %7s\n' \
    file bytes rate ch samples no-gapl tag delay padding peak
for line in "${EXPECT[@]}"; do
    read -r name want_rate want_ch want_n <<<"$line"
    f="$OUT/$name"
    mpg123 -q -w "$WORK/dec.wav" "$f"
    mpg123 -q --no-gapless -w "$WORK/raw.wav" "$f"
    rate=$(sox --i -r "$WORK/dec.wav")
    ch=$(sox --i -c "$WORK/dec.wav")
    n=$(sox --i -s "$WORK/dec.wav")
    raw=$(sox --i -s "$WORK/raw.wav")
    peak=$(sox "$WORK/dec.wav" -n stat 2>&1 | awk '
        /^Maximum amplitude/ {mx=$3} /^Minimum amplitude/ {mn=$3}
        END {if (mn < 0) mn = -mn; printf "%.4f", (mx > mn ? mx : mn)}')
    read -r tag delay padding <<<"$(inspect "$f")"
    printf '%-24s %6d %6d %3d %8d %8d %-10s %5s %7s %7s\n' \
        "$name" "$(wc -c < "$f")" "$rate" "$ch" "$n" "$raw" "$tag" "$delay" "$padding" "$peak"
    if [[ $rate != "$want_rate" || $ch != "$want_ch" || $n != "$want_n" ]]; then
        echo "  FAIL: $name: got $rate Hz, $ch ch, $n samples; expected $want_rate Hz, $want_ch ch, $want_n samples" >&2
        status=1
    fi
    if [[ $name == *notag* ]]; then
        [[ $tag == none ]] || { echo "  FAIL: $name should have no Info tag (found $tag)" >&2; status=1; }
    else
        [[ $tag == *+LAME ]] || { echo "  FAIL: $name has no Info/Xing+LAME tag (found $tag)" >&2; status=1; }
    fi
done

# The right channel of stereo-lr-44100.mp3 must be silent, the left must not.
mpg123 -q -w "$WORK/lr.dec.wav" "$OUT/stereo-lr-44100.mp3"
left_peak=$(sox "$WORK/lr.dec.wav" -n remix 1 stat 2>&1 | awk '/^Maximum amplitude/ {print $3}')
right_peak=$(sox "$WORK/lr.dec.wav" -n remix 2 stat 2>&1 | awk '/^Maximum amplitude/ {print $3}')
echo "stereo-lr-44100.mp3: left peak $left_peak, right peak $right_peak"
awk -v l="$left_peak" -v r="$right_peak" 'BEGIN {exit !(l > 0.4 && r == 0)}' \
    || { echo "  FAIL: stereo-lr-44100.mp3 channels are not L=tone, R=silence" >&2; status=1; }

# Non-audio fixtures: sizes and headers.
[[ ! -s "$OUT/empty.mp3" ]] || { echo "  FAIL: empty.mp3 is not empty" >&2; status=1; }
[[ $(wc -c < "$OUT/random.mp3") -eq 4096 ]] || { echo "  FAIL: random.mp3 is not 4096 bytes" >&2; status=1; }
[[ $(wc -c < "$OUT/truncated.mp3") -eq 1000 ]] || { echo "  FAIL: truncated.mp3 is not 1000 bytes" >&2; status=1; }
first=$(head -c 3 "$OUT/random.mp3" | od -An -tx1 | tr -d ' ')
[[ ${first:0:2} != ff && $first != 494433 ]] || { echo "  FAIL: random.mp3 starts like an MP3" >&2; status=1; }

# --- the formats libsndfile decodes (SoundFileDecoderTests) ---
# PCM WAV and FLAC are lossless: they decode to the 16-bit samples exactly (s / 32768).
tone "$OUT/tone-48000-mono.wav" 48000 1 5760 440
tone "$WORK/44100-stereo-flac.wav" 44100 2 5292 440
sox -D "$WORK/44100-stereo-flac.wav" "$OUT/tone-44100-stereo.flac"
sox -D "$OUT/tone-48000-mono.wav" "$OUT/tone-48000-mono.flac"
tone "$WORK/48000-stereo.wav" 48000 2 4800 440
sox -D "$WORK/48000-stereo.wav" -C 3 "$OUT/tone-48000-stereo.ogg"
opusenc --quiet --bitrate 64 "$WORK/48000-stereo.wav" "$OUT/tone-48000-stereo.opus"
tone "$OUT/six-channels.wav" 48000 6 480 440
# An Ogg Vorbis file cut inside its audio: headers intact, the stream truncated.
head -c 3000 "$OUT/tone-48000-stereo.ogg" > "$OUT/truncated.ogg"
# --- FLAC through libFLAC (FLACDecoderTests) ---
# 32-bit: the 16-bit stereo tone widened by sox (each sample s becomes s * 65536, exactly) and
# encoded by flac, so it decodes to exactly the samples of tone-44100-stereo.flac.
# (Raw samples into flac: sox's 32-bit WAV carries a `fact` chunk that flac warns about.)
sox -D "$WORK/44100-stereo-flac.wav" -b 32 "$WORK/44100-32bit.wav"
sox "$WORK/44100-32bit.wav" -t raw "$WORK/44100-32bit.raw"
flac --silent --force --no-seektable --no-padding --force-raw-format --endian=little --sign=signed --channels=2 --bps=32 \
    --sample-rate=44100 -o "$OUT/tone-44100-32bit.flac" "$WORK/44100-32bit.raw"
# Cut inside its second frame (at byte 1500; the first frame, 4096 samples, ends at byte 1338).
head -c 1500 "$OUT/tone-44100-stereo.flac" > "$OUT/truncated.flac"
# Blocks shorter than the stream's minimum: the samples of tone-48000-mono.wav in frames of 1152,
# 100 and 16 samples, in turn, under a STREAMINFO that says every block is 4096 (as a careless
# encoder writes it). Each frame says where it starts (variable blocking), so a decoder that
# trusts its frames decodes it exactly. Written byte by byte: verbatim subframes, CRC-8 headers,
# CRC-16 footers, no MD5.
OUT="$OUT" python3 - <<'PY'
import os, struct, wave
out = os.environ["OUT"]
def crc(data, poly, bits):
    top, mask, c = 1 << (bits - 1), (1 << bits) - 1, 0
    for byte in data:
        c ^= byte << (bits - 8)
        for _ in range(8):
            c = ((c << 1) ^ poly) & mask if c & top else (c << 1) & mask
    return c
def utf8(n):  # FLAC's "UTF-8" coding of a frame's first sample number
    if n < 0x80:
        return bytes([n])
    length = 2
    while n >= 1 << (5 * length + 1):
        length += 1
    tail = [0x80 | (n >> (6 * i)) & 0x3F for i in range(length - 2, -1, -1)]
    return bytes([(0xFF00 >> length) & 0xFF | n >> (6 * (length - 1))]) + bytes(tail)
with wave.open(os.path.join(out, "tone-48000-mono.wav")) as w:
    rate, total = w.getframerate(), w.getnframes()
    pcm = struct.unpack("<%dh" % total, w.readframes(total))
frames, start, index = b"", 0, 0
while start < total:
    n = min([1152, 100, 16][index % 3], total - start)
    index += 1
    # sync + variable blocking, 16-bit block size at the end, rate from STREAMINFO; mono, 16-bit
    header = bytes([0xFF, 0xF9, 0x70, 0x08]) + utf8(start) + struct.pack(">H", n - 1)
    header += bytes([crc(header, 0x07, 8)])
    body = header + b"\x02" + struct.pack(">%dh" % n, *pcm[start:start + n])
    frames += body + struct.pack(">H", crc(body, 0x8005, 16))
    start += n
info = struct.pack(">HH", 4096, 4096) + bytes(6) + ((rate << 44) | (15 << 36) | total).to_bytes(8, "big") + bytes(16)
with open(os.path.join(out, "short-blocks.flac"), "wb") as f:
    f.write(b"fLaC" + bytes([0x80, 0, 0, len(info)]) + info + frames)
PY
# flac itself must decode each to the samples it was made from.
for pair in "tone-44100-32bit.flac:$WORK/44100-32bit.wav" "short-blocks.flac:$OUT/tone-48000-mono.wav"; do
    f=${pair%%:*} source=${pair#*:}
    flac --silent --decode --force -o "$WORK/check.wav" "$OUT/$f" 2>/dev/null
    cmp -s <(sox "$WORK/check.wav" -t raw -) <(sox "$source" -t raw -) \
        || { echo "  FAIL: $f does not decode to the samples of $(basename "$source")" >&2; status=1; }
done

for f in tone-48000-mono.wav tone-48000-mono.flac tone-44100-stereo.flac tone-44100-32bit.flac short-blocks.flac truncated.flac tone-48000-stereo.ogg tone-48000-stereo.opus six-channels.wav; do
    printf '%-24s %6d bytes  %s\n' "$f" "$(wc -c < "$OUT/$f")" "$(soxi -t "$OUT/$f" 2>/dev/null || echo '?') $(soxi -s "$OUT/$f" 2>/dev/null || echo '?') samples"
done

# --- loudness: a cue with no loudness (LoudnessNormalizationTests) ---
# 0.1 s of digital silence: a cue that has no loudness.
sox -D -r 8000 -c 1 -n -e signed-integer -b 16 "$OUT/silence-8000-mono.wav" trim 0 800s
printf '%-24s %6d bytes  %s\n' silence-8000-mono.wav "$(wc -c < "$OUT/silence-8000-mono.wav")" "$(soxi -s "$OUT/silence-8000-mono.wav") samples"

exit "$status"
