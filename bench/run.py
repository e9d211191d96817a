#!/usr/bin/env python3
"""cued's benchmarks (`make bench`; `make bench-quick` is the short mode CI runs to check they work).

Runs the real release binaries and prints one JSON object per measurement, then a summary table.
Absolute numbers depend on the machine: docs/PERFORMANCE.md labels each with the machine it came from.

  bench/run.py [--quick] [--device null|pulse] [--out results.json]
"""
import argparse, json, os, re, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import heard  # noqa: E402  (bench/heard.py: onsets through PipeWire)
import alone  # noqa: E402  (bench/alone.py: onsets with cued alone on the graph, after quiet; idle per server)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The binaries as shipped: `make bench` builds them with RELEASE_FLAGS (the Swift runtime linked in).
BIN = os.environ.get("CUED_BENCH_BIN") or os.path.join(ROOT, ".build", "release")
SOUNDS = os.path.join(ROOT, "sounds")
results = []
# Extra cued options for the shell-to-sound run (bench/run.py --shell-period FRAMES sets a smaller ALSA buffer).
SHELL_EXTRA = []


def record(**fields):
    results.append(fields)
    print(json.dumps(fields), flush=True)


class Daemon:
    """A release cued on a private socket; optional NOTIFY_SOCKET to time READY."""

    def __init__(self, sounds=SOUNDS, device="null", extra=(), env=None):
        self.dir = tempfile.mkdtemp(prefix="cued-bench-")
        self.socket = os.path.join(self.dir, "cued.sock")
        environment = dict(os.environ, XDG_CONFIG_HOME="/nonexistent", **(env or {}))
        self.began = time.monotonic()
        self.process = subprocess.Popen(
            [os.path.join(BIN, "cued"), "--socket", self.socket, "--sounds", sounds, "--device", device,
             "--realtime-priority", "0", *extra], stderr=subprocess.DEVNULL, env=environment)
        for _ in range(2000):
            try:
                self.connection = socket.socket(socket.AF_UNIX)
                self.connection.connect(self.socket)
                break
            except OSError:
                time.sleep(0.002)
        self.file = self.connection.makefile("rwb")
        self.next_id = 1

    def request(self, op, **fields):
        message = dict(id=self.next_id, op=op, **fields)
        self.next_id += 1
        self.file.write((json.dumps(message) + "\n").encode())
        self.file.flush()
        while True:
            reply = json.loads(self.file.readline())
            if reply.get("id") == message["id"]:
                return reply

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


def pulse_server(modules=()):
    """A private PulseAudio with a null sink `t`, as the end-to-end tests use; `modules`: more to load
    (e.g. module-suspend-on-idle, which a desktop's default.pa loads)."""
    directory = tempfile.mkdtemp(prefix="cued-bench-pulse-")
    env = dict(os.environ, XDG_RUNTIME_DIR=directory, HOME=directory)
    process = subprocess.Popen(
        ["pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no", "--disable-shm=yes",
         "-L", "module-null-sink sink_name=t rate=48000 channels=2 format=float32le norewinds=1",
         "-L", "module-native-protocol-unix auth-anonymous=1", *(a for m in modules for a in ("-L", m))],
        env=env, stderr=subprocess.DEVNULL)
    server = f"unix:{directory}/pulse/native"
    for _ in range(200):
        if subprocess.run(["pactl", "info"], env=dict(env, PULSE_SERVER=server), capture_output=True).returncode == 0:
            break
        time.sleep(0.05)
    return process, {"PULSE_SERVER": server, "XDG_RUNTIME_DIR": directory, "HOME": directory}


def trigger_latency(quick, device, env):
    """Request's last byte to the first frame handed to ALSA, measured inside cued (status.triggerLatency)."""
    count = 300 if quick else 10_000
    cases = [("device open", 0), ("device closed (reopens)", None), ("under 64 voices", 64)]
    for name, load in cases:
        idle = "0.005" if load is None else "60"
        daemon = Daemon(device=device, extra=["--idle-timeout", idle, "--max-voices", "128"], env=env)
        if load is not None:
            # Keep the device open: a silent looping voice, plus the load.
            for _ in range(max(load, 1)):
                daemon.request("play", cue="wrap", volume=0, loops=-1)
            time.sleep(0.2)
        n = count if load is not None else (100 if quick else 2000)
        for _ in range(n):
            daemon.request("play", cue="tick", volume=0)
            time.sleep(0.03 if load is None else 0.001)
        time.sleep(0.2)
        status = daemon.request("status")
        latency = status["triggerLatency"]
        period = status["device"].get("periodFrames", 240)
        record(benchmark="trigger-latency", case=name, device=device, triggers=latency["count"],
               p50_us=latency["p50Us"], p99_us=latency["p99Us"], max_us=latency["maxUs"],
               period_ms=period / 48, device_delay_frames=status["device"].get("delayFrames"),
               underruns=status["underruns"])
        daemon.stop()


def mixer(quick):
    out = subprocess.run([os.path.join(BIN, "cued-bench"), "mixer", "--seconds", "0.5" if quick else "3"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        r = json.loads(line)
        record(benchmark="mixer", case=r["case"], voices=r["voices"], ns_per_voice_frame=r["nsPerVoiceFrame"],
               core_share_percent=100 * r["coreShare"])


def decode(quick, work):
    """Decode time of a long MP3 with cued's decoder against the mpg123 CLI (same library): at 48 kHz
    (no rate conversion: like for like) and at 44.1 kHz (cued also converts to 48 kHz with libsyn123)."""
    seconds = 20 if quick else 120
    for rate in (48000, 44100):
        wav = os.path.join(work, f"long{rate}.wav")
        mp3 = os.path.join(work, f"long{rate}.mp3")
        subprocess.run(["sox", "-n", "-r", str(rate), "-c", "2", wav, "synth", str(seconds), "sine", "440", "sine", "660", "gain", "-6"], check=True)
        subprocess.run(["lame", "--quiet", "-b", "192", wav, mp3], check=True)
        ours = json.loads(subprocess.run([os.path.join(BIN, "cued-bench"), "decode", mp3, "--repeat", "3"],
                                         capture_output=True, text=True, check=True).stdout)
        cli = []
        for _ in range(3):
            began = time.monotonic()
            subprocess.run(["mpg123", "-q", "-e", "f32", "-s", mp3], stdout=subprocess.DEVNULL, check=True)
            cli.append(time.monotonic() - began)
        record(benchmark="decode", source_rate=rate, audio_seconds=seconds, converts=rate != 48000,
               cued_ms=1000 * ours["seconds"], mpg123_cli_ms=1000 * min(cli), ratio=ours["seconds"] / min(cli))


def loudness(quick):
    """The EBU R128 measurement cued makes of each shipped cue at load (cued-bench loudness, best of N)."""
    files = sorted(os.path.join(SOUNDS, f) for f in os.listdir(SOUNDS) if f.endswith(".mp3"))
    out = subprocess.run([os.path.join(BIN, "cued-bench"), "loudness", *files, "--repeat", "5" if quick else "50"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        r = json.loads(line)
        record(benchmark="loudness", cue=os.path.basename(r["file"]), audio_ms=1000 * r["frames"] / 48000,
               measure_us=1e6 * r["seconds"], lufs=r["lufs"], peak_dbfs=r["peakDBFS"])


def startup(quick, work):
    """Start to READY=1 (sd_notify) with 10 and 200 cues."""
    for count in (10, 200):
        directory = os.path.join(work, f"sounds-{count}")
        os.makedirs(directory, exist_ok=True)
        names = sorted(f for f in os.listdir(SOUNDS) if f.endswith(".mp3"))
        for i in range(count):
            shutil.copy(os.path.join(SOUNDS, names[i % len(names)]), os.path.join(directory, f"cue{i:03}.mp3"))
        times = []
        for _ in range(3 if quick else 10):
            notify = os.path.join(work, "notify")
            if os.path.exists(notify):
                os.unlink(notify)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            listener.bind(notify)
            listener.settimeout(10)
            began = time.monotonic()
            daemon = Daemon(sounds=directory, env={"NOTIFY_SOCKET": notify})
            while b"READY=1" not in listener.recv(4096):
                pass
            times.append(time.monotonic() - began)
            rss = int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{daemon.process.pid}/status").read()).group(1))
            daemon.stop()
            listener.close()
        record(benchmark="startup", cues=count, ready_ms_median=1000 * statistics.median(times),
               ready_ms_min=1000 * min(times), rss_mib=rss / 1024)


def idle(quick):
    """CPU ticks and context switches once idle, and RSS."""
    daemon = Daemon(extra=["--idle-timeout", "0.5"])
    daemon.request("play", cue="pico")
    time.sleep(1.5)
    pid = daemon.process.pid

    def sample():
        stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        ticks = int(stat[11]) + int(stat[12])
        switches = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            text = open(f"/proc/{pid}/task/{task}/status").read()
            switches += sum(int(v) for v in re.findall(r"ctxt_switches:\s+(\d+)", text))
        return ticks, switches

    window = 5 if quick else 60
    t0, s0 = sample()
    time.sleep(window)
    t1, s1 = sample()
    rss = int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1))
    threads = len(os.listdir(f"/proc/{pid}/task"))
    record(benchmark="idle", seconds=window, cpu_ticks=t1 - t0, context_switches=s1 - s0, rss_mib=rss / 1024,
           threads=threads)
    daemon.stop()


def cuectl(quick):
    """cuectl's start-up: a whole `cuectl ping`, and its peak RSS."""
    daemon = Daemon()
    times = []
    for _ in range(20 if quick else 200):
        began = time.monotonic()
        subprocess.run([os.path.join(BIN, "cuectl"), "ping", "--socket", daemon.socket], stdout=subprocess.DEVNULL, check=True)
        times.append(time.monotonic() - began)
    usage = subprocess.run(["/usr/bin/time", "-f", "%M", os.path.join(BIN, "cuectl"), "ping", "--socket", daemon.socket],
                           capture_output=True, text=True)
    record(benchmark="cuectl", command="ping", wall_ms_median=1000 * statistics.median(times),
           wall_ms_p99=1000 * sorted(times)[int(len(times) * 0.99) - 1], max_rss_mib=int(usage.stderr.strip().splitlines()[-1]) / 1024)
    daemon.stop()


def carousel(quick):
    """Fire-and-forget page events on one connection: how many per second, with the audio glitch-free."""
    daemon = Daemon(extra=["--max-voices", "64"])
    daemon.request("play", cue="wrap", volume=0, loops=-1)  # the device stays open
    time.sleep(0.2)
    count = 20_000 if quick else 200_000
    lines = b"".join(
        b'{"carousel":"bench","event":"page-changed","from":%d,"to":%d,"count":9,"reason":"drag"}\n' % (i % 9, (i + 1) % 9)
        for i in range(count))
    raw = socket.socket(socket.AF_UNIX)
    raw.connect(daemon.socket)
    began = time.monotonic()
    raw.sendall(lines)
    # Every event has been handled once a request sent after them is answered.
    raw.sendall(b'{"id":1,"op":"ping"}\n')
    buffer = b""
    while b'"id":1' not in buffer:
        buffer += raw.recv(65536)
    elapsed = time.monotonic() - began
    status = daemon.request("status")
    record(benchmark="carousel", events=count, events_per_second=count / elapsed, underruns=status["underruns"],
           decisions=status["paging"], latency_p99_us=status["triggerLatency"]["p99Us"])
    raw.close()
    daemon.stop()


def carousel_latency(quick):
    """Page events spaced out on one fire-and-forget connection: event's last byte to the bound cue's
    first frame handed to ALSA (the daemon's triggerLatency), with the device open."""
    daemon = Daemon(extra=["--max-voices", "64"])
    daemon.request("play", cue="wrap", volume=0, loops=-1)
    time.sleep(0.2)
    raw = socket.socket(socket.AF_UNIX)
    raw.connect(daemon.socket)
    count = 200 if quick else 5000
    for i in range(count):
        raw.sendall(b'{"carousel":"bench","event":"page-changed","from":%d,"to":%d,"count":9,"reason":"drag"}\n' % (i % 9, (i + 1) % 9))
        time.sleep(0.002)
    time.sleep(0.2)
    status = daemon.request("status")
    latency = status["triggerLatency"]
    record(benchmark="carousel-latency", events=count, spacing_ms=2, decisions=status["paging"],
           p50_us=latency["p50Us"], p99_us=latency["p99Us"], max_us=latency["maxUs"], underruns=status["underruns"])
    raw.close()
    daemon.stop()


def many_clients(quick):
    """256 clients connected at once, each sending plays and waiting for replies, in parallel threads."""
    import threading
    daemon = Daemon(extra=["--max-voices", "64"])
    daemon.request("play", cue="wrap", volume=0, loops=-1)
    clients, per_client = 256, (5 if quick else 40)
    round_trips, failures = [], []
    lock = threading.Lock()

    def client(index):
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(daemon.socket)
            f = s.makefile("rwb")
            mine = []
            for n in range(per_client):
                began = time.monotonic()
                f.write(b'{"id":%d,"op":"play","cue":"tick","volume":0}\n' % n)
                f.flush()
                reply = json.loads(f.readline())
                mine.append(time.monotonic() - began)
                if not reply.get("ok"):
                    raise RuntimeError(reply)
            s.close()
            with lock:
                round_trips.extend(mine)
        except Exception as error:  # noqa: BLE001 - counted and reported
            with lock:
                failures.append(str(error))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    began = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - began
    status = daemon.request("status")
    round_trips.sort()
    record(benchmark="many-clients", clients=clients, requests=len(round_trips), failures=len(failures),
           requests_per_second=len(round_trips) / elapsed, rtt_p50_ms=1000 * round_trips[len(round_trips) // 2],
           rtt_p99_ms=1000 * round_trips[int(len(round_trips) * 0.99) - 1], underruns=status["underruns"])
    daemon.stop()


def shell_to_sound(quick):
    """`cuectl play pico` against `pactl play-sample`, once through ALSA's pulse plugin (`pulse:t`)
    and once through cued's native PulseAudio stream (`pulseaudio:t`)."""
    for device in ("pulse:t", "pulseaudio:t"):
        shell_to_sound_on(quick, device)


def idle_backends(quick):
    """Idle RSS with each output backend, after a cue played and the device closed again: VmRSS,
    the shared libraries mapped, and whether a sound server's client library is among them (the
    PipeWire and PulseAudio clients are loaded only when their backend is chosen). Each daemon
    follows the desktop's sound settings (the default) where their schema is installed, which loads
    GLib (libgio); `null-pinned` is the null device with a theme of its own, which loads none."""
    work = tempfile.mkdtemp(prefix="cued-bench-idle-")
    script = os.path.join(ROOT, "scripts", "pipewire-env.sh")
    pulse, pulse_env = pulse_server()
    started = subprocess.run([script, "start", work], capture_output=True, text=True)
    pw_env = dict(re.findall(r"export (\w+)='?([^'\n]*)'?", started.stdout)) if started.returncode == 0 else None
    conf = os.path.join(work, "asound.conf")
    with open(conf, "w") as f:
        # ALSA's own null PCM, alone: no card needed, libasound's code path. Not the stock alsa.conf:
        # where the pulseaudio package is installed its conf.d hook makes libasound load libpulse.
        f.write("pcm.quiet { type null }\n")
    backends = [("null", "null", {}, []), ("null-pinned", "null", {}, ["--sound-theme", "freedesktop"]),
                ("alsa", "alsa:quiet", {"ALSA_CONFIG_PATH": conf}, []), ("pulseaudio", "pulseaudio:t", pulse_env, [])]
    if pw_env:
        backends.append(("pipewire", "pipewire", pw_env, []))
    try:
        for name, device, env, extra in backends:
            daemon = Daemon(device=device, extra=["--idle-timeout", "0.5", *extra], env=env)
            daemon.request("play", cue="pico")
            time.sleep(2 if quick else 5)
            pid = daemon.process.pid
            maps = open(f"/proc/{pid}/maps").read()
            libraries = sorted({line.split()[-1] for line in maps.splitlines() if ".so" in line.split()[-1]})
            rss = int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1))
            record(benchmark="idle-rss", backend=name, rss_mib=round(rss / 1024, 2), libraries=len(libraries),
                   libpulse=any("libpulse" in l for l in libraries), libpipewire=any("libpipewire" in l for l in libraries),
                   libsystemd=any("libsystemd" in l for l in libraries), libgio=any("libgio" in l for l in libraries))
            daemon.stop()
    finally:
        pulse.terminate()
        subprocess.run([script, "stop", work], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def shell_to_sound_on(quick, device):
    """`cuectl play pico` against PulseAudio's sample cache (`pactl play-sample`), side by side in one
    run through one PulseAudio null sink: the command's wall time, and the audible onset captured
    from the sink's monitor. Onsets are relative (the capture's start time is unknown), so the
    figure is each command's onset minus the command's start, compared across the two."""
    pulse, env = pulse_server()
    work = tempfile.mkdtemp(prefix="cued-bench-shell-")
    try:
        wav = os.path.join(work, "pico.wav")
        subprocess.run(["mpg123", "-q", "-w", wav, os.path.join(SOUNDS, "pico.mp3")], check=True)
        penv = dict(os.environ, **env)
        subprocess.run(["pactl", "upload-sample", wav, "pico"], env=penv, check=True)
        daemon = Daemon(device=device, extra=["--idle-timeout", "60", *SHELL_EXTRA], env=env)
        daemon.request("play", cue="pico", volume=0)  # the device is open, as pactl's sink is
        capture = os.path.join(work, "capture.f32")
        recorder = subprocess.Popen(["parec", "-d", "t.monitor", "--latency-msec=5", "--format=float32le", "--rate=48000",
                                     "--channels=2", "--raw"], stdout=open(capture, "wb"), env=penv)
        time.sleep(2.5)  # the null sink renders ahead until a low-latency reader pulls it close
        t0 = time.monotonic()
        rounds = 4 if quick else 40
        starts, walls = [], {"cuectl": [], "pactl": []}
        for i in range(rounds):
            for tool in ("cuectl", "pactl"):
                command = ([os.path.join(BIN, "cuectl"), "play", "pico", "--socket", daemon.socket] if tool == "cuectl"
                           else ["pactl", "play-sample", "pico", "t"])
                began = time.monotonic()
                subprocess.run(command, stdout=subprocess.DEVNULL, env=penv, check=True)
                walls[tool].append(time.monotonic() - began)
                starts.append((tool, began - t0))
                time.sleep(0.4)
        time.sleep(0.5)
        recorder.terminate()
        recorder.wait()
        import array
        samples = array.array("f")
        samples.frombytes(open(capture, "rb").read()[: (os.path.getsize(capture) // 8) * 8])
        frames = len(samples) // 2
        onsets, f = [], 0
        while f < frames and len(onsets) < len(starts):
            if samples[2 * f] != 0 or samples[2 * f + 1] != 0:
                onsets.append(f / 48000)
                f += int(0.3 * 48000)  # past this cue (0.1 s), before the next (0.4 s later)
            f += 1
        status = daemon.request("status")
        if len(onsets) == len(starts):
            base = onsets[0] - starts[0][1]  # align the first command; all others are relative to it
            delays = {"cuectl": [], "pactl": []}
            for (tool, start), onset in zip(starts, onsets):
                delays[tool].append(onset - base - start)
            record(benchmark="shell-to-sound", device=device, rounds=rounds,
                   cuectl_wall_ms=1000 * statistics.median(walls["cuectl"]), pactl_wall_ms=1000 * statistics.median(walls["pactl"]),
                   onset_cuectl_minus_pactl_ms=1000 * (statistics.median(delays["cuectl"]) - statistics.median(delays["pactl"])),
                   device_delay_frames=status["device"].get("delayFrames"), underruns=status["underruns"])
        else:
            record(benchmark="shell-to-sound", device=device, rounds=rounds, error=f"found {len(onsets)} onsets for {len(starts)} commands",
                   cuectl_wall_ms=1000 * statistics.median(walls["cuectl"]), pactl_wall_ms=1000 * statistics.median(walls["pactl"]))
        daemon.stop()
    finally:
        pulse.terminate()
        shutil.rmtree(work, ignore_errors=True)


def pipewire_alsa_onset(quick):
    """Heard first through PipeWire: `play` on an open connection to cued writing through the pipewire
    ALSA plugin (`--device pw`, the plugin unpacked in .build/pipewire-alsa), from the request to its
    first frame on the sink's monitor, against the native floor (cued-pwprobe's own pw_stream tone at
    quantum 256, the same measure). Absolute: both sides read CLOCK_MONOTONIC, and cued-pwprobe places
    captured frames by graph time. Also the underruns cued counted."""
    plugin = os.path.join(ROOT, ".build", "pipewire-alsa", "libasound_module_pcm_pipewire.so")
    probe = os.path.join(ROOT, ".build", "debug", "cued-pwprobe")
    if not os.path.exists(plugin) or not os.path.exists(probe):
        record(benchmark="pipewire-alsa-onset", error="needs scripts/install-deps.sh (the plugin) and swift build (cued-pwprobe)")
        return
    work = tempfile.mkdtemp(prefix="cued-bench-pw-")
    script = os.path.join(ROOT, "scripts", "pipewire-env.sh")
    started = subprocess.run([script, "start", work], capture_output=True, text=True, check=True).stdout
    env = dict(re.findall(r"export (\w+)='?([^'\n]*)'?", started))
    try:
        conf = os.path.join(work, "asound.conf")
        with open(conf, "w") as f:
            f.write(f'</usr/share/alsa/alsa.conf>\npcm_type.pipewire {{ lib "{plugin}" }}\npcm.pw {{ type pipewire }}\n')
        penv = dict(os.environ, **env)
        floor = subprocess.run([probe, "--quantum", "256", "--rounds", "3" if quick else "8"], env=penv, capture_output=True, text=True)
        native = [float(v) for v in re.findall(r"trigger_to_heard_ms=([\d.]+)", floor.stdout)]
        daemon = Daemon(device="pw", extra=["--idle-timeout", "60", *SHELL_EXTRA], env=dict(env, ALSA_CONFIG_PATH=conf))
        daemon.request("play", cue="pico", volume=0)  # the device is open
        time.sleep(1)
        rounds = 8 if quick else 40
        seconds = int(rounds * 0.3) + 3
        capture = subprocess.Popen([probe, "--capture-onsets", str(seconds)], env=penv, stdout=subprocess.PIPE, text=True)
        while capture.stdout.readline().strip() not in ("recording=1", ""):
            pass
        time.sleep(0.5)
        asked = []
        for _ in range(rounds):
            asked.append(time.monotonic_ns())
            daemon.request("play", cue="pico")
            time.sleep(0.3)
        out = capture.communicate(timeout=seconds + 10)[0]
        onsets = [int(v) for v in re.findall(r"onset_ns=(\d+)", out)]
        status = daemon.request("status")
        delays = []
        for t in asked:
            later = [o for o in onsets if o >= t and o - t < 200_000_000]
            if later:
                delays.append((later[0] - t) / 1e6)
        delays.sort()
        fields = dict(benchmark="pipewire-alsa-onset", rounds=rounds, heard=len(delays), extra=" ".join(SHELL_EXTRA),
                      native_floor_median_ms=statistics.median(native) if native else None,
                      underruns=status["underruns"], device_delay_frames=status["device"].get("delayFrames"))
        if delays:
            fields.update(onset_median_ms=statistics.median(delays), onset_p90_ms=delays[int(len(delays) * 0.9) - 1],
                          onset_max_ms=delays[-1])
            if native:
                fields["ratio_to_floor"] = statistics.median(delays) / statistics.median(native)
        record(**fields)
        daemon.stop()
    finally:
        subprocess.run([script, "stop", work], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the short mode: checks that every benchmark works")
    parser.add_argument("--device", default="pulse", choices=["null", "pulse"], help="for trigger latency")
    parser.add_argument("--out", help="also write the results here as a JSON array")
    parser.add_argument("--shell-period", type=int, help="period frames for cued in the shell-to-sound run (buffer: 4 periods)")
    parser.add_argument("--cued-extra", default="", help="more cued options for the shell and pipewire-alsa runs, e.g. '--fill-target 480'")
    parser.add_argument("--only", help="run only these benchmarks (comma-separated: latency,mixer,decode,startup,loudness,carousel,carousel-latency,clients,cuectl,shell,pipewire-alsa,idle,idle-rss,heard,heard-load,heard-load-pulse,heard-idle,heard-alone,heard-pulse,idle-servers)")
    parser.add_argument("--load-devices", help="heard-load: only these of pipewire,alsa:pw,floor,pulse:t,pulseaudio:t (default: all)")
    parser.add_argument("--heard-minutes", type=int, help="heard-alone: samples after 60 s of quiet, per load (each costs a minute; default 5, 0 in --quick)")
    args = parser.parse_args()
    SHELL_EXTRA.extend(args.cued_extra.split())
    if args.shell_period:
        SHELL_EXTRA.extend(["--period-frames", str(args.shell_period), "--buffer-frames", str(4 * args.shell_period)])
    work = tempfile.mkdtemp(prefix="cued-bench-work-")
    pulse, env = (None, {})
    device = "null"
    if args.device == "pulse":
        pulse, env = pulse_server()
        device = "pulse:t"
    chosen = set(args.only.split(",")) if args.only else None
    def wanted(name):
        return chosen is None or name in chosen
    try:
        if wanted("latency"): trigger_latency(args.quick, device, env)
        if wanted("mixer"): mixer(args.quick)
        if wanted("decode"): decode(args.quick, work)
        if wanted("startup"): startup(args.quick, work)
        if wanted("loudness"): loudness(args.quick)
        if wanted("carousel"): carousel(args.quick)
        if wanted("cuectl"): cuectl(args.quick)
        if wanted("carousel-latency"): carousel_latency(args.quick)
        if wanted("clients"): many_clients(args.quick)
        if wanted("shell"): shell_to_sound(args.quick)
        if wanted("pipewire-alsa"): pipewire_alsa_onset(args.quick)
        if wanted("idle"): idle(args.quick)
        if wanted("idle-rss"): idle_backends(args.quick)
        if wanted("heard"): heard.heard(record, BIN, args.quick)
        if wanted("heard-load"):
            heard.heard_under_load(record, BIN, args.quick, pulse_server, args.load_devices.split(",") if args.load_devices else None)
        # heard-load already measures PulseAudio; this is its PulseAudio half alone, when asked for by name.
        if chosen and "heard-load-pulse" in chosen:
            heard.heard_under_load_on_pulseaudio(record, BIN, 10 if args.quick else 60, pulse_server)
        if wanted("heard-idle"): heard.heard_idle(record, BIN, args.quick)
        if wanted("heard-alone"): alone.heard_alone(record, BIN, args.quick, args.heard_minutes)
        if wanted("heard-pulse"): alone.heard_pulse(record, BIN, args.quick)
        if wanted("idle-servers"): alone.idle_servers(record, BIN, args.quick, pulse_server)
    finally:
        if pulse:
            pulse.terminate()
        shutil.rmtree(work, ignore_errors=True)
    if args.out:
        json.dump(results, open(args.out, "w"), indent=1)
    print(f"\n{len(results)} measurements", flush=True)


if __name__ == "__main__":
    main()
